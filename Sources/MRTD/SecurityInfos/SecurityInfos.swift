// SecurityInfos (ICAO 9303 Part 11 §9.2; BSI TR-03110 Part 3 Appendix A.1): what EF.CardAccess,
// EF.CardSecurity and DG14 say the chip supports.
internal import SwiftASN1

/// The SET OF SecurityInfo in EF.CardAccess, EF.CardSecurity's signed content or DG14. BER, with
/// indefinite lengths accepted. A SecurityInfo this library does not know, or cannot read, is
/// kept in `unknown` and never makes the whole set fail.
public struct SecurityInfos: Sendable, Hashable {
    /// The PACE protocols the chip offers (EF.CardAccess).
    public var paceInfos: [PACEInfo] = []
    /// Proprietary PACE domain parameters.
    public var paceDomainParameterInfos: [PACEDomainParameterInfo] = []
    /// Chip authentication protocols (DG14, EF.CardSecurity).
    public var chipAuthenticationInfos: [ChipAuthenticationInfo] = []
    /// The chip's static key-agreement keys (DG14, EF.CardSecurity).
    public var chipAuthenticationPublicKeyInfos: [ChipAuthenticationPublicKeyInfo] = []
    /// Active Authentication's ECDSA signature algorithm (DG14).
    public var activeAuthenticationInfos: [ActiveAuthenticationInfo] = []
    /// Terminal authentication (EAC) for DG3 and DG4.
    public var terminalAuthenticationInfos: [TerminalAuthenticationInfo] = []
    /// Every other SecurityInfo (and known ones whose fields did not parse), as found.
    public var unknown: [UnknownSecurityInfo] = []

    /// An empty set, to fill by hand (a chip known to run a protocol without saying so).
    public init() {}

    /// Parses EF.CardAccess (or EF.CardSecurity's eContent): a SET OF SecurityInfo. A DG14
    /// wrapper (tag 6E) is accepted too.
    public init(encoded bytes: [UInt8]) throws(MRTDProtocolError) {
        // A file may carry padding after its one object: parse that object only.
        var node = try SecurityInfoASN1.parse(SecurityInfoASN1.firstObject(bytes), "SecurityInfos")
        // DG14 is [APPLICATION 14] { SecurityInfos }.
        if node.identifier == ASN1Identifier(tagWithNumber: 14, tagClass: .application) {
            guard case let .constructed(inner) = node.content, let first = Array(inner).first else {
                throw MRTDProtocolError(.malformed, "DG14 holds no SecurityInfos")
            }
            node = first
        }
        for info in try SecurityInfoASN1.children(node, .set, "SecurityInfos") {
            add(info)
        }
    }

    /// DG14's content (tag 6E).
    public init(dg14 bytes: [UInt8]) throws(MRTDProtocolError) { try self.init(encoded: bytes) }

    mutating func add(_ node: ASN1Node) {
        guard case let .constructed(fields) = node.content, node.identifier == .sequence else {
            unknown.append(UnknownSecurityInfo(protocolIdentifier: nil, encoded: Array(node.encodedBytes), reason: "not a SEQUENCE"))
            return
        }
        let items = Array(fields)
        guard let first = items.first, let oid = try? SecurityInfoASN1.oid(first, "the protocol") else {
            unknown.append(UnknownSecurityInfo(protocolIdentifier: nil, encoded: Array(node.encodedBytes), reason: "no protocol OID"))
            return
        }
        let rest = Array(items.dropFirst())
        do {
            if oid.isUnder(ObjectIdentifier9303.pace), oid.dotted.split(separator: ".").count == 11 {
                paceInfos.append(try PACEInfo(protocol: oid, fields: rest))
            } else if oid.isUnder(ObjectIdentifier9303.pace) {
                paceDomainParameterInfos.append(try PACEDomainParameterInfo(protocol: oid, fields: rest))
            } else if oid.isUnder(ObjectIdentifier9303.chipAuthenticationPublicKey) {
                chipAuthenticationPublicKeyInfos.append(try ChipAuthenticationPublicKeyInfo(protocol: oid, fields: rest))
            } else if oid.isUnder(ObjectIdentifier9303.chipAuthentication), oid.dotted.split(separator: ".").count == 11 {
                chipAuthenticationInfos.append(try ChipAuthenticationInfo(protocol: oid, fields: rest))
            } else if oid.dotted == ObjectIdentifier9303.activeAuthentication {
                activeAuthenticationInfos.append(try ActiveAuthenticationInfo(protocol: oid, fields: rest))
            } else if oid.dotted == ObjectIdentifier9303.terminalAuthentication || oid.isUnder(ObjectIdentifier9303.terminalAuthentication) {
                terminalAuthenticationInfos.append(try TerminalAuthenticationInfo(protocol: oid, fields: rest))
            } else {
                unknown.append(UnknownSecurityInfo(protocolIdentifier: oid, encoded: Array(node.encodedBytes), reason: nil))
            }
        } catch {
            unknown.append(UnknownSecurityInfo(protocolIdentifier: oid, encoded: Array(node.encodedBytes), reason: error.message))
        }
    }

