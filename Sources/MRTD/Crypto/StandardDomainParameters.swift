// PACE's and chip authentication's standardized domain parameters (ICAO 9303 Part 11 §9.5.1,
// BSI TR-03110 Part 3 Table 4): ids 0-2 the RFC 5114 DH groups, 8-18 NIST and brainpool curves.

/// A standardized domain-parameter id and what it names.
public struct StandardDomainParameters: Sendable, Hashable, CustomStringConvertible {
    /// The standardized domain-parameter id (0-2 DH, 8-18 curves).
    public let id: Int
    /// The name people know it by (`brainpoolP256r1`, `1024-bit MODP group with 160-bit prime order subgroup`).
    public let name: String
    /// `true` for elliptic curves, `false` for DH groups.
    public let isEllipticCurve: Bool
    /// The size: bits of the prime.
    public let bits: Int
    let openSSLName: String?

    public var description: String { "\(name) (\(id))" }

    /// The table of §9.5.1; ids 3-7 and 19-31 are reserved.
    public static let all: [StandardDomainParameters] = [
        .init(id: 0, name: "1024-bit MODP group with 160-bit prime order subgroup (RFC 5114)", isEllipticCurve: false, bits: 1024, openSSLName: nil),
        .init(id: 1, name: "2048-bit MODP group with 224-bit prime order subgroup (RFC 5114)", isEllipticCurve: false, bits: 2048, openSSLName: nil),
        .init(id: 2, name: "2048-bit MODP group with 256-bit prime order subgroup (RFC 5114)", isEllipticCurve: false, bits: 2048, openSSLName: nil),
        .init(id: 8, name: "NIST P-192 (secp192r1)", isEllipticCurve: true, bits: 192, openSSLName: "prime192v1"),
        .init(id: 9, name: "brainpoolP192r1", isEllipticCurve: true, bits: 192, openSSLName: "brainpoolP192r1"),
        .init(id: 10, name: "NIST P-224 (secp224r1)", isEllipticCurve: true, bits: 224, openSSLName: "secp224r1"),
        .init(id: 11, name: "brainpoolP224r1", isEllipticCurve: true, bits: 224, openSSLName: "brainpoolP224r1"),
        .init(id: 12, name: "NIST P-256 (secp256r1)", isEllipticCurve: true, bits: 256, openSSLName: "prime256v1"),
        .init(id: 13, name: "brainpoolP256r1", isEllipticCurve: true, bits: 256, openSSLName: "brainpoolP256r1"),
        .init(id: 14, name: "brainpoolP320r1", isEllipticCurve: true, bits: 320, openSSLName: "brainpoolP320r1"),
        .init(id: 15, name: "NIST P-384 (secp384r1)", isEllipticCurve: true, bits: 384, openSSLName: "secp384r1"),
        .init(id: 16, name: "brainpoolP384r1", isEllipticCurve: true, bits: 384, openSSLName: "brainpoolP384r1"),
        .init(id: 17, name: "brainpoolP512r1", isEllipticCurve: true, bits: 512, openSSLName: "brainpoolP512r1"),
        .init(id: 18, name: "NIST P-521 (secp521r1)", isEllipticCurve: true, bits: 521, openSSLName: "secp521r1"),
    ]

    /// The entry for `id`, or nil for a reserved or proprietary id.
    public static func named(_ id: Int) -> StandardDomainParameters? { all.first { $0.id == id } }

    /// The group, built by libcrypto.
    public func domain() throws(MRTDProtocolError) -> DomainParameters {
        if let openSSLName {
            return .ellipticCurve(try EllipticCurveDomain(named: openSSLName, displayName: name))
        }
        return .diffieHellman(try DiffieHellmanDomain(rfc5114: id, name: name))
    }
}

/// The group a key agreement runs in: an elliptic curve or a DH group.
public enum DomainParameters: CustomStringConvertible, @unchecked Sendable {
    case ellipticCurve(EllipticCurveDomain)
    case diffieHellman(DiffieHellmanDomain)

    public var description: String {
        switch self {
        case let .ellipticCurve(c): return c.description
        case let .diffieHellman(d): return d.description
        }
    }

    /// Whether this is an elliptic curve.
    public var isEllipticCurve: Bool { if case .ellipticCurve = self { return true } else { return false } }

    var group: any KeyAgreementGroup {
        switch self {
        case let .ellipticCurve(c): return c
        case let .diffieHellman(d): return d
        }
    }
}
