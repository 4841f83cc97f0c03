import Foundation
import ISO7816
import NFCTags
import Testing
import TestSupport
import VirtualCard

/// The do-no-harm invariant on Type 1 tags: generated layouts (both chips; the NDEF TLV after
/// NULL, proprietary and control TLVs at several offsets; lock bits on blocks the message may or
/// may not need), behind every generated reader model, messages at the size boundaries, and the
/// card pulled after every single exchange of a write, a restore and a lock, both ways a pull can
/// take the exchange in flight. What the tag holds is judged by `ReferenceType1`, from the bytes.
@Suite("Type 1 fault matrix: generated layouts and readers, a cut after every exchange")
struct Type1FaultMatrixTests {
    struct Layout: CustomStringConvertible, Sendable {
        var name: String
        var chip: Type1TagModel.Chip
        var reader: Type1Reader.Model
        var image: [UInt8]
        var description: String { name }
    }

    static let uid: [UInt8] = [0xB2, 0x56, 0x54, 0x00, 0x1A, 0x2B, 0x25]

    /// The factory image with the TLV area from 0C replaced by `prefix`, an empty NDEF TLV and a
    /// terminator; `lockedBlocks` set in LOCK0/LOCK1 (and the dynamic lock bytes).
    static func image(_ chip: Type1TagModel.Chip, prefix: [UInt8], lockedBlocks: [Int] = []) -> [UInt8] {
        var m = Type1TagModel.factoryImage(chip: chip, uid: uid)
        for i in 0x0C..<0x68 { m[i] = 0 }
        if chip.dynamic { for i in 0x80..<m.count { m[i] = 0 } }
        for (i, b) in (prefix + [0x03, 0x00, 0xFE]).enumerated() { m[0x0C + i] = b }
        for b in lockedBlocks {
            if b < 16 { m[0x70 + b / 8] |= 1 << (b % 8) } else { m[0x7A + (b - 16) / 8] |= 1 << ((b - 16) % 8) }
        }
        return m
    }

    static let control: [UInt8] = [0x01, 0x03, 0xF2, 0x30, 0x33, 0x02, 0x03, 0xF0, 0x02, 0x03]

    static func layouts() -> [Layout] {
        var out: [Layout] = []
        let models = Type1Reader.Model.generated()
        for chip in [Type1TagModel.Chip.topaz96, .topaz512] {
            let shipped = chip.dynamic ? control : []
            for (i, model) in models.enumerated() {
                out.append(Layout(name: "\(chip.name) as shipped behind \(model)", chip: chip, reader: model, image: image(chip, prefix: shipped)))
                // Every TLV placement behind one model of each form; the rest as shipped.
                guard i % 2 == 0 else { continue }
                for (label, prefix) in [("1 NULL TLV", [0x00]), ("a proprietary TLV", [0xFD, 0x02, 0xAB, 0xCD]), ("7 NULL TLVs", [UInt8](repeating: 0, count: 7))] as [(String, [UInt8])] {
                    out.append(Layout(name: "\(chip.name), NDEF TLV after \(label)\(chip.dynamic ? " and the control TLVs" : "") behind \(model)",
                                      chip: chip, reader: model, image: image(chip, prefix: shipped + prefix)))
                }
                if chip.dynamic {
                    out.append(Layout(name: "Topaz 512 without control TLVs (the chip's own block F) behind \(model)", chip: chip, reader: model, image: image(chip, prefix: [])))
                }
                // A locked block late in the data area: messages that reach it are refused before any write.
                out.append(Layout(name: "\(chip.name), block \(chip.dynamic ? "20" : "0A") locked, behind \(model)", chip: chip, reader: model,
                                  image: image(chip, prefix: shipped, lockedBlocks: [chip.dynamic ? 0x20 : 0x0A])))
            }
        }
        return out
    }

