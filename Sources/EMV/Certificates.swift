// EMV's public-key certificates and signed data (Book 2 §5-6): recovered with RSA, checked
// field by field, the hash compared in constant time.
import CardCrypto
import ISO7816

/// An RSA public key of the EMV hierarchy.
public struct EMVPublicKey: Sendable, Hashable {
    public var modulus: [UInt8]
    public var exponent: [UInt8]
    public init(modulus: [UInt8], exponent: [UInt8]) {
        self.modulus = modulus
        self.exponent = exponent
    }
}

/// Why a certificate or a signature does not verify: the step, in words.
public struct ODAFailure: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// A month as EMV writes expiry dates (MMYY in certificates, YYMMDD in 5F24), compared by year
/// then month.
public struct EMVMonth: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var year: Int
    public var month: Int
    public init(year: Int, month: Int) {
        self.year = year
        self.month = month
    }
    /// From a certificate's MMYY (BCD), the century as `year(yy:)` gives it.
    init?(mmyy: [UInt8]) {
        guard mmyy.count == 2, let m = EMVMonth.bcd(mmyy[0]), let y = EMVMonth.bcd(mmyy[1]), (1...12).contains(m) else { return nil }
        self.init(year: EMVMonth.year(yy: y), month: m)
    }
    /// A two-digit year's century: 00-49 are 20YY, 50-99 are 19YY (EMV Book 4 §6.7.3, date
    /// management; openemv/emv-utils `src/emv_date.c` reads certificate dates the same way).
    /// Issue 48: read as 20YY, a certificate that ran out in 12/99 was valid until 2099.
    public static func year(yy: Int) -> Int { yy < 50 ? 2000 + yy : 1900 + yy }
    static func bcd(_ b: UInt8) -> Int? { b >> 4 <= 9 && b & 0x0F <= 9 ? Int(b >> 4) * 10 + Int(b & 0x0F) : nil }
    public static func < (a: Self, b: Self) -> Bool { (a.year, a.month) < (b.year, b.month) }
    public var description: String { "\(year)-\(month < 10 ? "0" : "")\(month)" }
}

/// A day as EMV writes it (YYMMDD in BCD: 9A, a CA key's expiry), compared by year, month, day.
public struct EMVDate: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var year: Int
    public var month: Int
    public var day: Int
    /// nil for anything but a real YYMMDD (a CA key file's 000000, "no date given", among them).
    public init?(yymmdd: [UInt8]) {
        guard yymmdd.count == 3, let y = EMVMonth.bcd(yymmdd[0]), let m = EMVMonth.bcd(yymmdd[1]), let d = EMVMonth.bcd(yymmdd[2]),
              (1...12).contains(m), (1...31).contains(d) else { return nil }
        (year, month, day) = (EMVMonth.year(yy: y), m, d)
    }
    public static func < (a: Self, b: Self) -> Bool { (a.year, a.month, a.day) < (b.year, b.month, b.day) }
    public var description: String { "\(year)-\(month < 10 ? "0" : "")\(month)-\(day < 10 ? "0" : "")\(day)" }
}

/// A recovered issuer public key certificate (format 02).
public struct IssuerCertificate: Sendable, Hashable {
    /// The leftmost 3-8 digits of the PAN, padded with F (4 bytes).
    public var issuerIdentifier: [UInt8]
    public var expiry: EMVMonth
    public var serial: [UInt8]
    public var key: EMVPublicKey
}

/// A recovered ICC public key certificate (format 04).
public struct ICCCertificate: Sendable, Hashable {
    /// The PAN, padded with F (10 bytes).
    public var pan: [UInt8]
    public var expiry: EMVMonth
    public var serial: [UInt8]
    public var key: EMVPublicKey
}

/// Signed dynamic data recovered from an SDAD (format 05, or Visa fDDA's 95).
public struct SignedDynamicData: Sendable, Hashable {
    public var format: UInt8
    /// The ICC dynamic data: its length byte's count of bytes, the ICC Dynamic Number first.
    public var iccDynamicData: [UInt8]
    /// The ICC Dynamic Number (IDN).
    public var iccDynamicNumber: [UInt8] {
        guard let n = iccDynamicData.first, Int(n) < iccDynamicData.count else { return [] }
        return Array(iccDynamicData[1...Int(n)])
    }
}

