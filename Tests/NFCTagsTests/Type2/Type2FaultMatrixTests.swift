import Foundation
import ISO7816
import NFCTags
import Testing
import TestSupport
import VirtualCard

/// The do-no-harm invariant on generated Type 2 layouts: every chip, the NDEF TLV at every
/// offset mod 4 after NULL, lock control and memory control TLVs, 1- and 3-byte lengths,
/// messages at the size boundaries, and a card pulled after every single APDU of a write, a
/// restore and a lock — in both ways a pull can take the APDU in flight (never executed, or
/// executed with its answer lost). The tag's state is judged by `ReferenceType2`, not by the
/// library's own parser.
@Suite("Type 2 fault matrix: generated layouts, a cut after every APDU")
struct Type2FaultMatrixTests {
    struct Layout: CustomStringConvertible, Sendable {
        var name: String
        var chip: Type2TagModel.Chip
        var image: [UInt8]
        /// The reader path: storage pseudo-APDUs, or native frames through a reader model.
        var path: Path = .storage
        var description: String { path == .storage ? name : "\(name), through \(path)" }
    }

    enum Path: String, Sendable { case storage, transparent, acr122u }

    /// Factory layouts, and the NDEF TLV at byte offsets 0-3 mod 4 behind NULL, lock control
    /// and memory control TLVs.
    static func layouts() -> [Layout] {
        var out: [Layout] = []
        for (key, chip) in Type2TagModel.Chip.all.sorted(by: { $0.key < $1.key }) {
            let factory = Type2TagModel.factoryImage(chip: chip)
            out.append(Layout(name: "\(key), as shipped", chip: chip, image: factory))
            let dataEnd = min(16 + chip.dataAreaBytes, chip.pages * 4)
            let ownLockTLV: [UInt8] = chip.factoryTLVs.first == 0x01 ? Array(chip.factoryTLVs.prefix(5)) : []
            // Tags whose lock bytes sit inside the data area must name them: keep their TLV always.
            let base = chip.lockBytesInDataArea ? ownLockTLV : []
            // Memory control TLV reserving 4 bytes at byte 40 (page 10): 40 = 5 × 2^3.
            let memoryControl: [UInt8] = [0x02, 0x03, 0x50, 0x04, 0x03]
            var prefixes: [(String, [UInt8])] = [("NULL TLVs", base), ("a memory control TLV", base + memoryControl)]
            if !ownLockTLV.isEmpty && !chip.lockBytesInDataArea { prefixes.append(("a lock control TLV", ownLockTLV)) }
            for offset in 0..<4 {
                for (label, prefix) in prefixes {
                    let pad = ((offset - (16 + prefix.count)) % 4 + 4) % 4
                    var image = factory
                    for i in 16..<dataEnd { image[i] = 0 }
                    for (i, b) in (prefix + [UInt8](repeating: 0, count: pad) + [0x03, 0x00, 0xFE]).enumerated() { image[16 + i] = b }
                    out.append(Layout(name: "\(key), NDEF TLV at offset \(offset) mod 4 after \(label)", chip: chip, image: image))
                }
            }
        }
        return out
    }

    func detect(_ model: Type2TagModel, cutAfter: Int? = nil, mode: CutChannel.Mode = .beforeExecution, tolerant: Bool = false,
                path: Path = .storage, observer: ((Exchange) -> Void)? = nil) throws -> (Type2Tag, CutChannel) {
        model.reset()
        let card: any EmulatedCard = switch path {
        case .storage: model
        case .transparent: ContactlessReader(.transparent, tag: model)
        case .acr122u: ContactlessReader(.acr122u, tag: model)
        }
        let channel = CutChannel(card: card, cutAfter: cutAfter, mode: mode)
        let transport = APDUTransport(channel: channel, observer: observer)
        guard path != .storage else { return (try Type2Tag.detect(transport, atr: model.atr, tolerant: tolerant), channel) }
        let commands = TagCommandChannel(transport: transport, dialect: path == .transparent ? .transparent : .acr122u)
        return (try Type2Tag.detect(transport, atr: model.atr, tolerant: tolerant, commands: commands), channel)
    }

