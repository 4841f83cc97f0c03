import Foundation
import ISO7816
import NFCTags
import Testing
import TestSupport
import VirtualCard

/// The do-no-harm invariant on MIFARE Classic: generated layouts (every chip; the NDEF TLV at
/// every offset of its block behind NULL or proprietary TLVs; positions where the TLV header
/// or its 3-byte length straddles a block and a sector boundary), messages at the size
/// boundaries (1- and 3-byte lengths, block and sector ends, the capacity), and a card pulled
/// after every single exchange of a write, a restore, a lock and a format, both ways a pull can
/// take the exchange in flight.
@Suite("MIFARE Classic fault matrix: generated layouts, a cut after every exchange")
struct MifareClassicFaultMatrixTests {
    struct Layout: CustomStringConvertible, Sendable {
        var name: String
        var chip: MifareClassicModel.Chip
        var memory: [UInt8]
        var sizes: [Int]?
        var description: String { name }
    }

    static func formatted(_ chip: MifareClassicModel.Chip) -> [UInt8] {
        let model = MifareClassicModel(chip)
        _ = try! MifareClassicNDEFTag.format(APDUTransport(channel: EmulatedChannel(card: ContactlessReader(.storageOnly, tag: model))), atr: model.atr)
        return model.contents
    }

    /// Puts `prefix` + an empty NDEF TLV + terminator at the start of the NDEF area.
    static func withArea(_ memory: [UInt8], _ prefix: [UInt8]) -> [UInt8] {
        var m = memory
        let area = ReferenceClassic.area(m)!
        for (i, b) in (prefix + [0x03, 0x00, 0xFE]).enumerated() { m[area[i]] = b }
        return m
    }

    static func layouts() -> [Layout] {
        var out: [Layout] = []
        for chip in MifareClassicModel.Chip.allCases {
            let base = formatted(chip)
            let big = chip.sectorCount > 16
            let sizes: [Int]? = big && !fullMatrix ? [0, 1, 254, 255, 256, 700] : nil
            out.append(Layout(name: "\(chip.rawValue), as formatted", chip: chip, memory: base, sizes: sizes))
            guard chip == .mini || chip == .classic1K || fullMatrix else { continue }
            for offset in 0..<16 {
                out.append(Layout(name: "\(chip.rawValue), NDEF TLV at offset \(offset) after NULL TLVs", chip: chip, memory: withArea(base, [UInt8](repeating: 0, count: offset))))
            }
            let proprietary: [UInt8] = [0xFD, 0x03, 0xAA, 0xBB, 0xCC]
            // The TLV's tag at the last byte of a sector's data (its length in the next sector), and
            // the 3-byte length split over the boundary.
            for (label, at) in [("a proprietary TLV", 5), ("its tag at a sector's last byte", 47), ("its length split over a sector boundary", 46)] {
                let prefix = at == 5 ? proprietary : proprietary + [UInt8](repeating: 0, count: at - proprietary.count)
                out.append(Layout(name: "\(chip.rawValue), NDEF TLV after \(label)", chip: chip, memory: withArea(base, prefix)))
            }
        }
        return out
    }

    final class Harness {
        let layout: Layout
        init(_ layout: Layout) { self.layout = layout }
        func model(_ memory: [UInt8]) -> MifareClassicModel { MifareClassicModel(layout.chip, memory: memory) }
        func detect(_ model: MifareClassicModel, cutAfter: Int? = nil, mode: CutChannel.Mode = .beforeExecution, tolerant: Bool = false,
                    observer: ((Exchange) -> Void)? = nil) throws -> (MifareClassicNDEFTag, CutChannel) {
            let channel = CutChannel(card: ContactlessReader(.storageOnly, tag: model), cutAfter: cutAfter, mode: mode)
            return (try MifareClassicNDEFTag.detect(APDUTransport(channel: channel, observer: observer), atr: model.atr, tolerant: tolerant), channel)
        }
        func holding(_ message: [UInt8]) throws -> [UInt8] {
            let m = model(layout.memory)
            try detect(m).0.writeNDEF(message)
            #expect(ReferenceClassic.read(m.contents) == .message(message), "\(layout)")
            return m.contents
        }
    }

    static func isWrite(_ command: [UInt8]) -> Bool { command.count > 1 && command[0] == 0xFF && command[1] == 0xD6 }

    struct Tally { var cases = 0, old = 0, empty = 0, new = 0, restores = 0 }

