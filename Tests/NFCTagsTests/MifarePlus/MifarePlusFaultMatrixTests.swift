import ISO7816
@testable import NFCTags
import Testing
import VirtualCard

/// Every change the tool makes to a MIFARE Plus, cut after every exchange in both ways a pull
/// takes the exchange in flight (never run, or run with its answer lost), then the card powered
/// off: the card is in the state the library named, and the way back it gave works.
@Suite("MIFARE Plus fault matrix: block writes, personalisation, the SL3 switch, cut after every exchange")
struct MifarePlusFaultMatrixTests {
    static let key = MifarePlusEmulatorTests.key

    /// Runs `operation` on `model` through a channel cut after `n` exchanges.
    static func cut(_ model: MifarePlusModel, after n: Int?, _ mode: CutChannel.Mode,
                    _ operation: (APDUTransport, [UInt8]) throws -> Void) -> (any Error)? {
        let channel = CutChannel(card: model, cutAfter: n, mode: mode)
        defer { model.reset() }
        do { try operation(APDUTransport(channel: channel), model.atr) } catch { return error }
        return nil
    }

    static func total(_ model: MifarePlusModel, _ operation: (APDUTransport, [UInt8]) throws -> Void) throws -> Int {
        let channel = CutChannel(card: model, cutAfter: nil)
        try operation(APDUTransport(channel: channel), model.atr)
        return channel.exchanges
    }

    @Test("a block write (a value block over data), in each write mode and reader form: old or new as said, and the restore it gives puts the old back",
          arguments: [(MifarePlusCard.WriteMode.encrypted, MifarePlusModel.ReaderForm.native), (.plain, .native), (.encrypted, .isoOnly)])
    func blockWrite(_ mode: MifarePlusCard.WriteMode, _ form: MifarePlusModel.ReaderForm) throws {
        let old = [UInt8](repeating: 0x11, count: 16)
        let new = MifareClassicValueBlock(value: -42, address: 5).bytes
        func fresh() -> MifarePlusModel {
            let m = MifarePlusEmulatorTests.sl3()
            var b = m.blocks
            b[5] = old
            return MifarePlusModel(.ev1, level: .sl3, readerForm: form, blocks: b)
        }
        var restoreLine: [UInt8]?
        let operation = { (t: APDUTransport, atr: [UInt8]) throws in
            let (card, _) = try MifarePlusCard.identify(t, atr: atr)
            _ = try card.read(blocks: 4..<5, key: Self.key, type: .a)
            _ = try card.writeBlock(5, data: new, key: Self.key, type: .a, confirmed: false, mode: mode,
                                    restoreCommand: { restoreLine = $0; return "apdu plus write --block 5 --hex \($0.hexString)" })
        }
        let n = try Self.total(fresh(), operation)
        var cuts = 0, restores = 0
        for k in 0...n {
            for cutMode in CutChannel.Mode.allCases {
                let model = fresh()
                restoreLine = nil
                let error = Self.cut(model, after: k < n ? k : nil, cutMode, operation)
                let now = try #require(model.block(5))
                switch error {
                case nil:
                    #expect(now == new)
                case let e as MifarePlusInterrupted:
                    #expect(now == old || now == new, "cut \(k) \(cutMode): \(e)")
                    if e.state.contains("new 16 bytes") && !e.state.contains("old") { #expect(now == new) }
                    if e.description.contains("to put the old contents back") {
                        let back = try #require(restoreLine)
                        let (card, _) = try MifarePlusCard.identify(APDUTransport(channel: EmulatedChannel(card: model)), atr: model.atr)
                        _ = try card.writeBlock(5, data: back, key: Self.key, type: .a, confirmed: false, restoreCommand: { _ in "" })
                        #expect(model.block(5) == old)
                        restores += 1
                    }
                default:
                    #expect(now == old, "cut \(k) \(cutMode): \(error!) yet the block changed")
                }
                cuts += 1
            }
        }
        #expect(cuts == 2 * (n + 1) && restores > 0)
    }

    @Test("personalisation of every key then CommitPerso to SL3 (EV1): SL0 with the first keys written as said, and the same command again finishes it")
    func personalize() throws {
        let keys = MifarePlusKeyFile.everyKey(Self.key, sectors: 32)
        let operation = { (t: APDUTransport, atr: [UInt8]) throws in
            let (card, id) = try MifarePlusCard.identify(t, atr: atr)
            try card.personalize(keys, commit: .sl3, generation: id.generation, sectors: 32, confirmed: true, again: "apdu plus personalize …") {
                // The reset after CommitPerso, on the same cut channel: a pull there counts too.
                let channel = t.channel as! CutChannel
                channel.card.reset()
                return (t, (channel.card as! MifarePlusModel).atr)
            }
        }
        let n = try Self.total(MifarePlusModel(.ev1, level: .sl0), operation)
        for k in 0...n {
            for cutMode in CutChannel.Mode.allCases {
                let model = MifarePlusModel(.ev1, level: .sl0)
                let error = Self.cut(model, after: k < n ? k : nil, cutMode, operation)
                switch error {
                case nil:
                    #expect(model.level == .sl3 && model.personalized.count == keys.keys.count)
                case let e as MifarePlusInterrupted where e.state.contains("still in SL0"):
                    #expect(model.level == .sl0)
                    let written = model.personalized.count
                    let said = Int(e.state.split(separator: " ").drop { $0 != "with" }.dropFirst().first ?? "") ?? -1
                    #expect(written == said || (e.state.contains("in flight") && written == said + 1), "cut \(k): \(e)")
                    // The same command again finishes it.
                    #expect(Self.cut(model, after: nil, .beforeExecution, operation) == nil)
                    #expect(model.level == .sl3)
                case let e as MifarePlusInterrupted:
                    #expect(e.state.contains("SL0 or in SL3"))
                    #expect(model.level == .sl0 || model.level == .sl3)
                default:
                    // Cut during identification: nothing written.
                    #expect(model.level == .sl0 && model.personalized.isEmpty, "cut \(k): \(error!)")
                }
            }
        }
    }

    @Test("the switch SL1 → SL3 (an S): SL1 until the proof is sent, SL1 or SL3 while it is in flight, SL3 after")
    func levelSwitch() throws {
        func fresh() -> MifarePlusModel {
            var blocks = MifarePlusModel.factoryBlocks(sectors: 32, uid: [0x04, 1, 2, 3, 4, 5, 6])
            blocks[0x9003] = Self.key.bytes
            return MifarePlusModel(.s, level: .sl1, blocks: blocks)
        }
        let operation = { (t: APDUTransport, _: [UInt8]) throws in try MifarePlusCard(transport: t).switchToLevel3(key: Self.key, confirmed: true) }
        let n = try Self.total(fresh(), operation)
        #expect(n == 2)
        for k in 0...n {
            for cutMode in CutChannel.Mode.allCases {
                let model = fresh()
                let error = Self.cut(model, after: k < n ? k : nil, cutMode, operation)
                switch error {
                case nil: #expect(model.level == .sl3)
                case let e as MifarePlusInterrupted where e.state.contains("stays in SL1"): #expect(model.level == .sl1)
                case let e as MifarePlusInterrupted:
                    #expect(e.state.contains("SL1 or in SL3"))
                    #expect(model.level == (cutMode == .answerLost ? .sl3 : .sl1))
                default: Issue.record("cut \(k): \(error!)")
                }
            }
        }
    }
}
