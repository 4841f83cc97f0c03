// The verdict as a page for the person who tapped (issue 51): which answers a browser gets
// (Accept), the built-in page or an operator's template, every value HTML-escaped, and the
// headers that keep the page from being framed, sniffed, referred or cached.
import Foundation
import HTTPTypes
import NIOCore
import SUN
import Synchronization

/// What one tap's page shows.
public struct PageVerdict: Sendable {
    public enum Kind: String, Sendable {
        case genuine, replay, notGenuine, malformed, unknownGroup, rateLimited, unavailable
    }
    public var status: Int
    public var kind: Kind
    public var uid: String?
    public var counter: Int?
    public var tamper: SUNTagTamperStatus?
    public var reason: String?
    public var group: String?
    /// Seconds since 1970, UTC.
    public var time: Int
}

/// A group's look on the built-in page (the key file's `page` object).
public struct PageLook: Sendable, Hashable {
    /// The brand's name, shown above the verdict and in the link.
    public var brand: String?
    /// Where "Continue to BRAND" leads: http(s) only.
    public var productURL: String?
    /// The accent colour, `#RGB` or `#RRGGBB` (checked: it goes into the page's CSS).
    public var colour: String?
    public init(brand: String? = nil, productURL: String? = nil, colour: String? = nil) {
        self.brand = brand
        self.productURL = productURL
        self.colour = colour
    }

    static func validColour(_ s: String) -> Bool {
        let u = Array(s.utf8)
        return (u.count == 4 || u.count == 7) && u[0] == UInt8(ascii: "#") && u.dropFirst().allSatisfy { SUNURLPattern.isHexDigitByte($0) }
    }

    static func validURL(_ s: String) -> Bool {
        (s.hasPrefix("https://") || s.hasPrefix("http://")) && s.utf8.count <= 512 && s.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F }
    }
}

extension SUNURLPattern {
    static func isHexDigitByte(_ c: UInt8) -> Bool {
        (0x30...0x39).contains(c) || (0x41...0x46).contains(c) || (0x61...0x66).contains(c)
    }
}

/// An operator's page templates (`--pages DIR`): `DIR/page.html` for every group, `DIR/GROUP.html`
/// for one. `{{name}}` stands for a value, HTML-escaped when it is put in: `status`, `verdict`
/// (the kind: genuine, replay, notGenuine, malformed, unknownGroup, rateLimited, unavailable),
/// `headline`, `detail`, `uid`, `counter`, `seal`, `time`, `reason`, `group`, `brand`,
/// `productURL`, `colour`, `lang`. Read and checked whole at start.
public struct PageTemplates: Sendable {
    enum Piece: Sendable { case text(String), value(String) }
    static let names: Set<String> = ["status", "verdict", "headline", "detail", "uid", "counter", "seal", "time", "reason", "group", "brand", "productURL", "colour", "lang"]
    let common: [Piece]
    let byGroup: [String: [Piece]]

    /// - Throws: a one-line message: no page.html, a file that is not UTF-8, an unknown or
    ///   unclosed `{{…}}`.
    public init(directory: String) throws(StartError) {
        let fm = FileManager.default
        guard let main = fm.contents(atPath: directory + "/page.html") else {
            throw StartError("--pages \(directory): no page.html in it", exitCode: 66)
        }
        common = try Self.parse(main, file: "page.html")
        var byGroup: [String: [Piece]] = [:]
        for name in (try? fm.contentsOfDirectory(atPath: directory)) ?? [] where name.hasSuffix(".html") && name != "page.html" {
            guard let data = fm.contents(atPath: directory + "/" + name) else { continue }
            byGroup[String(name.dropLast(5))] = try Self.parse(data, file: name)
        }
        self.byGroup = byGroup
    }

    static func parse(_ data: Data, file: String) throws(StartError) -> [Piece] {
        guard let text = String(data: data, encoding: .utf8) else { throw StartError("--pages: \(file) is not UTF-8", exitCode: 65) }
        var pieces: [Piece] = []
        var rest = Substring(text)
        while let open = rest.range(of: "{{") {
            pieces.append(.text(String(rest[..<open.lowerBound])))
            guard let close = rest[open.upperBound...].range(of: "}}") else { throw StartError("--pages: \(file) has an unclosed {{", exitCode: 65) }
            let name = String(rest[open.upperBound..<close.lowerBound]).trimmingSpaces
            guard names.contains(name) else {
                throw StartError("--pages: \(file) has an unknown {{\(KeyRing.safe(name))}}; known: \(names.sorted().joined(separator: ", "))", exitCode: 65)
            }
            pieces.append(.value(name))
            rest = rest[close.upperBound...]
        }
        pieces.append(.text(String(rest)))
        return pieces
    }

