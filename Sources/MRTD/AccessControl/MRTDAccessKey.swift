// The key that opens a passport or ID card chip: the MRZ's document number, birth and expiry
// dates (BAC, PACE with the MRZ), or the card access number printed on the document (PACE).
import CardCrypto

/// What opens the chip: three MRZ fields or the CAN (ICAO 9303 Part 11 §4.3.2, §9.7.2,
/// §9.7.3). Validated when made; its description never shows the values.
public struct MRTDAccessKey: Sendable, Hashable, CustomStringConvertible {
    enum Storage: Sendable, Hashable {
        case mrz(documentNumber: String, dateOfBirth: String, dateOfExpiry: String)
        case can(String)
    }
    let storage: Storage

    /// The MRZ fields as printed: the document number (`<` filler and lower case tolerated,
    /// longer than 9 characters allowed for TD1 documents whose number continues in the optional
    /// data), the date of birth and the date of expiry as YYMMDD.
    public static func mrz(documentNumber: String, dateOfBirth: String, dateOfExpiry: String) throws(MRTDProtocolError) -> MRTDAccessKey {
        var number = String(documentNumber.uppercased().unicodeScalars.filter { $0 != " " })
        while number.hasSuffix("<") { number.removeLast() }
        guard !number.isEmpty else { throw MRTDProtocolError(.invalidAccessKey, "the document number is empty") }
        guard number.count <= 22 else { throw MRTDProtocolError(.invalidAccessKey, "the document number has \(number.count) characters, more than an MRZ holds") }
        guard number.unicodeScalars.allSatisfy(isMRZCharacter) else {
            throw MRTDProtocolError(.invalidAccessKey, "the document number holds a character outside A-Z, 0-9 and <")
        }
        try checkDate(dateOfBirth, "date of birth")
        try checkDate(dateOfExpiry, "date of expiry")
        return MRTDAccessKey(storage: .mrz(documentNumber: number, dateOfBirth: dateOfBirth, dateOfExpiry: dateOfExpiry))
    }

    /// The card access number printed on the document (6 digits on ICAO documents).
    public static func can(_ number: String) throws(MRTDProtocolError) -> MRTDAccessKey {
        guard !number.isEmpty, number.count <= 12, number.unicodeScalars.allSatisfy({ ("0"..."9").contains($0) }) else {
            throw MRTDProtocolError(.invalidAccessKey, "a card access number is digits only (6 on ICAO documents)")
        }
        return MRTDAccessKey(storage: .can(number))
    }

    /// PACE's password reference (MSE:Set AT DO 83, Part 11 §4.4.4.1): MRZ 01, CAN 02.
    public enum PasswordReference: UInt8, Sendable, Hashable, CustomStringConvertible {
        case mrz = 1
        case can = 2
        public var description: String { self == .mrz ? "MRZ" : "CAN" }
    }

    /// Which kind of key this is (never its value).
    public var passwordReference: PasswordReference {
        if case .can = storage { return .can }
        return .mrz
    }

    /// Whether BAC can use this key (BAC knows only the MRZ).
    public var supportsBAC: Bool { passwordReference == .mrz }

    public var description: String { passwordReference == .mrz ? "MRZ access key" : "CAN access key" }

    /// MRZ_information (§9.7.2): document number (padded with `<` to 9, or whole when longer) ‖
    /// its check digit ‖ date of birth ‖ check digit ‖ date of expiry ‖ check digit.
    var mrzInformation: [UInt8]? {
        guard case let .mrz(number, birth, expiry) = storage else { return nil }
        var padded = number
        while padded.count < 9 { padded.append("<") }
        // Validated at construction: every field has a check digit.
        let digit = { (field: String) in String(MRZ.checkDigit(field) ?? 0) }
        return Array((padded + digit(padded) + birth + digit(birth) + expiry + digit(expiry)).utf8)
    }

    /// K_seed of BAC (§9.7.2): the first 16 bytes of SHA-1(MRZ_information); nil for a CAN.
    var bacKeySeed: [UInt8]? { mrzInformation.map { Array(Digest.sha1.hash($0).prefix(16)) } }

    /// π of PACE (§9.7.3): SHA-1(MRZ_information), or the CAN's digits as ASCII.
    var pacePassword: [UInt8] {
        switch storage {
        case .mrz: return Digest.sha1.hash(mrzInformation ?? [])
        case let .can(number): return Array(number.utf8)
        }
    }

    static func isMRZCharacter(_ c: Unicode.Scalar) -> Bool { ("A"..."Z").contains(c) || ("0"..."9").contains(c) || c == "<" }

    static func checkDate(_ date: String, _ name: String) throws(MRTDProtocolError) {
        let digits = Array(date.utf8)
        guard digits.count == 6, digits.allSatisfy({ (0x30...0x39).contains($0) }) else {
            throw MRTDProtocolError(.invalidAccessKey, "the \(name) is not six digits (YYMMDD)")
        }
        let month = Int(digits[2] - 0x30) * 10 + Int(digits[3] - 0x30)
        let day = Int(digits[4] - 0x30) * 10 + Int(digits[5] - 0x30)
        guard (1...12).contains(month), (1...31).contains(day) else {
            throw MRTDProtocolError(.invalidAccessKey, "the \(name) is not a date (YYMMDD: month 01-12, day 01-31)")
        }
    }
}

/// Where nonces and ephemeral keys come from: the system's CSPRNG, or fixed bytes in tests of
/// published vectors (Part 11 Appendix D's RND.IFD and K.IFD, Appendix G's private keys).
public struct RandomSource: Sendable {
    let generate: @Sendable (Int) -> [UInt8]

    /// A source that calls `generate(count)` for each request.
    public init(_ generate: @escaping @Sendable (Int) -> [UInt8]) { self.generate = generate }

    /// libcrypto's CSPRNG.
    public static let system = RandomSource { secureRandomBytes($0) }

    func bytes(_ count: Int) -> [UInt8] {
        let out = generate(count)
        // A test source that runs short would weaken nothing but the test; pad it visibly.
        return out.count == count ? out : Array((out + [UInt8](repeating: 0, count: count)).prefix(count))
    }
}

extension MRTDAccessKey: CustomDebugStringConvertible, CustomReflectable {
    /// The kind of key only, as `description`.
    public var debugDescription: String { description }
    /// No children: `dump` and debuggers show the kind of key, never its fields.
    public var customMirror: Mirror { Mirror(self, children: []) }
}
