import ISO7816
import NFCTags
import TestSupport
import Testing
import VirtualCard

/// `apdu tag-info` on Types 1, 3 and 5 under the man in the middle, by the calls the CLI makes
/// (`TagInfo.swift`, `Type1TagInfo.swift`): a Topaz 512 through an ACS reader (RID, RSEG 0: the
/// header ROM, UID, CC and lock bytes), a FeliCa Lite-S through an ACR122U (Polling, Request
/// System Code) and an ICODE SLIX through a transparent reader (the first block's storage READ
/// BINARY, GET SYSTEM INFO, the memory size). Nothing in them is signed: the run earns no
/// verdict, and its invariants are no trap, no hang and no leak, whatever the answers say.
@Suite("Hostile matrix: tag-info on Types 1, 3 and 5")
struct TagInfoFamiliesMatrixTests {
    static let type1 = HostileOperation(family: "tag-info", name: "Type 1 (Topaz 512, ACS)", expectVerdict: false) {
        let model = Type1TagModel(chip: .topaz512)
        let reader = Type1Reader(.acs, tag: model)
        return HostileRun(card: reader) { context in
            let transport = context.transport()
            let commands = TagCommandChannel(transport: transport, dialect: .acr122u, readerName: "ACS ACR122U")
            let id = try Type1Identity.read(transport, atr: reader.atr, readerName: reader.form.rawValue, commands: commands)
            let shown = "\(id.chipName) HR \(Hex.encode(id.header.bytes)) UID \(Hex.encode(id.uid)) \(id.memoryModel) CC \(Hex.encode(id.capabilityContainer)) "
                + "locks \(Hex.encode(id.staticLockBytes)) \(id.dynamicLockBytes.map { Hex.encode($0) } ?? "-") blocks \(id.lockedBlocks) \(id.notes.joined(separator: "; "))"
            return HostileOutcome(verdict: false, vouched: shown, shown: shown)
        }
    }

    static let type3 = HostileOperation(family: "tag-info", name: "Type 3 (FeliCa Lite-S, ACR122U)", expectVerdict: false) {
        let model = FeliCaTagModel(chip: .liteS)
        return HostileRun(card: ContactlessReader(.acr122u, tag: model)) { context in
            let felica = try FeliCaCommands(channel: TagCommandChannel(transport: context.transport(), dialect: .acr122u))
            guard let polled = try felica.polling() else { throw TagError(.notNDEF, "the FeliCa card did not answer Polling") }
            let systems = (try? felica.requestSystemCode()) ?? []
            let shown = "\(polled.productName) IDm \(Hex.encode(polled.idm)) PMm \(Hex.encode(polled.pmm)) systems \(systems.map { String($0, radix: 16) })"
            return HostileOutcome(verdict: false, vouched: shown, shown: shown)
        }
    }

    static let type5 = HostileOperation(family: "tag-info", name: "Type 5 (ICODE SLIX, transparent)", expectVerdict: false) {
        let model = ISO15693TagModel(chip: .icodeSlix)
        return HostileRun(card: ContactlessReader(.transparent, tag: model)) { context in
            let commands = TagCommandChannel(transport: context.transport(), dialect: .transparent)
            let first = try? commands.transport.storageReadBinary(block: 0, size: nil)
            let info = try ISO15693Commands(channel: commands).systemInfoWithMemorySize()
            let shown = "\(info.manufacturerName) UID \(Hex.encode(info.displayUID)) IC \(info.icReference.map { Hex.encode([$0]) } ?? "-") "
                + "\(info.blockCount.map(String.init) ?? "?") blocks of \(info.blockSize.map(String.init) ?? "?") bytes; first block \(first.map { Hex.encode($0.data) } ?? "-")"
            return HostileOutcome(verdict: false, vouched: shown, shown: shown)
        }
    }

    @Test("tag-info on Types 1, 3 and 5 through the man in the middle", arguments: ["Type 1", "Type 3", "Type 5"])
    func matrix(_ name: String) {
        let report = HostileMatrix.run(name == "Type 1" ? Self.type1 : name == "Type 3" ? Self.type3 : Self.type5)
        HostileMatrixLog.record(report)
        HostileKnownIssues.expectNoFailures(report)
    }
}
