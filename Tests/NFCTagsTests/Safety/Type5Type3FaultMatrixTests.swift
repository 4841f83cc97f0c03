import Foundation
import ISO7816
import NFCTags
import Testing
import TestSupport
import VirtualCard

/// The do-no-harm invariant for Types 5 and 3, as for Type 2: generated layouts (every chip,
/// the NDEF TLV at every offset in a block behind NULL and proprietary TLVs, 1- and 3-byte
/// lengths), messages at the size boundaries, and a card pulled after every single exchange of
/// a write, a restore and a lock, both ways a pull can take the exchange in flight.
@Suite("Type 5 and Type 3 fault matrix: generated layouts, a cut after every exchange")
struct Type5Type3FaultMatrixTests {
    /// One generated case: how to make the tag from a state, read it independently, and drive it.
    struct Layout: CustomStringConvertible, Sendable {
        enum Family: Sendable { case type5(ISO15693TagModel.Chip, path: ContactlessReader.Dialect), type3(FeliCaTagModel.Chip, path: ContactlessReader.Dialect) }
        var name: String
        var family: Family
        /// Type 5: the memory; Type 3: the blocks, flattened as block → 16 bytes.
        var start5: [UInt8] = []
        var start3: [Int: [UInt8]] = [:]
        /// Sizes to try (nil: the boundaries of the capacity).
        var sizes: [Int]?
        var description: String { name }
    }

    /// A tag model in a given state, behind its reader, cut after `n` exchanges.
    final class Harness {
        let layout: Layout
        init(_ layout: Layout) { self.layout = layout }

        enum State: Hashable { case five([UInt8], Set<Int>), three([Int: [UInt8]]) }

        func model(_ state: State) -> any NativeTagModel {
            switch (layout.family, state) {
            case let (.type5(chip, _), .five(m, locked)): return ISO15693TagModel(chip: chip, memory: m, locked: locked)
            case let (.type3(chip, _), .three(b)): return FeliCaTagModel(chip: chip, blocks: b)
            default: fatalError("state of the wrong family")
            }
        }

        func state(of model: any NativeTagModel) -> State {
            if let m = model as? ISO15693TagModel { return .five(m.contents, m.lockedBlocks) }
            return .three((model as! FeliCaTagModel).contents)
        }

        func read(_ state: State) -> ReferenceType2.Reading {
            switch state {
            case let .five(m, _): return ReferenceType5.read(m)
            case let .three(b): return ReferenceType3.read(b)
            }
        }

        func detect(_ model: any NativeTagModel, cutAfter: Int? = nil, mode: CutChannel.Mode = .beforeExecution, tolerant: Bool = false,
                    observer: ((Exchange) -> Void)? = nil) throws -> (any NDEFTag, CutChannel) {
            let dialect: ContactlessReader.Dialect
            switch layout.family {
            case let .type5(_, path), let .type3(_, path): dialect = path
            }
            let reader = ContactlessReader(dialect, tag: model)
            let channel = CutChannel(card: reader, cutAfter: cutAfter, mode: mode)
            let transport = APDUTransport(channel: channel, observer: observer)
            let commands = TagCommandChannel(transport: transport, dialect: dialect == .transparent ? .transparent : dialect == .acr122u ? .acr122u : .storageOnly)
            switch layout.family {
            case .type5: return (try Type5Tag.detect(transport, atr: model.atr, tolerant: tolerant, commands: commands), channel)
            case .type3: return (try Type3Tag.detect(transport, commands: commands, tolerant: tolerant), channel)
            }
        }

        var startState: State {
            switch layout.family {
            case let .type5(chip, _): return .five(layout.start5.isEmpty ? ISO15693TagModel.factoryImage(chip: chip) : layout.start5, [])
            case let .type3(chip, _): return .three(layout.start3.isEmpty ? FeliCaTagModel.factoryBlocks(chip: chip, idm: FeliCaTagModel(chip: chip).idm) : layout.start3)
            }
        }

