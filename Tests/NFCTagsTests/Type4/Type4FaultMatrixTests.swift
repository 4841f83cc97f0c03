import Foundation
import ISO7816
import NFCTags
import Testing
import TestSupport
import VirtualCard

/// The do-no-harm invariant on generated Type 4 tags: MLc 1, 2, 3 and 255, MLe 1, 15 and 255,
/// 2-byte NLEN and 4-byte ENLEN (mapping 3.0, offsets past 7FFF through B1/D7), messages at the
/// size boundaries, a card pulled after every APDU of a write and of a restore.
@Suite("Type 4 fault matrix: generated configurations, a cut after every APDU")
struct Type4FaultMatrixTests {
    struct Setup: CustomStringConvertible, Sendable {
        var configuration: Type4TagModel.Configuration
        var description: String {
            let c = configuration
            return "\(c.extendedFile ? "ENLEN" : "NLEN") file \(c.fileSize), MLc \(c.mlc), MLe \(c.mle)"
        }
    }

    static func setups() -> [Setup] {
        var out: [Setup] = []
        for mlc in [1, 2, 3, 255] {
            for mle in [1, 15, 255] {
                var c = Type4TagModel.Configuration()
                c.fileSize = 600
                c.mlc = mlc
                c.mle = mle
                out.append(Setup(configuration: c))
                // ENLEN: a file past 64 KiB. Reading one with MLe 1 takes 65 k exchanges per
                // run, so the ENLEN files are read with MLe 15 and 255.
                guard mle > 1 else { continue }
                c.version = 0x30
                c.extendedFile = true
                c.fileSize = 0x1_0000 + 100
                out.append(Setup(configuration: c))
            }
        }
        return out
    }

    /// What a reader sees in the NDEF file, from the bytes alone.
    static func reading(_ file: [UInt8], extended: Bool) -> ReferenceType2.Reading {
        let lf = extended ? 4 : 2
        let n = file.prefix(lf).reduce(0) { $0 << 8 | Int($1) }
        guard lf + n <= file.count else { return .broken("length \(n) past the file") }
        return .message(Array(file[lf..<(lf + n)]))
    }

    func tag(_ model: Type4TagModel, cutAfter: Int? = nil, mode: CutChannel.Mode = .beforeExecution) throws -> (Type4Tag, CutChannel) {
        let channel = CutChannel(card: ApplicationHost(applications: [model]), cutAfter: cutAfter, mode: mode)
        return (try Type4Tag.detect(APDUTransport(channel: channel)), channel)
    }

    /// The sizes a message takes here: at the boundaries, but an ENLEN message of 64 KiB only
    /// where MLc can carry D7 (past 7FFF); smaller MLc are refused up front, checked separately.
    static func sizes(_ c: Type4TagModel.Configuration) -> [Int] {
        let capacity = c.fileSize - (c.extendedFile ? 4 : 2)
        // Reading a 64 KiB message 15 bytes at a time puts ~4,400 READs around every cut: in the
        // quick run, a small-MLe ENLEN file takes the sizes up to 256 (its writes are the same
        // D7 sequence the MLe 255 file cuts at every APDU); `Scripts/stress` runs them all.
        if c.extendedFile && c.mle < 255 && !fullMatrix { return boundarySizes(capacity: capacity).filter { $0 <= 256 } }
        return boundarySizes(capacity: capacity)
    }

