import Foundation
import ISO7816
import NFCTags
import Testing
import TestSupport
import VirtualCard

/// MIFARE Classic through pcscd, vpcd and the storage reader: format, the ndef commands, the
/// dump and key search, block and trailer writes, keys from every source and never printed, a
/// card pulled mid-write and the restore the error names.
@Suite("MIFARE Classic through pcscd")
struct CLIMifareClassicTests {
    func state() -> String { FileManager.default.temporaryDirectory.appendingPathComponent("mfc-\(UUID())").path }
    func reader(_ model: MifareClassicModel) -> ContactlessReader { ContactlessReader(.storageOnly, tag: model) }

    @Test("ndef-format, then ndef-write / ndef-read / ndef-status / ndef-lock with key B from a key file", arguments: [MifareClassicModel.Chip.classic1K, .classic4K])
    func ndefCommands(_ chip: MifareClassicModel.Chip) async throws {
        let model = MifareClassicModel(chip)
        let home = state()
        defer { try? FileManager.default.removeItem(atPath: home) }
        try await withInsertedCard(reader(model)) { inserted in
            let unformatted = try runAPDU(["ndef-read", "-r", inserted.reader])
            #expect(unformatted.status == 1 && unformatted.stderr.contains("ndef-format"), "\(unformatted.stderr)")
            let f = try runAPDU(["ndef-format", "--json", "-r", inserted.reader])
            #expect(f.status == 0, "\(f.stderr)")
            #expect((try f.json() as? [String: Any])?["madVersion"] as? Int == (chip == .classic4K ? 2 : 1))
            let w = try runAPDU(["ndef-write", "-r", inserted.reader, "--uri", "https://example.com/classic"], environment: ["XDG_STATE_HOME": home])
            #expect(w.status == 0, "\(w.stderr)")
            let r = try runAPDU(["ndef-read", "--json", "-r", inserted.reader])
            let doc = try #require(try r.json() as? [String: Any], "\(r.stderr)")
            #expect((doc["tag"] as? [String: Any])?["kind"] as? String == "classic")
            #expect((doc["backgroundReading"] as? [String: Any])?["uri"] as? String == "https://example.com/classic")
            let s = try runAPDU(["ndef-status", "-r", inserted.reader])
            #expect(s.status == 0 && s.stdout.contains("MAD\(chip == .classic4K ? 2 : 1)"), "\(s.stdout)\(s.stderr)")
            let keyFile = home + "-keys.txt"
            try "# key B as shipped\r\nFFFFFFFFFFFF\r\n".write(toFile: keyFile, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(atPath: keyFile) }
            let lock = try runAPDU(["ndef-lock", "--yes", "--json", "-r", inserted.reader, "--key-file", keyFile])
            #expect(lock.status == 0, "\(lock.stderr)")
            #expect((try lock.json() as? [String: Any])?["refusesWrites"] as? Bool == true)
            let after = try runAPDU(["ndef-write", "-r", inserted.reader, "--text", "x"], environment: ["XDG_STATE_HOME": home])
            #expect(after.status == 1 && after.stderr.contains("read-only"), "\(after.stderr)")
            #expect(try runAPDU(["ndef-read", "-r", inserted.reader]).stdout.contains("example.com/classic"))
        }
    }

