// Which MIFARE Plus a card is, in which security level, and why this tool says so: GetVersion,
// the ATS's historical bytes, the WritePerso probe, the PC/SC card name, Read_Sig.
import ISO7816

/// A MIFARE Plus generation.
public enum MifarePlusGeneration: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case s, x, se, ev1, ev2, unknown
    public var description: String {
        switch self {
        case .s: return "MIFARE Plus S"
        case .x: return "MIFARE Plus X"
        case .se: return "MIFARE Plus SE"
        case .ev1: return "MIFARE Plus EV1"
        case .ev2: return "MIFARE Plus EV2"
        case .unknown: return "MIFARE Plus (generation unknown)"
        }
    }
    /// Whether the card answers GetVersion and Read_Sig and takes the ISO 7816 wrapping.
    public var hasVersion: Bool { self == .ev1 || self == .ev2 }
}

/// A security level: 0 factory (personalisation), 1 Classic-compatible, 2 (AES authentication,
/// Crypto1 data), 3 AES throughout.
public enum MifarePlusSecurityLevel: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case sl0 = 0, sl1, sl2, sl3
    public var description: String { "SL\(rawValue)" }
}

/// What this tool knows of a MIFARE Plus card, each claim with the evidence it rests on.
public struct MifarePlusIdentity: Sendable, Hashable {
    public var generation: MifarePlusGeneration
    public var level: MifarePlusSecurityLevel?
    /// Storage in bytes (2048, 4096); nil when nothing the card said tells.
    public var storage: Int?
    public var uid: [UInt8]?
    /// GetVersion's bytes (EV1, EV2).
    public var version: [UInt8]?
    /// Read_Sig's 56 bytes (EV1, EV2), with the NXP key it verifies with.
    public var signature: [UInt8]?
    public var signatureKey: OriginalitySignature.PublicKey?
    /// The ATS historical bytes the ATR carries.
    public var historicalBytes: [UInt8]
    /// A claim and what it rests on: ("generation ev1", "GetVersion: vendor 04, type 02, major 11").
    public struct Evidence: Sendable, Hashable {
        public var claim: String
        public var evidence: String
        public init(_ claim: String, _ evidence: String) {
            self.claim = claim
            self.evidence = evidence
        }
    }
    public var evidence: [Evidence]

    /// The number of sectors of the storage: 32 on 2K, 40 on 4K.
    public var sectors: Int? { storage.map { $0 >= 4096 ? 40 : 32 } }

    /// "MIFARE Plus EV1 2K in SL3".
    public var summary: String {
        let size = storage.map { " \($0 / 1024)K" } ?? ""
        let name = generation == .unknown ? "MIFARE Plus\(size) (generation unknown)" : "\(generation)\(size)"
        return "\(name) in \(level?.description ?? "an unknown security level")"
    }

    /// The ATS historical bytes NXP gives the first generations (proxmark3 `cmdhf14a.c`; the S in
    /// proxmark3's own SL3 traces): S `C1 05 2F 2F 00 35 C7`, X `C1 05 2F 2F 01 BC D6`, SE
    /// `C1 05 21 30 00 F6 D1`. EV1 and EV2 have no published ATS of their own (an EV1 has been
    /// seen with X's bytes); GetVersion tells them.
    public static let historicalBytesTable: [(bytes: [UInt8], generation: MifarePlusGeneration)] = [
        ([0xC1, 0x05, 0x2F, 0x2F, 0x00, 0x35, 0xC7], .s),
        ([0xC1, 0x05, 0x2F, 0x2F, 0x01, 0xBC, 0xD6], .x),
        ([0xC1, 0x05, 0x21, 0x30, 0x00, 0xF6, 0xD1], .se),
        ([0xC1, 0x05, 0x21, 0x30, 0x10, 0xF6, 0xD1], .se),
    ]

    /// Whether an ATR's historical bytes name a MIFARE Plus: one of the table's, or NXP's `C1 05`
    /// tag with a type byte whose high nibble is 2 (Plus; 1 is DESFire), generation unknown.
    public static func historicalBytesNamePlus(_ atr: [UInt8]) -> MifarePlusGeneration? {
        guard let atr = try? ATR(bytes: atr), atr.storageCard == nil else { return nil }
        let h = atr.historicalBytes
        if let known = historicalBytesTable.first(where: { $0.bytes == h }) { return known.generation }
        return h.count >= 3 && h[0] == 0xC1 && h[1] == 0x05 && h[2] >> 4 == 2 ? .unknown : nil
    }

