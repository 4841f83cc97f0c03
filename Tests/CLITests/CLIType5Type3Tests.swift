import Foundation
import ISO7816
import NFCTags
import Testing
import TestSupport
import VirtualCard

/// Type 5 and Type 3 tags through pcscd, vpcd and the reader models: the ndef commands with the
/// same shapes as Types 2 and 4, the raw command sets, tag-info, a card pulled mid-write and the
/// restore the error names.
@Suite("Type 5 and Type 3 tags through pcscd")
struct CLIType5Type3Tests {
    func state() -> String { FileManager.default.temporaryDirectory.appendingPathComponent("t53-\(UUID())").path }

    @Test("ndef-write / ndef-read / ndef-status / ndef-lock on each Type 5 chip and each Type 3 chip",
          arguments: ["icode-slix", "st25dv64k", "tagit", "felica-lite-s", "felica-standard"])
    func ndefCommands(_ chip: String) async throws {
        let model: any NativeTagModel = ISO15693TagModel.Chip.all[chip].map { ISO15693TagModel(chip: $0) } ?? FeliCaTagModel(chip: FeliCaTagModel.Chip.all[chip]!)
        let card = ContactlessReader(.transparent, tag: model)
        let home = state()
        defer { try? FileManager.default.removeItem(atPath: home) }
        try await withInsertedCard(card) { inserted in
            let w = try runAPDU(["ndef-write", "-r", inserted.reader, "--uri", "https://example.com/\(chip)"], environment: ["XDG_STATE_HOME": home])
            #expect(w.status == 0, "\(w.stderr)")
            let r = try runAPDU(["ndef-read", "--json", "-r", inserted.reader])
            #expect(r.status == 0, "\(r.stderr)")
            let doc = try #require(try r.json() as? [String: Any])
            let kind = model is ISO15693TagModel ? "type5" : "type3"
            #expect((doc["tag"] as? [String: Any])?["kind"] as? String == kind)
            #expect((doc["backgroundReading"] as? [String: Any])?["uri"] as? String == "https://example.com/\(chip)")
            #expect(doc["status"] as? String == "readWrite")
            let s = try runAPDU(["ndef-status", "--json", "-r", inserted.reader])
            let status = try #require(try s.json() as? [String: Any])
            // The URI record: header, type, payload (prefix code 04 for https:// and the rest).
            #expect(status["length"] as? Int == 5 + "example.com/\(chip)".count)
            #expect(status["canMakeReadOnly"] as? Bool == (chip != "felica-standard"))
            let noYes = try runAPDU(["ndef-lock", "-r", inserted.reader])
            #expect(noYes.status == 77)
            let lock = try runAPDU(["ndef-lock", "--yes", "--json", "-r", inserted.reader])
            if chip == "felica-standard" {
                #expect(lock.status == 1 && lock.stderr.contains("no permanent write lock"), "\(lock.stderr)")
            } else {
                #expect(lock.status == 0, "\(lock.stderr)")
                #expect((try lock.json() as? [String: Any])?["refusesWrites"] as? Bool == true)
                let after = try runAPDU(["ndef-write", "-r", inserted.reader, "--text", "x"], environment: ["XDG_STATE_HOME": home])
                #expect(after.status == 1 && after.stderr.contains("read-only"), "\(after.stderr)")
                #expect(try runAPDU(["ndef-read", "-r", inserted.reader]).status == 0)
            }
            #expect(!card.sessionOpen)
        }
    }

    @Test("a Type 5 tag through a storage-only reader: read and write by READ/UPDATE BINARY; lock refused (69) with nothing written")
    func type5Storage() async throws {
        let tag = ISO15693TagModel(chip: .icodeSlix)
        let home = state()
        defer { try? FileManager.default.removeItem(atPath: home) }
        try await withInsertedCard(ContactlessReader(.storageOnly, tag: tag)) { inserted in
            let w = try runAPDU(["ndef-write", "-r", inserted.reader, "--text", "over storage"], environment: ["XDG_STATE_HOME": home])
            #expect(w.status == 0, "\(w.stderr)")
            let r = try runAPDU(["ndef-read", "--json", "-r", inserted.reader])
            #expect(r.stdout.contains("over storage"))
            let before = tag.contents
            let lock = try runAPDU(["ndef-lock", "--yes", "-r", inserted.reader])
            #expect(lock.status == 69 && lock.stderr.contains("LOCK BLOCK"), "\(lock.stderr)")
            #expect(tag.contents == before && tag.lockedBlocks.isEmpty)
        }
    }

