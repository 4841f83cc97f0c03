import ISO7816
import NFCTags
import Testing
import TestSupport
import VirtualCard

/// A Type 2 tag whose chip is not proven (behind a storage-only reader nothing sends GET_VERSION)
/// has dynamic lock bytes whose place is unknown: an unknown lock is not an unlocked page
/// (issue 32). Generated cases: random dynamic (and static) lock patterns on NTAG213/215/216 and
/// a generic Type 2 tag, the old and new messages of random sizes, behind every storage-only
/// reader model, written uncut and cut after every exchange in both ways a pull can take it. The
/// tag is judged by `ReferenceType2` and the emulator's own lock table, never by the library:
/// an uncut write ends written, or refused with the tag byte-for-byte unchanged; a cut ends old,
/// new or empty, and from empty the backup restores the old message.
@Suite("Type 2 unknown locks: refused writes leave the tag unchanged, cuts stay old, empty or new")
struct Type2UnknownLockTests {
    struct Case: CustomStringConvertible, Sendable {
        var chip: Type2TagModel.Chip
        var reader: ContactlessReader.Model
        var seed: UInt64
        var description: String { "\(chip.name), seed \(seed), behind \(reader)" }
    }

    static let chips: [Type2TagModel.Chip] = [.ntag213, .ntag215, .ntag216, .genericT2T]

    static func cases() -> [Case] {
        let readers = ContactlessReader.Model.generated().filter { $0.dialect == .storageOnly }
        var out: [Case] = []
        for (c, chip) in chips.enumerated() {
            for seed in 0..<6 { out.append(Case(chip: chip, reader: readers[(seed + c) % readers.count], seed: UInt64(c * 100 + seed))) }
        }
        return out
    }

    func detect(_ model: Type2TagModel, _ reader: ContactlessReader.Model, cutAfter: Int? = nil, mode: CutChannel.Mode = .beforeExecution,
                tolerant: Bool = false, observer: ((Exchange) -> Void)? = nil) throws -> (Type2Tag, CutChannel) {
        model.reset()
        let channel = CutChannel(card: ContactlessReader(model: reader, tag: model), cutAfter: cutAfter, mode: mode)
        let transport = APDUTransport(channel: channel, observer: observer)
        return (try Type2Tag.detect(transport, atr: model.atr, tolerant: tolerant), channel)
    }

    /// Sets random lock bits: some dynamic ones (the chip's real lock page, from the emulator's
    /// table) and, sometimes, a static one.
    static func lock(_ image: [UInt8], _ chip: Type2TagModel.Chip, _ rng: inout SplitMix) -> [UInt8] {
        var m = image
        if let page = chip.dynamicLockPage {
            for _ in 0..<(1 + Int(rng.next() % 3)) {
                let bit = Int(rng.next() % UInt64(chip.lockBits))
                m[page * 4 + bit / 8] |= 1 << (bit % 8)
            }
        }
        if rng.next() % 4 == 0 { m[11] |= 1 << (rng.next() % 8) }
        return m
    }

