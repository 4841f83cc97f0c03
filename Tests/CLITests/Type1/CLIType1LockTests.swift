import Foundation
import ISO7816
import NFCTags
import Testing
import TestSupport
import VirtualCard

/// Issue 48 §4: a Type 1 lock that did not happen is never reported. On a proven Topaz 512 the
/// lock bits go to 7A-7F and a lock control TLV that says otherwise is refused before any write;
/// every lock address is checked before the first write; the SCM writes go as the SCL3711
/// manual gives them (no Le), and a reader that wants the other form is learned once.
@Suite("Type 1 locks and the SCM write form through pcscd")
struct CLIType1LockTests {
    func state() -> String { NativeNDEFChecks.state() }

    /// Counts the answers `67 00` the reader gives, passing everything on.
    final class WrongLengthCounter: EmulatedCard, @unchecked Sendable {
        let card: any EmulatedCard
        let count = Locked(0)
        init(_ card: any EmulatedCard) { self.card = card }
        var atr: [UInt8] { card.atr }
        func reset() { card.reset() }
        func process(_ apdu: [UInt8]) -> [UInt8] {
            let answer = card.process(apdu)
            if answer == [0x67, 0x00] { count.withLock { $0 += 1 } }
            return answer
        }
    }

    /// A Topaz 512 or generic dynamic T1T whose lock control TLV puts the lock bytes at `position` (T1TOP's byte).
    static func image(chip: Type1TagModel.Chip, lockPosition: UInt8) -> [UInt8] {
        var m = Type1TagModel.factoryImage(chip: chip, uid: [0xB2, 0x56, 0x54, 0x00, 0x1A, 0x2B, 0x25])
        m.replaceSubrange(0x0C..<0x11, with: [0x01, 0x03, lockPosition, 0x30, 0x33])
        return m
    }

    @Test("a proven Topaz 512 whose lock control TLV points into data bytes (20-25): ndef-lock refuses before any write, naming 7A-7F")
    func lockTLVIntoData() async throws {
        let model = Type1TagModel(chip: .topaz512, memory: Self.image(chip: .topaz512, lockPosition: 0x40))
        let before = model.contents
        try await withInsertedCard(Type1Reader(.scm, tag: model)) { inserted in
            let lock = try runAPDU(["ndef-lock", "--yes", "-r", inserted.reader])
            #expect(lock.status != 0 && !lock.stdout.contains("locked"), "\(lock.status) \(lock.stdout) \(lock.stderr)")
            #expect(lock.stderr.contains("7A") && lock.stderr.split(separator: "\n").count == 1, "\(lock.stderr)")
        }
        #expect(model.contents == before, "nothing written: data bytes 20-25 \(Array(model.contents[0x20..<0x26]).map { String(format: "%02X", $0) })")
    }

    @Test("a lock control TLV that points into reserved block D: refused before the first write, the tag not half-locked")
    func lockTLVIntoBlockD() async throws {
        let model = Type1TagModel(chip: .genericDynamic, memory: Self.image(chip: .genericDynamic, lockPosition: 0xD0))
        let before = model.contents
        try await withInsertedCard(Type1Reader(.scm, tag: model)) { inserted in
            let lock = try runAPDU(["ndef-lock", "--yes", "-r", inserted.reader])
            #expect(lock.status != 0 && lock.stderr.contains("nothing was written"), "\(lock.status) \(lock.stderr)")
        }
        #expect(model.contents == before, "CC \(model.contents[0x0B]), LOCK0 \(model.contents[0x70]), LOCK1 \(model.contents[0x71])")
    }

    @Test("a proven Topaz 512 locked through SCM: 7A-7F set, the report from a probe of a block the dynamic bits lock")
    func topaz512Lock() async throws {
        let model = Type1TagModel(chip: .topaz512)
        let home = state()
        defer { try? FileManager.default.removeItem(atPath: home) }
        try await withInsertedCard(Type1Reader(.scm, tag: model)) { inserted in
            let w = try runAPDU(["ndef-write", "-r", inserted.reader, "--text", String(repeating: "past block F ", count: 12)], environment: ["XDG_STATE_HOME": home])
            #expect(w.status == 0, "\(w.stderr)")
            let lock = try runAPDU(["ndef-lock", "--yes", "-r", inserted.reader])
            #expect(lock.status == 0, "\(lock.stderr)")
        }
        #expect(Array(model.contents[0x7A..<0x80]) == [UInt8](repeating: 0xFF, count: 6) && model.isLocked(block: 0x10) && model.isLocked(block: 0x3F))
    }

    @Test("a Topaz 512 whose dynamic lock bits set but bar nothing: the probe of block 10 answers, so no lock is reported (LOCK0's block 1 alone proves nothing past F)")
    func dynamicLockProbed() async throws {
        let model = Type1TagModel(chip: .topaz512, honoursDynamicLocks: false)
        try await withInsertedCard(Type1Reader(.scm, tag: model)) { inserted in
            let lock = try runAPDU(["ndef-lock", "--yes", "-r", inserted.reader])
            #expect(lock.status != 0 && !lock.stdout.contains("refuses writes") && lock.stderr.split(separator: "\n").count == 1, "\(lock.status) \(lock.stdout) \(lock.stderr)")
        }
        #expect(Array(model.contents[0x7A..<0x80]) == [UInt8](repeating: 0xFF, count: 6), "the bits were set; they just bar nothing")
    }

    @Test("SCM writes: the manual's form (no Le) reaches the tag at once; a reader that wants an Le is learned once per connection",
          arguments: [true, false])
    func scmWriteForm(_ withoutLe: Bool) async throws {
        var readerModel = Type1Reader.Model(.scm)
        readerModel.scmWritesWithoutLe = withoutLe
        let tag = Type1TagModel(chip: .topaz96)
        let counter = WrongLengthCounter(Type1Reader(model: readerModel, tag: tag))
        let home = state()
        defer { try? FileManager.default.removeItem(atPath: home) }
        try await withInsertedCard(counter) { inserted in
            let w = try runAPDU(["ndef-write", "-r", inserted.reader, "--text", "hello, SCL3711"], environment: ["XDG_STATE_HOME": home])
            #expect(w.status == 0, "\(w.stderr)")
            #expect(counter.count.current == (withoutLe ? 0 : 1), "67 00 answers: \(counter.count.current)")
            let lock = try runAPDU(["ndef-lock", "--yes", "-r", inserted.reader])
            #expect(lock.status == 0, "\(lock.stderr)")
            #expect(counter.count.current == (withoutLe ? 0 : 2), "one refusal a connection: \(counter.count.current)")
        }
        #expect(tag.contents[0x70] == 0xFF && tag.contents[0x71] == 0xFF && tag.contents[0x0B] == 0x0F)
        #expect(String(decoding: tag.contents[0x0C..<0x78], as: UTF8.self).contains("hello, SCL3711"))
    }
}
