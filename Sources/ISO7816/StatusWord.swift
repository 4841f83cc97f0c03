// The status word (ISO/IEC 7816-4 §5.6) with what each defined value means, and the response
// APDU it ends.

/// SW1SW2, the status word that ends every response (ISO/IEC 7816-4 §5.6).
///
/// Any 16-bit value is kept as is; `meaning` explains the ones ISO 7816-4 defines and says
/// plainly when a word is not one of them.
public struct StatusWord: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ sw1: UInt8, _ sw2: UInt8) { rawValue = UInt16(sw1) << 8 | UInt16(sw2) }

    public var sw1: UInt8 { UInt8(rawValue >> 8) }
    public var sw2: UInt8 { UInt8(rawValue & 0xFF) }

    public static let success = StatusWord(rawValue: 0x9000)
    public static let wrongLength = StatusWord(rawValue: 0x6700)
    public static let securityStatusNotSatisfied = StatusWord(rawValue: 0x6982)
    public static let conditionsNotSatisfied = StatusWord(rawValue: 0x6985)
    public static let wrongData = StatusWord(rawValue: 0x6A80)
    public static let functionNotSupported = StatusWord(rawValue: 0x6A81)
    public static let fileNotFound = StatusWord(rawValue: 0x6A82)
    public static let recordNotFound = StatusWord(rawValue: 0x6A83)
    public static let notEnoughMemory = StatusWord(rawValue: 0x6A84)
    public static let incorrectP1P2 = StatusWord(rawValue: 0x6A86)
    public static let wrongP1P2 = StatusWord(rawValue: 0x6B00)
    public static let insNotSupported = StatusWord(rawValue: 0x6D00)
    public static let claNotSupported = StatusWord(rawValue: 0x6E00)
    public static let noPreciseDiagnosis = StatusWord(rawValue: 0x6F00)
    public static let endOfFileReached = StatusWord(rawValue: 0x6282)
    public static let memoryFailure = StatusWord(rawValue: 0x6581)
    public static let verificationFailed = StatusWord(rawValue: 0x6300)

    /// Whether the command succeeded (`9000`, or the `61xx` that says more data waits).
    public var isSuccess: Bool { rawValue == 0x9000 || sw1 == 0x61 }

    /// Parses `9000`, `90 00`, `0x9000`.
    public init?(hex: some StringProtocol) {
        var text = Substring(hex)
        if text.hasPrefix("0x") || text.hasPrefix("0X") { text = text.dropFirst(2) }
        guard let bytes = try? Hex.decode(text), bytes.count == 2 else { return nil }
        self.init(bytes[0], bytes[1])
    }

    /// The broad kind of outcome.
    public enum Category: String, Hashable, Sendable {
        case success, warning, error
        /// Not an ISO 7816-4 status word (SW1 outside 61–6F and 90–9F).
        case unknown
    }

    public struct Meaning: Hashable, Sendable {
        public var category: Category
        public var text: String
    }

    public var category: Category { meaning.category }

    /// What ISO/IEC 7816-4 says this word means.
    public var meaning: Meaning {
        let s1 = sw1, s2 = sw2
        func m(_ c: Category, _ t: String) -> Meaning { Meaning(category: c, text: t) }
        switch s1 {
        case 0x90 where s2 == 0: return m(.success, "normal processing")
        case 0x61:
            let n = s2 == 0 ? 256 : Int(s2)
            return m(.success, "\(n)\(s2 == 0 ? " or more" : "") response bytes still available (use GET RESPONSE)")
        case 0x62:
            let t: [UInt8: String] = [
                0x00: "no information given (non-volatile memory unchanged)",
                0x81: "part of returned data may be corrupted",
                0x82: "end of file or record reached before reading Ne bytes",
                0x83: "selected file deactivated", 0x84: "file control information not formatted",
                0x85: "selected file in termination state", 0x86: "no input data available from a sensor",
            ]
            if let text = t[s2] { return m(.warning, "state unchanged: \(text)") }
            if (0x02...0x80).contains(s2) { return m(.warning, "state unchanged: triggering by the card (\(s2) bytes)") }
            return m(.warning, "state of non-volatile memory unchanged")
        case 0x63:
            if s2 & 0xF0 == 0xC0 {
                let n = Int(s2 & 0x0F)
                return m(.warning, "verification failed: \(n) \(n == 1 ? "try" : "tries") left (counter \(n))")
            }
            let t: [UInt8: String] = [0x00: "no information given", 0x81: "file filled up by the last write"]
            return m(.warning, "state changed: \(t[s2] ?? "warning")")
        case 0x64:
            if s2 == 0x01 { return m(.error, "immediate response required by the card") }
            return m(.error, "execution error, memory unchanged")
        case 0x65:
            if s2 == 0x81 { return m(.error, "memory failure") }
            return m(.error, "execution error, memory changed")
        case 0x66: return m(.error, "security-related issue")
        case 0x67 where s2 == 0: return m(.error, "wrong length (Lc or Le)")
        case 0x67: return m(.error, "wrong length")
        case 0x68:
            let t: [UInt8: String] = [
                0x81: "logical channel not supported", 0x82: "secure messaging not supported",
                0x83: "last command of the chain expected", 0x84: "command chaining not supported",
            ]
            return m(.error, "functions in CLA not supported" + (t[s2].map { ": \($0)" } ?? ""))
        case 0x69:
            let t: [UInt8: String] = [
                0x81: "command incompatible with file structure", 0x82: "security status not satisfied",
                0x83: "authentication method blocked", 0x84: "reference data not usable",
                0x85: "conditions of use not satisfied", 0x86: "command not allowed (no current EF)",
                0x87: "expected secure messaging data objects missing",
                0x88: "incorrect secure messaging data objects",
            ]
            return m(.error, "command not allowed" + (t[s2].map { ": \($0)" } ?? ""))
        case 0x6A:
            let t: [UInt8: String] = [
                0x80: "incorrect parameters in the command data field", 0x81: "function not supported",
                0x82: "file or application not found", 0x83: "record not found",
                0x84: "not enough memory space in the file", 0x85: "Nc inconsistent with TLV structure",
                0x86: "incorrect parameters P1-P2", 0x87: "Nc inconsistent with parameters P1-P2",
                0x88: "referenced data or reference data not found", 0x89: "file already exists",
                0x8A: "DF name already exists",
            ]
            return m(.error, "wrong parameters" + (t[s2].map { ": \($0)" } ?? ""))
        case 0x6B where s2 == 0: return m(.error, "wrong parameters P1-P2")
        case 0x6C:
            let n = s2 == 0 ? 256 : Int(s2)
            return m(.error, "wrong Le field: \(n) bytes available (re-send with Le=\(n))")
        case 0x6D where s2 == 0: return m(.error, "instruction code not supported or invalid")
        case 0x6E where s2 == 0: return m(.error, "class not supported")
        case 0x6F where s2 == 0: return m(.error, "no precise diagnosis")
        case 0x6B, 0x6D, 0x6E, 0x6F:
            return m(.error, "error (SW2 \(Hex.encode([s2])) not defined by ISO 7816-4)")
        case 0x90...0x9F:
            return m(.success, "proprietary status (application-specific)")
        default:
            return m(.unknown, "not an ISO 7816-4 status word")
        }
    }
}

