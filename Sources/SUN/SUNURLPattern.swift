// SUN URL templates with placeholders (`{picc}`, `{uid}`, `{ctr}`, `{file}`, `{mac}`): checked
// once, then matched against a tap's URL.

/// What an NTAG 424 DNA writes into its URL on every read (Secure Dynamic Messaging), as a
/// template names it: `{picc}`, `{uid}`, `{ctr}`, `{file}`, `{mac}`.
public enum SUNPlaceholder: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Encrypted PICC data: PICCDataTag, UID, SDMReadCtr, padding. 32 hex digits (AES), 48 (LRP).
    case picc
    /// The UID in the clear: 14 hex digits.
    case uid
    /// SDMReadCtr in the clear, most significant byte first: 6 hex digits.
    case ctr
    /// Encrypted file data: 32 hex digits for every 16 bytes.
    case file
    /// The truncated SDMMAC: 16 hex digits.
    case mac
    /// The TagTamper status in the clear (SDMOptions bit 3, issue 51): two letters, `C`, `O`
    /// or `I`, inside the MAC input.
    case tt

    public var description: String { "{\(rawValue)}" }

    /// What the placeholder carries, for messages.
    var meaning: String {
        switch self {
        case .picc: return "PICC data"
        case .uid: return "UID"
        case .ctr: return "read counter"
        case .file: return "encrypted file data"
        case .mac: return "SDMMAC"
        case .tt: return "TagTamper status"
        }
    }

    /// The hex digits a tag may write here, shortest first, up to `available`.
    func lengths(upTo available: Int) -> [Int] {
        switch self {
        case .picc: return [32, 48].filter { $0 <= available }
        case .uid: return available >= 14 ? [14] : []
        case .ctr: return available >= 6 ? [6] : []
        case .mac: return available >= 16 ? [16] : []
        case .file: return available >= 32 ? Array(stride(from: 32, through: available, by: 32)) : []
        case .tt: return available >= 2 ? [2] : []
        }
    }
}

/// A SUN URL template read once: its fixed text and where each placeholder stands, checked for
/// the layouts a tag can serve. One form for provisioning (`SUNURLTemplate` computes every SDM
/// offset from it) and for verification (``SUNMessage`` reads each placeholder at its place).
///
/// Placeholders may stand anywhere after the URL's host and before its fragment: as whole
/// parameter values (`?e={picc}&c={mac}`), run together in one parameter (the bulk layout
/// `?e={picc}{file}{mac}`), in path segments (`/{picc}/{mac}`, `/{picc}{mac}`), or mixed.
/// The SDMMAC covers the URL's text from `{file}` up to `{mac}` (nothing without `{file}`):
/// NT4H2421Gx §9.3.7 puts SDMMACInputOffset at or before the encrypted file data, and this is
/// where `apdu ntag424 sdm` puts it.
public struct SUNURLPattern: Sendable, Hashable, CustomStringConvertible {
    /// A run of fixed text, or a placeholder.
    public enum Part: Sendable, Hashable {
        case literal([UInt8])
        case placeholder(SUNPlaceholder)
    }

    /// The template as given.
    public let template: String
    /// The whole template in order, fragment included.
    public let parts: [Part]
    /// `scheme://host[:port]`, lowercased; empty when the template starts with the path or query.
    let origin: [UInt8]
    /// The path (from its `/`), before `?`; nil when the template is a query alone.
    let path: [Part]?
    /// The query after `?`; nil without one.
    let query: [Part]?
    /// The query as `name=value` parameters, when every one of its parts is one with a fixed
    /// name (then a tap's parameters are found by name, others ignored); nil otherwise (the
    /// query must then match as a whole).
    let parameters: [(name: [UInt8], value: [Part])]?

    public var description: String { template }

    /// The placeholders in the template, in order.
    public var placeholders: [SUNPlaceholder] {
        parts.compactMap { if case let .placeholder(p) = $0 { return p } else { return nil } }
    }

    public static func == (a: SUNURLPattern, b: SUNURLPattern) -> Bool { a.template == b.template }
    public func hash(into hasher: inout Hasher) { hasher.combine(template) }

