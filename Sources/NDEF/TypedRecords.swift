// The record types this library knows (URI, Text, Smart Poster, MIME, external, Android
// application): building them and reading what they mean.

/// URI identifier codes (NFC Forum URI RTD 1.0, Table 3): the prefix each code stands for.
public enum URIPrefix {
    public static let table: [String] = [
        "", "http://www.", "https://www.", "http://", "https://", "tel:", "mailto:",
        "ftp://anonymous:anonymous@", "ftp://ftp.", "ftps://", "sftp://", "smb://", "nfs://",
        "ftp://", "dav://", "news:", "telnet://", "imap:", "rtsp://", "urn:", "pop:", "sip:",
        "sips:", "tftp:", "btspp://", "btl2cap://", "btgoep://", "tcpobex://", "irdaobex://",
        "file://", "urn:epc:id:", "urn:epc:tag:", "urn:epc:pat:", "urn:epc:raw:", "urn:epc:", "urn:nfc:",
    ]

    static let tableBytes: [[UInt8]] = table.map { Array($0.utf8) }

    /// The longest prefix that `uri` starts with (case-sensitive, as the RTD compares bytes).
    public static func split(_ uri: String) -> (code: UInt8, rest: Substring) {
        var best: (UInt8, Int) = (0, 0)
        for (code, prefix) in table.enumerated() where prefix.count > best.1 && uri.hasPrefix(prefix) {
            best = (UInt8(code), prefix.count)
        }
        return (best.0, uri.dropFirst(best.1))
    }
}

/// What a record means, when its type is one this library knows.
public enum RecordContent: Hashable, Sendable {
    case uri(String)
    case text(String, language: String, encoding: TextEncoding)
    indirect case smartPoster(SmartPoster)
    case mime(type: String, text: String?)
    case absoluteURI(String)
    case androidApplication(package: String)
    case external(type: String)
    case empty
    case other
}

public enum TextEncoding: String, Hashable, Sendable { case utf8 = "UTF-8", utf16 = "UTF-16" }

/// A Smart Poster (NFC Forum SP RTD 1.0): a URI with titles, an action, a size, a type, an icon.
public struct SmartPoster: Hashable, Sendable {
    public var uri: String?
    public var titles: [(language: String, text: String)] {
        get { titleList.map { ($0.language, $0.text) } }
        set { titleList = newValue.map { Title(language: $0.language, text: $0.text) } }
    }
    struct Title: Hashable, Sendable { var language: String; var text: String }
    var titleList: [Title] = []
    /// `act`: 0 do the action, 1 save for later, 2 open for editing.
    public var action: UInt8?
    /// `s`: size of the referenced object.
    public var size: UInt32?
    /// `t`: MIME type of the referenced object.
    public var mimeType: String?
    /// The icon's MIME type, when there is one.
    public var iconType: String?
    /// The Smart Poster's own records (for the JSON tree).
    public var records: [NDEFRecord]

    public init(uri: String?, titles: [(language: String, text: String)] = [], action: UInt8? = nil, size: UInt32? = nil, mimeType: String? = nil, iconType: String? = nil, records: [NDEFRecord] = []) {
        self.uri = uri
        self.titleList = titles.map { Title(language: $0.language, text: $0.text) }
        self.action = action
        self.size = size
        self.mimeType = mimeType
        self.iconType = iconType
        self.records = records
    }

    public static func == (a: SmartPoster, b: SmartPoster) -> Bool {
        a.uri == b.uri && a.titleList == b.titleList && a.action == b.action && a.size == b.size && a.mimeType == b.mimeType && a.records == b.records
    }
    public func hash(into h: inout Hasher) { h.combine(uri); h.combine(titleList); h.combine(records) }
}

extension NDEFRecord {
    // MARK: building

    /// A URI record, the longest identifier-code prefix abbreviated.
    public static func uri(_ uri: String) -> NDEFRecord {
        let (code, rest) = URIPrefix.split(uri)
        return NDEFRecord(tnf: .wellKnown, type: Array("U".utf8), payload: [code] + Array(rest.utf8))
    }