    @Test("a card pulled mid-write (Type 5 and Type 3): one line naming the state and the restore command, which works",
          arguments: ["icode-slix", "felica-lite-s"])
    func pulledMidWrite(_ chip: String) async throws {
        let model: any NativeTagModel = ISO15693TagModel.Chip.all[chip].map { ISO15693TagModel(chip: $0) } ?? FeliCaTagModel(chip: FeliCaTagModel.Chip.all[chip]!)
        let card = ContactlessReader(.transparent, tag: model)
        let home = state()
        defer { try? FileManager.default.removeItem(atPath: home) }
        try await withInsertedCard(card) { inserted in
            let w = try runAPDU(["ndef-write", "-r", inserted.reader, "--text", "the old message"], environment: ["XDG_STATE_HOME": home])
            #expect(w.status == 0, "\(w.stderr)")
        }
        // Count the exchanges of the next write, then pull the card part-way through it.
        let probe: any NativeTagModel = model is ISO15693TagModel ? ISO15693TagModel(chip: (model as! ISO15693TagModel).chip, memory: (model as! ISO15693TagModel).contents)
            : FeliCaTagModel(chip: (model as! FeliCaTagModel).chip, blocks: (model as! FeliCaTagModel).contents)
        let counter = ContactlessReader(.transparent, tag: probe)
        let newText = String(repeating: "new ", count: 20)
        try await withInsertedCard(counter) { inserted in
            let w = try runAPDU(["ndef-write", "-r", inserted.reader, "--text", newText], environment: ["XDG_STATE_HOME": state()])
            #expect(w.status == 0, "\(w.stderr)")
        }
        let total = counter.exchanges
        let message = try await withInsertedCard(card, faults: Faults(removeAfter: total - 4)) { inserted in
            let w = try runAPDU(["ndef-write", "-r", inserted.reader, "--text", newText], environment: ["XDG_STATE_HOME": home])
            #expect(w.status == 74, "\(w.status) \(w.stderr)")
            #expect(w.stderr.split(separator: "\n").count == 1)
            return w.stderr
        }
        // The command the error names, as a user would copy it.
        let path = try #require(message.components(separatedBy: "--restore ").last?.split(separator: " ").first.map { String($0).trimmingCharacters(in: CharacterSet(charactersIn: "'\n")) },
                                "\(message)")
        try await withInsertedCard(card) { inserted in
            let restore = try runAPDU(["ndef-write", "-r", inserted.reader, "--restore", path], environment: ["XDG_STATE_HOME": home])
            #expect(restore.status == 0, "\(restore.stderr)")
            let r = try runAPDU(["ndef-read", "--json", "-r", inserted.reader])
            #expect(r.stdout.contains("the old message"), "\(r.stdout)")
        }
    }

    @Test("iso15693: info, read, write, security, lock (needs --yes), custom; bad arguments are usage errors")
    func iso15693Command() async throws {
        let tag = ISO15693TagModel(chip: .st25dv64k)
        try await withInsertedCard(ContactlessReader(.transparent, tag: tag)) { inserted in
            let info = try runAPDU(["iso15693", "info", "--json", "-r", inserted.reader])
            #expect(info.status == 0, "\(info.stderr)")
            let doc = try #require(try info.json() as? [String: Any])
            #expect(doc["blockCount"] as? Int == 2048 && doc["manufacturer"] as? String == "STMicroelectronics")
            #expect(try runAPDU(["iso15693", "write", "-r", inserted.reader, "300", "01020304"]).status == 0)
            #expect(tag.contents[1200..<1204] == [1, 2, 3, 4])
            let read = try runAPDU(["iso15693", "read", "--json", "-r", inserted.reader, "298", "80"])
            #expect(read.status == 0, "\(read.stderr)")
            let blocks = try #require((try read.json() as? [String: Any])?["blocks"] as? [[String: Any]])
            #expect(blocks.count == 80 && blocks[2]["bytes"] as? String == "01020304")
            #expect(try runAPDU(["iso15693", "lock", "-r", inserted.reader, "300"]).status == 77)
            #expect(try runAPDU(["iso15693", "lock", "--yes", "-r", inserted.reader, "300"]).status == 0)
            let sec = try runAPDU(["iso15693", "security", "--json", "-r", inserted.reader, "299", "3"])
            #expect(sec.stdout.contains("\"locked\":true"))
            let refused = try runAPDU(["iso15693", "write", "-r", inserted.reader, "300", "00000000"])
            #expect(refused.status == 1 && refused.stderr.contains("locked"), "\(refused.stderr)")
            #expect(try runAPDU(["iso15693", "write", "-r", inserted.reader, "300", "0102"]).status == 64)
            #expect(try runAPDU(["iso15693", "read", "-r", inserted.reader, "x"]).status == 64)
            #expect(try runAPDU(["iso15693", "custom", "-r", inserted.reader, "10"]).status == 64)
        }
        try await withInsertedCard(ContactlessReader(.transparent, tag: ISO15693TagModel(chip: .icodeSlix))) { inserted in
            let custom = try runAPDU(["iso15693", "custom", "--json", "-r", inserted.reader, "B2"])
            #expect(custom.status == 0 && custom.stdout.contains("\"answer\":\"3CA5\""), "\(custom.stdout) \(custom.stderr)")
        }
    }

    @Test("felica: poll, services, system-codes, read, write; tag-info on Types 5 and 3", arguments: [ContactlessReader.Dialect.transparent, .acr122u])
    func feliCaCommand(_ dialect: ContactlessReader.Dialect) async throws {
        let tag = FeliCaTagModel(chip: .liteS)
        try await withInsertedCard(ContactlessReader(dialect, tag: tag)) { inserted in
            let poll = try runAPDU(["felica", "poll", "--json", "-r", inserted.reader, "12FC"])
            #expect(poll.status == 0, "\(poll.stderr)")
            #expect((try poll.json() as? [String: Any])?["idm"] as? String == tag.idm.hexString)
            #expect(try runAPDU(["felica", "services", "-r", inserted.reader, "000B", "1234"]).stdout.contains("1234: does not exist"))
            #expect(try runAPDU(["felica", "system-codes", "-r", inserted.reader]).stdout.contains("12FC (NDEF)"))
            let data = String(repeating: "AB", count: 16)
            #expect(try runAPDU(["felica", "write", "-r", inserted.reader, "2", data]).status == 0)
            let read = try runAPDU(["felica", "read", "--json", "-r", inserted.reader, "0", "2"])
            #expect(read.stdout.contains(data), "\(read.stdout)")
            let tooMany = try runAPDU(["felica", "read", "-r", inserted.reader, "0", "1", "2", "3", "4"])
            #expect(tooMany.status == 1, "\(tooMany.stderr)")
            let info = try runAPDU(["tag-info", "--json", "-r", inserted.reader])
            #expect(info.status == 0 && info.stdout.contains("FeliCa Lite-S"), "\(info.stderr)")
        }
        try await withInsertedCard(ContactlessReader(.transparent, tag: ISO15693TagModel(chip: .tagIt))) { inserted in
            let info = try runAPDU(["tag-info", "--json", "-r", inserted.reader])
            #expect(info.status == 0 && info.stdout.contains("Texas Instruments"), "\(info.stderr)")
        }
    }

    @Test("a FeliCa card on a storage-only reader: one line naming the missing raw path, exit 69")
    func feliCaStorage() async throws {
        try await withInsertedCard(ContactlessReader(.storageOnly, tag: FeliCaTagModel(chip: .liteS))) { inserted in
            let r = try runAPDU(["ndef-read", "-r", inserted.reader])
            #expect(r.status == 69 && r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
        }
    }
}
