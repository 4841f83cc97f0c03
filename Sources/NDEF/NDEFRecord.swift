// The NDEF record, its type name format, and the error that names the broken rule and where.

/// The type name format of a record (NFC Forum NDEF 1.0 §3.2.6).
public enum TNF: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case empty = 0, wellKnown = 1, media = 2, absoluteURI = 3, external = 4, unknown = 5, unchanged = 6, reserved = 7

    public var description: String {
        switch self {
        case .empty: return "empty"
        case .wellKnown: return "wellKnown"
        case .media: return "media"
        case .absoluteURI: return "absoluteURI"
        case .external: return "external"
        case .unknown: return "unknown"
        case .unchanged: return "unchanged"
        case .reserved: return "reserved"
        }
    }
}

/// One NDEF record. Payload bytes share the decoded buffer: decoding copies nothing it need not.
public struct NDEFRecord: Hashable, Sendable {
    public var tnf: TNF
    public var type: [UInt8]
    public var id: [UInt8]
    public var payload: ArraySlice<UInt8>

    /// A record whose payload shares `payload`'s storage (no copy).
    public init(tnf: TNF, type: [UInt8] = [], id: [UInt8] = [], payload: ArraySlice<UInt8>) {
        self.tnf = tnf
        self.type = type
        self.id = id
        self.payload = payload
    }

    public init(tnf: TNF, type: [UInt8] = [], id: [UInt8] = [], payload: [UInt8] = []) {
        self.init(tnf: tnf, type: type, id: id, payload: payload[...])
    }

    public static func == (a: NDEFRecord, b: NDEFRecord) -> Bool {
        a.tnf == b.tnf && a.type == b.type && a.id == b.id && a.payload.elementsEqual(b.payload)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(tnf)
        hasher.combine(type)
        hasher.combine(id)
        hasher.combine(payload.count)
        for b in payload.prefix(64) { hasher.combine(b) }
    }

    /// The type as text (types are ASCII by the NFC Forum's rules; other bytes are replaced).
    public var typeString: String { String(decoding: type, as: UTF8.self) }

    public func isWellKnown(_ name: String) -> Bool { tnf == .wellKnown && type.elementsEqual(name.utf8) }
}

/// Why bytes are not a valid NDEF message: where, and which rule.
public struct NDEFError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Rule: String, Sendable, Hashable {
        case truncated = "the message ends inside a record"
        case emptyMessage = "a message has at least one record"
        case messageBeginMissing = "the first record must have MB set"
        case messageBeginRepeated = "only the first record may have MB set"
        case messageEndMissing = "the last record must have ME set"
        case trailingBytes = "bytes follow the record with ME set"
        case emptyRecordNotEmpty = "an empty record (TNF 0) has no type, ID or payload"
        case typeRequired = "this TNF needs a type"
        case typeForbidden = "unknown and unchanged records (TNF 5, 6) have no type"
        case reservedTNF = "TNF 7 is reserved"
        case unchangedOutsideChunk = "TNF 6 (unchanged) appears only in the middle and last chunks"
        case chunkContinuationExpected = "a chunked record continues with TNF 6 (unchanged)"
        case chunkIDForbidden = "only the first chunk may carry an ID"
        case chunkEndMissing = "the message ends inside a chunked record"
        case chunkMessageEnd = "ME may not be set on a chunk that is not the last"
        case payloadTooLarge = "the payload length exceeds what the message holds"
        case nestingTooDeep = "records nest deeper than allowed"
        case badURICode = "URI identifier code above 0x23 is reserved"
        case badTextHeader = "the text record's status byte or language is invalid"
        case badText = "the text is not valid in its encoding"
        case smartPosterURI = "a Smart Poster holds exactly one URI record"
        case tooLarge = "the message exceeds the size limit"
    }

    public var offset: Int
    public var rule: Rule
    public var detail: String?

    public init(offset: Int, rule: Rule, detail: String? = nil) {
        self.offset = offset
        self.rule = rule
        self.detail = detail
    }

    public var description: String {
        "NDEF byte \(offset): \(rule.rawValue)" + (detail.map { " (\($0))" } ?? "")
    }
}