    /// Reads and checks a template.
    /// - Throws: `SUNError.malformed` with one line naming what is wrong: an unknown, unclosed,
    ///   nested or repeated placeholder; one in the scheme, host or fragment; no `{mac}`; no
    ///   `{picc}` nor `{uid}`; `{picc}` with `{uid}` or `{ctr}`; `{ctr}` without `{uid}`;
    ///   `{file}` without the counter or after `{mac}`.
    public init(_ template: String) throws(SUNError) {
        self.template = template
        // One token a byte of fixed text or a placeholder, so that the URL's own delimiters
        // (://, /, ?, #, &, =) can be found among them.
        enum Token: Equatable { case byte(UInt8), placeholder(SUNPlaceholder) }
        var tokens: [Token] = []
        let bytes = Array(template.utf8)
        var i = 0
        var seen: Set<SUNPlaceholder> = []
        while i < bytes.count {
            switch bytes[i] {
            case UInt8(ascii: "}"):
                throw SUNError(.malformed, "the template has a '}' without '{' at character \(i + 1)")
            case UInt8(ascii: "{"):
                var j = i + 1
                while j < bytes.count, bytes[j] != UInt8(ascii: "}") {
                    if bytes[j] == UInt8(ascii: "{") {
                        throw SUNError(.malformed, "placeholders cannot overlap or nest: a '{' inside another at character \(j + 1)")
                    }
                    j += 1
                }
                guard j < bytes.count else { throw SUNError(.malformed, "the template has an unclosed placeholder at character \(i + 1)") }
                let name = String(decoding: bytes[(i + 1)..<j], as: UTF8.self)
                guard let placeholder = SUNPlaceholder(rawValue: name) else {
                    throw SUNError(.malformed, "unknown placeholder {\(SUNMessage.safe(name))}; known: {picc}, {uid}, {ctr}, {file}, {mac}, {tt}")
                }
                guard seen.insert(placeholder).inserted else { throw SUNError(.malformed, "\(placeholder) appears twice in the template") }
                tokens.append(.placeholder(placeholder))
                i = j + 1
            default:
                tokens.append(.byte(bytes[i]))
                i += 1
            }
        }
        func isPlaceholder(_ t: Token) -> Bool { if case .placeholder = t { return true } else { return false } }
        func firstByte(_ b: Character, in range: Range<Int>) -> Int? {
            tokens[range].firstIndex(of: .byte(UInt8(ascii: b.unicodeScalars.first!)))
        }
        let fragment = firstByte("#", in: 0..<tokens.count) ?? tokens.count
        if let late = tokens[fragment...].first(where: isPlaceholder), case let .placeholder(p) = late {
            throw SUNError(.malformed, "\(p) is in the URL's fragment (after '#'), which a browser never sends to a server")
        }
        // scheme "://" host: the origin ends at the first '/', '?' or '#' after it.
        var originEnd = 0
        let leadingText = tokens.prefix { !isPlaceholder($0) }.map { if case let .byte(b) = $0 { return b } else { return 0 } }
        if let hostStart = Self.schemeEnd(leadingText, min(leadingText.count, fragment)) {
            originEnd = tokens[hostStart..<fragment].firstIndex { $0 == .byte(UInt8(ascii: "/")) || $0 == .byte(UInt8(ascii: "?")) } ?? fragment
            if let early = tokens[0..<originEnd].first(where: isPlaceholder), case let .placeholder(p) = early {
                throw SUNError(.malformed, "\(p) is in the URL's host; a server sees only the path and the query, so put it after the host")
            }
        }
        let queryMark = firstByte("?", in: originEnd..<fragment)
        func parts(_ range: Range<Int>) -> [Part] {
            var out: [Part] = []
            var text: [UInt8] = []
            for t in tokens[range] {
                switch t {
                case let .byte(b): text.append(b)
                case let .placeholder(p):
                    if !text.isEmpty { out.append(.literal(text)); text = [] }
                    out.append(.placeholder(p))
                }
            }
            if !text.isEmpty { out.append(.literal(text)) }
            return out
        }
        self.parts = parts(0..<tokens.count)
        origin = tokens[0..<originEnd].map { if case let .byte(b) = $0 { return b >= 0x41 && b <= 0x5A ? b | 0x20 : b } else { return 0 } }
        let pathEnd = queryMark ?? fragment
        // A template that starts with '?' (or with a parameter) is a query alone.
        let startsWithQuery = originEnd == 0 && (queryMark == 0 || tokens.first.map { $0 != .byte(UInt8(ascii: "/")) } ?? true)
        if startsWithQuery {
            path = nil
            query = parts((queryMark.map { $0 + 1 } ?? 0)..<fragment)
        } else {
            path = parts(originEnd..<pathEnd)
            query = queryMark.map { parts(($0 + 1)..<fragment) }
        }
        parameters = query.flatMap { Self.parameters($0) }

        // The layouts a tag can serve (NT4H2421Gx §9.3, ChangeFileSettings' conditions).
        let has = Set(placeholders)
        guard has.contains(.mac) else { throw SUNError(.malformed, "the template has no {mac}: without a MAC a tap proves nothing") }
        guard !(has.contains(.picc) && (has.contains(.uid) || has.contains(.ctr))) else {
            throw SUNError(.malformed, "give {picc} (UID and counter encrypted) or {uid} and {ctr} (in the clear), not both")
        }
        guard has.contains(.picc) || has.contains(.uid) else {
            throw SUNError(.malformed, "the template needs {picc}, or {uid} with {ctr}: the MAC's key comes from the UID")
        }
        guard !has.contains(.ctr) || has.contains(.uid) || has.contains(.picc) else {
            throw SUNError(.malformed, "{ctr} needs {uid}: plain mirroring shows the UID and the counter")
        }
        if has.contains(.file) {
            guard has.contains(.picc) || has.contains(.ctr) else {
                throw SUNError(.malformed, "{file} needs the read counter mirrored ({picc}, or {uid} with {ctr}): the file data's IV comes from it")
            }
            let order = placeholders
            if let f = order.firstIndex(of: .file), let m = order.firstIndex(of: .mac), f > m {
                throw SUNError(.malformed, "{file} comes after {mac}: the MAC covers the text from {file} up to {mac}, so its input cannot start after it")
            }
        }
        if let t = placeholders.firstIndex(of: .tt), let m = placeholders.firstIndex(of: .mac), t > m {
            throw SUNError(.malformed, "{tt} comes after {mac}: the MAC covers the text from {tt} (or {file}) up to {mac}, so the status must stand before it")
        }
    }

