import ISO7816
import NFCTags
import TestSupport
import Testing
import VirtualCard

/// `apdu tag-info` and `apdu classic dump` under the man in the middle.
///
/// - `tag-info` on an NTAG216 with a published UID and NXP originality signature
///   (contactless-facts §3), through a transparent reader and an ACR122U. The verdict is the
///   signature valid; what it proves is that NXP signed this UID with the key named, so that is
///   what it vouches for: a mutated run that calls the tag genuine shows the clean run's UID and
///   key. The chip's name comes from GET_VERSION, which nothing signs (the NTAG21x key signs
///   NTAG210 to 216 alike): it is no part of the verdict.
/// - `classic dump`: Crypto1 proves nothing about the data, so a dump earns no verdict; the run
///   must end, and the key given never shows (LOAD KEYS carries it).
@Suite("Hostile matrix: tag-info and classic dump")
struct TagInfoMatrixTests {
    static let uid: [UInt8] = [0x04, 0xAB, 0x87, 0xF2, 0xCA, 0x11, 0x90]
    static let signature = try! Hex.decode("67B1750BCCEB1174F9A33BF20E0226551A6366939B31F949848C3C087350FA90")

    static func tagInfo(_ dialect: ContactlessReader.Dialect) -> HostileOperation {
        HostileOperation(family: "tag-info", name: "NTAG216 \(dialect.rawValue)") {
            let model = Type2TagModel(chip: .ntag216, uid: uid, memory: nil, signature: signature)
            return HostileRun(card: ContactlessReader(dialect, tag: model)) { context in
                let transport = context.transport()
                let id = try Type2Identity.read(transport, atr: model.atr, commands: TagCommandChannel(transport: transport, dialect: dialect == .acr122u ? .acr122u : .transparent))
                let shown = "\(id.chipName) \(id.uid.map { Hex.encode($0) } ?? "-") \(id.signature.map { Hex.encode($0.signature) } ?? "-") "
                    + "\(id.signatureKey?.name ?? "NOT VALID") \(id.counter.map(String.init) ?? "-") \(id.notes.joined(separator: "; "))"
                guard let key = id.signatureKey else { return HostileOutcome(verdict: false, vouched: shown, shown: shown) }
                return HostileOutcome(verdict: true, vouched: "UID \(id.uid.map { Hex.encode($0) } ?? "-") signed with \(key.name)", shown: shown)
            }
        }
    }

    /// A key the card does not use, tried first: it goes to the reader in LOAD KEYS.
    static let privateKey: [UInt8] = [0x3C, 0x91, 0x5E, 0x27, 0xA4, 0xD8]

    static let dump = HostileOperation(family: "MIFARE Classic 1K", name: "dump", secrets: [.bytes(privateKey)], expectVerdict: false) {
        let model = MifareClassicModel(.classic1K)
        let reader = ContactlessReader(.storageOnly, tag: model)
        return HostileRun(card: reader) { context in
            let transport = context.transport()
            guard let layout = MifareClassicLayout(atr: model.atr) else { throw TagError(.notNDEF, "not a Classic") }
            let card = MifareClassicCard(transport: transport, layout: layout)
            let keys = [MifareClassicKeyCandidate(MifareClassicKey(privateKey)!, label: "the key given")] + MifareClassicKeyCandidate.publicKeys
            let dump = try card.dump(keys: keys)
            let text = dump.sectors.map { s in "\(s.sector) \(s.keyLabel ?? "-") " + s.blocks.map { b in b.map { Hex.encode($0) } ?? "?" }.joined(separator: " ") }
            return HostileOutcome(verdict: false, vouched: text.joined(separator: "\n"), shown: text.joined(separator: "\n"))
        }
    }

    /// `classic write --block 5`, as the CLI runs it: `writeChecked`, then the block read back
    /// ("reads back as written", else exit 1). Crypto1 proves nothing, so the claims are judged
    /// against the card: "reads back as written" means the block holds the new bytes; an error
    /// that says "nothing was written" means the old ones; any other error the old or the new.
    static let blockWrite = blockWrite(dropped: false)

