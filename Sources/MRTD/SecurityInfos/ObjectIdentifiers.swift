// The object identifiers of ICAO 9303 Part 11 §9.2 and BSI TR-03110 Part 3 (Appendix A.1), with
// the names `apdu mrtd info` shows.
import CardCrypto

/// An object identifier as its encoded content bytes (what MSE:Set AT's DO 80 and the
/// authentication token carry) and its dotted form.
public struct ObjectIdentifier9303: Sendable, Hashable, CustomStringConvertible {
    /// The content octets of the DER encoding (no tag, no length).
    public let encoded: [UInt8]
    /// `0.4.0.127.0.7.2.2.4.2.2`; empty when the bytes are not a valid OID.
    public let dotted: String

    /// From content octets, as found on the card.
    public init(encoded: [UInt8]) {
        self.encoded = encoded
        dotted = Self.dotted(encoded) ?? ""
    }

    /// From the dotted form; nil when it is not one.
    public init?(_ dotted: String) {
        let parts = dotted.split(separator: ".").map { UInt64($0) }
        guard parts.count >= 2, parts.allSatisfy({ $0 != nil }) else { return nil }
        let arcs = parts.compactMap { $0 }
        guard arcs[0] <= 2, arcs[0] == 2 || arcs[1] < 40 else { return nil }
        var out: [UInt8] = []
        func append(_ v: UInt64) {
            var chunk: [UInt8] = [UInt8(v & 0x7F)]
            var rest = v >> 7
            while rest > 0 { chunk.insert(UInt8(rest & 0x7F) | 0x80, at: 0); rest >>= 7 }
            out += chunk
        }
        append(arcs[0] * 40 + arcs[1])
        for arc in arcs.dropFirst(2) { append(arc) }
        encoded = out
        self.dotted = dotted
    }

    static func dotted(_ bytes: [UInt8]) -> String? {
        guard !bytes.isEmpty, bytes.last! & 0x80 == 0 else { return nil }
        var arcs: [UInt64] = []
        var value: UInt64 = 0
        for b in bytes {
            guard value >> 57 == 0 else { return nil }
            value = value << 7 | UInt64(b & 0x7F)
            if b & 0x80 == 0 { arcs.append(value); value = 0 }
        }
        guard let first = arcs.first else { return nil }
        let head: [UInt64] = first < 40 ? [0, first] : first < 80 ? [1, first - 40] : [2, first - 80]
        return (head + arcs.dropFirst()).map(String.init).joined(separator: ".")
    }

    /// The name of a known OID (`id-PACE-ECDH-GM-AES-CBC-CMAC-128`), or nil.
    public var name: String? { Self.names[dotted] }

    public var description: String { name.map { "\($0) (\(dotted))" } ?? dotted }

    /// Whether this OID lies under `prefix` (a dotted arc).
    func isUnder(_ prefix: String) -> Bool { dotted.hasPrefix(prefix + ".") }

    static let bsi = "0.4.0.127.0.7"
    static let pace = "0.4.0.127.0.7.2.2.4"
    static let chipAuthentication = "0.4.0.127.0.7.2.2.3"
    static let chipAuthenticationPublicKey = "0.4.0.127.0.7.2.2.1"
    static let terminalAuthentication = "0.4.0.127.0.7.2.2.2"
    static let activeAuthentication = "2.23.136.1.1.5"
    static let standardizedDomainParameters = "0.4.0.127.0.7.1.2"
    static let ecPublicKey = "1.2.840.10045.2.1"
    static let primeField = "1.2.840.10045.1.1"
    static let dhPublicNumber = "1.2.840.10046.2.1"
    static let dhKeyAgreement = "1.2.840.113549.1.3.1"