    /// `name=value` parameters with fixed names, or nil when the query is not only those.
    static func parameters(_ query: [Part]) -> [(name: [UInt8], value: [Part])]? {
        // Split at every '&' of the fixed text (placeholders hold hex digits, never '&').
        var segments: [[Part]] = [[]]
        for part in query {
            switch part {
            case let .placeholder(p): segments[segments.count - 1].append(.placeholder(p))
            case let .literal(text):
                for (n, piece) in text.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false).enumerated() {
                    if n > 0 { segments.append([]) }
                    if !piece.isEmpty { segments[segments.count - 1].append(.literal(Array(piece))) }
                }
            }
        }
        var out: [(name: [UInt8], value: [Part])] = []
        for segment in segments where !segment.isEmpty {
            guard case let .literal(first)? = segment.first, let eq = first.firstIndex(of: UInt8(ascii: "=")), eq > 0 else { return nil }
            var value: [Part] = []
            if eq + 1 < first.count { value.append(.literal(Array(first[(eq + 1)...]))) }
            value += segment.dropFirst()
            out.append((Array(first[..<eq]), value))
        }
        let names = out.map(\.name)
        guard Set(names).count == names.count else { return nil }
        return out
    }

    /// Whether a placeholder stands in the path: then a verifier needs the tap's path (and
    /// query), not its query alone.
    public var placesInPath: Bool {
        path?.contains { if case .placeholder = $0 { return true } else { return false } } ?? false
    }

    /// Whether `path` (from its `/`, without the query) has the template's path form: how a
    /// server that sees only paths tells which template a tap was made by.
    public func fitsPath(_ path: String) -> Bool {
        guard let template = self.path else { return false }
        let given = Array(path.utf8)
        return Self.match((template.isEmpty ? [Part.literal([UInt8(ascii: "/")])] : template)[...], given, 0..<given.count) != nil
    }

    /// Where each placeholder stands in one tap's URL: byte ranges into `bytes`.
    public struct Match: Sendable, Hashable {
        public var ranges: [SUNPlaceholder: Range<Int>]
    }

    /// Reads a tap's URL by the template: the fixed parts must be there, and each placeholder
    /// is read where it stands (hex digits of its lengths). `bytes` is the whole URL
    /// (`https://…`), its path and query (`/…`), or, for a template whose placeholders are all
    /// in the query, the query alone (`e=…&c=…`, with or without `?`). The scheme and host are
    /// compared without regard to case; parameters the template does not name are ignored.
    public func match(_ bytes: [UInt8]) throws(SUNError) -> Match {
        // A fragment never reaches a server, and no placeholder stands in one.
        let end = bytes.firstIndex(of: UInt8(ascii: "#")) ?? bytes.count
        // The input's origin, path and query.
        var cursor = 0
        var inputHasPath = true
        if let colon = Self.schemeEnd(bytes, end) {
            let hostEnd = bytes[colon..<end].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? end
            if !origin.isEmpty {
                let given = bytes[0..<hostEnd].map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
                guard given == origin else {
                    throw SUNError(.malformed, "the URL's scheme and host are not the template's (\(Self.printable(origin)))")
                }
            }
            cursor = hostEnd
        } else if bytes.first != UInt8(ascii: "/") {
            inputHasPath = false
        }
        let queryMark = bytes[cursor..<end].firstIndex(of: UInt8(ascii: "?"))
        var ranges: [SUNPlaceholder: Range<Int>] = [:]
        if inputHasPath {
            let pathRange = cursor..<(queryMark ?? end)
            if let path {
                // An empty path is "/" as a browser sends it.
                let template = path.isEmpty ? [Part.literal([UInt8(ascii: "/")])] : path
                let given = pathRange.isEmpty ? [UInt8(ascii: "/")] : Array(bytes[pathRange])
                let base = pathRange.isEmpty ? -1 : pathRange.lowerBound
                guard let found = Self.match(template[...], given, 0..<given.count) else {
                    throw SUNError(.malformed, "the URL's path does not have the template's form \(Self.text(path))")
                }
                for (p, r) in found { ranges[p] = (base + r.lowerBound)..<(base + r.upperBound) }
            }
        } else if placesInPath {
            throw SUNError(.malformed, "the template has placeholders in the path; give the URL's path and query, not the query alone")
        }
        let queryRange = (queryMark.map { $0 + 1 } ?? (inputHasPath ? end : (bytes.first == UInt8(ascii: "?") ? 1 : 0)))..<end
        if let query {
            if let parameters {
                // Each of the template's parameters by name (the first of that name), wherever
                // it stands among the others.
                var given: [(name: ArraySlice<UInt8>, value: Range<Int>)] = []
                var p = queryRange.lowerBound
                while p < queryRange.upperBound {
                    let stop = bytes[p..<queryRange.upperBound].firstIndex(of: UInt8(ascii: "&")) ?? queryRange.upperBound
                    if let eq = bytes[p..<stop].firstIndex(of: UInt8(ascii: "=")) { given.append((bytes[p..<eq], (eq + 1)..<stop)) }
                    p = stop + 1
                }
                for parameter in parameters {
                    guard let value = given.first(where: { $0.name.elementsEqual(parameter.name) })?.value else {
                        throw SUNError(.malformed, "no parameter '\(Self.printable(parameter.name))' (the template's \(Self.text(parameter.value)))")
                    }
                    guard let found = Self.match(parameter.value[...], bytes, value) else {
                        throw SUNError(.malformed, "parameter '\(Self.printable(parameter.name))' does not have the template's form \(Self.text(parameter.value))\(Self.lengthHint(parameter.value))")
                    }
                    for (p, r) in found { ranges[p] = r }
                }
            } else {
                guard let found = Self.match(query[...], bytes, queryRange) else {
                    throw SUNError(.malformed, "the URL's query does not have the template's form \(Self.text(query))")
                }
                for (p, r) in found { ranges[p] = r }
            }
        }
        if let t = ranges[.tt], let m = ranges[.mac], t.lowerBound > m.lowerBound {
            throw SUNError(.malformed, "the TagTamper status comes after the SDMMAC: no SDM layout puts it there")
        }
        if let f = ranges[.file], let m = ranges[.mac], f.lowerBound > m.lowerBound {
            throw SUNError(.malformed, "the encrypted file data comes after the SDMMAC: no SDM layout puts it there")
        }
        return Match(ranges: ranges)
    }

    /// After `scheme://`: the index just past it, when `bytes[..<end]` starts with one
    /// (RFC 3986 §3.1: a letter, then letters, digits, '+', '-', '.').
    static func schemeEnd(_ bytes: [UInt8], _ end: Int) -> Int? {
        func letter(_ c: UInt8) -> Bool { (c | 0x20) >= UInt8(ascii: "a") && (c | 0x20) <= UInt8(ascii: "z") }
        guard end > 0, letter(bytes[0]) else { return nil }
        var i = 1
        while i < end, letter(bytes[i]) || (0x30...0x39).contains(bytes[i]) || bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") || bytes[i] == UInt8(ascii: ".") {
            i += 1
        }
        guard i + 3 <= end, bytes[i] == UInt8(ascii: ":"), bytes[i + 1] == UInt8(ascii: "/"), bytes[i + 2] == UInt8(ascii: "/") else { return nil }
        return i + 3
    }

    /// `parts` against `bytes[range]` as a whole: the fixed text exactly, each placeholder a run
    /// of hex digits of one of its lengths. The first fit, trying shorter lengths first (a
    /// template can be ambiguous only where fixed text is itself hex, next to `{picc}` or
    /// `{file}`).
    static func match(_ parts: ArraySlice<Part>, _ bytes: [UInt8], _ range: Range<Int>) -> [(SUNPlaceholder, Range<Int>)]? {
        guard let part = parts.first else { return range.isEmpty ? [] : nil }
        switch part {
        case let .literal(text):
            guard range.count >= text.count, bytes[range].starts(with: text) else { return nil }
            return match(parts.dropFirst(), bytes, (range.lowerBound + text.count)..<range.upperBound)
        case let .placeholder(p):
            // The TagTamper letters are not hex: C, O, I as the chip writes them (any two
            // letters are read, and the MAC decides whether they are the tag's).
            let run = p == .tt ? bytes[range].prefix(while: isLetter).count : bytes[range].prefix(while: isHexDigit).count
            for length in p.lengths(upTo: run) {
                if let rest = match(parts.dropFirst(), bytes, (range.lowerBound + length)..<range.upperBound) {
                    return [(p, range.lowerBound..<(range.lowerBound + length))] + rest
                }
            }
            return nil
        }
    }

    static func isLetter(_ c: UInt8) -> Bool { (0x41...0x5A).contains(c) }

    static func isHexDigit(_ c: UInt8) -> Bool {
        (0x30...0x39).contains(c) || (0x41...0x46).contains(c) || (0x61...0x66).contains(c)
    }

    /// Parts as the template writes them.
    static func text(_ parts: [Part]) -> String {
        parts.map { part -> String in
            switch part {
            case let .literal(t): return printable(t)
            case let .placeholder(p): return p.description
            }
        }.joined()
    }

    /// Fixed text of a template or URL for a message: printable ASCII, at most 96 characters.
    static func printable(_ text: [UInt8]) -> String {
        let shown = text.prefix(96).map { $0 >= 0x20 && $0 < 0x7F ? Character(UnicodeScalar($0)) : "?" }
        return String(shown) + (text.count > 96 ? "…" : "")
    }

    /// For a single placeholder's parameter: the lengths it takes.
    static func lengthHint(_ value: [Part]) -> String {
        guard value.count == 1, case let .placeholder(p) = value[0] else { return "" }
        switch p {
        case .picc: return " (\(p.meaning): 32 or 48 hex digits)"
        case .file: return " (\(p.meaning): 32 hex digits for every 16 bytes)"
        default: return " (\(p.meaning): \(p.lengths(upTo: 64).first ?? 0) hex digits)"
        }
    }
}