    /// Whether a pseudo-APDU writes a page: UPDATE BINARY, or a WRITE frame inside the dialect.
    static func isWrite(_ command: [UInt8]) -> Bool {
        if command.count > 1 && command[1] == 0xD6 { return true }
        if command.starts(with: [0xFF, 0xC2, 0x00, 0x01]) { return command.count > 7 && command[7] == 0xA2 }
        if command.starts(with: [0xFF, 0x00, 0x00, 0x00]) { return command.count > 7 && command[5] == 0xD4 && command[6] == 0x42 && command[7] == 0xA2 }
        return false
    }

    /// Native layouts: the chips whose reach or commands differ through a raw path (FAST_READ,
    /// SECTOR_SELECT past 1 KB, GET_VERSION absent and the tag halting after the NAK).
    static func nativeLayouts() -> [Layout] {
        let base = layouts().filter { !$0.name.contains("memory control") && !$0.name.contains("lock control TLV") }
        var out: [Layout] = []
        // Every offset on the small chips; the large ones (thousands of cuts each) as shipped and
        // at one odd offset (`APDU_FULL_MATRIX=1`: every offset).
        let small = ["ntag213", "ultralight,", "ultralight-c"], large = ["ntag216", "two-sector-t2t"]
        for l in base where small.contains(where: { l.name.hasPrefix($0) })
            || (large.contains(where: { l.name.hasPrefix($0) }) && (fullMatrix || l.name.hasSuffix("as shipped") || l.name.contains("offset 3"))) {
            var t = l
            t.path = .transparent
            out.append(t)
            if l.name.hasSuffix("as shipped") && (l.name.hasPrefix("ntag216") || l.name.hasPrefix("two-sector")) {
                t.path = .acr122u
                out.append(t)
            }
        }
        return out
    }

    /// The layout with `message` written by the library (no cut).
    func image(_ layout: Layout, holding message: [UInt8]) throws -> [UInt8] {
        let model = Type2TagModel(chip: layout.chip, memory: layout.image)
        try detect(model, path: layout.path).0.writeNDEF(message)
        #expect(ReferenceType2.read(model.contents) == .message(message), "\(layout)")
        return model.contents
    }

    /// Which messages a state may show.
    static func allowed(_ state: WriteInterrupted.TagState, old: [UInt8], new: [UInt8]) -> [[UInt8]] {
        switch state {
        case .old: return [old]
        case .oldOrEmpty: return [old, []]
        case .empty: return [[]]
        case .emptyOrNew: return [[], new]
        case .new: return [new]
        case .unknown: return []
        }
    }

    struct Tally { var cases = 0, old = 0, empty = 0, new = 0, completed = 0, restores = 0 }