    static let names: [String: String] = {
        var n: [String: String] = [
            "0.4.0.127.0.7.2.2.4": "id-PACE",
            "0.4.0.127.0.7.2.2.3": "id-CA",
            "0.4.0.127.0.7.2.2.3.1": "id-CA-DH", "0.4.0.127.0.7.2.2.3.2": "id-CA-ECDH",
            "0.4.0.127.0.7.2.2.1.1": "id-PK-DH", "0.4.0.127.0.7.2.2.1.2": "id-PK-ECDH",
            "0.4.0.127.0.7.2.2.2": "id-TA",
            "0.4.0.127.0.7.2.2.5": "id-RI", "0.4.0.127.0.7.2.2.6": "id-CI", "0.4.0.127.0.7.2.2.7": "id-eIDSecurity",
            "0.4.0.127.0.7.2.2.8": "id-PT",
            "2.23.136.1.1.5": "id-AA",
            "0.4.0.127.0.7.1.2": "standardizedDomainParameters",
            "1.2.840.10045.2.1": "id-ecPublicKey", "1.2.840.10045.1.1": "prime-field",
            "1.2.840.10046.2.1": "dhpublicnumber", "1.2.840.113549.1.3.1": "dhKeyAgreement",
            "1.2.840.113549.1.1.1": "rsaEncryption",
            "1.2.840.10045.4.1": "ecdsa-with-SHA1", "1.2.840.10045.4.3.1": "ecdsa-with-SHA224",
            "1.2.840.10045.4.3.2": "ecdsa-with-SHA256", "1.2.840.10045.4.3.3": "ecdsa-with-SHA384",
            "1.2.840.10045.4.3.4": "ecdsa-with-SHA512",
            "0.4.0.127.0.7.1.1.4.1.1": "ecdsa-plain-SHA1", "0.4.0.127.0.7.1.1.4.1.2": "ecdsa-plain-SHA224",
            "0.4.0.127.0.7.1.1.4.1.3": "ecdsa-plain-SHA256", "0.4.0.127.0.7.1.1.4.1.4": "ecdsa-plain-SHA384",
            "0.4.0.127.0.7.1.1.4.1.5": "ecdsa-plain-SHA512",
            "1.2.840.10045.3.1.7": "prime256v1 (NIST P-256)", "1.3.132.0.34": "secp384r1 (NIST P-384)",
            "1.3.132.0.35": "secp521r1 (NIST P-521)", "1.3.132.0.33": "secp224r1 (NIST P-224)",
            "1.2.840.10045.3.1.1": "prime192v1 (NIST P-192)",
            "1.3.36.3.3.2.8.1.1.3": "brainpoolP192r1", "1.3.36.3.3.2.8.1.1.5": "brainpoolP224r1",
            "1.3.36.3.3.2.8.1.1.7": "brainpoolP256r1", "1.3.36.3.3.2.8.1.1.9": "brainpoolP320r1",
            "1.3.36.3.3.2.8.1.1.11": "brainpoolP384r1", "1.3.36.3.3.2.8.1.1.13": "brainpoolP512r1",
        ]
        let ciphers = ["3DES-CBC-CBC", "AES-CBC-CMAC-128", "AES-CBC-CMAC-192", "AES-CBC-CMAC-256"]
        for (arc, kind) in [(1, "DH-GM"), (2, "ECDH-GM"), (3, "DH-IM"), (4, "ECDH-IM"), (6, "ECDH-CAM")] {
            n["\(pace).\(arc)"] = "id-PACE-\(kind)"
            for (i, c) in ciphers.enumerated() where !(arc == 6 && i == 0) { n["\(pace).\(arc).\(i + 1)"] = "id-PACE-\(kind)-\(c)" }
        }
        for (arc, kind) in [(1, "DH"), (2, "ECDH")] {
            for (i, c) in ciphers.enumerated() { n["\(chipAuthentication).\(arc).\(i + 1)"] = "id-CA-\(kind)-\(c)" }
        }
        return n
    }()
}

/// The key agreement of a PACE or chip authentication protocol.
public enum KeyAgreementAlgorithm: String, Sendable, Hashable, CustomStringConvertible {
    case dh = "DH", ecdh = "ECDH"
    public var description: String { rawValue }
}

/// A protocol's cipher and key length: the last arc of a PACE or CA OID (`.1` 3DES … `.4` AES-256).
public enum ProtocolCipher: String, Sendable, Hashable, CustomStringConvertible {
    case tdes = "3DES", aes128 = "AES-128", aes192 = "AES-192", aes256 = "AES-256"
    public var description: String { rawValue }

    init?(arc: Int) {
        switch arc {
        case 1: self = .tdes
        case 2: self = .aes128
        case 3: self = .aes192
        case 4: self = .aes256
        default: return nil
        }
    }

    /// The secure-messaging block cipher (3DES is two-key triple DES).
    public var algorithm: CipherAlgorithm {
        switch self {
        case .tdes: return .tdes2
        case .aes128: return .aes128
        case .aes192: return .aes192
        case .aes256: return .aes256
        }
    }
}