extension StatusWord: CustomStringConvertible {
    /// `9000`
    public var description: String { Hex.encode([sw1, sw2]) }
}

/// A response APDU: the data and the status word that ends it.
public struct ResponseAPDU: Hashable, Sendable {
    public var data: [UInt8]
    public var statusWord: StatusWord

    public init(data: [UInt8] = [], statusWord: StatusWord) {
        self.data = data
        self.statusWord = statusWord
    }

    /// Splits a raw response. Fewer than 2 bytes is not a response.
    public init(bytes: [UInt8]) throws(ResponseError) {
        guard bytes.count >= 2 else { throw .tooShort(bytes) }
        data = Array(bytes[0..<(bytes.count - 2)])
        statusWord = StatusWord(bytes[bytes.count - 2], bytes[bytes.count - 1])
    }

    /// Splits a raw response of at least two bytes, its data kept in the raw bytes' own storage
    /// when nothing else holds them (no copy per answer).
    init(splitting raw: consuming [UInt8]) {
        statusWord = StatusWord(raw[raw.count - 2], raw[raw.count - 1])
        var bytes = raw
        bytes.removeLast(2)
        data = bytes
    }

    /// Data followed by SW1SW2.
    public var bytes: [UInt8] { data + [statusWord.sw1, statusWord.sw2] }

    public enum ResponseError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The card answered fewer than the two status bytes.
        case tooShort([UInt8])
        public var description: String {
            switch self {
            case let .tooShort(b):
                return "card answered \(b.count) byte\(b.count == 1 ? "" : "s")\(b.isEmpty ? "" : " (\(b.hexString))"), too short for a status word"
            }
        }
    }
}