    /// The domain parameters a PACEInfo refers to: its standardized id, or the
    /// PACEDomainParameterInfo with the same id (or the only one) for proprietary parameters.
    public func domainParameters(for info: PACEInfo) throws(MRTDProtocolError) -> DomainParameters {
        if let id = info.parameterId, let standard = StandardDomainParameters.named(id) { return try standard.domain() }
        let matching = paceDomainParameterInfos.filter { $0.parameterId == info.parameterId || (info.parameterId == nil && paceDomainParameterInfos.count == 1) }
        guard let explicit = matching.first else {
            throw MRTDProtocolError(.unsupported, "PACE parameter id \(info.parameterId.map(String.init) ?? "(none)") is neither standardized nor described in EF.CardAccess")
        }
        return try explicit.domainParameters.domain()
    }
}

/// PACEInfo (§9.2.1): a PACE protocol the chip supports and its domain parameters.
public struct PACEInfo: Sendable, Hashable, CustomStringConvertible {
    /// The protocol OID, as found.
    public let protocolIdentifier: ObjectIdentifier9303
    /// 2 on current documents.
    public let version: Int
    /// The standardized (0-31) or proprietary domain-parameter id; may be absent.
    public let parameterId: Int?
    /// DH or ECDH.
    public let keyAgreement: KeyAgreementAlgorithm
    /// Generic, integrated or chip authentication mapping.
    public let mapping: PACEMapping
    /// 3DES or AES-128/192/256 for the session that follows.
    public let cipher: ProtocolCipher

    init(protocol oid: ObjectIdentifier9303, fields: [ASN1Node]) throws(MRTDProtocolError) {
        guard let (agreement, mapping, cipher) = Self.decompose(oid) else {
            throw MRTDProtocolError(.unsupported, "unknown PACE protocol \(oid.dotted)")
        }
        guard let versionNode = fields.first else { throw SecurityInfoASN1.fail("PACEInfo has no version") }
        protocolIdentifier = oid
        version = try SecurityInfoASN1.smallInteger(versionNode, "PACEInfo's version")
        parameterId = try fields.count > 1 ? SecurityInfoASN1.smallInteger(fields[1], "PACEInfo's parameterId") : nil
        keyAgreement = agreement
        self.mapping = mapping
        self.cipher = cipher
    }

    /// A PACEInfo for `protocol` (a dotted id-PACE OID), e.g. for a chip that has no EF.CardAccess
    /// but is known to run it.
    public init(protocol dotted: String, version: Int = 2, parameterId: Int?) throws(MRTDProtocolError) {
        guard let oid = ObjectIdentifier9303(dotted), let (agreement, mapping, cipher) = Self.decompose(oid) else {
            throw MRTDProtocolError(.unsupported, "unknown PACE protocol \(dotted)")
        }
        protocolIdentifier = oid
        self.version = version
        self.parameterId = parameterId
        keyAgreement = agreement
        self.mapping = mapping
        self.cipher = cipher
    }

    static func decompose(_ oid: ObjectIdentifier9303) -> (KeyAgreementAlgorithm, PACEMapping, ProtocolCipher)? {
        guard oid.isUnder(ObjectIdentifier9303.pace) else { return nil }
        let arcs = oid.dotted.split(separator: ".").compactMap { Int($0) }
        guard arcs.count == 11, let cipher = ProtocolCipher(arc: arcs[10]) else { return nil }
        switch arcs[9] {
        case 1: return (.dh, .generic, cipher)
        case 2: return (.ecdh, .generic, cipher)
        case 3: return (.dh, .integrated, cipher)
        case 4: return (.ecdh, .integrated, cipher)
        case 6 where cipher != .tdes: return (.ecdh, .chipAuthentication, cipher)
        default: return nil
        }
    }