    final class Harness {
        let layout: Layout
        init(_ layout: Layout) { self.layout = layout }
        func model(_ m: [UInt8]) -> Type1TagModel { Type1TagModel(chip: layout.chip, uid: Type1FaultMatrixTests.uid, memory: m) }
        func detect(_ tag: Type1TagModel, cutAfter: Int? = nil, mode: CutChannel.Mode = .beforeExecution, tolerant: Bool = false,
                    observer: ((Exchange) -> Void)? = nil) throws -> (Type1Tag, CutChannel) {
            let reader = Type1Reader(model: layout.reader, tag: tag)
            let channel = CutChannel(card: reader, cutAfter: cutAfter, mode: mode)
            return (try Type1Harness.detect(reader, channel: channel, tolerant: tolerant, observer: observer), channel)
        }
        func read(_ m: [UInt8]) -> ReferenceType2.Reading { ReferenceType1.read(m, staticMemory: !layout.chip.dynamic) }
        func outside(from a: [UInt8], to b: [UInt8]) -> [Int] {
            let writable = ReferenceType1.writableBytes(a, staticMemory: !layout.chip.dynamic)
            return (0..<a.count).filter { a[$0] != b[$0] && !writable.contains($0) }
        }
        func holding(_ message: [UInt8]) throws -> [UInt8] {
            let m = model(layout.image)
            try detect(m).0.writeNDEF(message)
            #expect(read(m.contents) == .message(message), "\(layout)")
            return m.contents
        }
        /// The exchanges of a run, and which of them write.
        func exchanges(from start: [UInt8], _ body: (Type1Tag) throws -> Void) throws -> (total: Int, writes: [Int]) {
            var commands: [[UInt8]] = []
            try body(try detect(model(start)) { commands.append($0.command) }.0)
            return (commands.count, commands.indices.filter { Type1Harness.isWrite(commands[$0]) })
        }
    }

    struct Tally { var cases = 0, old = 0, empty = 0, new = 0, restores = 0, refused = 0 }