    @Test("classic dump: JSON and hex layout, one authentication per sector, access bits in words, keys never printed")
    func dump() async throws {
        let model = MifareClassicModel(.classic1K)
        try await withInsertedCard(reader(model)) { inserted in
            let secret = "0A1B2C3D4E5F"
            let d = try runAPDU(["classic", "dump", "--json", "-r", inserted.reader, "--key", secret, "--trace"])
            #expect(d.status == 0, "\(d.stderr)")
            let doc = try #require(try d.json() as? [String: Any])
            #expect(doc["authentications"] as? Int == 16 + 1, "the given key fails on sector 0, then the factory key is tried first")
            #expect(doc["reads"] as? Int == 64 && doc["sectorsOpened"] as? Int == 16)
            let sectors = try #require(doc["sectors"] as? [[String: Any]])
            #expect((sectors[3]["key"] as? [String: Any])?["label"] as? String == "factory key")
            #expect(((sectors[3]["access"] as? [String: Any])?["trailer"] as? [String: Any])?["condition"] as? Int == 1)
            #expect(!d.stdout.contains(secret) && !d.stderr.contains(secret) && !d.stderr.contains("0A 1B 2C"))
            #expect(d.stderr.contains("FF 82 00 00 06 ** ** ** ** ** **"), "the trace shows LOAD KEYS redacted")
            let text = try runAPDU(["classic", "dump", "-r", inserted.reader])
            #expect(text.status == 0)
            #expect(text.stdout.contains("   7  00 00 00 00 00 00 FF 07 80 69 FF FF FF FF FF FF  |.......iI......|") || text.stdout.contains("   7  00 00 00 00 00 00 FF 07 80 69"), "\(text.stdout.prefix(600))")
            #expect(text.stdout.contains("key A write: key A"))
            let none = try runAPDU(["classic", "dump", "--no-public-keys", "--key", secret, "-r", inserted.reader])
            #expect(none.status == 1 && none.stdout.contains("0 of 16 sectors opened"), "\(none.stdout)")
        }
    }

    @Test("classic keys: sector by sector which public key opens it as A and as B")
    func keys() async throws {
        let model = MifareClassicModel(.mini)
        _ = try MifareClassicNDEFTag.format(APDUTransport(channel: EmulatedChannel(card: reader(model))), atr: model.atr)
        try await withInsertedCard(reader(model)) { inserted in
            let k = try runAPDU(["classic", "keys", "--json", "-r", inserted.reader])
            #expect(k.status == 0, "\(k.stderr)")
            let sectors = try #require((try k.json() as? [String: Any])?["sectors"] as? [[String: Any]])
            #expect(sectors.map { $0["keyA"] as? String } == ["MAD key", "NDEF key", "NDEF key", "NDEF key", "NDEF key"])
            #expect(sectors.allSatisfy { $0["keyB"] as? String == "factory key" })
            let env = try runAPDU(["classic", "keys", "--no-public-keys", "-r", inserted.reader], environment: ["APDU_MIFARE_KEYS": "d3f7d3f7d3f7, ffffffffffff"])
            // Without the MAD key, sector 0 opens only as key B (the factory key, the second given).
            #expect(env.status == 0 && env.stdout.contains("sector  0  key A: -  key B: $APDU_MIFARE_KEYS key 2"), "\(env.stdout)\(env.stderr)")
            #expect(env.stdout.contains("sector  1  key A: $APDU_MIFARE_KEYS key 1"))
            #expect(!env.stdout.lowercased().contains("d3f7") && !env.stdout.lowercased().contains("ffffffffffff"))
        }
    }

