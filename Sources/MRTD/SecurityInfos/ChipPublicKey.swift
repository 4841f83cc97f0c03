// SubjectPublicKeyInfo and AlgorithmIdentifier (RFC 5280, RFC 3279; BSI TR-03110 Part 3 A.2.1)
// as chips use them: chip authentication keys (DH or EC, named, standardized or explicit
// parameters), PACE's proprietary domain parameters, and the Active Authentication key of DG15.
internal import SwiftASN1

/// An AlgorithmIdentifier that names key-agreement domain parameters.
public struct DomainParameterSpecification: Sendable, Hashable, CustomStringConvertible {
    /// id-ecPublicKey, dhpublicnumber, dhKeyAgreement, rsaEncryption or standardizedDomainParameters.
    public let algorithm: ObjectIdentifier9303
    /// The parameters field, decoded.
    public let parameters: Parameters

    /// What the parameters field holds.
    public enum Parameters: Sendable, Hashable {
        /// None, or NULL (RSA).
        case absent
        /// A curve named by its OID.
        case namedCurve(ObjectIdentifier9303)
        /// A standardized domain-parameter id (BSI TR-03110 Part 3 A.2.1.1).
        case standardized(Int)
        /// An explicit prime-field curve (RFC 3279 ECParameters).
        case explicitCurve(prime: [UInt8], a: [UInt8], b: [UInt8], generator: [UInt8], order: [UInt8], cofactor: [UInt8])
        /// DH parameters: X9.42 (p, g, q) or PKCS #3 (p, g).
        case diffieHellman(prime: [UInt8], generator: [UInt8], order: [UInt8]?)
        /// Something else, kept as its encoding.
        case other([UInt8])
    }

    init(_ node: ASN1Node) throws(MRTDProtocolError) {
        let fields = try SecurityInfoASN1.children(node, .sequence, "an AlgorithmIdentifier")
        guard let first = fields.first else { throw SecurityInfoASN1.fail("an AlgorithmIdentifier has no algorithm") }
        algorithm = try SecurityInfoASN1.oid(first, "the algorithm")
        guard fields.count > 1 else { parameters = .absent; return }
        let p = fields[1]
        if p.identifier == .null { parameters = .absent; return }
        switch algorithm.dotted {
        case ObjectIdentifier9303.standardizedDomainParameters:
            parameters = .standardized(try SecurityInfoASN1.smallInteger(p, "the standardized parameter id"))
        case ObjectIdentifier9303.ecPublicKey:
            if p.identifier == .objectIdentifier {
                parameters = .namedCurve(try SecurityInfoASN1.oid(p, "the named curve"))
            } else if p.identifier == .integer {
                parameters = .standardized(try SecurityInfoASN1.smallInteger(p, "the standardized parameter id"))
            } else {
                parameters = try Self.explicitCurve(p)
            }
        case ObjectIdentifier9303.dhPublicNumber, ObjectIdentifier9303.dhKeyAgreement:
            if p.identifier == .integer {
                parameters = .standardized(try SecurityInfoASN1.smallInteger(p, "the standardized parameter id"))
                return
            }
            let values = try SecurityInfoASN1.children(p, .sequence, "the DH parameters")
            guard values.count >= 2 else { throw SecurityInfoASN1.fail("the DH parameters lack p or g") }
            let prime = try SecurityInfoASN1.unsignedInteger(values[0], "DH p")
            let generator = try SecurityInfoASN1.unsignedInteger(values[1], "DH g")
            // X9.42 has q third; PKCS #3's optional third field is a private-value length, not q.
            let order = algorithm.dotted == ObjectIdentifier9303.dhPublicNumber && values.count > 2 ? try SecurityInfoASN1.unsignedInteger(values[2], "DH q") : nil
            parameters = .diffieHellman(prime: prime, generator: generator, order: order)
        default:
            parameters = .other(Array(p.encodedBytes))
        }
    }

    static func explicitCurve(_ node: ASN1Node) throws(MRTDProtocolError) -> Parameters {
        let f = try SecurityInfoASN1.children(node, .sequence, "the explicit curve")
        guard f.count >= 5 else { throw SecurityInfoASN1.fail("the explicit curve has \(f.count) fields, not 5 or 6") }
        let field = try SecurityInfoASN1.children(f[1], .sequence, "the curve's field")
        guard field.count == 2, try SecurityInfoASN1.oid(field[0], "the field type").dotted == ObjectIdentifier9303.primeField else {
            throw MRTDProtocolError(.unsupported, "only prime-field curves are supported")
        }
        let prime = try SecurityInfoASN1.unsignedInteger(field[1], "the curve's prime")
        let curve = try SecurityInfoASN1.children(f[2], .sequence, "the curve's coefficients")
        guard curve.count >= 2 else { throw SecurityInfoASN1.fail("the curve lacks a or b") }
        let a = try SecurityInfoASN1.octetString(curve[0], "the curve's a")
        let b = try SecurityInfoASN1.octetString(curve[1], "the curve's b")
        let generator = try SecurityInfoASN1.octetString(f[3], "the curve's generator")
        let order = try SecurityInfoASN1.unsignedInteger(f[4], "the curve's order")
        let cofactor = try f.count > 5 ? SecurityInfoASN1.unsignedInteger(f[5], "the curve's cofactor") : [1]
        return .explicitCurve(prime: prime, a: a, b: b, generator: generator, order: order, cofactor: cofactor)
    }