    func cutEveryWrite(_ h: Harness, start: [UInt8], old: [UInt8], new: [UInt8], tally: inout Tally) throws {
        let run = try h.exchanges(from: start) { try $0.replaceNDEF(with: new) { _ in } }
        var restoredFrom = Set<[UInt8]>()
        for mode in CutChannel.Mode.allCases {
            for n in mode == .beforeExecution ? Array(0...run.total) : run.writes {
                let model = h.model(start)
                var backup: TagBackup?
                var reported: WriteInterrupted.TagState?
                var finished = false
                let steps = StepLog()
                do {
                    let (tag, channel) = try h.detect(model, cutAfter: n, mode: mode)
                    steps.attach(tag)
                    try tag.replaceNDEF(with: new) { backup = $0 }
                    #expect(!channel.wasCut)
                    finished = true
                    steps.expectSound(finished: true, "\(h.layout)")
                } catch let e as WriteInterrupted {
                    reported = e.state
                    steps.expectSound(finished: false, failure: e, "\(h.layout), cut after \(n)")
                } catch {
                    #expect(error is CardPulled, "\(h.layout), cut after \(n): \(error)")
                    #expect(model.contents == start, "\(h.layout): the tag changed though the write said nothing was written (cut after \(n))")
                }
                tally.cases += 1
                let now = model.contents
                let reading = h.read(now)
                let stray = h.outside(from: start, to: now)
                #expect(stray.isEmpty, "\(h.layout), cut after \(n): changed outside the NDEF area: \(stray)")
                if finished {
                    #expect(reading == .message(new), "\(h.layout): completed write reads \(reading)")
                    break
                }
                switch reading {
                case .message(old): tally.old += 1
                case .message([]): tally.empty += 1
                case .message(new): tally.new += 1
                default: Issue.record("\(h.layout), \(mode), cut after \(n): the tag reads \(reading): neither old, empty nor new")
                }
                if let reported {
                    #expect(Type2FaultMatrixTests.allowed(reported, old: old, new: new).contains { reading == .message($0) },
                            "\(h.layout), \(mode), cut after \(n): reported \(reported), the tag reads \(reading)")
                }
                if now != start, let backup, restoredFrom.insert(now).inserted {
                    let restored = h.model(now)
                    // The backup as the CLI keeps it: a text file, parsed back.
                    try h.detect(restored, tolerant: true).0.restore(try TagBackup(parsing: backup.encoded()), allowingOtherTag: false)
                    #expect(h.read(restored.contents) == .message(old), "\(h.layout): restore after a cut at \(n) reads \(h.read(restored.contents))")
                    tally.restores += 1
                }
            }
        }
    }

    @Test("writes cut after every exchange: old, empty or new; the state named is right; the backup restores; a write that cannot finish changes nothing",
          arguments: layouts())
    func writes(layout: Layout) throws {
        let h = Harness(layout)
        let fresh = try h.detect(h.model(layout.image)).0
        let reach = fresh.reachableCapacity
        var tally = Tally()
        let sizes = boundarySizes(capacity: fresh.capacity)
        for (i, size) in sizes.enumerated() {
            let oldSize = min(reach, sizes[(i + (sizes.count + 1) / 2) % sizes.count])
            let old = patternMessage(oldSize, seed: 1), new = patternMessage(size, seed: 2)
            let start: [UInt8]
            do { start = try h.holding(old) } catch let e as TagError where e.kind == .readOnly {
                continue   // the old message itself reaches the locked block
            }
            if size > reach {
                let model = h.model(start)
                #expect(throws: TagError.self) { try h.detect(model).0.replaceNDEF(with: new) { _ in } }
                #expect(model.contents == start, "\(layout): an out-of-reach write changed the tag")
                tally.refused += 1
                continue
            }
            let model = h.model(start)
            do {
                try h.detect(model).0.replaceNDEF(with: new) { _ in }
            } catch let e as TagError {
                // Refused before the first write (the message would reach a locked block).
                #expect(e.kind == .readOnly && layout.name.contains("locked"), "\(layout), size \(size): \(e.kind) \(e)")
                #expect(model.contents == start, "\(layout): a refused write changed the tag")
                tally.refused += 1
                continue
            }
            try cutEveryWrite(h, start: start, old: old, new: new, tally: &tally)
        }
        #expect(tally.cases > 0 || tally.refused > 0)
        print("\(layout): \(tally.cases) cuts (old \(tally.old), empty \(tally.empty), new \(tally.new)), \(tally.restores) restores, \(tally.refused) refused")
    }

    static func lockLayouts() -> [Layout] { layouts().filter { $0.name.contains("as shipped") } }

    @Test("locks cut after every exchange: the message stays, only the access byte and lock bytes change, no lock reported that did not happen, a rerun finishes; forms that cannot set the lock bits refuse before any write",
          arguments: lockLayouts())
    func locks(layout: Layout) throws {
        let h = Harness(layout)
        let message = patternMessage(40, seed: 5)
        let start = try h.holding(message)
        let lockBytes = Set([0x0B, 0x70, 0x71] + (layout.chip.dynamic ? Array(0x7A...0x7F) : []))
        func allowed(_ now: [UInt8]) -> Bool { (0..<start.count).allSatisfy { start[$0] == now[$0] || lockBytes.contains($0) } }
        func fullyLocked(_ m: [UInt8]) -> Bool {
            m[0x0B] == 0x0F && m[0x70] == 0xFF && m[0x71] == 0xFF && (!layout.chip.dynamic || m[0x7A...0x7F].allSatisfy { $0 == 0xFF })
        }
        let canLock = layout.reader.form == .scm || (layout.reader.form == .acs && !layout.chip.dynamic)
        guard canLock else {
            let model = h.model(start)
            #expect(throws: (any Error).self) { _ = try h.detect(model).0.makeReadOnly() }
            #expect(model.contents == start, "\(layout): a refused lock changed the tag")
            return
        }
        let total = try h.exchanges(from: start) { _ = try $0.makeReadOnly() }.total
        for mode in CutChannel.Mode.allCases {
            for n in 0...total {
                let model = h.model(start)
                var reported: Bool?
                do { reported = try h.detect(model, cutAfter: n, mode: mode).0.makeReadOnly().refusesWrites } catch {}
                let now = model.contents
                #expect(allowed(now), "\(layout), lock cut after \(n): bytes outside the locks changed")
                #expect(h.read(now) == .message(message), "\(layout), lock cut after \(n): \(h.read(now))")
                if let reported {
                    #expect(reported && fullyLocked(now), "\(layout): a lock returned but the tag is not fully locked")
                    break
                }
                let again = h.model(now)
                let finish = try h.detect(again).0.makeReadOnly()
                #expect(finish.refusesWrites && fullyLocked(again.contents), "\(layout): the rerun after a cut at \(n) did not finish the lock")
            }
        }
    }
}