/// The recovery and checks of EMV Book 2.
public enum EMVCertificates {
    /// Recovers X and checks what every recovered message has: its length, header 6A,
    /// trailer BC, the format, SHA-1 (hash algorithm 01).
    static func open(_ signature: [UInt8], key: EMVPublicKey, format: UInt8, what: String) throws(ODAFailure) -> [UInt8] {
        // Header, format, a SHA-1 and the trailer: a key shorter than that recovers nothing
        // these checks can index (issue 48: a 16-byte issuer key trapped in SDA).
        guard key.modulus.count >= 22 else { throw ODAFailure("the key that signs the \(what) is \(key.modulus.count) bytes, too short for any EMV signature") }
        guard signature.count == key.modulus.count else {
            throw ODAFailure("the \(what) is \(signature.count) bytes; the key that signs it is \(key.modulus.count)")
        }
        guard let x = RSARecovery.recover(signature, modulus: key.modulus, exponent: key.exponent) else {
            throw ODAFailure("the \(what) cannot be recovered with its key (not below the modulus)")
        }
        guard x.first == 0x6A, x.last == 0xBC else {
            throw ODAFailure("the recovered \(what) has header \(Hex.encode([x.first ?? 0])) and trailer \(Hex.encode([x.last ?? 0])), 6A and BC expected: it was not signed with this key")
        }
        guard x[1] == format else {
            throw ODAFailure("the recovered \(what) has format \(Hex.encode([x[1]])), \(Hex.encode([format])) expected")
        }
        return x
    }

    static func checkHash(_ x: [UInt8], over data: [UInt8], what: String) throws(ODAFailure) {
        let hash = Array(x[(x.count - 21)..<(x.count - 1)])
        guard constantTimeEquals(Digest.sha1.hash(data), hash) else {
            throw ODAFailure("the hash in the \(what) does not match the data it signs")
        }
    }

    /// Recovers the issuer public key from its certificate (90), remainder (92) and exponent
    /// (9F32) with the CA key, checking format 02, SHA-1, RSA and the hash (Book 2 §5.3).
    public static func issuerKey(certificate: [UInt8], remainder: [UInt8], exponent: [UInt8], ca: EMVPublicKey) throws(ODAFailure) -> IssuerCertificate {
        guard ca.modulus.count >= 36 else { throw ODAFailure("the CA key is \(ca.modulus.count) bytes, too short for an issuer certificate (36 at least)") }
        let x = try open(certificate, key: ca, format: 0x02, what: "issuer public key certificate")
        let n = x.count
        guard x[11] == 0x01, x[12] == 0x01 else {
            throw ODAFailure("the issuer certificate names hash algorithm \(Hex.encode([x[11]])) and key algorithm \(Hex.encode([x[12]])); 01 (SHA-1) and 01 (RSA) are defined")
        }
        try checkHash(x, over: Array(x[1..<(n - 21)]) + remainder + exponent, what: "issuer public key certificate")
        let modulus = try subjectModulus(x, at: 13, remainder: remainder, exponent: exponent, names: ("issuer", "9F32", "92"))
        guard let expiry = EMVMonth(mmyy: Array(x[6..<8])) else { throw ODAFailure("the issuer certificate's expiry \(Array(x[6..<8]).hexString) is not MMYY") }
        return IssuerCertificate(issuerIdentifier: Array(x[2..<6]), expiry: expiry, serial: Array(x[8..<11]), key: EMVPublicKey(modulus: modulus, exponent: exponent))
    }

    /// The certified key's modulus: its length and exponent length at `at` and `at + 1`, its
    /// leftmost bytes after them up to the hash, the rest from the remainder.
    static func subjectModulus(_ x: [UInt8], at i: Int, remainder: [UInt8], exponent: [UInt8], names: (key: String, exponent: String, remainder: String)) throws(ODAFailure) -> [UInt8] {
        let keyLength = Int(x[i])
        guard Int(x[i + 1]) == exponent.count else {
            throw ODAFailure("the \(names.key) certificate says the exponent is \(x[i + 1]) bytes, \(names.exponent) is \(exponent.count)")
        }
        let leftmost = Array(x[(i + 2)..<(x.count - 21)])
        if keyLength <= leftmost.count { return Array(leftmost.prefix(keyLength)) }
        guard remainder.count == keyLength - leftmost.count else {
            throw ODAFailure("the \(names.key) key is \(keyLength) bytes: the certificate holds \(leftmost.count), the remainder (\(names.remainder)) should hold \(keyLength - leftmost.count) and holds \(remainder.count)")
        }
        return leftmost + remainder
    }