    /// The group these parameters describe, built by libcrypto.
    public func domain() throws(MRTDProtocolError) -> DomainParameters {
        switch parameters {
        case let .standardized(id):
            guard let standard = StandardDomainParameters.named(id) else { throw MRTDProtocolError(.unsupported, "domain-parameter id \(id) is not standardized") }
            return try standard.domain()
        case let .namedCurve(oid):
            return .ellipticCurve(try EllipticCurveDomain(oid: oid))
        case let .explicitCurve(prime, a, b, generator, order, cofactor):
            return .ellipticCurve(try EllipticCurveDomain(prime: prime, a: a, b: b, generator: generator, order: order, cofactor: cofactor))
        case let .diffieHellman(prime, generator, order):
            return .diffieHellman(try DiffieHellmanDomain(prime: prime, generator: generator, order: order))
        case .absent, .other:
            throw MRTDProtocolError(.unsupported, "\(algorithm) gives no key-agreement domain parameters")
        }
    }

    public var description: String {
        switch parameters {
        case .absent: return algorithm.description
        case let .namedCurve(oid): return oid.name ?? oid.dotted
        case let .standardized(id): return StandardDomainParameters.named(id)?.name ?? "domain parameters \(id)"
        case let .explicitCurve(prime, _, _, _, _, _): return "explicit \(Self.bits(prime))-bit curve"
        case let .diffieHellman(prime, _, _): return "\(Self.bits(prime))-bit DH group"
        case .other: return algorithm.description
        }
    }

    static func bits(_ number: [UInt8]) -> Int {
        guard let first = number.first(where: { $0 != 0 }), let index = number.firstIndex(of: first) else { return 0 }
        return (number.count - index - 1) * 8 + (8 - first.leadingZeroBitCount)
    }
}

/// A SubjectPublicKeyInfo from the chip: its algorithm and parameters, and the key itself.
public struct ChipPublicKey: Sendable, Hashable, CustomStringConvertible {
    /// The algorithm and its domain parameters.
    public let specification: DomainParameterSpecification
    /// EC: the point (usually uncompressed); DH: the public value y, unsigned; RSA: the
    /// RSAPublicKey DER (as the BIT STRING holds it).
    public let publicKey: [UInt8]
    /// The whole SubjectPublicKeyInfo, as encoded on the chip.
    public let encoded: [UInt8]

    init(_ node: ASN1Node) throws(MRTDProtocolError) {
        let fields = try SecurityInfoASN1.children(node, .sequence, "a SubjectPublicKeyInfo")
        guard fields.count == 2 else { throw SecurityInfoASN1.fail("a SubjectPublicKeyInfo has \(fields.count) fields, not 2") }
        specification = try DomainParameterSpecification(fields[0])
        let bits = try SecurityInfoASN1.bitString(fields[1], "the public key")
        let dh = [ObjectIdentifier9303.dhPublicNumber, ObjectIdentifier9303.dhKeyAgreement].contains(specification.algorithm.dotted)
            || specification.algorithm.isUnder(ObjectIdentifier9303.chipAuthenticationPublicKey) && specification.algorithm.dotted.hasSuffix(".1")
        if dh {
            // The BIT STRING holds INTEGER y.
            publicKey = try SecurityInfoASN1.unsignedInteger(try SecurityInfoASN1.parse(bits, "the DH public key"), "the DH public key")
        } else {
            publicKey = bits
        }
        encoded = Array(node.encodedBytes)
    }

    /// Parses a SubjectPublicKeyInfo (DG15's content without its 6F tag, or a CA key).
    public init(encoded bytes: [UInt8]) throws(MRTDProtocolError) {
        var node = try SecurityInfoASN1.parse(bytes, "the public key")
        // DG15 is [APPLICATION 15] { SubjectPublicKeyInfo }.
        if node.identifier == ASN1Identifier(tagWithNumber: 15, tagClass: .application) {
            guard case let .constructed(inner) = node.content, let first = Array(inner).first else { throw SecurityInfoASN1.fail("DG15 holds no public key") }
            node = first
        }
        try self.init(node)
    }

    /// Whether this is an RSA key (Active Authentication).
    public var isRSA: Bool { specification.algorithm.dotted == "1.2.840.113549.1.1.1" }

    public var description: String { isRSA ? "RSA public key" : "\(specification) public key" }
}

extension EllipticCurveDomain {
    /// A named curve by its OID (prime256v1, secp384r1, brainpoolP256r1…).
    convenience init(oid: ObjectIdentifier9303) throws(MRTDProtocolError) {
        let nid = OpenSSLNames.nid(dotted: oid.dotted)
        guard nid != 0, let shortName = OpenSSLNames.shortName(nid: nid) else {
            throw MRTDProtocolError(.unsupported, "libcrypto does not know the curve \(oid)")
        }
        try self.init(named: shortName, displayName: oid.name ?? shortName)
    }
}