    /// A Text record. Language codes are 1–63 ASCII bytes (IANA, e.g. "en", "de-CH").
    public static func text(_ text: String, language: String = "en", encoding: TextEncoding = .utf8) throws(NDEFError) -> NDEFRecord {
        let lang = Array(language.utf8)
        guard (1...63).contains(lang.count), lang.allSatisfy({ $0 >= 0x21 && $0 < 0x7F }) else {
            throw NDEFError(offset: 0, rule: .badTextHeader, detail: "language code '\(language)' (1-63 ASCII characters)")
        }
        var payload: [UInt8] = [UInt8(lang.count) | (encoding == .utf16 ? 0x80 : 0)] + lang
        switch encoding {
        case .utf8: payload += Array(text.utf8)
        case .utf16:
            payload += [0xFE, 0xFF]
            for unit in text.utf16 { payload += [UInt8(unit >> 8), UInt8(unit & 0xFF)] }
        }
        return NDEFRecord(tnf: .wellKnown, type: Array("T".utf8), payload: payload)
    }

    /// A MIME record.
    public static func mime(_ type: String, _ payload: [UInt8]) -> NDEFRecord {
        NDEFRecord(tnf: .media, type: Array(type.utf8), payload: payload)
    }

    /// An NFC Forum external type record (`domain:type`, lower-cased as the RTD requires).
    public static func external(_ type: String, _ payload: [UInt8]) -> NDEFRecord {
        NDEFRecord(tnf: .external, type: Array(type.lowercased().utf8), payload: payload)
    }

    /// An Android Application Record.
    public static func androidApplication(_ package: String) -> NDEFRecord {
        external("android.com:pkg", Array(package.utf8))
    }

    /// A Smart Poster with a URI, titles and an optional action.
    public static func smartPoster(uri: String, titles: [(language: String, text: String)] = [], action: UInt8? = nil) throws(NDEFError) -> NDEFRecord {
        var inner = [NDEFRecord.uri(uri)]
        for t in titles { inner.append(try .text(t.text, language: t.language)) }
        if let action { inner.append(NDEFRecord(tnf: .wellKnown, type: Array("act".utf8), payload: [action])) }
        return NDEFRecord(tnf: .wellKnown, type: Array("Sp".utf8), payload: try NDEFMessage(records: inner).encoded())
    }

    // MARK: reading

    /// Interprets the record. Strict mode throws on broken typed payloads; relaxed mode returns
    /// `.other` for them. Smart Posters nest at most `depth` levels.
    public func content(strict: Bool = true, depth: Int = 4) throws(NDEFError) -> RecordContent {
        switch tnf {
        case .empty: return .empty
        case .wellKnown:
            if type.count == 1 && type[0] == UInt8(ascii: "U") { return try uriContent(strict: strict) }
            if type.count == 1 && type[0] == UInt8(ascii: "T") { return try textContent(strict: strict) }
            if type.count == 2 && type[0] == UInt8(ascii: "S") && type[1] == UInt8(ascii: "p") {
                return try smartPosterContent(strict: strict, depth: depth)
            }
            return .other
        case .media:
            let mimeType = typeString
            let lower = mimeType.lowercased()
            let isText = lower.hasPrefix("text/") || lower == "application/json" || lower.hasSuffix("+json")
            return .mime(type: mimeType, text: isText ? String(decoding: payload, as: UTF8.self) : nil)
        case .absoluteURI: return .absoluteURI(typeString)
        case .external:
            if type.elementsEqual("android.com:pkg".utf8) { return .androidApplication(package: String(decoding: payload, as: UTF8.self)) }
            return .external(type: typeString)
        case .unknown, .unchanged, .reserved: return .other
        }
    }

    func uriContent(strict: Bool) throws(NDEFError) -> RecordContent {
        guard let code = payload.first else { return .uri("") }
        var prefix = ""
        if Int(code) < URIPrefix.table.count {
            prefix = URIPrefix.table[Int(code)]
        } else if strict {
            throw NDEFError(offset: 0, rule: .badURICode, detail: "code 0x" + String(code, radix: 16, uppercase: true))
        }
        let rest = payload.dropFirst()
        if prefix.isEmpty { return .uri(String(decoding: rest, as: UTF8.self)) }
        // Prefix and rest copied into one string buffer: one allocation, not three.
        let prefixBytes = URIPrefix.tableBytes[Int(code)]
        let uri = String(unsafeUninitializedCapacity: prefixBytes.count + rest.count) { buffer in
            let a = prefixBytes.withUnsafeBufferPointer { buffer.initialize(fromContentsOf: $0) }
            let b = rest.withUnsafeBufferPointer { UnsafeMutableBufferPointer(rebasing: buffer[a...]).initialize(fromContentsOf: $0) }
            return a + b
        }
        return .uri(uri)
    }