    /// Recovers the Data Authentication Code from the Signed Static Application Data (93),
    /// checking format 03 and the hash over the static data (Book 2 §5.4).
    public static func staticDataAuthenticationCode(ssad: [UInt8], issuer: EMVPublicKey, staticData: [UInt8]) throws(ODAFailure) -> [UInt8] {
        // 6A, 03, the hash algorithm, the DAC, a SHA-1, BC: 26 bytes at least (Book 2 §5.4 Table 7).
        guard issuer.modulus.count >= 26 else { throw ODAFailure("the issuer key is \(issuer.modulus.count) bytes, too short to sign static data (26 at least)") }
        let x = try open(ssad, key: issuer, format: 0x03, what: "signed static application data")
        guard x[2] == 0x01 else { throw ODAFailure("the signed static data names hash algorithm \(Hex.encode([x[2]])); 01 (SHA-1) is defined") }
        try checkHash(x, over: Array(x[1..<(x.count - 21)]) + staticData, what: "signed static application data")
        return Array(x[3..<5])
    }

    /// Recovers the ICC public key from its certificate (9F46), remainder (9F48) and exponent
    /// (9F47) with the issuer key, checking format 04 and the hash over the static data too
    /// (Book 2 §6.4).
    public static func iccKey(certificate: [UInt8], remainder: [UInt8], exponent: [UInt8], issuer: EMVPublicKey, staticData: [UInt8]) throws(ODAFailure) -> ICCCertificate {
        guard issuer.modulus.count >= 42 else { throw ODAFailure("the issuer key is \(issuer.modulus.count) bytes, too short for an ICC certificate (42 at least)") }
        let x = try open(certificate, key: issuer, format: 0x04, what: "ICC public key certificate")
        let n = x.count
        guard x[17] == 0x01, x[18] == 0x01 else {
            throw ODAFailure("the ICC certificate names hash algorithm \(Hex.encode([x[17]])) and key algorithm \(Hex.encode([x[18]])); 01 and 01 are defined")
        }
        try checkHash(x, over: Array(x[1..<(n - 21)]) + remainder + exponent + staticData, what: "ICC public key certificate")
        let modulus = try subjectModulus(x, at: 19, remainder: remainder, exponent: exponent, names: ("ICC", "9F47", "9F48"))
        guard let expiry = EMVMonth(mmyy: Array(x[12..<14])) else { throw ODAFailure("the ICC certificate's expiry \(Array(x[12..<14]).hexString) is not MMYY") }
        return ICCCertificate(pan: Array(x[2..<12]), expiry: expiry, serial: Array(x[14..<17]), key: EMVPublicKey(modulus: modulus, exponent: exponent))
    }

    /// Recovers and checks Signed Dynamic Application Data (9F4B): format 05 (DDA, the hash
    /// over the DDOL data) or 95 (Visa fDDA, the hash over UN, amount, currency and 9F69 as
    /// `terminalData` gives them) (Book 2 §6.5).
    public static func dynamicData(sdad: [UInt8], icc: EMVPublicKey, terminalData: [UInt8], format: UInt8 = 0x05) throws(ODAFailure) -> SignedDynamicData {
        guard icc.modulus.count >= 25 else { throw ODAFailure("the ICC key is \(icc.modulus.count) bytes, too short to sign dynamic data (25 at least)") }
        let x = try open(sdad, key: icc, format: format, what: "signed dynamic application data")
        guard x[2] == 0x01 else { throw ODAFailure("the signed dynamic data names hash algorithm \(Hex.encode([x[2]])); 01 (SHA-1) is defined") }
        let length = Int(x[3])
        guard 4 + length <= x.count - 21 else { throw ODAFailure("the signed dynamic data claims \(length) bytes of ICC dynamic data; the signature holds \(x.count - 25)") }
        try checkHash(x, over: Array(x[1..<(x.count - 21)]) + terminalData, what: "signed dynamic application data (a replayed or cloned answer, or another unpredictable number)")
        return SignedDynamicData(format: format, iccDynamicData: Array(x[4..<(4 + length)]))
    }

    /// Whether an issuer identifier (leftmost PAN digits padded with F) matches the PAN.
    public static func issuerIdentifier(_ id: [UInt8], matches pan: String) -> Bool {
        let digits = id.flatMap { [Int($0 >> 4), Int($0 & 0x0F)] }.prefix { $0 != 0x0F }
        guard digits.count >= 3 else { return false }
        return pan.hasPrefix(digits.map(String.init).joined())
    }

    /// The PAN in an ICC certificate (F-padded cn) as digits.
    public static func digits(_ cn: [UInt8]) -> String {
        cn.flatMap { [Int($0 >> 4), Int($0 & 0x0F)] }.prefix { $0 != 0x0F }.map(String.init).joined()
    }
}