    /// The standardized parameters named by `parameterId`, if it is one.
    public var standardDomainParameters: StandardDomainParameters? { parameterId.flatMap(StandardDomainParameters.named) }

    public var description: String {
        let parameters = standardDomainParameters?.name ?? parameterId.map { "proprietary parameters \($0)" } ?? "no parameter id"
        return "PACE \(keyAgreement) \(mapping), \(cipher), \(parameters) (version \(version))"
    }
}

/// PACE's mapping of the nonce to ephemeral domain parameters (§4.4.3.3).
public enum PACEMapping: String, Sendable, Hashable, CustomStringConvertible {
    case generic = "Generic Mapping"
    case integrated = "Integrated Mapping"
    case chipAuthentication = "Chip Authentication Mapping"
    public var description: String { rawValue }
}

/// PACEDomainParameterInfo (§9.2.2): proprietary domain parameters for PACE.
public struct PACEDomainParameterInfo: Sendable, Hashable {
    /// The protocol OID, as found.
    public let protocolIdentifier: ObjectIdentifier9303
    /// The parameters, as an AlgorithmIdentifier.
    public let domainParameters: DomainParameterSpecification
    /// The id PACEInfos refer to these parameters by.
    public let parameterId: Int?

    init(protocol oid: ObjectIdentifier9303, fields: [ASN1Node]) throws(MRTDProtocolError) {
        guard let first = fields.first else { throw SecurityInfoASN1.fail("PACEDomainParameterInfo has no domain parameters") }
        protocolIdentifier = oid
        domainParameters = try DomainParameterSpecification(first)
        parameterId = try fields.count > 1 ? SecurityInfoASN1.smallInteger(fields[1], "PACEDomainParameterInfo's parameterId") : nil
    }
}

/// ChipAuthenticationInfo (§9.2.5): a chip authentication protocol and the key it uses.
public struct ChipAuthenticationInfo: Sendable, Hashable, CustomStringConvertible {
    /// The protocol OID, as found.
    public let protocolIdentifier: ObjectIdentifier9303
    /// The protocol version.
    public let version: Int
    /// The key id, when the chip has several keys.
    public let keyId: Int?
    /// DH or ECDH.
    public let keyAgreement: KeyAgreementAlgorithm
    /// 3DES or AES-128/192/256 for the session that follows.
    public let cipher: ProtocolCipher

    init(protocol oid: ObjectIdentifier9303, fields: [ASN1Node]) throws(MRTDProtocolError) {
        let arcs = oid.dotted.split(separator: ".").compactMap { Int($0) }
        guard arcs.count == 11, (1...2).contains(arcs[9]), let cipher = ProtocolCipher(arc: arcs[10]) else {
            throw MRTDProtocolError(.unsupported, "unknown chip authentication protocol \(oid.dotted)")
        }
        guard let versionNode = fields.first else { throw SecurityInfoASN1.fail("ChipAuthenticationInfo has no version") }
        protocolIdentifier = oid
        version = try SecurityInfoASN1.smallInteger(versionNode, "ChipAuthenticationInfo's version")
        keyId = try fields.count > 1 ? SecurityInfoASN1.smallInteger(fields[1], "ChipAuthenticationInfo's keyId") : nil
        keyAgreement = arcs[9] == 1 ? .dh : .ecdh
        self.cipher = cipher
    }

    public var description: String { "Chip Authentication \(keyAgreement), \(cipher) (version \(version)\(keyId.map { ", key \($0)" } ?? ""))" }
}

/// ChipAuthenticationPublicKeyInfo (§9.2.6): the chip's static key-agreement public key.
public struct ChipAuthenticationPublicKeyInfo: Sendable, Hashable {
    /// id-PK-DH or id-PK-ECDH.
    public let protocolIdentifier: ObjectIdentifier9303
    /// The chip's public key and its domain parameters.
    public let publicKey: ChipPublicKey
    /// The key id, when the chip has several keys.
    public let keyId: Int?

    init(protocol oid: ObjectIdentifier9303, fields: [ASN1Node]) throws(MRTDProtocolError) {
        guard let first = fields.first else { throw SecurityInfoASN1.fail("ChipAuthenticationPublicKeyInfo has no key") }
        protocolIdentifier = oid
        publicKey = try ChipPublicKey(first)
        keyId = try fields.count > 1 ? SecurityInfoASN1.smallInteger(fields[1], "ChipAuthenticationPublicKeyInfo's keyId") : nil
    }