        /// Bytes (Type 5) or blocks (Type 3) a write may change, judged from the start state.
        func changedOutsideNDEFArea(from start: State, to now: State) -> [String] {
            switch (start, now) {
            case let (.five(a, la), .five(b, lb)):
                let writable = ReferenceType5.writableBytes(a)
                return (0..<a.count).filter { a[$0] != b[$0] && !writable.contains($0) }.map { "byte \($0)" } + (la == lb ? [] : ["lock bits"])
            case let (.three(a), .three(b)):
                let nmaxb = Int(a[0]![3]) << 8 | Int(a[0]![4])
                return Set(a.keys).union(b.keys).filter { a[$0] != b[$0] && !(0...nmaxb).contains($0) }.sorted().map { "block \($0)" }
            default: return ["family"]
            }
        }

        func state(holding message: [UInt8]) throws -> State {
            let m = model(startState)
            try detect(m).0.writeNDEF(message)
            #expect(read(state(of: m)) == .message(message), "\(layout)")
            return state(of: m)
        }
    }

    static func isWrite(_ command: [UInt8]) -> Bool {
        let frame: [UInt8]
        if command.starts(with: [0xFF, 0xC2, 0x00, 0x01]), command.count > 7 { frame = Array(command[(command[6] == 0x81 ? 8 : 7)...]) }
        else if command.starts(with: [0xFF, 0x00, 0x00, 0x00]), command.count > 7, command[5] == 0xD4, command[6] == 0x42 { frame = Array(command[7...]) }
        else { return command.count > 1 && command[1] == 0xD6 }
        // ISO 15693 WRITE / LOCK (flags, command); FeliCa Write Without Encryption (length, 08).
        return frame.count > 1 && [0x21, 0x31, 0x22, 0x32, 0x08].contains(frame[1])
    }

    static func layouts() -> [Layout] {
        var out: [Layout] = []
        for (key, chip) in ISO15693TagModel.Chip.all.sorted(by: { $0.key < $1.key }) {
            let factory = ISO15693TagModel.factoryImage(chip: chip)
            let cc = chip.factoryCC.count
            let large = chip.blocks > 256
            let sizes: [Int]? = large && !fullMatrix ? [0, 1, 254, 255, 256, 1024] : nil
            for path in [ContactlessReader.Dialect.transparent, .storageOnly] {
                out.append(Layout(name: "\(key), as shipped, through \(path)", family: .type5(chip, path: path), start5: factory, sizes: sizes))
                if large && !fullMatrix { continue }
                for offset in 0..<chip.blockSize where path == .transparent || offset == 1 {
                    for (label, prefix) in [("NULL TLVs", [UInt8]()), ("a proprietary TLV", [0xFD, 0x02, 0xAB, 0xCD])] {
                        let pad = ((offset - (cc + prefix.count)) % chip.blockSize + chip.blockSize) % chip.blockSize
                        var image = factory
                        for i in cc..<image.count { image[i] = 0 }
                        for (i, b) in (prefix + [UInt8](repeating: 0, count: pad) + [0x03, 0x00, 0xFE]).enumerated() { image[cc + i] = b }
                        out.append(Layout(name: "\(key), NDEF TLV at offset \(offset) in its block after \(label), through \(path)",
                                          family: .type5(chip, path: path), start5: image, sizes: sizes))
                    }
                }
            }
        }
        for (key, chip) in FeliCaTagModel.Chip.all.sorted(by: { $0.key < $1.key }) {
            for path in [ContactlessReader.Dialect.transparent, .acr122u] {
                out.append(Layout(name: "\(key), through \(path)", family: .type3(chip, path: path)))
            }
        }
        return out
    }

    struct Tally { var cases = 0, old = 0, empty = 0, new = 0, restores = 0 }

    func exchanges(_ h: Harness, from state: Harness.State, _ body: (any NDEFTag) throws -> Void) throws -> (total: Int, writes: [Int]) {
        var commands: [[UInt8]] = []
        try body(try h.detect(h.model(state)) { commands.append($0.command) }.0)
        return (commands.count, commands.indices.filter { Self.isWrite(commands[$0]) })
    }