    func textContent(strict: Bool) throws(NDEFError) -> RecordContent {
        // One pass over a buffer pointer: no slice copies (and their reference counting) per field.
        let result: Result<RecordContent, NDEFError> = payload.withUnsafeBufferPointer { p in
            guard let status = p.first else {
                return strict ? .failure(NDEFError(offset: 0, rule: .badTextHeader, detail: "no status byte")) : .success(.other)
            }
            let utf16 = status & 0x80 != 0
            let langLength = Int(status & 0x3F)
            guard langLength < p.count, !strict || (langLength >= 1 && status & 0x40 == 0) else {
                return strict ? .failure(NDEFError(offset: 0, rule: .badTextHeader, detail: "status byte \(Hex2.byte(status)), payload \(p.count) bytes")) : .success(.other)
            }
            let language = String(decoding: UnsafeBufferPointer(rebasing: p[1..<(1 + langLength)]), as: UTF8.self)
            let text = UnsafeBufferPointer(rebasing: p[(1 + langLength)...])
            if !utf16 {
                if let valid = utf8String(text) { return .success(.text(valid, language: language, encoding: .utf8)) }
                if strict { return .failure(NDEFError(offset: 0, rule: .badText, detail: "invalid UTF-8")) }
                return .success(.text(String(decoding: text, as: UTF8.self), language: language, encoding: .utf8))
            }
            if text.count % 2 != 0 && strict { return .failure(NDEFError(offset: 0, rule: .badText, detail: "odd number of UTF-16 bytes")) }
            var k = 0
            var bigEndian = true
            if text.count >= 2 && text[0] == 0xFF && text[1] == 0xFE { bigEndian = false; k = 2 }
            else if text.count >= 2 && text[0] == 0xFE && text[1] == 0xFF { k = 2 }
            var units: [UInt16] = []
            units.reserveCapacity(text.count / 2)
            while k + 1 < text.count {
                units.append(bigEndian ? UInt16(text[k]) << 8 | UInt16(text[k + 1]) : UInt16(text[k + 1]) << 8 | UInt16(text[k]))
                k += 2
            }
            if strict, String(validating: units, as: UTF16.self) == nil {
                return .failure(NDEFError(offset: 0, rule: .badText, detail: "invalid UTF-16"))
            }
            return .success(.text(String(decoding: units, as: UTF16.self), language: language, encoding: .utf16))
        }
        return try result.get()
    }

    func smartPosterContent(strict: Bool, depth: Int) throws(NDEFError) -> RecordContent {
        guard depth > 0 else {
            if strict { throw NDEFError(offset: 0, rule: .nestingTooDeep) }
            return .other
        }
        let inner: NDEFMessage
        if strict {
            inner = try NDEFMessage(decoding: Array(payload))
        } else {
            inner = NDEFMessage.decodeRelaxed(Array(payload)).message
        }
        var poster = SmartPoster(uri: nil, records: inner.records)
        var uriCount = 0
        for record in inner.records {
            switch try record.content(strict: strict, depth: depth - 1) {
            case let .uri(u):
                uriCount += 1
                if poster.uri == nil { poster.uri = u }
            case let .text(t, language, _): poster.titleList.append(.init(language: language, text: t))
            case let .mime(type, _): poster.iconType = type
            default:
                if record.isWellKnown("act"), let a = record.payload.first { poster.action = a }
                if record.isWellKnown("s"), record.payload.count == 4 {
                    poster.size = record.payload.reduce(0) { $0 << 8 | UInt32($1) }
                }
                if record.isWellKnown("t") { poster.mimeType = String(decoding: record.payload, as: UTF8.self) }
            }
        }
        if strict && uriCount != 1 { throw NDEFError(offset: 0, rule: .smartPosterURI, detail: "found \(uriCount)") }
        return .smartPoster(poster)
    }
}

enum Hex2 {
    static func byte(_ b: UInt8) -> String {
        let d = Array("0123456789ABCDEF")
        return String([d[Int(b >> 4)], d[Int(b & 0xF)]])
    }
}

/// The text if `bytes` are valid UTF-8. ASCII, the common case on tags, skips the validator.
@inline(__always)
func utf8String(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
    var acc: UInt8 = 0
    for b in bytes { acc |= b }
    if acc < 0x80 { return String(decoding: bytes, as: UTF8.self) }
    return String(validating: bytes, as: UTF8.self)
}