    @Test("writes cut after every APDU: old, empty or new; states reported right; refusals change nothing; the backup restores",
          arguments: setups())
    func writes(setup: Setup) throws {
        let c = setup.configuration
        let sizes = Self.sizes(c)
        var cases = 0, refused = 0
        let began = ContinuousClock.now
        for (i, size) in sizes.enumerated() {
            let oldSize = sizes[(i + (sizes.count + 1) / 2) % sizes.count]
            let old = patternMessage(oldSize, seed: 1), new = patternMessage(size, seed: 2)
            let start = Type4TagModel(configuration: c, message: old).fileContents
            // An uncut run first: refused up front (nothing may change), or its exchanges.
            let probe = Type4TagModel(configuration: c, fileContents: start)
            var commands: [[UInt8]] = []
            let transport = APDUTransport(channel: EmulatedChannel(card: ApplicationHost(applications: [probe]))) { commands.append($0.command) }
            do {
                try Type4Tag.detect(transport).replaceNDEF(with: new) { _ in }
            } catch let e as TagError {
                #expect([.unsafe, .beyondReach].contains(e.kind), "\(setup), \(oldSize) → \(size): \(e)")
                #expect(probe.fileContents == start, "\(setup): a refused write changed the tag")
                #expect(!commands.contains { $0[1] == 0xD6 || $0[1] == 0xD7 }, "\(setup): a refused write sent an UPDATE")
                refused += 1
                continue
            }
            let updates = commands.indices.filter { commands[$0][1] == 0xD6 || commands[$0][1] == 0xD7 }
            var restoredFrom = Set<[UInt8]>()
            for mode in CutChannel.Mode.allCases {
                for n in mode == .beforeExecution ? Array(0...commands.count) : updates {
                    let model = Type4TagModel(configuration: c, fileContents: start)
                    var backup: TagBackup?
                    var reported: WriteInterrupted.TagState?
                    var finished = false
                    let steps = StepLog()
                    do {
                        let t = try tag(model, cutAfter: n, mode: mode).0
                        steps.attach(t)
                        try t.replaceNDEF(with: new) { backup = $0 }
                        finished = true
                        steps.expectSound(finished: true, "\(setup)")
                    } catch let e as WriteInterrupted {
                        reported = e.state
                        steps.expectSound(finished: false, failure: e, "\(setup), cut after \(n)")
                    } catch {
                        #expect(model.fileContents == start, "\(setup), cut after \(n): changed, yet reported as untouched")
                    }
                    cases += 1
                    let now = model.fileContents
                    let reading = Self.reading(now, extended: c.extendedFile)
                    if finished { #expect(reading == .message(new)); continue }
                    #expect(reading == .message(old) || reading == .message([]) || reading == .message(new),
                            "\(setup), \(oldSize) → \(size), \(mode), cut after \(n): \(reading)")
                    if let reported {
                        #expect(Type2FaultMatrixTests.allowed(reported, old: old, new: new).contains { reading == .message($0) },
                                "\(setup), cut after \(n): reported \(reported), reads \(reading)")
                    }
                    if now != start, let backup, restoredFrom.insert(now).inserted {
                        let again = Type4TagModel(configuration: c, fileContents: now)
                        try tag(again).0.restore(backup)
                        #expect(Self.reading(again.fileContents, extended: c.extendedFile) == .message(old), "\(setup): restore after a cut at \(n)")
                    }
                }
            }
        }
        print("\(setup): \(cases) cuts, \(refused) of \(sizes.count) writes refused up front (\(ContinuousClock.now - began))")
    }

    @Test("MLc 1: a length whose two bytes both change is refused before anything is written; one-byte changes work")
    func mlcOne() throws {
        var c = Type4TagModel.Configuration()
        c.mlc = 1
        c.fileSize = 1000
        // Each write goes old → 0 → new: feasible when neither length has both bytes non-zero.
        for (old, new, ok) in [(0, 300, false), (300, 0, false), (0, 255, true), (255, 512, true), (512, 0, true), (0, 768, true), (10, 256, true), (513, 10, false)] {
            let model = Type4TagModel(configuration: c, message: patternMessage(old, seed: 1))
            let before = model.fileContents
            do {
                try tag(model).0.writeNDEF(patternMessage(new, seed: 2))
                #expect(ok, "\(old) → \(new) should have been refused")
                #expect(Self.reading(model.fileContents, extended: false) == .message(patternMessage(new, seed: 2)))
            } catch let e as TagError {
                #expect(!ok && e.kind == .unsafe, "\(old) → \(new): \(e)")
                #expect(model.fileContents == before)
                #expect(e.message.contains("MLc 1") && e.message.contains("nothing was written"))
            }
        }
    }

    @Test("restores cut after every APDU: the state before, empty, or the backup", arguments: [1, 3, 255])
    func restores(mlc: Int) throws {
        var c = Type4TagModel.Configuration()
        c.mlc = mlc
        c.mle = 15
        c.fileSize = 600
        let old = patternMessage(200, seed: 3), new = patternMessage(100, seed: 4)
        let start = Type4TagModel(configuration: c, message: old).fileContents
        var backup: TagBackup?
        let cut = Type4TagModel(configuration: c, fileContents: start)
        do { try tag(cut, cutAfter: 30).0.replaceNDEF(with: new) { backup = $0 } } catch {}
        let from = cut.fileContents
        let fromReading = Self.reading(from, extended: false)
        let b = try #require(backup)
        for mode in CutChannel.Mode.allCases {
            var n = 0
            while n < 2000 {
                let model = Type4TagModel(configuration: c, fileContents: from)
                var finished = false
                do { try tag(model, cutAfter: n, mode: mode).0.restore(b); finished = true } catch {}
                let reading = Self.reading(model.fileContents, extended: false)
                #expect(reading == fromReading || reading == .message([]) || reading == .message(old), "restore cut after \(n): \(reading)")
                if finished { #expect(reading == .message(old)); break }
                n += 1
            }
        }
    }
}