    @Test("random lock patterns, every storage reader: written or unchanged uncut; old, empty or new cut after every exchange", arguments: cases())
    func unknownLocks(_ c: Case) throws {
        var rng = SplitMix(seed: c.seed)
        let base = Type2TagModel.factoryImage(chip: c.chip)
        let capacity = try detect(Type2TagModel(chip: c.chip, memory: base), c.reader).0.capacity
        var refused = 0, written = 0, cuts = 0
        for round in 0..<3 {
            // The old message is written while nothing is locked, then the lock bits are set.
            let old = patternMessage(Int(rng.next() % UInt64(min(capacity, 200) + 1)), seed: round)
            let new = patternMessage(Int(rng.next() % UInt64(capacity + 1)), seed: round + 50)
            let unlocked = Type2TagModel(chip: c.chip, memory: base)
            try detect(unlocked, c.reader).0.writeNDEF(old)
            let start = Self.lock(unlocked.contents, c.chip, &rng)
            let writable = ReferenceType2.writableBytes(start)

            // Uncut: written, or refused with every byte as it was.
            let model = Type2TagModel(chip: c.chip, memory: start)
            var commands: [[UInt8]] = []
            do {
                try detect(model, c.reader) { commands.append($0.command) }.0.replaceNDEF(with: new) { _ in }
                #expect(ReferenceType2.read(model.contents) == .message(new), "\(c), round \(round)")
                written += 1
            } catch let e as TagError {
                #expect(e.kind == .readOnly, "\(c), round \(round): \(e)")
                #expect(model.contents == start, "\(c), round \(round): refused (\(e)) but the tag changed")
                refused += 1
            }

            // Cut after every exchange, both ways.
            for mode in CutChannel.Mode.allCases {
                for n in 0...commands.count {
                    let cut = Type2TagModel(chip: c.chip, memory: start)
                    var backup: TagBackup?
                    var reported: WriteInterrupted.TagState?
                    let steps = StepLog()
                    do {
                        let (tag, _) = try detect(cut, c.reader, cutAfter: n, mode: mode)
                        steps.attach(tag)
                        try tag.replaceNDEF(with: new) { backup = $0 }
                    } catch let e as WriteInterrupted {
                        reported = e.state
                        steps.expectSound(finished: false, failure: e, "\(c), round \(round), cut after \(n)")
                    } catch let e as TagError {
                        #expect(cut.contents == start, "\(c), round \(round), cut after \(n): refused (\(e)) but the tag changed")
                    } catch {
                        #expect(error is CardPulled, "\(c), cut after \(n): \(error)")
                    }
                    cuts += 1
                    let now = cut.contents
                    let outside = (0..<now.count).filter { now[$0] != start[$0] && !writable.contains($0) }
                    #expect(outside.isEmpty, "\(c), round \(round), cut after \(n): bytes outside the NDEF area changed: \(outside)")
                    let reading = ReferenceType2.read(now)
                    guard [ReferenceType2.Reading.message(old), .message(new), .message([])].contains(reading) else {
                        Issue.record("\(c), round \(round), \(mode), cut after \(n): the tag reads \(reading): neither old, empty nor new")
                        continue
                    }
                    if let reported {
                        #expect(Type2FaultMatrixTests.allowed(reported, old: old, new: new).contains { reading == .message($0) },
                                "\(c), round \(round), cut after \(n): reported \(reported), the tag reads \(reading)")
                    }
                    if reading == .message([]) && !old.isEmpty {
                        // Empty only by a cut, and the backup puts the old message back.
                        let b = try #require(backup, "\(c), round \(round), cut after \(n): empty without a backup")
                        let restored = Type2TagModel(chip: c.chip, memory: now)
                        try detect(restored, c.reader, tolerant: true).0.restore(b)
                        #expect(ReferenceType2.read(restored.contents) == .message(old), "\(c), round \(round): the restore after a cut at \(n)")
                    }
                }
            }
        }
        print("\(c): \(written) written, \(refused) refused unchanged, \(cuts) cuts")
    }

    @Test("the issue's case: an NTAG215 with pages 16-31 locked at page 82h, behind a storage reader: refused, unchanged, exit-1 kind")
    func ntag215() throws {
        var image = Type2TagModel.factoryImage(chip: .ntag215)
        let model = Type2TagModel(chip: .ntag215, memory: image)
        try detect(model, ContactlessReader.Model(.storageOnly)).0.writeNDEF(patternMessage(20, seed: 1))
        image = model.contents
        image[0x82 * 4] = 0x01                       // bit 0: pages 16-31
        let locked = Type2TagModel(chip: .ntag215, memory: image)
        let (tag, _) = try detect(locked, ContactlessReader.Model(.storageOnly))
        #expect(try tag.readLockState().unknownDynamicLocks != nil)
        let error = try #require(throws: TagError.self) { try tag.replaceNDEF(with: patternMessage(200, seed: 2)) { _ in } }
        #expect(error.kind == .readOnly)
        #expect(error.message.contains("page 16") && error.message.contains("the tag is unchanged"), "\(error)")
        #expect(locked.contents == image)
    }
}
