import Foundation
import ISO7816
import NDEF
import NFCTags
import Testing
import TestSupport
import VirtualCard

/// Issue 12's failures, through pcscd and the built binary: what a user sees.
@Suite("do no harm through pcscd: split lengths, lock positions, partly locked tags, restores, hostile files")
struct CLIDoNoHarmTests {
    func message(_ n: Int, _ tag: String = "m") -> [UInt8] {
        try! NDEFMessage(records: [.text(String(repeating: tag, count: n))]).encoded()
    }

    /// An image of `chip` with `tlvs` at byte 16 and `message` in an NDEF TLV after them.
    func image(_ chip: Type2TagModel.Chip, tlvs: [UInt8], message: [UInt8]) -> [UInt8] {
        var m = Type2TagModel.factoryImage(chip: chip)
        for i in 16..<(16 + chip.dataAreaBytes) { m[i] = 0 }
        let length: [UInt8] = message.count < 0xFF ? [UInt8(message.count)] : [0xFF, UInt8(message.count >> 8), UInt8(message.count & 0xFF)]
        for (i, b) in (tlvs + [0x03] + length + message + [0xFE]).enumerated() { m[16 + i] = b }
        return m
    }

    func currentMessage(_ model: Type2TagModel) -> [UInt8] {
        guard let t = try? Type2Tag.detect(APDUTransport(channel: EmulatedChannel(card: Type2TagModel(chip: model.chip, memory: model.contents))), atr: model.atr),
              let m = try? t.readNDEF() else { return [0xEE] }
        return m
    }

    /// Where the exchanges of a write fall: the UPDATE indices of the same procedure run here,
    /// shifted by the two probes for a raw path the CLI sends first (a storage-only reader
    /// refuses both).
    func updateIndices(_ chip: Type2TagModel.Chip, _ start: [UInt8], writing new: [UInt8]) throws -> [Int] {
        let model = Type2TagModel(chip: chip, memory: start)
        var commands: [[UInt8]] = []
        let transport = APDUTransport(channel: EmulatedChannel(card: model)) { commands.append($0.command) }
        try Type2Tag.detect(transport, atr: model.atr).replaceNDEF(with: new) { _ in }
        let probes = 2
        return commands.indices.filter { commands[$0][1] == 0xD6 }.map { $0 + probes }
    }

    @Test("NTAG216 with the 3-byte length split over two pages: pulled at the clear, the body and the commit, never a lying length; the printed restore works")
    func splitLength() async throws {
        // A lock control TLV first (E2h × 4 = 904 = 14 × 64 + 8) puts the NDEF TLV at byte 21:
        // its FF hh ll length straddles pages 5 and 6.
        let lockTLV: [UInt8] = [0x01, 0x03, 0xE8, 0x0E, 0x66]
        let old = message(300, "o"), new = message(400, "n")
        let start = image(.ntag216, tlvs: lockTLV, message: old)
        let updates = try updateIndices(.ntag216, start, writing: new)
        let cuts = [updates[0], updates[0] + 1, updates[updates.count / 2], updates.last!, updates.last! + 1, updates.last! + 2]
        let outcomes = try await pullCardAfterEveryAPDU(old: old, new: new, cuts: cuts) {
            let model = Type2TagModel(chip: .ntag216, memory: start)
            return (model, { self.currentMessage(model) })
        }
        // The message's pages are read back before the length commits them; after the commit
        // one read of the length's page is left: pulled there, "new message" (interrupted), a
        // cut one APDU later finds the write completed.
        #expect(outcomes["old message"] == 1 && outcomes["NLEN 0"] == 3 && outcomes["new message"] == 1 && outcomes["completed"] == 1, "\(outcomes)")
    }

    @Test("ndef-lock on NTAG215 and NTAG216 sets the lock bits at 82h / E2h and leaves the uncovered user pages alone",
          arguments: [("ntag215", 0x80, 0x82), ("ntag216", 0xDE, 0xE2)])
    func lockPosition(name: String, userPage: Int, lockPage: Int) async throws {
        let chip = try #require(Type2TagModel.Chip.all[name])
        var start = image(chip, tlvs: [], message: message(20))
        for i in (userPage * 4)..<(lockPage * 4) { start[i] = 0x5A }
        // Behind a storage-only reader the chip is not proven: the lock is refused, nothing written.
        let unproven = Type2TagModel(chip: chip, memory: start)
        try await withInsertedCard(unproven) { inserted in
            let l = try runAPDU(["ndef-lock", "--yes", "-r", inserted.reader])
            #expect(l.status == 1 && l.stderr.contains("not proven") && l.stderr.contains("nothing was written"), "\(l.stderr)")
        }
        #expect(unproven.contents == start)
        // Through a transparent reader GET_VERSION proves it, and the lock bits go where the chip has them.
        let model = Type2TagModel(chip: chip, memory: start)
        try await withInsertedCard(ContactlessReader(.transparent, tag: model)) { inserted in
            let l = try runAPDU(["ndef-lock", "--yes", "--json", "-r", inserted.reader])
            #expect(l.status == 0, "\(l.stderr)")
            #expect((try l.json() as? [String: Any])?["refusesWrites"] as? Bool == true)
        }
        #expect(model.contents[(userPage * 4)..<(lockPage * 4)].allSatisfy { $0 == 0x5A })
        #expect(model.contents[lockPage * 4] == 0xFF)
    }