    /// DH (id-PK-DH) or ECDH (id-PK-ECDH).
    public var keyAgreement: KeyAgreementAlgorithm { protocolIdentifier.dotted.hasSuffix(".1") ? .dh : .ecdh }
}

/// ActiveAuthenticationInfo (§9.2.8, in DG14 when Active Authentication uses ECDSA).
public struct ActiveAuthenticationInfo: Sendable, Hashable {
    /// The protocol OID, as found.
    public let protocolIdentifier: ObjectIdentifier9303
    /// The protocol version.
    public let version: Int
    /// The signature algorithm (ecdsa-plain-SHA256 and the like).
    public let signatureAlgorithm: ObjectIdentifier9303

    init(protocol oid: ObjectIdentifier9303, fields: [ASN1Node]) throws(MRTDProtocolError) {
        guard fields.count >= 2 else { throw SecurityInfoASN1.fail("ActiveAuthenticationInfo has no signature algorithm") }
        protocolIdentifier = oid
        version = try SecurityInfoASN1.smallInteger(fields[0], "ActiveAuthenticationInfo's version")
        signatureAlgorithm = try SecurityInfoASN1.oid(fields[1], "ActiveAuthenticationInfo's signature algorithm")
    }
}

/// TerminalAuthenticationInfo (§9.2.7): the chip runs terminal authentication (EAC) for DG3/DG4.
public struct TerminalAuthenticationInfo: Sendable, Hashable {
    /// The protocol OID, as found.
    public let protocolIdentifier: ObjectIdentifier9303
    /// The protocol version.
    public let version: Int

    init(protocol oid: ObjectIdentifier9303, fields: [ASN1Node]) throws(MRTDProtocolError) {
        guard let first = fields.first else { throw SecurityInfoASN1.fail("TerminalAuthenticationInfo has no version") }
        protocolIdentifier = oid
        version = try SecurityInfoASN1.smallInteger(first, "TerminalAuthenticationInfo's version")
    }
}

/// A SecurityInfo kept as found: an unknown protocol, or a known one that did not parse.
public struct UnknownSecurityInfo: Sendable, Hashable {
    /// The protocol OID, when there is a readable one.
    public let protocolIdentifier: ObjectIdentifier9303?
    /// The whole SecurityInfo's encoding.
    public let encoded: [UInt8]
    /// Why a known protocol's fields were not read (nil for an unknown protocol).
    public let reason: String?
}

extension SecurityInfos {
    /// The SecurityInfos signed inside EF.CardSecurity (a CMS SignedData, BSI TR-03110 Part 3
    /// A.1.2.2): ContentInfo → SignedData → encapContentInfo → eContent. The signature is NOT
    /// checked here: passive authentication of EF.CardSecurity says whether to trust them.
    public init(cardSecurity bytes: [UInt8]) throws(MRTDProtocolError) {
        func children(_ node: ASN1Node, _ what: String) throws(MRTDProtocolError) -> [ASN1Node] {
            guard case let .constructed(nodes) = node.content else { throw MRTDProtocolError(.malformed, "EF.CardSecurity: \(what) is not constructed") }
            return Array(nodes)
        }
        let contentInfo = try children(try SecurityInfoASN1.parse(bytes, "EF.CardSecurity"), "the ContentInfo")
        guard contentInfo.count == 2, let wrapper = contentInfo.last, wrapper.identifier.tagClass == .contextSpecific,
              let signedData = try children(wrapper, "the content").first else {
            throw MRTDProtocolError(.malformed, "EF.CardSecurity is not a CMS ContentInfo")
        }
        let fields = try children(signedData, "the SignedData")
        guard fields.count >= 3, let explicit = try children(fields[2], "the encapsulated content").last,
              explicit.identifier.tagClass == .contextSpecific, let content = try children(explicit, "the eContent").first else {
            throw MRTDProtocolError(.malformed, "EF.CardSecurity's SignedData has no eContent")
        }
        switch content.content {
        case let .primitive(value):
            try self.init(encoded: Array(value))
        case let .constructed(pieces):
            // BER constructed OCTET STRING: the concatenated primitive pieces.
            var value: [UInt8] = []
            for piece in pieces {
                guard case let .primitive(part) = piece.content else { throw MRTDProtocolError(.malformed, "EF.CardSecurity's eContent is nested too deep") }
                value += part
            }
            try self.init(encoded: value)
        }
    }
}
