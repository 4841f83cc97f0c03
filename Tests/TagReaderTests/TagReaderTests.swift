import Foundation
import ISO7816
import NDEF
import NFCTags
import PCSC
import Synchronization
@testable import TagReader
import Testing
import TestSupport
import VirtualCard

@Suite("TagReader: reader selection, the busy gate, transactions, backups, events")
struct TagReaderTests {
    @Test("readers by exact name, index or unique part; typed errors otherwise")
    func matching() throws {
        let selection = try ReaderSelection()
        let readers = ["ACS ACR122U 00 00", "ACS ACR1252 1S 00 00", "Identiv uTrust 3700 F 01 00"]
        #expect(try selection.match("ACS ACR122U 00 00", in: readers) == readers[0])
        #expect(try selection.match("2", in: readers) == readers[2])
        #expect(try selection.match("utrust", in: readers) == readers[2])
        #expect(throws: ReaderError.ambiguousReader("ACS", matches: Array(readers[0...1]))) { try selection.match("ACS", in: readers) }
        #expect(throws: ReaderError.unknownReader("omnikey", known: readers)) { try selection.match("omnikey", in: readers) }
        #expect(throws: ReaderError.noReaderAtIndex(7, known: readers)) { try selection.match("7", in: readers) }
    }

    @Test("no card and no wait: noCard; a wait that ends: noCardWithin")
    func noCard() async throws {
        try await withEmptySlot { slot in
            let selection = try ReaderSelection()
            #expect(throws: ReaderError.noCard(reader: slot.reader)) { try selection.chooseCard(slot.reader, wait: nil) }
            #expect(throws: ReaderError.noCardWithin(.milliseconds(200), reader: slot.reader)) { try selection.chooseCard(slot.reader, wait: .milliseconds(200)) }
        }
    }