    @Test("an NTAG215 whose first pages are locked: ndef-status says readOnly and shows them; ndef-write changes nothing")
    func partlyLocked() async throws {
        var start = image(.ntag215, tlvs: [], message: message(40))
        start[10] = 0xF0                                        // L4-L7
        let model = Type2TagModel(chip: .ntag215, memory: start)
        try await withInsertedCard(ContactlessReader(.transparent, tag: model)) { inserted in
            let s = try runAPDU(["ndef-status", "--json", "-r", inserted.reader])
            let doc = try #require(try s.json() as? [String: Any])
            #expect(doc["status"] as? String == "readOnly")
            let locks = try #require(doc["locks"] as? [String: Any])
            #expect((locks["lockedPages"] as? [String])?.first == "4-7")
            #expect(doc["chip"] as? String == "NTAG215")
            let w = try runAPDU(["ndef-write", "-r", inserted.reader, "--uri", "https://example.com"], environment: ["XDG_STATE_HOME": FileManager.default.temporaryDirectory.path])
            #expect(w.status == 1 && w.stderr.contains("nothing was written"), "\(w.stderr)")
        }
        #expect(model.contents == start)
    }

    @Test("a lock pulled after the CC write: the error says how to finish; ndef-status shows it partial; ndef-lock finishes it")
    func interruptedLock() async throws {
        let start = image(.ntag213, tlvs: Array(Type2TagModel.Chip.ntag213.factoryTLVs.prefix(5)), message: message(30))
        let model = Type2TagModel(chip: .ntag213, memory: start)
        // Detection reads pages 0-7 and the message; the lock state reads page 28h: then the CC write.
        var commands: [[UInt8]] = []
        let probe = Type2TagModel(chip: .ntag213, memory: start)
        _ = try Type2Tag.detect(APDUTransport(channel: EmulatedChannel(card: probe)) { commands.append($0.command) }, atr: probe.atr).makeReadOnly()
        let ccWrite = try #require(commands.firstIndex { $0[1] == 0xD6 })
        // The CLI first asks the reader for a raw path: two probes a storage-only reader refuses.
        let probes = 2
        let r = try await withInsertedCard(model, faults: Faults(removeAfter: ccWrite + 1 + probes)) { inserted in
            try runAPDU(["ndef-lock", "--yes", "-r", inserted.reader])
        }
        #expect(r.status == 74, "\(r.stderr)")
        #expect(r.stderr.contains("done so far: set the CC write access to 0F") && r.stderr.contains("finish the lock with: apdu ndef-lock --yes -r"), "\(r.stderr)")
        #expect(model.contents[15] == 0x0F && model.contents[10] == 0)
        try await withInsertedCard(model) { inserted in
            let s = try runAPDU(["ndef-status", "--json", "-r", inserted.reader])
            let locks = try #require((try s.json() as? [String: Any])?["locks"] as? [String: Any])
            #expect(locks["partial"] as? Bool == true && locks["complete"] as? Bool == false)
            let text = try runAPDU(["ndef-status", "-r", inserted.reader])
            #expect(text.stdout.contains("PARTLY LOCKED"))
            let finish = try runAPDU(["ndef-lock", "--yes", "--json", "-r", inserted.reader])
            #expect(finish.status == 0, "\(finish.stderr)")
            let doc = try #require(try finish.json() as? [String: Any])
            #expect(doc["alreadyDone"] as? [String] == ["CC write access 0F"])
            #expect(doc["refusesWrites"] as? Bool == true)
            let again = try runAPDU(["ndef-lock", "--yes", "-r", inserted.reader])
            #expect(again.status == 1 && again.stderr.contains("already locked"), "\(again.stderr)")
        }
    }

