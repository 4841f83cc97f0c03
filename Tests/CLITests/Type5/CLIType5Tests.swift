import Foundation
import ISO7816
import NFCTags
import Testing
import TestSupport
import VirtualCard

/// Type 5 tags through pcscd, vpcd and the reader models: the ndef commands, the ISO 15693
/// command set, a storage-only reader, a card pulled mid-write and the restore the error names.
@Suite("Type 5 tags through pcscd")
struct CLIType5Tests {
    func state() -> String { NativeNDEFChecks.state() }

    @Test("ndef-write / ndef-read / ndef-status / ndef-lock on each chip", arguments: ["icode-slix", "st25dv64k", "tagit"])
    func ndefCommands(_ chip: String) async throws { try await NativeNDEFChecks.ndefCommands(chip) }

    @Test("a card pulled mid-write: one line naming the state and the restore command, which works", arguments: ["icode-slix"])
    func pulledMidWrite(_ chip: String) async throws { try await NativeNDEFChecks.pulledMidWrite(chip) }

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
}
