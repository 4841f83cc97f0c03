// The emulated chip's own reading and writing of SecurityInfos, and the PACE and chip
// authentication protocols their OIDs name.
import CardCrypto

/// What the chip reads from its own SecurityInfos (ICAO 9303 Part 11 §9.2; BSI TR-03110 Part 3
/// §A.1): the PACEInfos of EF.CardAccess, and the chip and active authentication entries of
/// DG14. Entries it does not know are skipped, as a reader would.
struct SecurityInfos: Sendable {
    struct PACEInfo: Sendable, Hashable {
        var protocolOID: String
        var version: Int
        var parameterID: Int?
    }

    struct ChipAuthenticationInfo: Sendable, Hashable {
        var protocolOID: String
        var version: Int
        var keyID: Int?
    }

    struct ChipAuthenticationPublicKeyInfo: Sendable, Hashable {
        var protocolOID: String
        var subjectPublicKeyInfo: [UInt8]
        var keyID: Int?
    }

    var pace: [PACEInfo] = []
    var chipAuthentication: [ChipAuthenticationInfo] = []
    var chipAuthenticationPublicKeys: [ChipAuthenticationPublicKeyInfo] = []
    /// ActiveAuthenticationInfo's signatureAlgorithm (an ecdsa-plain OID), when present.
    var activeAuthenticationSignatureAlgorithm: String?

    init() {}

    /// From a SET OF SecurityInfo, or from DG14 (the set inside tag 6E).
    init(_ bytes: [UInt8]) throws(DERError) {
        var (outer, _) = try DERElement.read(bytes, at: 0)
        if outer.tag == [0x6E] {
            guard let inner = try outer.children().first else { throw DERError("DG14 holds no SecurityInfos") }
            outer = inner
        }
        guard outer.tag == [0x31] else { throw DERError("SecurityInfos are not a SET") }
        for info in try outer.children() where info.tag == [0x30] {
            let fields = try info.children()
            guard fields.count >= 2, let oid = fields[0].objectIdentifier else { continue }
            if oid.hasPrefix(OID.pace + "."), let version = fields[1].integer {
                pace.append(PACEInfo(protocolOID: oid, version: version, parameterID: fields.count > 2 ? fields[2].integer : nil))
            } else if oid.hasPrefix(OID.chipAuthentication + "."), let version = fields[1].integer {
                chipAuthentication.append(ChipAuthenticationInfo(protocolOID: oid, version: version, keyID: fields.count > 2 ? fields[2].integer : nil))
            } else if oid.hasPrefix(OID.publicKey + "."), fields[1].tag == [0x30] {
                chipAuthenticationPublicKeys.append(ChipAuthenticationPublicKeyInfo(protocolOID: oid, subjectPublicKeyInfo: fields[1].encoded,
                                                                                    keyID: fields.count > 2 ? fields[2].integer : nil))
            } else if oid == OID.activeAuthentication, fields.count > 2, let algorithm = fields[2].objectIdentifier {
                activeAuthenticationSignatureAlgorithm = algorithm
            }
        }
    }

    /// DER of each entry, for the specimen's EF.CardAccess and DG14.
    static func encode(pace: PACEInfo) -> [UInt8] {
        var fields = [DER.oid(pace.protocolOID), DER.integer(pace.version)]
        if let id = pace.parameterID { fields.append(DER.integer(id)) }
        return DER.sequence(of: fields)
    }

    static func encode(chipAuthentication info: ChipAuthenticationInfo) -> [UInt8] {
        var fields = [DER.oid(info.protocolOID), DER.integer(info.version)]
        if let id = info.keyID { fields.append(DER.integer(id)) }
        return DER.sequence(of: fields)
    }

    static func encode(chipAuthenticationKey info: ChipAuthenticationPublicKeyInfo) -> [UInt8] {
        var fields = [DER.oid(info.protocolOID), info.subjectPublicKeyInfo]
        if let id = info.keyID { fields.append(DER.integer(id)) }
        return DER.sequence(of: fields)
    }

    static func encode(activeAuthentication algorithm: String) -> [UInt8] {
        DER.sequence(DER.oid(OID.activeAuthentication), DER.integer(1), DER.oid(algorithm))
    }
}

/// A PACE protocol as its OID spells it (Part 11 §9.2.3): key agreement, mapping and cipher.
struct PACEProtocol: Sendable, Hashable {
    enum Mapping: Int, Sendable { case genericDH = 1, genericECDH = 2, integratedDH = 3, integratedECDH = 4, chipAuthenticationECDH = 6 }
    var mapping: Mapping
    var cipher: CipherKind

    init?(oid: String) {
        guard oid.hasPrefix(OID.pace + ".") else { return nil }
        let arcs = oid.dropFirst(OID.pace.count + 1).split(separator: ".")
        guard arcs.count == 2, let m = Int(arcs[0]).flatMap(Mapping.init), let c = Int(arcs[1]).flatMap(CipherKind.init) else { return nil }
        mapping = m
        cipher = c
    }

    init(mapping: Mapping, cipher: CipherKind) {
        self.mapping = mapping
        self.cipher = cipher
    }

    var oid: String { "\(OID.pace).\(mapping.rawValue).\(cipher.rawValue)" }
    var isElliptic: Bool { mapping == .genericECDH || mapping == .integratedECDH || mapping == .chipAuthenticationECDH }
}

/// The last arc of PACE and chip authentication OIDs: the cipher and MAC of secure messaging.
enum CipherKind: Int, Sendable, Hashable {
    case tdes = 1, aes128 = 2, aes192 = 3, aes256 = 4

    var algorithm: CipherAlgorithm {
        switch self {
        case .tdes: return .tdes2
        case .aes128: return .aes128
        case .aes192: return .aes192
        case .aes256: return .aes256
        }
    }
}

/// A chip authentication protocol as its OID spells it (id-CA-DH-… or id-CA-ECDH-…).
struct ChipAuthenticationProtocol: Sendable, Hashable {
    var elliptic: Bool
    var cipher: CipherKind

    init?(oid: String) {
        guard oid.hasPrefix(OID.chipAuthentication + ".") else { return nil }
        let arcs = oid.dropFirst(OID.chipAuthentication.count + 1).split(separator: ".")
        guard arcs.count == 2, let kind = Int(arcs[0]), kind == 1 || kind == 2, let c = Int(arcs[1]).flatMap(CipherKind.init) else { return nil }
        elliptic = kind == 2
        cipher = c
    }

    init(elliptic: Bool, cipher: CipherKind) {
        self.elliptic = elliptic
        self.cipher = cipher
    }

    var oid: String { "\(OID.chipAuthentication).\(elliptic ? 2 : 1).\(cipher.rawValue)" }
}