    func pieces(group: String?) -> [Piece] { group.flatMap { byGroup[$0] } ?? common }
}

/// The verdict page: the built-in one or the operator's template.
public enum VerdictPage {
    /// The headers of every page: a policy that allows no script, no external resource, no
    /// frame, no form (CSP Level 3); no sniffing, no referrer, no caching (a cached "Genuine"
    /// could be shown again for a copied link).
    public static let headers: HTTPFields = [
        .contentType: "text/html; charset=utf-8",
        .contentSecurityPolicy: "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        .xContentTypeOptions: "nosniff",
        .referrerPolicy: "no-referrer",
        .cacheControl: "no-store",
        .vary: "Accept, Accept-Language",
    ]

    /// Whether the client asked for HTML: `text/html` with a quality above `application/json`'s
    /// (RFC 9110 §12.5.1). A browser sends `text/html,…`; a script sends `application/json`,
    /// `*/*` or nothing, and gets JSON as before.
    public static func wantsHTML(_ accept: String?) -> Bool {
        guard let accept, accept.utf8.count >= 9 else { return false }
        // A byte scan, no allocation: every JSON tap pays for this question too.
        var html = 0.0, json = 0.0
        var utf8 = accept.utf8[...]
        while !utf8.isEmpty {
            let end = utf8.firstIndex(of: UInt8(ascii: ",")) ?? utf8.endIndex
            var item = utf8[utf8.startIndex..<end]
            utf8 = end == utf8.endIndex ? utf8[end...] : utf8[utf8.index(after: end)...]
            while let f = item.first, f == 0x20 || f == 0x09 { item = item.dropFirst() }
            let typeEnd = item.firstIndex(of: UInt8(ascii: ";")) ?? item.endIndex
            var type = item[item.startIndex..<typeEnd]
            while let l = type.last, l == 0x20 || l == 0x09 { type = type.dropLast() }
            let isHTML = equalsIgnoringCase(type, "text/html"), isJSON = !isHTML && equalsIgnoringCase(type, "application/json")
            guard isHTML || isJSON else { continue }
            let q = quality(item[typeEnd...])
            if isHTML { html = max(html, q) } else { json = max(json, q) }
        }
        return html > 0 && html > json
    }

    static func equalsIgnoringCase(_ bytes: Substring.UTF8View.SubSequence, _ text: StaticString) -> Bool {
        guard bytes.count == text.utf8CodeUnitCount else { return false }
        var i = 0
        for b in bytes {
            let t = text.utf8Start[i]
            if b != t && !(b >= 0x41 && b <= 0x5A && b | 0x20 == t) { return false }
            i += 1
        }
        return true
    }

    /// The `q` of a media range's parameters (`;q=0.8`): 1 without one, 0 when unreadable or
    /// out of range (RFC 9110 §12.4.2).
    static func quality(_ parameters: Substring.UTF8View.SubSequence) -> Double {
        var rest = parameters
        while let semicolon = rest.firstIndex(of: UInt8(ascii: ";")) {
            rest = rest[rest.index(after: semicolon)...]
            while let f = rest.first, f == 0x20 || f == 0x09 { rest = rest.dropFirst() }
            guard rest.first == UInt8(ascii: "q") || rest.first == UInt8(ascii: "Q"), rest.dropFirst().first == UInt8(ascii: "=") else { continue }
            let value = rest.dropFirst(2).prefix { $0 != UInt8(ascii: ";") && $0 != 0x20 }
            guard let q = Double(String(decoding: value, as: UTF8.self)), (0...1).contains(q) else { return 0 }
            return q
        }
        return 1
    }

    /// `&`, `<`, `>`, `"`, `'` as character references; control characters (but tab and line
    /// ends) as U+FFFD. Enough for text and for double-quoted attribute values.
    public static func escape(_ s: String) -> String {
        // Most values (hex UIDs, the fixed strings) need nothing: one byte scan, no copy.
        if !s.utf8.contains(where: { $0 < 0x20 || $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || $0 == 0x22 || $0 == 0x27 || $0 == 0x7F || $0 == 0xC2 }) { return s }
        var out = ""
        out.reserveCapacity(s.utf8.count + 8)
        for u in s.unicodeScalars {
            switch u {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\t", "\n", "\r": out.unicodeScalars.append(u)
            case _ where u.value < 0x20 || (0x7F...0x9F).contains(u.value): out += "\u{FFFD}"
            default: out.unicodeScalars.append(u)
            }
        }
        return out
    }

    /// `yyyy-MM-dd HH:mm:ss UTC`, without Foundation's formatters (every page shows it).
    static let lastTime = Mutex<(Int, String)>((-1, ""))

    static func utc(_ seconds: Int) -> String {
        // One formatting a second, however many pages it serves.
        if let cached = lastTime.withLock({ $0.0 == seconds ? $0.1 : nil }) { return cached }
        let text = formatUTC(seconds)
        lastTime.withLock { $0 = (seconds, text) }
        return text
    }