    /// Decodes GetVersion's storage byte: 16 is 2K, 18 is 4K (NXP's 2^(n/2)).
    static func storage(_ byte: UInt8) -> Int? { byte >> 1 < 24 ? 1 << Int(byte >> 1) : nil }
}

extension MifarePlusCard {
    /// Identifies the card behind `atr`, with no key and no write: the PC/SC card name for SL1
    /// and SL2; then GetVersion; then the ATS's historical bytes; then, only when those left the
    /// level open, the WritePerso probe. Read_Sig is asked of EV1 and EV2 and checked with NXP's
    /// keys. Throws `.wrongCard` for a card none of these show to be a MIFARE Plus.
    public static func identify(_ transport: APDUTransport, atr: [UInt8], uid knownUID: [UInt8]? = nil) throws -> (MifarePlusCard, MifarePlusIdentity) {
        let parsed = try? ATR(bytes: atr)
        var id = MifarePlusIdentity(generation: .unknown, level: nil, storage: nil, uid: knownUID, version: nil, signature: nil,
                                    signatureKey: nil, historicalBytes: parsed?.historicalBytes ?? [], evidence: [])
        if let storageCard = parsed?.storageCard {
            let names: [UInt16: (MifarePlusSecurityLevel, Int)] = [0x0036: (.sl1, 2048), 0x0037: (.sl1, 4096), 0x0038: (.sl2, 2048), 0x0039: (.sl2, 4096)]
            let name = Hex.encode([UInt8(storageCard.cardName >> 8), UInt8(storageCard.cardName & 0xFF)])
            guard storageCard.standard == 0x03, let (level, size) = names[storageCard.cardName] else {
                // A reader that goes by the SAK calls an SL1 card a Classic 1K or 4K; an EV1 or EV2
                // still answers GetVersion on its ISO 14443-4 side (issue 43, issue 48).
                if storageCard.standard == 0x03, [0x0001, 0x0002].contains(storageCard.cardName),
                   let found = try identifyLevel1(transport, calledClassic: name, into: id) {
                    return found
                }
                throw MifarePlusError(.wrongCard, "not a MIFARE Plus: the reader names a storage card \(name)\([0x0001, 0x0002].contains(storageCard.cardName) ? ", and it answers no GetVersion of a MIFARE Plus EV1 or EV2 (an S or X in SL1 cannot be told from a Classic here)" : "")")
            }
            id.level = level
            id.storage = size
            id.evidence.append(.init("security level \(level)", "the ATR's PC/SC card name \(name) (MIFARE Plus \(size / 1024)K in \(level))"))
            id.evidence.append(.init("storage \(size) bytes", "the same card name"))
            return (MifarePlusCard(transport: transport), id)
        }

        // GetVersion may go wrapped: a reader that refuses native frames still reaches an EV1 or EV2.
        let card = MifarePlusCard(transport: transport, wrappingAllowed: true)
        let versionBytes: [UInt8]?
        do { versionBytes = try card.getVersion() } catch let e as MifarePlusError where e.kind == .readerRefused {
            throw MifarePlusError(.readerRefused, "the reader passes no native frames, and the card takes no ISO 7816 wrapping (an S, X or SE has none): this reader cannot reach it")
        }
        card.wrappingAllowed = card.framing == .wrapped
        if let version = versionBytes, let v = try? DESFireVersion(bytes: version) {
            guard v.hardwareVendor == 0x04, v.hardwareType == 0x02 else {
                throw MifarePlusError(.wrongCard, "not a MIFARE Plus: GetVersion names vendor \(Hex.encode([v.hardwareVendor])), type \(Hex.encode([v.hardwareType]))\(v.isDESFire ? " (a DESFire: apdu desfire info)" : "")")
            }
            id.apply(version: version, v)
            card.wrappingAllowed = true
        } else if let generation = MifarePlusIdentity.historicalBytesNamePlus(atr) {
            id.generation = generation
            id.evidence.append(.init("generation \(generation.rawValue)", "the ATS historical bytes \(id.historicalBytes.hexString) (no answer to GetVersion)"))
        }

        // S, X, SE, EV1 and EV2 answer the same in SL0 and SL3 except to personalisation: the probe
        // writes nothing (block 9090 exists on no card).
        let probe = try card.probeWritePerso()
        switch probe {
        case 0x09:
            id.level = .sl0
            id.evidence.append(.init("security level SL0", "the WritePerso probe (block 9090) answered 09: WritePerso is open"))
        case 0x0B:
            id.level = .sl3
            id.evidence.append(.init("security level SL3", "the WritePerso probe (block 9090) answered 0B: not available in this state"))
        default:
            if id.generation == .unknown && id.version == nil {
                throw MifarePlusError(.wrongCard, "not a MIFARE Plus: no GetVersion of one, no MIFARE Plus ATS, and the WritePerso probe answered \(Hex.encode([probe]))")
            }
            id.evidence.append(.init("security level unknown", "the WritePerso probe answered \(Hex.encode([probe])), neither 09 (SL0) nor 0B (SL3)"))
        }
        if id.generation == .unknown && id.version == nil {
            id.evidence.append(.init("MIFARE Plus", "the WritePerso probe's answer; generation unknown (no GetVersion, ATS \(id.historicalBytes.hexString))"))
        }

        if id.generation.hasVersion || id.version != nil, let signature = try card.readSignature() {
            id.apply(signature: signature)
        }
        return (card, id)
    }

