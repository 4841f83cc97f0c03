import Foundation
import ISO7816
import NDEF
import Testing
import TestSupport
import VirtualCard

@Suite("ndef-* and ultralight read on Type 2 tags (NTAG21x, Ultralight) through pcscd")
struct CLIType2Tests {
    @Test("ndef-write then ndef-read on each chip; status and capacity in JSON", arguments: ["ultralight", "ntag213", "ntag215", "ntag216"])
    func roundTrip(chipName: String) async throws {
        let chip = try #require(Type2TagModel.Chip.all[chipName])
        let model = Type2TagModel(chip: chip)
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("t2-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: state) }
        try await withInsertedCard(model) { inserted in
            let s = try runAPDU(["ndef-status", "--json", "-r", inserted.reader])
            let status = try #require(try s.json() as? [String: Any])
            #expect(status["status"] as? String == "readWrite")
            #expect((status["tag"] as? [String: Any])?["kind"] as? String == "type2")
            #expect((status["tag"] as? [String: Any])?["uid"] as? String == "04A1B2C3D4E580")
            let capacity = try #require(status["capacity"] as? Int)
            let text = String(repeating: "t", count: min(capacity - 40, 300))
            let w = try runAPDU(["ndef-write", "-r", inserted.reader, "--uri", "https://example.com/\(chipName)", "--text", text], environment: ["XDG_STATE_HOME": state])
            #expect(w.status == 0, "\(w.stderr)")
            let r = try runAPDU(["ndef-read", "--json", "-r", inserted.reader])
            let doc = try #require(try r.json() as? [String: Any])
            let records = try #require((doc["message"] as? [String: Any])?["records"] as? [[String: Any]])
            #expect(records.first?["uri"] as? String == "https://example.com/\(chipName)")
            #expect(records.last?["text"] as? String == text)
            #expect(doc["capacity"] as? Int == capacity)
        }
    }

    @Test("lock then write refused; the memory shows CC 0F and the lock bytes")
    func lock() async throws {
        let model = Type2TagModel(chip: .ntag213)
        try await withInsertedCard(model) { inserted in
            #expect(try runAPDU(["ndef-lock", "-r", inserted.reader]).status == 77)
            let l = try runAPDU(["ndef-lock", "--yes", "--json", "-r", inserted.reader])
            #expect(l.status == 0, "\(l.stderr)")
            #expect((try l.json() as? [String: Any])?["refusesWrites"] as? Bool == true)
            #expect(model.contents[15] == 0x0F && model.contents[10] == 0xFF)
            let w = try runAPDU(["ndef-write", "-r", inserted.reader, "--uri", "https://x.y"])
            #expect(w.status == 1)
            #expect(w.stderr.contains("the tag is read-only; nothing was written"))
        }
    }

    /// Issue 32: an unknown lock is not an unlocked page. Behind a storage-only reader the
    /// NTAG215's dynamic lock bytes cannot be placed; a write that meets a locked page puts back
    /// what it changed and says so.
    @Test("a write into pages an unproven chip's dynamic lock bits protect: exit 1, the tag unchanged; a proven NTAG215 with a 144-byte CC: status and lock, no trap")
    func unknownLocks() async throws {
        var image = Type2TagModel.factoryImage(chip: .ntag215)
        image[0x82 * 4] = 0x01                                  // pages 16-31 locked
        let model = Type2TagModel(chip: .ntag215, memory: image)
        try await withInsertedCard(model) { inserted in
            let before = model.contents
            let w = try runAPDU(["ndef-write", "-r", inserted.reader, "--text", String(repeating: "x", count: 200)])
            #expect(w.status == 1, "\(w.stderr)")
            #expect(w.stderr.contains("page 16 is locked or password-protected") && w.stderr.contains("the tag is unchanged"), "\(w.stderr)")
            #expect(w.stderr.split(separator: "\n").count == 1, "\(w.stderr)")
            #expect(model.contents == before)
            let short = try runAPDU(["ndef-write", "-r", inserted.reader, "--uri", "https://e.x"])
            #expect(short.status == 0, "\(short.stderr)")
        }
        // The trap the issue reported: GET_VERSION proves an NTAG215 whose CC says 144 bytes.
        var small = Type2TagModel.factoryImage(chip: .ntag215)
        small[14] = 0x12
        for dialect in [ContactlessReader.Dialect.transparent, .acr122u] {
            try await withInsertedCard(ContactlessReader(dialect, tag: Type2TagModel(chip: .ntag215, memory: small))) { inserted in
                let s = try runAPDU(["ndef-status", "--json", "-r", inserted.reader])
                #expect(s.status == 0, "\(s.stderr)")
                let l = try runAPDU(["ndef-lock", "--yes", "-r", inserted.reader])
                #expect(l.status == 0, "\(l.stderr)")
            }
        }
    }

    @Test("ultralight read dumps pages with roles; a bad range is a usage error")
    func ulRead() async throws {
        // Chip roles where GET_VERSION proves the chip (a transparent reader).
        try await withInsertedCard(ContactlessReader(.transparent, tag: Type2TagModel(chip: .ntag213))) { inserted in
            let r = try runAPDU(["ultralight", "read", "-r", inserted.reader])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stdout.contains("  3  E1 10 12 00  |....|  CC"))
            #expect(r.stdout.contains(" 40  00 00 00 BD  |....|  dynamic lock"))     // byte 3 RFUI, BD as shipped
            #expect(r.stdout.split(separator: "\n").count == 45)
            #expect(r.stdout.contains(" 41  04 00 00 FF  |....|  config (CFG0, AUTH0)"))
            let j = try runAPDU(["ultralight", "read", "--json", "--pages", "4-5", "-r", inserted.reader])
            let pages = try #require((try j.json() as? [String: Any])?["pages"] as? [[String: Any]])
            #expect(pages.map { $0["role"] as? String } == ["data", "data"])
        }
        // Behind a storage-only reader nothing proves the chip: pages past the CC's data area get
        // no chip's meaning, and pages past 255 are a one-line error, never a trap.
        for chip in [Type2TagModel.Chip.ntag213, .ntag215, .ntag216] {
            try await withInsertedCard(Type2TagModel(chip: chip)) { inserted in
                let r = try runAPDU(["ultralight", "read", "-r", inserted.reader])
                #expect(r.status == 0, "\(r.stderr)")
                #expect(!r.stdout.contains("dynamic lock") && !r.stdout.contains("config"), "\(r.stdout)")
                #expect(r.stdout.contains("past the data area (chip not proven"), "\(r.stdout)")
                let far = try runAPDU(["ultralight", "read", "--pages", "300-301", "-r", inserted.reader])
                #expect(far.status == 69 && far.stderr.contains("past page 255") && far.stderr.split(separator: "\n").count == 1, "\(far.stderr)")
            }
        }
        // A range across page 255 on a tag that has those pages: what storage reaches, and a note.
        try await withInsertedCard(Type2TagModel(chip: .twoSectorT2T)) { inserted in
            let across = try runAPDU(["ultralight", "read", "--pages", "250-260", "--json", "-r", inserted.reader])
            #expect(across.status == 0, "\(across.stderr)")
            let doc = try #require(try across.json() as? [String: Any])
            #expect((doc["pages"] as? [[String: Any]])?.map { $0["page"] as? Int } == Array(250...255))
            #expect((doc["note"] as? String)?.contains("256-260") == true)
        }
        #expect(try runAPDU(["ultralight", "read", "--pages", "9-2"]).status == 64)
    }