    /// Writes `new` over `start`, cut after every APDU in both modes; checks the invariant and
    /// that the backup restores `old` exactly from every state.
    func cutEveryWrite(_ layout: Layout, start: [UInt8], old: [UInt8], new: [UInt8], tally: inout Tally) throws {
        let writable = ReferenceType2.writableBytes(start)
        var restoredFrom = Set<[UInt8]>()
        let updates = try updateIndices(layout, start: start) { try $0.replaceNDEF(with: new) { _ in } }
        for mode in CutChannel.Mode.allCases {
            // A pull that loses a READ's answer leaves the tag as a pull before it would: only
            // UPDATEs need the second mode.
            var cuts = mode == .beforeExecution ? Array(0...(updates.total)) : updates.indices
            cuts.reverse()
            while let n = cuts.popLast() {
                let model = Type2TagModel(chip: layout.chip, memory: start)
                var backup: TagBackup?
                var reported: WriteInterrupted.TagState?
                var finished = false
                let steps = StepLog()
                do {
                    let (tag, channel) = try detect(model, cutAfter: n, mode: mode, path: layout.path)
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
                    #expect(model.contents == start, "\(layout): the tag changed though the write said nothing was written (cut after \(n))")
                }
                tally.cases += 1
                let now = model.contents
                let reading = ReferenceType2.read(now)
                var outside: [Int] = []
                for i in 0..<now.count where now[i] != start[i] && !writable.contains(i) { outside.append(i) }
                #expect(outside.isEmpty, "\(layout), cut after \(n): bytes outside the NDEF area changed: \(outside)")
                if finished {
                    #expect(reading == .message(new), "\(layout): completed write reads \(reading)")
                    tally.completed += 1
                    break
                }
                switch reading {
                case .message(old): tally.old += 1
                case .message([]): tally.empty += 1
                case .message(new): tally.new += 1
                default: Issue.record("\(layout), \(mode), cut after \(n): the tag reads \(reading) — neither old, empty nor new")
                }
                if let reported {
                    #expect(Self.allowed(reported, old: old, new: new).contains { reading == .message($0) },
                            "\(layout), \(mode), cut after \(n): reported \(reported), the tag reads \(reading)")
                }
                if now != start, let backup, restoredFrom.insert(now).inserted {
                    // The backup puts the old message back exactly, from whatever state the cut left.
                    let restored = Type2TagModel(chip: layout.chip, memory: now)
                    try detect(restored, tolerant: true, path: layout.path).0.restore(backup)
                    #expect(ReferenceType2.read(restored.contents) == .message(old), "\(layout): restore after a cut at \(n) reads \(ReferenceType2.read(restored.contents))")
                    let range = backup.start..<(backup.start + backup.bytes.count)
                    #expect(Array(restored.contents[range]) == Array(start[range]), "\(layout): restore is not byte-exact")
                    tally.restores += 1
                }
            }
        }
    }

    /// The exchanges of an uncut run: how many, and which are UPDATE BINARY.
    func updateIndices(_ layout: Layout, start: [UInt8], _ body: (Type2Tag) throws -> Void) throws -> (total: Int, indices: [Int]) {
        let model = Type2TagModel(chip: layout.chip, memory: start)
        var commands: [[UInt8]] = []
        try body(try detect(model, path: layout.path) { commands.append($0.command) }.0)
        return (commands.count, commands.indices.filter { Self.isWrite(commands[$0]) })
    }

    @Test("writes cut after every APDU: old, empty or new; the reported state is right; the backup restores exactly",
          arguments: layouts() + nativeLayouts())
    func writes(layout: Layout) throws {
        let model = Type2TagModel(chip: layout.chip, memory: layout.image)
        let (tag, _) = try detect(model, path: layout.path)
        let capacity = tag.reachableCapacity
        let sizes = boundarySizes(capacity: capacity)
        var tally = Tally()
        for (i, size) in sizes.enumerated() {
            let oldSize = sizes[(i + (sizes.count + 1) / 2) % sizes.count]
            let old = patternMessage(oldSize, seed: 1), new = patternMessage(size, seed: 2)
            let start = try image(layout, holding: old)
            try cutEveryWrite(layout, start: start, old: old, new: new, tally: &tally)
        }
        #expect(tally.completed == sizes.count)
        print("\(layout): \(tally.cases) cuts (old \(tally.old), empty \(tally.empty), new \(tally.new), completed \(tally.completed)), \(tally.restores) restores")
    }

    @Test("restores cut after every APDU: the state before, empty, or the backup; a second restore finishes",
          arguments: (layouts() + nativeLayouts()).filter { $0.name.hasSuffix("as shipped") || $0.name.contains("offset 1") || $0.name.contains("offset 2") })
    func restores(layout: Layout) throws {
        let probe = try detect(Type2TagModel(chip: layout.chip, memory: layout.image), path: layout.path).0
        let capacity = probe.reachableCapacity
        let old = patternMessage(min(capacity, 300), seed: 3), new = patternMessage(min(capacity, 40), seed: 4)
        let start = try image(layout, holding: old)
        // The state to restore from: the new message half written (length 0), as a cut leaves it.
        let cutModel = Type2TagModel(chip: layout.chip, memory: start)
        var backup: TagBackup?
        let updates = try updateIndices(layout, start: start) { try $0.replaceNDEF(with: new) { _ in } }
        do {
            let (tag, _) = try detect(cutModel, cutAfter: updates.indices[min(2, updates.indices.count - 1)], path: layout.path)
            try tag.replaceNDEF(with: new) { backup = $0 }
        } catch {}
        let from = cutModel.contents
        let backupToUse = try #require(backup, "\(layout)")
        let fromReading = ReferenceType2.read(from)
        for mode in CutChannel.Mode.allCases {
            var n = 0
            while true {
                let model = Type2TagModel(chip: layout.chip, memory: from)
                var finished = false
                do {
                    try detect(model, cutAfter: n, mode: mode, tolerant: true, path: layout.path).0.restore(backupToUse)
                    finished = true
                } catch {}
                let reading = ReferenceType2.read(model.contents)
                #expect(reading == fromReading || reading == .message([]) || reading == .message(old), "\(layout), restore cut after \(n): \(reading)")
                if finished { #expect(reading == .message(old)); break }
                // A second restore, uncut, always finishes.
                let again = Type2TagModel(chip: layout.chip, memory: model.contents)
                try detect(again, tolerant: true, path: layout.path).0.restore(backupToUse)
                #expect(ReferenceType2.read(again.contents) == .message(old), "\(layout), second restore after a cut at \(n)")
                n += 1
                if n > 2000 { Issue.record("never finished"); break }
            }
        }
    }

    /// The bytes a lock may change: CC byte 3, the static lock bytes, and the chip's real
    /// dynamic lock bytes (from the emulator's datasheet table, not the library's).
    static func lockBytes(_ chip: Type2TagModel.Chip) -> Set<Int> {
        var bytes: Set<Int> = [10, 11, 15]
        if let page = chip.dynamicLockPage {
            let count = chip.lockBytesInDataArea ? (chip.lockBits + 7) / 8 : 3
            bytes.formUnion((page * 4)..<(page * 4 + count))
        }
        return bytes
    }

    /// Whether the model's own view says every lock is set: CC, static bits, every dynamic bit.
    static func fullyLocked(_ m: [UInt8], _ chip: Type2TagModel.Chip) -> Bool {
        guard m[15] & 0x0F == 0x0F, m[10] == 0xFF, m[11] == 0xFF else { return false }
        guard let page = chip.dynamicLockPage else { return true }
        return (0..<chip.lockBits).allSatisfy { m[page * 4 + $0 / 8] & (1 << ($0 % 8)) != 0 }
    }

    /// Whether the lock must be refused before anything is written: the tag has dynamic lock
    /// bytes, no lock control TLV names them, and nothing proves the chip (no GET_VERSION: a
    /// storage-only reader, or a chip without the command). Worked out from the emulator's
    /// datasheet table and the layout's bytes, not from the library.
    static func lockUnprovable(_ layout: Layout) -> Bool {
        // A lock control TLV (01) before the NDEF TLV: NULL TLVs skipped, others by their length.
        var p = 16, hasLockTLV = false
        while p + 1 < layout.image.count {
            let t = layout.image[p]
            if t == 0x00 { p += 1; continue }
            if t == 0x01 { hasLockTLV = true }
            if t == 0x01 || t == 0x03 || t == 0xFE { break }
            p += 2 + Int(layout.image[p + 1])
        }
        return layout.chip.dataAreaBytes > 48 && !hasLockTLV && (layout.path == .storage || layout.chip.version == nil)
    }

    @Test("locks cut after every APDU: the message stays, only lock bytes change, never a lock reported that did not happen, a rerun finishes; an unprovable lock position is refused untouched",
          arguments: (layouts() + nativeLayouts()).filter { !$0.name.contains("memory control") })
    func locks(layout: Layout) throws {
        let capacity = try detect(Type2TagModel(chip: layout.chip, memory: layout.image), path: layout.path).0.reachableCapacity
        let message = patternMessage(min(capacity, 60), seed: 5)
        let start = try image(layout, holding: message)
        let allowed = Self.lockBytes(layout.chip)
        if Self.lockUnprovable(layout) {
            let model = Type2TagModel(chip: layout.chip, memory: start)
            let (tag, _) = try detect(model, path: layout.path)
            #expect(throws: TagError.self, "\(layout): a lock at a guessed position") { try tag.makeReadOnly() }
            #expect(model.contents == start, "\(layout): the refused lock wrote")
            return
        }
        for mode in CutChannel.Mode.allCases {
            var n = 0
            while true {
                let model = Type2TagModel(chip: layout.chip, memory: start)
                var report: Type2Tag.LockReport?
                do { report = try detect(model, cutAfter: n, mode: mode, path: layout.path).0.makeReadOnly() } catch {}
                let now = model.contents
                let changed = (0..<now.count).filter { now[$0] != start[$0] }
                #expect(changed.allSatisfy(allowed.contains), "\(layout), lock cut after \(n): changed \(changed.filter { !allowed.contains($0) })")
                #expect(ReferenceType2.read(now) == .message(message), "\(layout), lock cut after \(n)")
                if let report {
                    #expect(report.refusesWrites == Self.fullyLocked(now, layout.chip), "\(layout): the report says refusesWrites \(report.refusesWrites)")
                    #expect(Self.fullyLocked(now, layout.chip), "\(layout): a lock returned but the tag is not fully locked")
                    break
                }
                // The interrupted lock is finished by running it again.
                let again = Type2TagModel(chip: layout.chip, memory: now)
                let (tag, _) = try detect(again, path: layout.path)
                if !Self.fullyLocked(now, layout.chip) {
                    #expect(try tag.readLockState().isPartlyLocked || now == start, "\(layout): an interrupted lock must show as partial")
                }
                let finish = try tag.makeReadOnly()
                #expect(finish.refusesWrites && Self.fullyLocked(again.contents, layout.chip), "\(layout): the rerun after a cut at \(n) did not finish the lock")
                n += 1
                if n > 200 { Issue.record("never finished"); break }
            }
        }
    }

    /// `Scripts/stress`: random layouts (NULL, memory control and proprietary TLVs before the
    /// NDEF TLV, reserved bytes anywhere in the message's way) and random message sizes, every
    /// cut point. The seed is printed; `APDU_MATRIX_SEED` replays a run.
    @Test("random layouts, a cut after every APDU (Scripts/stress)",
          .enabled(if: ProcessInfo.processInfo.environment["APDU_MATRIX_ROUNDS"] != nil))
    func randomLayouts() throws {
        let env = ProcessInfo.processInfo.environment
        let rounds = Int(env["APDU_MATRIX_ROUNDS"] ?? "") ?? 100
        let seed = UInt64(env["APDU_MATRIX_SEED"] ?? "") ?? UInt64(ContinuousClock.now.hashValue.magnitude)
        var rng = SplitMix(seed: seed)
        print("random layouts: seed \(seed) (APDU_MATRIX_SEED=\(seed) replays it)")
        let chips = Type2TagModel.Chip.all.values.sorted { $0.name < $1.name }
        var tally = Tally()
        for round in 0..<rounds {
            let chip = chips[Int(rng.next() % UInt64(chips.count))]
            var image = Type2TagModel.factoryImage(chip: chip)
            let dataEnd = min(16 + chip.dataAreaBytes, chip.pages * 4)
            for i in 16..<dataEnd { image[i] = 0 }
            var tlvs: [UInt8] = chip.lockBytesInDataArea ? Array(chip.factoryTLVs.prefix(5)) : []
            var reservedStarts: [Int] = []
            for _ in 0..<Int(rng.next() % 4) {
                switch rng.next() % 3 {
                case 0: tlvs += [UInt8](repeating: 0, count: Int(rng.next() % 4) + 1)
                case 1: tlvs += [0xFD, 0x02, UInt8(truncatingIfNeeded: rng.next()), UInt8(truncatingIfNeeded: rng.next())]
                default:
                    // A memory control TLV: PageAddr << e + ByteOffset, somewhere past the TLVs.
                    let e = Int(rng.next() % 4) + 2, page = Int(rng.next() % 15) + 1, offset = Int(rng.next() % 16)
                    let position = page << e + offset, size = Int(rng.next() % 8) + 1
                    guard position >= 16 + tlvs.count + 12, position + size <= dataEnd - 8 else { continue }
                    tlvs += [0x02, 0x03, UInt8(page << 4 | offset), UInt8(size), UInt8(e)]
                    reservedStarts.append(position)
                }
            }
            tlvs += [0x03, 0x00, 0xFE]
            // A layout whose TLVs run into the bytes their own control TLVs reserve exists on no
            // tag (the NDEF TLV would be skipped as reserved): generate another.
            guard 16 + tlvs.count < dataEnd - 8, reservedStarts.allSatisfy({ $0 >= 16 + tlvs.count }) else { continue }
            for (i, b) in tlvs.enumerated() { image[16 + i] = b }
            let layout = Layout(name: "random layout \(round) (seed \(seed)): \(chip.name), TLVs \(tlvs.hexString)", chip: chip, image: image)
            if ProcessInfo.processInfo.environment["APDU_MATRIX_VERBOSE"] != nil { print("round \(round): \(layout.name)") }
            let capacity = try detect(Type2TagModel(chip: chip, memory: image)).0.reachableCapacity
            let old = patternMessage(Int(rng.next() % UInt64(capacity + 1)), seed: round)
            let new = patternMessage(Int(rng.next() % UInt64(capacity + 1)), seed: round + 1)
            try cutEveryWrite(layout, start: try self.image(layout, holding: old), old: old, new: new, tally: &tally)
        }
        print("random layouts: \(rounds) rounds, seed \(seed): \(tally.cases) cuts (old \(tally.old), empty \(tally.empty), new \(tally.new)), \(tally.restores) restores")
    }
}