    @Test("writes cut after every exchange: old, empty or new; nothing outside the NDEF data bytes; the reported state is right; the backup restores", arguments: layouts())
    func writes(layout: Layout) throws {
        let h = Harness(layout)
        let capacity = try h.detect(h.model(layout.memory)).0.capacity
        let sizes = layout.sizes ?? Array(Set(boundarySizes(capacity: capacity) + [44, 45, 46, 47, 48, 49, 94, 95].filter { $0 <= capacity })).sorted()
        var tally = Tally()
        for (i, size) in sizes.enumerated() {
            let old = patternMessage(sizes[(i + (sizes.count + 1) / 2) % sizes.count], seed: 1), new = patternMessage(size, seed: 2)
            let start = try h.holding(old)
            var commands: [[UInt8]] = []
            try h.detect(h.model(start), observer: { commands.append($0.command) }).0.replaceNDEF(with: new) { _ in }
            let writes = commands.indices.filter { Self.isWrite(commands[$0]) }
            var restoredFrom = Set<[UInt8]>()
            for mode in CutChannel.Mode.allCases {
                for n in mode == .beforeExecution ? Array(0...commands.count) : writes {
                    let model = h.model(start)
                    var backup: TagBackup?, reported: WriteInterrupted.TagState?, finished = false
                    let steps = StepLog()
                    do {
                        let (tag, channel) = try h.detect(model, cutAfter: n, mode: mode)
                        steps.attach(tag)
                        try tag.replaceNDEF(with: new) { backup = $0 }
                        #expect(!channel.wasCut)
                        finished = true
                        steps.expectSound(finished: true, "\(layout)")
                    } catch let e as WriteInterrupted {
                        reported = e.state
                        steps.expectSound(finished: false, failure: e, "\(layout), cut after \(n)")
                    } catch {
                        #expect(error is CardPulled, "\(layout), cut after \(n): \(error)")
                        #expect(model.contents == start, "\(layout): changed though nothing was said written (cut after \(n))")
                    }
                    tally.cases += 1
                    let now = model.contents
                    let reading = ReferenceClassic.read(now)
                    let writable = ReferenceClassic.writable(start)
                    let outside = (0..<now.count).filter { now[$0] != start[$0] && !writable.contains($0) }
                    #expect(outside.isEmpty, "\(layout), cut after \(n): bytes changed outside the NDEF data: \(outside.prefix(8))")
                    if finished { #expect(reading == .message(new)); break }
                    switch reading {
                    case .message(old): tally.old += 1
                    case .message([]): tally.empty += 1
                    case .message(new): tally.new += 1
                    default: Issue.record("\(layout), \(mode), cut after \(n): reads \(reading) — neither old, empty nor new")
                    }
                    if let reported {
                        #expect(Type2FaultMatrixTests.allowed(reported, old: old, new: new).contains { reading == .message($0) },
                                "\(layout), \(mode), cut after \(n): reported \(reported), reads \(reading)")
                    }
                    if now != start, let backup, restoredFrom.insert(now).inserted {
                        let restored = h.model(now)
                        try h.detect(restored, tolerant: true).0.restore(backup, allowingOtherTag: false)
                        #expect(ReferenceClassic.read(restored.contents) == .message(old), "\(layout): restore after a cut at \(n)")
                        tally.restores += 1
                    }
                }
            }
        }
        print("\(layout): \(tally.cases) cuts (old \(tally.old), empty \(tally.empty), new \(tally.new)), \(tally.restores) restores")
    }