    static func formatUTC(_ seconds: Int) -> String {
        var t = time_t(seconds)
        var parts = tm()
        gmtime_r(&t, &parts)
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) UTC"
    }

    static func headline(_ v: PageVerdict, _ s: PageStrings) -> (String, String) {
        switch v.kind {
        case .genuine: (s.genuine, s.genuineDetail)
        case .replay: (s.replay, s.replayDetail)
        case .notGenuine: (s.notGenuine, s.notGenuineDetail)
        case .malformed: (s.notGenuine, s.malformedDetail)
        case .unknownGroup: (s.notGenuine, s.unknownGroupDetail)
        case .rateLimited: (s.tryAgain, s.rateLimitedDetail)
        case .unavailable: (s.tryAgain, s.unavailableDetail)
        }
    }

    static func seal(_ t: SUNTagTamperStatus, _ s: PageStrings) -> String {
        switch t.seal {
        case .intact: s.sealIntact
        case .open: s.sealOpened
        case .reclosed: s.sealReclosed
        case .notEnabled: s.sealNotEnabled
        case .unknown: s.sealUnknown
        }
    }

    /// The page's HTML.
    public static func render(_ v: PageVerdict, strings s: PageStrings, look: PageLook?, templates: PageTemplates?) -> ByteBuffer {
        if let templates {
            let (title, detail) = headline(v, s)
            var out = ""
            for piece in templates.pieces(group: v.group) {
                switch piece {
                case .text(let t): out += t
                case .value(let name): out += escape(value(name, v, s, look, title, detail))
                }
            }
            return ByteBuffer(string: out)
        }
        // The parts that depend only on the language, the verdict and the group's look are
        // made once and kept (bench sun-serve: the page within 20 % of JSON's CPU per tap).
        let fixed = fixedParts(kind: v.kind, strings: s, look: look)
        // Written straight into the answer's buffer: no intermediate string of the whole page.
        var h = ByteBuffer()
        h.reserveCapacity(fixed.head.utf8.count + fixed.tail.utf8.count + 400 + (v.reason?.utf8.count ?? 0))
        h.writeString(fixed.head)
        if let t = v.tamper {
            let opened = t.seal != .intact && t.seal != .notEnabled
            h.writeString(opened ? "<p class=\"seal open\">" : "<p class=\"seal\">")
            h.writeString(escape(seal(t, s)))
            h.writeString("</p>")
        }
        h.writeString("<dl>")
        if let uid = v.uid {
            h.writeString(fixed.uidLabel)
            h.writeString(escape(uid))
            h.writeString("</dd>")
        }
        if let counter = v.counter {
            h.writeString(fixed.counterLabel)
            h.writeString(String(counter))
            h.writeString("</dd>")
        }
        // The letters in the page's own font: C, O and I, never read as digits.
        if let t = v.tamper {
            h.writeString(fixed.sealLabel)
            h.writeString(escape(String(decoding: t.bytes.map { $0 >= 0x20 && $0 < 0x7F ? $0 : 0x3F }, as: UTF8.self)))
            h.writeString("</dd>")
        }
        h.writeString(fixed.timeLabel)
        h.writeString(utc(v.time))
        h.writeString("</dd>")
        if let reason = v.reason, v.kind != .genuine {
            h.writeString(fixed.reasonLabel)
            h.writeString(escape(reason))
            h.writeString("</dd>")
        }
        h.writeString(fixed.tail)
        return h
    }

    /// The page around its values, for one language, verdict and look.
    struct FixedParts: Sendable {
        var head: String, tail: String
        var uidLabel: String, counterLabel: String, sealLabel: String, timeLabel: String, reasonLabel: String
    }

    struct FixedKey: Hashable, Sendable {
        var language: String
        var kind: PageVerdict.Kind
        var look: PageLook?
    }

    static let fixedCache = Mutex<[FixedKey: FixedParts]>([:])

    static func fixedParts(kind: PageVerdict.Kind, strings s: PageStrings, look: PageLook?) -> FixedParts {
        let key = FixedKey(language: s.language, kind: kind, look: look)
        if let parts = fixedCache.withLock({ $0[key] }) { return parts }
        let parts = makeFixedParts(kind: kind, strings: s, look: look)
        // Looks change only with the key file: a bound keeps reloads from growing it for ever.
        fixedCache.withLock { cache in
            if cache.count >= 4096 { cache.removeAll() }
            cache[key] = parts
        }
        return parts
    }

    static func makeFixedParts(kind: PageVerdict.Kind, strings s: PageStrings, look: PageLook?) -> FixedParts {
        let (title, detail) = headline(PageVerdict(status: 0, kind: kind, time: 0), s)
        let colour = look?.colour.flatMap { PageLook.validColour($0) ? $0 : nil } ?? "#1f3a5f"
        let tone: String
        switch kind {
        case .genuine: tone = "#0b6b2e"
        case .replay, .rateLimited, .unavailable: tone = "#8a4b00"
        default: tone = "#b00020"
        }
        let mark: String
        switch kind {
        case .genuine: mark = "\u{2714}"
        case .replay, .rateLimited, .unavailable: mark = "!"
        default: mark = "\u{2716}"
        }
        var h = ""
        h += "<!doctype html>\n<html lang=\"\(s.language)\"><head><meta charset=\"utf-8\">"
        h += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        h += "<meta name=\"robots\" content=\"noindex\"><title>"
        h += escape(title)
        if let brand = look?.brand { h += " \u{00B7} " + escape(brand) }
        h += "</title><style>"
        h += style
        h += ".bar{background:\(colour)}.v{color:\(tone);border-color:\(tone)}.go{background:\(colour)}"
        h += "</style></head><body><div class=\"bar\">"
        h += look?.brand.map(escape) ?? ""
        h += "</div><main><div class=\"v\" data-verdict=\"\(kind.rawValue)\"><span class=\"m\" aria-hidden=\"true\">\(mark)</span><h1>"
        h += escape(title)
        h += "</h1></div><p class=\"d\">"
        h += escape(detail)
        h += "</p>"
        var tail = "</dl>"
        if kind == .genuine, let url = look?.productURL, PageLook.validURL(url) {
            let name = look?.brand ?? url
            tail += "<p><a class=\"go\" rel=\"noopener noreferrer\" href=\"" + escape(url) + "\">" + escape(s.continueTo.replacingOccurrences(of: "%@", with: name)) + "</a></p>"
        }
        tail += "</main></body></html>\n"
        return FixedParts(head: h, tail: tail,
                          uidLabel: "<dt>" + escape(s.uid) + "</dt><dd class=\"mono\">", counterLabel: "<dt>" + escape(s.counter) + "</dt><dd>",
                          sealLabel: "<dt>" + escape(s.seal) + "</dt><dd>", timeLabel: "<dt>" + escape(s.time) + "</dt><dd>",
                          reasonLabel: "<dt>" + escape(s.reason) + "</dt><dd class=\"r\">")
    }

    static func value(_ name: String, _ v: PageVerdict, _ s: PageStrings, _ look: PageLook?, _ title: String, _ detail: String) -> String {
        switch name {
        case "status": "\(v.status)"
        case "verdict": v.kind.rawValue
        case "headline": title
        case "detail": detail
        case "uid": v.uid ?? ""
        case "counter": v.counter.map(String.init) ?? ""
        case "seal": v.tamper.map { seal($0, s) } ?? ""
        case "time": utc(v.time)
        case "reason": v.kind == .genuine ? "" : v.reason ?? ""
        case "group": v.group ?? ""
        case "brand": look?.brand ?? ""
        case "productURL": look?.productURL.flatMap { PageLook.validURL($0) ? $0 : nil } ?? ""
        case "colour": look?.colour.flatMap { PageLook.validColour($0) ? $0 : nil } ?? ""
        case "lang": s.language
        default: ""
        }
    }

    /// Large type, strong contrast, one column: a phone held at arm's length.
    static let style = "*{box-sizing:border-box}html{-webkit-text-size-adjust:100%}body{margin:0;font:1.25rem/1.5 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#111;background:#fff}.bar{color:#fff;font-weight:600;padding:.75rem 1.25rem;min-height:1rem}main{max-width:36rem;margin:0 auto;padding:1.5rem 1.25rem 3rem}.v{display:flex;align-items:center;gap:.75rem;border-left:.5rem solid;padding-left:1rem;margin:1rem 0}.v h1{font-size:2.25rem;line-height:1.2;margin:0}.m{font-size:2.5rem;font-weight:700}.d{font-size:1.25rem}.seal{font-size:1.5rem;font-weight:700;color:#0b6b2e}.seal.open{color:#b00020}dl{display:grid;grid-template-columns:auto 1fr;gap:.25rem 1rem;font-size:1.1rem}dt{color:#444}dd{margin:0;overflow-wrap:anywhere}.mono{font-family:ui-monospace,Menlo,Consolas,monospace}.r{font-size:.95rem;color:#333}.go{display:inline-block;color:#fff;text-decoration:none;padding:.9rem 1.4rem;border-radius:.5rem;font-weight:600;margin-top:1rem}"
}

extension HTTPField.Name {
    static let contentSecurityPolicy = HTTPField.Name("Content-Security-Policy")!
    static let xContentTypeOptions = HTTPField.Name("X-Content-Type-Options")!
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
}