    @Test("classic write / read: data blocks, trailers only with --trailer, invalid or lock-out bits refused, block 0 refused, bad input exits 64")
    func writes() async throws {
        let model = MifareClassicModel(.classic1K)
        try await withInsertedCard(reader(model)) { inserted in
            #expect(try runAPDU(["classic", "write", "-r", inserted.reader, "5", "00112233445566778899AABBCCDDEEFF"]).status == 0)
            let r = try runAPDU(["classic", "read", "--json", "-r", inserted.reader, "4", "4"])
            let blocks = try #require((try r.json() as? [String: Any])?["blocks"] as? [[String: Any]])
            #expect(blocks[1]["bytes"] as? String == "00112233445566778899AABBCCDDEEFF" && blocks[3]["kind"] as? String == "trailer")
            let before = model.contents
            let trailer = "FFFFFFFFFFFF" + "FF0780" + "69" + "FFFFFFFFFFFF"
            let noFlag = try runAPDU(["classic", "write", "-r", inserted.reader, "7", trailer])
            #expect(noFlag.status == 1 && noFlag.stderr.contains("--trailer"), "\(noFlag.stderr)")
            let invalid = try runAPDU(["classic", "write", "--trailer", "-r", inserted.reader, "7", "FFFFFFFFFFFF" + "FF0781" + "69" + "FFFFFFFFFFFF"])
            #expect(invalid.status == 1 && invalid.stderr.contains("invalid"), "\(invalid.stderr)")
            let frozen = "FFFFFFFFFFFF" + MifareClassicAccessBits(conditions: [0, 0, 0, 6]).bytes.hexString + "69" + "FFFFFFFFFFFF"
            let lockout = try runAPDU(["classic", "write", "--trailer", "-r", inserted.reader, "7", frozen])
            #expect(lockout.status == 1 && lockout.stderr.contains("--confirm-lockout 1"), "\(lockout.stderr)")
            #expect(try runAPDU(["classic", "write", "-r", inserted.reader, "0", trailer]).status == 1)
            #expect(model.contents == before, "nothing was written")
            #expect(try runAPDU(["classic", "write", "-r", inserted.reader, "5", "0011"]).status == 64)
            #expect(try runAPDU(["classic", "write", "-r", inserted.reader, "5", "zz"]).status == 64)
            #expect(try runAPDU(["classic", "read", "-r", inserted.reader, "300"]).status == 64)
            #expect(try runAPDU(["classic", "dump", "-r", inserted.reader, "--key", "12345"]).status == 64)
            let newKeys = "A1A2A3A4A5A6" + "7F0788" + "40" + "B1B2B3B4B5B6"
            let t = try runAPDU(["classic", "write", "--trailer", "--trace", "-r", inserted.reader, "11", newKeys])
            #expect(t.status == 0, "\(t.stderr)")
            #expect(!t.stderr.contains("A1 A2 A3") && !t.stderr.contains("B1 B2 B3"), "trailer keys redacted in the trace")
            #expect(Array(model.contents[176..<192]) == (try Hex.decode(newKeys)))
            let k = try runAPDU(["classic", "read", "-r", inserted.reader, "8", "--key", "a1a2a3a4a5a6"])
            #expect(k.status == 0, "\(k.stderr)")
        }
    }

    @Test("a Classic card pulled mid-write: one line naming the state and the restore command, which works")
    func pulledMidWrite() async throws {
        let model = MifareClassicModel(.classic1K)
        _ = try MifareClassicNDEFTag.format(APDUTransport(channel: EmulatedChannel(card: reader(model))), atr: model.atr)
        let home = state()
        defer { try? FileManager.default.removeItem(atPath: home) }
        try await withInsertedCard(reader(model)) { inserted in
            let w = try runAPDU(["ndef-write", "-r", inserted.reader, "--text", "the old message"], environment: ["XDG_STATE_HOME": home])
            #expect(w.status == 0, "\(w.stderr)")
        }
        let counter = reader(MifareClassicModel(.classic1K, memory: model.contents))
        let newText = String(repeating: "new ", count: 40)
        try await withInsertedCard(counter) { inserted in
            let w = try runAPDU(["ndef-write", "-r", inserted.reader, "--text", newText], environment: ["XDG_STATE_HOME": state()])
            #expect(w.status == 0, "\(w.stderr)")
        }
        let message = try await withInsertedCard(reader(model), faults: Faults(removeAfter: counter.exchanges - 8)) { inserted in
            let w = try runAPDU(["ndef-write", "-r", inserted.reader, "--text", newText], environment: ["XDG_STATE_HOME": home])
            #expect(w.status == 74, "\(w.status) \(w.stderr)")
            #expect(w.stderr.split(separator: "\n").count == 1)
            return w.stderr
        }
        let path = try #require(message.components(separatedBy: "--restore ").last?.split(separator: " ").first.map { String($0).trimmingCharacters(in: CharacterSet(charactersIn: "'\n")) },
                                "\(message)")
        try await withInsertedCard(reader(model)) { inserted in
            let restore = try runAPDU(["ndef-write", "-r", inserted.reader, "--restore", path], environment: ["XDG_STATE_HOME": home])
            #expect(restore.status == 0, "\(restore.stderr)")
            #expect(try runAPDU(["ndef-read", "-r", inserted.reader]).stdout.contains("the old message"))
        }
    }
}