    @Test("restores cut after every exchange: the state before, empty, or the backup; a second restore finishes",
          arguments: layouts().filter { $0.name.contains("as formatted") || $0.name.contains("split") })
    func restores(layout: Layout) throws {
        let h = Harness(layout)
        let capacity = try h.detect(h.model(layout.memory)).0.capacity
        let old = patternMessage(min(capacity, 300), seed: 3), new = patternMessage(min(capacity, 40), seed: 4)
        let start = try h.holding(old)
        var commands: [[UInt8]] = []
        try h.detect(h.model(start), observer: { commands.append($0.command) }).0.replaceNDEF(with: new) { _ in }
        let writes = commands.indices.filter { Self.isWrite(commands[$0]) }
        // Cut after the third block write: the length is 0, part of the new message is in.
        let cut = h.model(start)
        var backup: TagBackup?
        do { try h.detect(cut, cutAfter: writes[min(2, writes.count - 1)]).0.replaceNDEF(with: new) { backup = $0 } } catch {}
        let from = cut.contents
        let saved = try #require(backup)
        #expect(from != start)
        for mode in CutChannel.Mode.allCases {
            var n = 0
            while true {
                let model = h.model(from)
                var finished = false
                do { try h.detect(model, cutAfter: n, mode: mode, tolerant: true).0.restore(saved, allowingOtherTag: false); finished = true } catch {}
                let reading = ReferenceClassic.read(model.contents)
                #expect(reading == ReferenceClassic.read(from) || reading == .message([]) || reading == .message(old), "\(layout), restore cut after \(n): \(reading)")
                if finished { #expect(reading == .message(old)); break }
                let again = h.model(model.contents)
                try h.detect(again, tolerant: true).0.restore(saved, allowingOtherTag: false)
                #expect(ReferenceClassic.read(again.contents) == .message(old), "\(layout), second restore after a cut at \(n)")
                n += 1
                if n > 5000 { Issue.record("never finished"); break }
            }
        }
    }

    /// A trailer as the lock leaves it or as it was: nothing else.
    static func trailerStates(_ chip: MifareClassicModel.Chip, _ memory: [UInt8], sector: Int) -> Bool {
        let t = (ReferenceClassic.first(sector + 1) - 1) * 16
        let trailer = Array(memory[t..<(t + 16)])
        let keys = MifareClassicKey.ndef.bytes + [0, 0, 0, 0] + MifareClassicKey.factory.bytes
        return trailer == Array(keys[0..<6]) + [0x7F, 0x07, 0x88, 0x40] + Array(keys[10..<16])
            || trailer == Array(keys[0..<6]) + [0x07, 0x8F, 0x0F, 0x43] + Array(keys[10..<16])
    }

    @Test("locks cut after every exchange: each sector's trailer old or read-only (keys kept), the message intact; running it again finishes",
          arguments: [MifareClassicModel.Chip.mini, .classic1K, .classic4K])
    func locks(chip: MifareClassicModel.Chip) throws {
        let layout = Layout(name: chip.rawValue, chip: chip, memory: Self.formatted(chip))
        let h = Harness(layout)
        let message = patternMessage(60, seed: 5)
        let start = try h.holding(message)
        var total = 0
        _ = try h.detect(h.model(start), observer: { _ in total += 1 }).0.makeReadOnly()
        let ndef = (1..<chip.sectorCount).filter { $0 != 16 }
        for mode in CutChannel.Mode.allCases {
            for n in 0...total where fullMatrix || chip != .classic4K || n % 7 == 0 || n > total - 12 {
                let model = h.model(start)
                var finished = false
                do {
                    let report = try h.detect(model, cutAfter: n, mode: mode).0.makeReadOnly()
                    finished = report.refusesWrites && report.state.isFullyLocked
                } catch {}
                let now = model.contents
                #expect(ReferenceClassic.read(now) == .message(message), "\(chip) lock cut after \(n)")
                for s in ndef { #expect(Self.trailerStates(chip, now, sector: s), "\(chip) lock cut after \(n): sector \(s)'s trailer") }
                let dataChanged = (0..<now.count).filter { now[$0] != start[$0] && !ReferenceClassic.isTrailerByte($0, count: now.count) }
                #expect(dataChanged.isEmpty, "\(chip) lock cut after \(n) changed data bytes")
                if finished { break }
                let again = h.model(now)
                let report = try h.detect(again).0.makeReadOnly()
                #expect(report.refusesWrites && report.state.isFullyLocked, "\(chip): the lock finishes after a cut at \(n)")
            }
        }
    }

    @Test("formats cut after every exchange: unformatted (no MAD) or formatted and empty, keys B kept; running it again finishes",
          arguments: MifareClassicModel.Chip.allCases)
    func formats(chip: MifareClassicModel.Chip) throws {
        let factory = MifareClassicModel.factoryImage(chip)
        var total = 0
        let counting = MifareClassicModel(chip)
        _ = try MifareClassicNDEFTag.format(APDUTransport(channel: EmulatedChannel(card: ContactlessReader(.storageOnly, tag: counting)), observer: { _ in total += 1 }), atr: counting.atr)
        let done = counting.contents
        for mode in CutChannel.Mode.allCases {
            for n in 0..<total where fullMatrix || chip.sectorCount <= 16 || n % 5 == 0 || n > total - 12 {
                let model = MifareClassicModel(chip)
                do { _ = try MifareClassicNDEFTag.format(APDUTransport(channel: CutChannel(card: ContactlessReader(.storageOnly, tag: model), cutAfter: n, mode: mode)), atr: model.atr) } catch {}
                let now = model.contents
                let reading = ReferenceClassic.read(now)
                #expect(reading == .message([]) || reading == .broken("no valid MAD"), "\(chip) format cut after \(n): \(reading)")
                // Every byte is either the factory's or the formatted card's.
                #expect((0..<now.count).allSatisfy { now[$0] == factory[$0] || now[$0] == done[$0] }, "\(chip) format cut after \(n)")
                let again = MifareClassicModel(chip, memory: now)
                _ = try MifareClassicNDEFTag.format(APDUTransport(channel: EmulatedChannel(card: ContactlessReader(.storageOnly, tag: again))), atr: again.atr)
                #expect(again.contents == done, "\(chip): the format finishes after a cut at \(n)")
            }
        }
    }
}

extension ReferenceClassic {
    static func isTrailerByte(_ i: Int, count: Int) -> Bool {
        let block = i / 16
        let sector = block < 128 ? block / 4 : 32 + (block - 128) / 16
        return block == first(sector + 1) - 1
    }
}