    @Test("--restore checks the UID: another tag's backup is refused with 77, --force writes it")
    func restoreOtherTag() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("restore-\(UUID())")
        defer { try? FileManager.default.removeItem(at: dir) }
        let env = ["XDG_STATE_HOME": dir.path]
        let a = Type2TagModel(chip: .ntag213, memory: image(.ntag213, tlvs: [], message: message(25, "a")))
        let backup: String = try await withInsertedCard(a) { inserted in
            let w = try runAPDU(["ndef-write", "-r", inserted.reader, "--uri", "https://example.com/new"], environment: env)
            #expect(w.status == 0, "\(w.stderr)")
            return try #require(w.stdout.split(separator: "\n").first { $0.hasPrefix("backup of the previous message") }.map { String($0.split(separator: ": ").last!) })
        }
        #expect(try String(contentsOfFile: backup, encoding: .utf8).hasPrefix(TagBackup.header))
        let b = Type2TagModel(chip: .ntag213, uid: [0x04, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66])
        try await withInsertedCard(b) { inserted in
            let refused = try runAPDU(["ndef-write", "-r", inserted.reader, "--restore", backup], environment: env)
            #expect(refused.status == 77 && refused.stderr.contains("--force"), "\(refused.stderr)")
            let forced = try runAPDU(["ndef-write", "-r", inserted.reader, "--restore", backup, "--force"], environment: env)
            #expect(forced.status == 0, "\(forced.stderr)")
        }
        #expect(currentMessage(b) == message(25, "a"))
        #expect(try runAPDU(["ndef-write", "--force", "--uri", "https://x.y"]).status == 64)
    }

    @Test("ul-read through a storage-only reader stops at 255 and says why; --pages past 1023 is a usage error; a short READ answer is an error, not a trap")
    func ulReadLimits() async throws {
        try await withInsertedCard(Type2TagModel(chip: .twoSectorT2T)) { inserted in
            let r = try runAPDU(["ul-read", "-r", inserted.reader])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stdout.split(separator: "\n").count == 256)
            #expect(r.stderr.contains("pages 256-") && r.stderr.contains("SECTOR_SELECT"), "\(r.stderr)")
        }
        // Pages past 255 need a raw path (CLINativeCommandTests); past 1023 nothing reaches them.
        let usage = try runAPDU(["ul-read", "--pages", "250-1100"])
        #expect(usage.status == 64 && usage.stderr.contains("past 1023"), "\(usage.stderr)")
        let short = ScriptedCard(atr: Type2TagModel(chip: .ntag213).atr, rules: [
            ScriptedCard.Rule(pattern: [0xFF, 0xB0], matchesAnyTail: true, response: [0xE1, 0x10, 0x12, 0x00, 0x90, 0x00]),
        ])
        try await withInsertedCard(short) { inserted in
            let r = try runAPDU(["ul-read", "-r", inserted.reader])
            #expect(r.status == 74 && r.stderr.contains("4 bytes, 16 expected"), "\(r.stderr)")
            #expect(!r.stderr.contains("Fatal error"))
        }
    }

    @Test("text files with CRLF line ends and a byte order mark: scripts run every line, allowlists and hex messages parse; an empty script fails")
    func windowsText() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("crlf-\(UUID())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let script = dir.appendingPathComponent("s.txt"), empty = dir.appendingPathComponent("e.txt")
        let allow = dir.appendingPathComponent("allow.txt"), hex = dir.appendingPathComponent("m.hex")
        try Data(("\u{FEFF}# comment\r\n" + demoSelect + " => 9000\r\n00CA000000\r\n").utf8).write(to: script)
        try Data("\u{FEFF}# nothing to do\r\n\r\n".utf8).write(to: empty)
        try Data(("\u{FEFF}" + DemoApplication.defaultAID.hexString + "\r\n").utf8).write(to: allow)
        let m = try NDEFMessage(records: [.uri("https://example.com/crlf")]).encoded()
        try Data(("\u{FEFF}" + Hex.encode(m.prefix(8), separator: " ") + "\r\n" + Hex.encode(m.dropFirst(8), separator: " ") + "\r\n").utf8).write(to: hex)
        let host = ApplicationHost(applications: [DemoApplication()])
        try await withInsertedCard(host) { inserted in
            let r = try runAPDU(["script", "--allow-aids", allow.path, "-r", inserted.reader, script.path])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(host.log.count == 2, "\(host.log.map(\.hexString))")
            let e = try runAPDU(["script", "-r", inserted.reader, empty.path])
            #expect(e.status == 65 && e.stderr.contains("no APDU to send"), "\(e.stderr)")
        }
        let t2 = Type2TagModel(chip: .ntag213)
        try await withInsertedCard(t2) { inserted in
            let w = try runAPDU(["ndef-write", "-r", inserted.reader, "--message", hex.path], environment: ["XDG_STATE_HOME": dir.path])
            #expect(w.status == 0, "\(w.stderr)")
            // A message file with nothing in it writes nothing.
            let none = try runAPDU(["ndef-write", "-r", inserted.reader, "--message", empty.path + ".none"], environment: ["XDG_STATE_HOME": dir.path])
            #expect(none.status == 64, "\(none.stderr)")
            FileManager.default.createFile(atPath: empty.path + ".bin", contents: Data())
            let zero = try runAPDU(["ndef-write", "-r", inserted.reader, "--message", empty.path + ".bin"], environment: ["XDG_STATE_HOME": dir.path])
            #expect(zero.status == 65 && zero.stderr.contains("is empty"), "\(zero.stderr)")
        }
        #expect(currentMessage(t2) == m)
    }
}