    @Test("an unsupported CC version, and a card announcing MIFARE Classic that refuses its commands: clear errors")
    func refusals() async throws {
        var image = Type2TagModel(chip: .ntag213).contents
        image[13] = 0x30
        try await withInsertedCard(Type2TagModel(chip: .ntag213, memory: image)) { inserted in
            let r = try runAPDU(["ndef-read", "-r", inserted.reader])
            #expect(r.status == 1)
            #expect(r.stderr.contains("unsupported Type 2 mapping version 3.0"))
        }
        var classic = Type2TagModel.Chip.ntag213
        classic.cardName = 0x0001
        try await withInsertedCard(Type2TagModel(chip: classic)) { inserted in
            let r = try runAPDU(["ndef-read", "-r", inserted.reader])
            // A Classic card is asked for its MAD; this one refuses LOAD KEYS, and says so in one line.
            #expect(r.status == 1)
            #expect(r.stderr.contains("refused LOAD KEYS") && r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
        }
    }

    @Test("emulate --type2 loads and saves its memory as hex")
    func emulateMemory() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ntag-\(UUID()).hex")
        defer { try? FileManager.default.removeItem(at: file) }
        try await withEmptySlot { slot in
            let emulator = try startAPDU(["emulate", "--port", String(slot.port), "--type2", "ntag215", "--memory", file.path])
            defer { emulator.terminate(); emulator.waitUntilExit(); try? waitForCard(in: slot.reader, present: false) }
            try waitForCard(in: slot.reader, present: true)
            let w = try runAPDU(["ndef-write", "-r", slot.reader, "--uri", "https://saved.example"],
                                environment: ["XDG_STATE_HOME": FileManager.default.temporaryDirectory.path])
            #expect(w.status == 0, "\(w.stderr)")
            let saved = try String(contentsOf: file, encoding: .utf8)
            #expect(saved.split(separator: "\n").count == 135)
            #expect(saved.replacingOccurrences(of: "\n", with: " ").contains("73 61 76 65"))  // "save"
        }
    }

    @Test("a card pulled after each APDU of a Type 2 write: never a corrupt message")
    func pulledDuringWrite() async throws {
        let old = try NDEFMessage(records: [.uri("https://example.com/old-message")]).encoded()
        let new = try NDEFMessage(records: [.uri("https://example.org/" + String(repeating: "n", count: 40)), .text("new")]).encoded()
        var start = Type2TagModel(chip: .ntag213).contents
        let tlv: [UInt8] = [0x03, UInt8(old.count)] + old + [0xFE]
        for (i, b) in tlv.enumerated() { start[21 + i] = b }
        let outcomes = try await pullCardAfterEveryAPDU(old: old, new: new) {
            let model = Type2TagModel(chip: .ntag213, memory: start)
            return (model, {
                let m = model.contents
                let length = Int(m[22])
                return Array(m[23..<(23 + length)])
            })
        }
        print("pulled-card cases for a Type 2 write: \(outcomes.values.reduce(0, +)) (\(outcomes.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")))")
    }
}