    /// `dropped`: a hostile card that acknowledges the write of block 5 and keeps the old bytes
    /// (`MifareClassicModel.droppedWrites`): only the read-back can tell, and "written" must not
    /// be said.
    static func blockWrite(dropped: Bool) -> HostileOperation {
      HostileOperation(family: "MIFARE Classic 1K", name: dropped ? "write block 5, hostile: the write acknowledged and dropped" : "write block 5",
                       secrets: [.bytes(privateKey)], expectVerdict: !dropped) {
        let model = MifareClassicModel(.classic1K, droppedWrites: dropped ? [5] : [])
        let reader = ContactlessReader(.storageOnly, tag: model)
        let new = (0..<16).map { UInt8(0x50 + $0) }
        let old = model.contents[(5 * 16)..<(6 * 16)].map { $0 }
        return HostileRun(card: reader) { context in
            guard let layout = MifareClassicLayout(atr: model.atr) else { throw TagError(.notNDEF, "not a Classic") }
            let card = MifareClassicCard(transport: context.transport(), layout: layout)
            let keys = [MifareClassicKeyCandidate(MifareClassicKey(privateKey)!, label: "the key given")] + MifareClassicKeyCandidate.publicKeys
            try card.writeChecked(block: 5, data: new, keys: keys)
            let back = try? card.read(block: 5)
            return HostileOutcome(verdict: back == new, vouched: "reads back as written: \(back == new)", shown: back.map { Hex.encode($0) } ?? "not read back")
        } claims: { result in
            let held = model.contents[(5 * 16)..<(6 * 16)].map { $0 }
            guard held == old || held == new else { return "block 5 holds neither the old nor the new bytes" }
            switch result {
            case .success(let o) where o.verdict: return held == new ? nil : "reported written and read back, the block holds the old bytes"
            case .success: return nil
            case .failure(let e as TagError) where e.message.contains("nothing was written"):
                return held == old ? nil : "said nothing was written (\(e.message)), the block holds the new bytes"
            case .failure: return nil
            }
        }
      }
    }

    /// `classic write 7 … --trailer` changing key B alone (access bits 7F 07 88: key B not
    /// readable), as the CLI runs it: `writeChecked`, then `confirmTrailer`. The second review
    /// of issue 49 had a middle's 90 00 for that write read as written (key A and the access
    /// bits unchanged). "Confirmed" means the trailer holds the new bytes; "did not take" the old.
    static let trailerWrite = HostileOperation(family: "MIFARE Classic 1K", name: "write trailer 7, key B changed", expectVerdict: true) {
        let model = MifareClassicModel(.classic1K)
        let reader = ContactlessReader(.storageOnly, tag: model)
        let old = try! Hex.decode("FFFFFFFFFFFF7F078869B0B1B2B3B4B5"), new = try! Hex.decode("FFFFFFFFFFFF7F078869C0C1C2C3C4C5")
        let layout = MifareClassicLayout(atr: model.atr)!
        let keys = [MifareClassicKeyCandidate(MifareClassicKey(Array(old[10..<16]))!, label: "key B")] + MifareClassicKeyCandidate.publicKeys
        try! MifareClassicCard(transport: APDUTransport(channel: EmulatedChannel(card: reader)), layout: layout)
            .writeChecked(block: 7, data: old, keys: MifareClassicKeyCandidate.publicKeys, trailer: true)
        func held() -> [UInt8] { Array(model.contents[(7 * 16)..<(8 * 16)]) }
        return HostileRun(card: reader) { context in
            let card = MifareClassicCard(transport: context.transport(), layout: layout)
            try card.writeChecked(block: 7, data: new, keys: keys, trailer: true)
            let shown = try card.confirmTrailer(block: 7, data: new)
            return HostileOutcome(verdict: true, vouched: "confirmed", shown: shown)
        } claims: { result in
            let now = held()
            guard now == old || now == new else { return "the trailer holds neither the old nor the new bytes" }
            switch result {
            case .success(let o) where o.verdict: return now == new ? nil : "confirmed, the trailer holds the old bytes"
            case .failure(let e as TagError) where e.message.contains("did not take") || e.message.contains("nothing was written"):
                return now == old ? nil : "said the write did not take (\(e.message)), the trailer holds the new bytes"
            default: return nil
            }
        }
    }

    @Test("tag-info and classic dump and write through the man in the middle", arguments: ["transparent", "acr122u", "dump", "write", "write dropped", "trailer"])
    func matrix(_ name: String) {
        let op = name == "dump" ? Self.dump : name == "write" ? Self.blockWrite : name == "write dropped" ? Self.blockWrite(dropped: true)
            : name == "trailer" ? Self.trailerWrite
            : Self.tagInfo(name == "acr122u" ? .acr122u : .transparent)
        let report = HostileMatrix.run(op)
        HostileMatrixLog.record(report)
        HostileKnownIssues.expectNoFailures(report)
    }
}