    func cutEveryWrite(_ h: Harness, start: Harness.State, old: [UInt8], new: [UInt8], tally: inout Tally) throws {
        let run = try exchanges(h, from: start) { try $0.replaceNDEF(with: new) { _ in } }
        var restoredFrom = Set<Harness.State>()
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
                    #expect(h.state(of: model) == start, "\(h.layout): the tag changed though the write said nothing was written (cut after \(n))")
                }
                tally.cases += 1
                let now = h.state(of: model)
                let reading = h.read(now)
                let outside = h.changedOutsideNDEFArea(from: start, to: now)
                #expect(outside.isEmpty, "\(h.layout), cut after \(n): changed outside the NDEF area: \(outside)")
                if finished {
                    #expect(reading == .message(new), "\(h.layout): completed write reads \(reading)")
                    break
                }
                switch reading {
                case .message(old): tally.old += 1
                case .message([]): tally.empty += 1
                case .message(new): tally.new += 1
                default: Issue.record("\(h.layout), \(mode), cut after \(n): the tag reads \(reading) — neither old, empty nor new")
                }
                if let reported {
                    #expect(Type2FaultMatrixTests.allowed(reported, old: old, new: new).contains { reading == .message($0) },
                            "\(h.layout), \(mode), cut after \(n): reported \(reported), the tag reads \(reading)")
                }
                if now != start, let backup, restoredFrom.insert(now).inserted {
                    let restored = h.model(now)
                    try h.detect(restored, tolerant: true).0.restore(backup, allowingOtherTag: false)
                    #expect(h.read(h.state(of: restored)) == .message(old), "\(h.layout): restore after a cut at \(n) reads \(h.read(h.state(of: restored)))")
                    tally.restores += 1
                }
            }
        }
    }

    @Test("writes cut after every exchange: old, empty or new; the reported state is right; the backup restores", arguments: layouts())
    func writes(layout: Layout) throws {
        let h = Harness(layout)
        let capacity = try h.detect(h.model(h.startState)).0.capacity
        var sizes = layout.sizes ?? boundarySizes(capacity: capacity)
        if case .type3 = layout.family { sizes = Array(Set(sizes + [15, 16, 17].filter { $0 <= capacity })).sorted() }
        var tally = Tally()
        for (i, size) in sizes.enumerated() {
            let old = patternMessage(sizes[(i + (sizes.count + 1) / 2) % sizes.count], seed: 1), new = patternMessage(size, seed: 2)
            try cutEveryWrite(h, start: try h.state(holding: old), old: old, new: new, tally: &tally)
        }
        print("\(layout): \(tally.cases) cuts (old \(tally.old), empty \(tally.empty), new \(tally.new)), \(tally.restores) restores")
    }

    @Test("restores cut after every exchange: the state before, empty, or the backup; a second restore finishes",
          arguments: layouts().filter { $0.name.contains("as shipped") || $0.name.contains("offset 1") || $0.name.hasPrefix("felica") })
    func restores(layout: Layout) throws {
        let h = Harness(layout)
        let capacity = try h.detect(h.model(h.startState)).0.capacity
        let old = patternMessage(min(capacity, 300), seed: 3), new = patternMessage(min(capacity, 40), seed: 4)
        let start = try h.state(holding: old)
        let run = try exchanges(h, from: start) { try $0.replaceNDEF(with: new) { _ in } }
        let cutModel = h.model(start)
        var backup: TagBackup?
        do { try h.detect(cutModel, cutAfter: run.writes[min(2, run.writes.count - 1)]).0.replaceNDEF(with: new) { backup = $0 } } catch {}
        let from = h.state(of: cutModel)
        let fromReading = h.read(from)
        let saved = try #require(backup)
        for mode in CutChannel.Mode.allCases {
            var n = 0
            while true {
                let model = h.model(from)
                var finished = false
                do { try h.detect(model, cutAfter: n, mode: mode, tolerant: true).0.restore(saved, allowingOtherTag: false); finished = true } catch {}
                let reading = h.read(h.state(of: model))
                #expect(reading == fromReading || reading == .message([]) || reading == .message(old), "\(layout), restore cut after \(n): \(reading)")
                if finished { #expect(reading == .message(old)); break }
                let again = h.model(h.state(of: model))
                try h.detect(again, tolerant: true).0.restore(saved, allowingOtherTag: false)
                #expect(h.read(h.state(of: again)) == .message(old), "\(layout), second restore after a cut at \(n)")
                n += 1
                if n > 5000 { Issue.record("never finished"); break }
            }
        }
    }

    /// Whether every lock the chip has is set, by the model's own state.
    static func fullyLocked(_ state: Harness.State, _ layout: Layout) -> Bool {
        switch (state, layout.family) {
        case let (.five(m, locked), .type5(chip, _)):
            guard let (_, end) = ReferenceType5.areaEnd(m) else { return false }
            return m[1] & 0x03 == 0x03 && Set(0..<((end + chip.blockSize - 1) / chip.blockSize)).isSubset(of: locked)
        case let (.three(b), _):
            guard let a = b[0], let mc = b[0x88] else { return false }
            return a[10] == 0 && mc[0] == 0 && mc[1] & 0x3F == 0 && mc[2] == 0
        default: return false
        }
    }

    /// What a lock may change: Type 5 CC byte 1 and the lock bits; Type 3 RWFlag and the
    /// checksum in block 0, bytes 0-2 of the MC.
    static func lockChangesAllowed(_ start: Harness.State, _ now: Harness.State) -> Bool {
        switch (start, now) {
        case let (.five(a, _), .five(b, _)): return (0..<a.count).allSatisfy { a[$0] == b[$0] || $0 == 1 }
        case let (.three(a), .three(b)):
            return Set(a.keys).union(b.keys).allSatisfy { k in
                guard let x = a[k], let y = b[k] else { return false }
                let allowed: Set<Int> = k == 0 ? [10, 14, 15] : k == 0x88 ? [0, 1, 2] : []
                return (0..<16).allSatisfy { x[$0] == y[$0] || allowed.contains($0) }
            }
        default: return false
        }
    }

    /// Lock layouts: the chips that have a permanent lock; the ST25DV's 2,048 LOCK BLOCKs are cut
    /// at the first and last 40 and every 37th between (`APDU_FULL_MATRIX=1`: every one).
    static func lockLayouts() -> [Layout] {
        layouts().filter { l in
            switch l.family {
            case let .type5(_, path): return path == .transparent && l.name.contains("as shipped")
            case let .type3(chip, _): return chip.lite
            }
        }
    }

    /// Locks a Type 5 or Type 3 tag; whether the report says it refuses writes.
    static func lock(_ tag: any NDEFTag) throws -> Bool {
        let lockable = tag as! any PermanentlyLockable
        return try lockOpened(lockable)
    }

    static func lockOpened<T: PermanentlyLockable>(_ tag: T) throws -> Bool { try tag.makeReadOnly().refusesWrites }

    @Test("locks cut after every exchange: the message stays, only lock bytes change, no lock reported that did not happen, a rerun finishes",
          arguments: lockLayouts())
    func locks(layout: Layout) throws {
        let h = Harness(layout)
        let capacity = try h.detect(h.model(h.startState)).0.capacity
        let message = patternMessage(min(capacity, 60), seed: 5)
        let start = try h.state(holding: message)
        let total = try exchanges(h, from: start) { _ = try Self.lock($0) }.total
        let cuts = (0...total).filter { n in fullMatrix || total < 400 || n < 40 || n > total - 40 || n % 37 == 0 }
        for mode in CutChannel.Mode.allCases {
            for n in cuts {
                let model = h.model(start)
                var reported: Bool?
                do {
                    let tag = try h.detect(model, cutAfter: n, mode: mode).0
                    reported = try Self.lock(tag)
                } catch {}
                let now = h.state(of: model)
                #expect(Self.lockChangesAllowed(start, now), "\(layout), lock cut after \(n): bytes outside the locks changed")
                #expect(h.read(now) == .message(message), "\(layout), lock cut after \(n): \(h.read(now))")
                if let reported {
                    #expect(reported && Self.fullyLocked(now, layout), "\(layout): a lock returned but the tag is not fully locked")
                    break
                }
                let again = h.model(now)
                let tag = try h.detect(again).0
                let finish = try Self.lock(tag)
                #expect(finish && Self.fullyLocked(h.state(of: again), layout), "\(layout): the rerun after a cut at \(n) did not finish the lock")
            }
        }
    }
}