    /// A card the reader calls a MIFARE Classic (`calledClassic`, its card name): GetVersion as a
    /// native frame (SL1 has no ISO 7816 wrapping). An answer naming a MIFARE Plus EV1 or EV2
    /// proves SL1: those show a Classic's SAK in SL1 alone (SL0 and SL3 are ISO 14443-4, and
    /// they have no SL2). nil when the card answers no such GetVersion, or the reader passes none.
    static func identifyLevel1(_ transport: APDUTransport, calledClassic name: String, into start: MifarePlusIdentity) throws -> (MifarePlusCard, MifarePlusIdentity)? {
        let card = MifarePlusCard(transport: transport)
        let version: [UInt8]?
        do { version = try card.getVersion() } catch let e as MifarePlusError where e.kind == .readerRefused || e.kind == .malformed {
            return nil
        }
        guard let version, let v = try? DESFireVersion(bytes: version), v.hardwareVendor == 0x04, v.hardwareType == 0x02 else { return nil }
        var id = start
        id.apply(version: version, v)
        guard id.generation.hasVersion else { return nil }
        id.level = .sl1
        id.evidence.append(.init("security level SL1", "the reader calls it a MIFARE Classic (card name \(name)), and GetVersion names a \(id.generation): it shows a Classic's face in SL1 only"))
        do {
            if let signature = try card.readSignature() { id.apply(signature: signature) }
        } catch let e as MifarePlusError where e.kind == .readerRefused || e.kind == .malformed {}
        return (card, id)
    }
}

extension MifarePlusIdentity {
    /// What GetVersion's answer (vendor 04, type 02) tells: generation, storage, UID.
    mutating func apply(version: [UInt8], _ v: DESFireVersion) {
        self.version = version
        generation = v.hardwareMajor == 0x11 ? .ev1 : v.hardwareMajor == 0x22 ? .ev2 : .unknown
        storage = Self.storage(v.hardwareStorage)
        let raw = "GetVersion: vendor 04, type 02, major \(Hex.encode([v.hardwareMajor])), storage byte \(Hex.encode([v.hardwareStorage]))"
        evidence.append(.init("generation \(generation.rawValue)", raw))
        if let storage { evidence.append(.init("storage \(storage) bytes", "GetVersion's storage byte \(Hex.encode([v.hardwareStorage]))")) }
        var said: [UInt8]?
        if version[14] == 0x00 && version[15] == 0x04 {
            // A 4-byte UID (NUID): `00 04` then the UID, as proxmark3's hf mfp info reads it.
            said = Array(version[16..<20])
        } else if !v.uidHidden {
            said = v.uid
        }
        guard let said else { return }
        if let reader = uid, reader != said {
            // The UID the reader saw at anticollision is the tag's; one GetVersion names in its place
            // is what a clone replaying a genuine card's answers would say, so the signature is
            // checked over the reader's (review of issue 48).
            evidence.append(.init("UID \(Hex.encode(reader)) (the reader's)", "GetVersion names another UID, \(Hex.encode(said)): kept the reader's, over which the signature is checked"))
            return
        }
        uid = said
        evidence.append(.init(said.count == 4 ? "UID (4 bytes)" : "UID", "GetVersion"))
    }

    /// Read_Sig's 56 bytes, checked with NXP's MIFARE Plus keys over the UID when it is known.
    mutating func apply(signature: [UInt8]) {
        self.signature = signature
        if let uid {
            signatureKey = OriginalitySignature(uid: uid, signature: signature).verifyingKey(among: OriginalitySignature.PublicKey.mifarePlus)
        }
    }
}