    @Test("a reader held in another transaction: busy at the deadline, nothing sent; the abandoned attempt cleans up")
    func busyGate() async throws {
        let host = ApplicationHost(applications: [DemoApplication()])
        try await withInsertedCard(host) { inserted in
            let holder = try Context().connect(reader: inserted.reader)
            try holder.beginTransaction()
            let start = ContinuousClock.now
            #expect(throws: ReaderError.busy(reader: inserted.reader)) {
                _ = try ReaderSelection().connect(inserted.reader, until: .now + .milliseconds(400), transaction: true)
            }
            let waited = ContinuousClock.now - start
            #expect(waited >= .milliseconds(400) && waited < .seconds(3), "\(waited)")
            try holder.endTransaction()
            try holder.disconnect()
            // The abandoned attempt gets through now, ends its transaction and disconnects: the
            // next one is not held back by it.
            let card = try ReaderSelection().connect(inserted.reader, until: .now + .seconds(5), transaction: true)
            let answer = try APDUTransport(channel: PCSCChannel(card: card)).send(.select(aid: DemoApplication.defaultAID))
            #expect(answer.statusWord == .success)
            try card.endTransaction()
            try card.disconnect()
        }
    }

    @Test("a write cut short by a pulled card: WriteInterrupted names the state and the backup, and the backup restores")
    func interruptedWriteKeepsTheBackupPath() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tagreader-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = DirectoryBackupStore(directory: directory)
        let old = try NDEFMessage(records: [.uri("https://example.com/old")]).encoded()
        let new = try NDEFMessage(records: [.uri("https://example.com/a-longer-new-message")]).encoded()
        let model = Type2TagModel(chip: .ntag213)
        try await withEmptySlot { slot in
            try await withCard(model, in: slot) { inserted in
                try TagTransaction.run(reader: inserted.reader, wait: nil) { t in try t.writeNDEF(old, backups: MemoryBackupStore()) }
            }
            // Detection and the backup's read take a few APDUs; the card goes at the first write.
            var cut: WriteInterrupted?
            for n in 4...12 where cut == nil {
                try await withCard(model, in: slot, faults: Faults(removeAfter: n)) { inserted in
                    do {
                        try TagTransaction.run(reader: inserted.reader, wait: nil) { t in try t.writeNDEF(new, backups: store) }
                    } catch let e as WriteInterrupted {
                        cut = e
                    } catch {}
                }
            }
            let interrupted = try #require(cut)
            let path = try #require(interrupted.backup)
            #expect(path.hasPrefix(directory))
            #expect([.oldOrEmpty, .empty, .emptyOrNew, .old].contains(interrupted.state))
            let backup = try TagBackup(parsing: TextInput.normalized(try #require(FileManager.default.contents(atPath: path))))
            #expect(backup.message == old)
            try await withCard(model, in: slot) { inserted in
                try TagTransaction.run(reader: inserted.reader, wait: nil, tolerant: true) { t in _ = try t.restore(backup) }
                #expect(try TagTransaction.run(reader: inserted.reader, wait: nil) { try $0.tag.readNDEF() } == old)
            }
        }
    }

    @Test("the directory store never replaces a backup, and what it writes reads back")
    func directoryStore() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tagreader-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = DirectoryBackupStore(directory: directory)
        let backup = TagBackup(kind: "type2", uid: [0x04, 0xA1, 0xB2, 0xC3, 0xD4, 0xE5, 0x80], capabilityContainer: [0xE1, 0x10, 0x12, 0x00],
                               start: 16, bytes: [0x03, 0x03, 0xD0, 0x00, 0x00, 0xFE], message: [0xD0, 0x00, 0x00])
        let first = try store.save(backup, reader: "ACS ACR122U 00 00")
        let second = try store.save(backup, reader: "ACS ACR122U 00 00")
        #expect(first != second)
        #expect(first.hasSuffix(".backup") && second.hasSuffix(".backup"))
        let read = try TagBackup(parsing: TextInput.normalized(try #require(FileManager.default.contents(atPath: first))))
        var expected = backup
        expected.reader = "ACS ACR122U 00 00"
        #expect(read == expected)
        // No partial file is left behind.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).allSatisfy { $0.hasSuffix(".backup") })
        // A directory that cannot be made: the write must not start.
        #expect(throws: BackupError.self) { try DirectoryBackupStore(directory: "/proc/no-such-place").save(backup, reader: "r") }
    }

    @Test("a session's tag keeps what its reader turned out to speak: the exact-Le retry happens once per connection, not per operation")
    func formsPerConnection() async throws {
        var model = ContactlessReader.Model(.storageOnly)
        model.readLe = .exactWrongLength
        let tag = ISO15693TagModel(chip: .icodeSlix)
        let refused = Locked(0)
        try await withInsertedCard(ContactlessReader(model: model, tag: tag)) { inserted in
            let session = TagReaderSession(reader: inserted.reader, backups: MemoryBackupStore(),
                                           observer: { e in if e.response == [0x67, 0x00] { refused.withLock { $0 += 1 } } })
            let found = try await session.firstTag(timeout: .seconds(10))
            let message = NDEFMessage(records: [try .text("once")])
            try await found.ndef.writeNDEF(message)
            #expect(try await found.ndef.readNDEF() == message)
            #expect(try await found.ndef.queryNDEFStatus().status == .readWrite)
        }
        #expect(refused.current == 1, "\(refused.current) refusals of Le 00")
    }

    @Test("a lock reported only when it took; a second lock is refused as already done")
    func lockOnce() async throws {
        // Through a transparent reader: GET_VERSION proves the NTAG215 and so where its lock bytes are.
        try await withInsertedCard(ContactlessReader(.transparent, tag: Type2TagModel(chip: .ntag215))) { inserted in
            let receipt = try TagTransaction.run(reader: inserted.reader, wait: nil) { try $0.makeReadOnly() }
            #expect(receipt.done.contains { $0.contains("dynamic lock") })
            #expect(throws: TagError.self) { try TagTransaction.run(reader: inserted.reader, wait: nil) { try $0.makeReadOnly() } }
            let inspection = try TagTransaction.run(reader: inserted.reader, wait: nil) { try $0.inspect() }
            #expect(inspection.canMakeReadOnly == false)
            #expect(inspection.locks?.isFullyLocked == true)
        }
    }
}

/// Restarts pcscd, or measures time: Scripts/test runs these alone, in the exclusive phase (the
/// name ends in ExclusiveTests).
@Suite("TagReader exclusive: pcscd restarts", .serialized, .enabled(if: PCSCDControl.isExclusive, "needs its own pcscd: Scripts/test runs it in the exclusive phase"))
struct TagReaderExclusiveTests {
    @Test("ReaderMonitor: cancel() from another thread ends run promptly")
    func monitorCancel() async throws {
        let monitor = ReaderMonitor()
        let ended = Mutex<ContinuousClock.Instant?>(nil)
        let thread = Thread {
            try? monitor.run { _ in true }
            ended.withLock { $0 = .now }
        }
        thread.start()
        try await Task.sleep(for: .milliseconds(300))
        let cancelled = ContinuousClock.now
        monitor.cancel()
        for _ in 0..<40 where ended.withLock({ $0 }) == nil { try await Task.sleep(for: .milliseconds(50)) }
        let end = try #require(ended.withLock { $0 })
        #expect(end - cancelled < .seconds(1.5))
    }

    @Test("events() outlives a pcscd restart: serviceDown, serviceUp, then the next card")
    func eventsSurviveRestart() async throws {
        let slot = try await ReaderSlots.shared.acquire()
        defer { Task { await ReaderSlots.shared.release(slot) } }
        var events = TagReaderSession(reader: slot.reader).events().makeAsyncIterator()
        #expect(try await events.next() == .readerAdded(slot.reader))
        try PCSCDControl.stop()
        var seen: [ReaderEvent] = []
        while let event = try await events.next() {
            seen.append(event)
            if case .serviceDown = event { break }
        }
        try PCSCDControl.start()
        while let event = try await events.next() {
            seen.append(event)
            if event == .serviceUp { break }
        }
        #expect(try await events.next() == .readerAdded(slot.reader), "\(seen)")
        let client = VPCDClient(port: slot.port, card: ApplicationHost(applications: []))
        client.start()
        defer {
            client.stop()
            try? waitForCard(in: slot.reader, present: false)
        }
        let card = try await events.next()
        #expect(card == .cardInserted(reader: slot.reader, atr: ApplicationHost.defaultATR)
            || card == .cardPresent(reader: slot.reader, atr: ApplicationHost.defaultATR), "\(seen)")
    }
}
