import Foundation
import ISO7816
import Testing
import TestSupport
import VirtualCard

/// `apdu plus` through pcscd and vpcd against the emulated MIFARE Plus: info on every generation
/// and level, SL3 reads and writes (MACs checked, counters across commands), personalisation and
/// the SL3 switch, the Classic path in SL1, NDEF, keys never shown, exit codes, a card pulled.
@Suite("apdu plus through pcscd")
struct CLIMifarePlusTests {
    static let ndefKey = "A:" + String(repeating: "D3F7", count: 8)
    static let keyHex = String(repeating: "5A", count: 16)
    func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02X", $0) }.joined() }

    @Test("info: generation, level, storage, UID, the signature checked (a published EV1 pair verifies), the evidence; no key, nothing written",
          arguments: [MifarePlusModel.Generation.s, .x, .ev1, .ev2])
    func info(_ generation: MifarePlusModel.Generation) async throws {
        // proxmark3 tools/recover_pk.py: a real EV1's UID and signature.
        let uid: [UInt8] = [0x04, 0x50, 0x50, 0x82, 0x34, 0x6B, 0x80]
        let signature = try Hex.decode("78B2FCF6769F60B165F5BDEB3A6D0C26967BB165E65A3B400A01C711356FF0A0807AB1A2706FCA419702AC67211287E31D71927BA25AB235")
        for level in [MifarePlusModel.Level.sl0, .sl3] {
            let card = MifarePlusModel(generation, level: level, sectors: 40, uid: uid, signature: generation == .ev1 ? signature : nil)
            try await withInsertedCard(card) { inserted in
                let r = try runAPDU(["plus", "info", "--json", "-r", inserted.reader])
                let doc = try #require(try r.json() as? [String: Any], "\(r.stderr)")
                #expect(doc["generation"] as? String == generation.rawValue && doc["securityLevel"] as? Int == level.rawValue, "\(r.stdout)")
                let originality = try #require(doc["originality"] as? [String: Any])
                switch generation {
                case .ev1:
                    #expect(doc["storage"] as? Int == 4096 && doc["uid"] as? String == hex(uid))
                    #expect(originality["valid"] as? Bool == true && (originality["key"] as? String)?.contains("EV1") == true, "\(originality)")
                case .ev2:
                    #expect(originality["valid"] as? Bool == false, "a blank signature is not NXP's: \(originality)")
                case .s, .x:
                    #expect(originality["signature"] is NSNull && doc["storage"] is NSNull)
                }
                let evidence = try #require(doc["evidence"] as? [[String: String]])
                #expect(evidence.contains { $0["claim"]?.hasPrefix("security level SL\(level.rawValue)") == true })
                let text = try runAPDU(["plus", "info", "-r", inserted.reader])
                #expect(text.status == 0 && text.stdout.contains("MIFARE Plus") && text.stdout.contains("SL\(level.rawValue)"), "\(text.stdout)")
            }
            #expect(card.personalized.isEmpty)
        }
    }

    @Test("SL3 read: 3 blocks a command, MACs checked; the NDEF sectors under the NDEF key; ndef-read finds the message")
    func read() async throws {
        let card = MifarePlusModel.ndefFormatted(.ev1, message: MifarePlusModel.presetMessage)
        try await withInsertedCard(card) { inserted in
            let r = inserted.reader
            let read = try runAPDU(["plus", "read", "--block", "4-7", "--json", "-r", r], environment: ["APDU_MIFARE_PLUS_KEY": Self.ndefKey])
            let doc = try #require(try read.json() as? [String: Any], "\(read.stderr)")
            let blocks = try #require(doc["blocks"] as? [[String: Any]])
            #expect(blocks.count == 4 && (blocks[0]["bytes"] as? String)?.hasPrefix("03") == true, "\(read.stdout)")
            // AuthenticateFirst (2 frames) and two reads (3 blocks, then the trailer), after identification.
            let reads = card.frames.filter { (0x30...0x37).contains($0[0]) }
            #expect(reads.count == 2 && reads[0][3] == 3, "\(reads)")
            let hexBlock = try runAPDU(["plus", "read", "--block", "0x1", "--key", "A:" + hex(MifarePlusModel.madKey), "-r", r])
            #expect(hexBlock.status == 0 && hexBlock.stdout.contains("03 E1"), "\(hexBlock.stdout)\(hexBlock.stderr)")
            let ndef = try runAPDU(["ndef-read", "-r", r])
            #expect(ndef.status == 0 && ndef.stdout.contains("https://example.com/plus"), "\(ndef.stdout)\(ndef.stderr)")
            let status = try runAPDU(["ndef-status", "--json", "-r", r])
            #expect(status.status == 0 && status.stdout.contains("plus"), "\(status.stdout)\(status.stderr)")
            let write = try runAPDU(["ndef-write", "--uri", "https://x.example", "-r", r])
            #expect(write.status == 69 && write.stderr.contains("does not write"), "\(write.status) \(write.stderr)")
        }
    }

    @Test("refusals: a wrong key (1, the key never shown), a MAC that does not verify (65), a malformed block (64), SL0 (1)")
    func refusals() async throws {
        let card = MifarePlusModel.ndefFormatted(.x, message: MifarePlusModel.presetMessage)
        try await withInsertedCard(card) { inserted in
            let r = inserted.reader
            let wrong = try runAPDU(["plus", "read", "--block", "4", "--key", "A:" + Self.keyHex, "--trace", "-r", r])
            #expect(wrong.status == 1 && wrong.stderr.contains("06") && !(wrong.stderr + wrong.stdout).contains(Self.keyHex), "\(wrong.stderr)")
            #expect(try runAPDU(["plus", "read", "--block", "x9", "--key", Self.ndefKey, "-r", r]).status == 64)
            #expect(try runAPDU(["plus", "read", "--block", "4", "--key", "A:12", "-r", r]).status == 64)
            // Review (issue 48): an empty or one-sided range trapped (an empty split's first part).
            for block in ["--block=-", "--block=", "--block=-5", "--block=5-"] {
                let bad = try runAPDU(["plus", "read", block, "--key", Self.ndefKey, "-r", r])
                #expect(bad.status == 64 && !bad.stderr.contains("Fatal"), "\(block): \(bad.status) \(bad.stderr)")
            }
            card.tamperAnswerMACs()
            let tampered = try runAPDU(["plus", "read", "--block", "4", "--key", Self.ndefKey, "-r", r])
            #expect(tampered.status == 65 && tampered.stderr.contains("MAC") && tampered.stdout.isEmpty, "\(tampered.stderr)")
            let before = card.block(5)
            let refused = try runAPDU(["plus", "write", "--block", "5", "--hex", String(repeating: "77", count: 16), "--key", Self.ndefKey, "-r", r])
            #expect(refused.status == 65 && card.block(5) == before, "the old contents' read fails its MAC: nothing is written: \(refused.stderr)")
            card.tamperAnswerMACs(writesOnly: true)
            let write = try runAPDU(["plus", "write", "--block", "5", "--hex", String(repeating: "77", count: 16), "--key", Self.ndefKey, "-r", r])
            // The write's answer fails its MAC; the block read again under a fresh authentication
            // (whose answers verify) shows the write was made: said so, exit 65, with the restore.
            #expect(write.status == 65 && write.stderr.contains("holds the new 16 bytes (read again under MAC)") && write.stderr.contains("apdu plus write --block 5 --hex")
                    && card.block(5) == [UInt8](repeating: 0x77, count: 16), "\(write.stderr)")
            card.tamperAnswerMACs(false)
        }
        try await withInsertedCard(MifarePlusModel(.ev1, level: .sl0)) { inserted in
            let r = try runAPDU(["plus", "read", "--block", "4", "--key", Self.ndefKey, "-r", inserted.reader])
            #expect(r.status == 1 && r.stderr.contains("personalise"), "\(r.stderr)")
        }
    }

    @Test("SL3 write: enciphered, MACed, read back; a second write in the same card proves the IV (W_Ctr 1); trailers and B003 need --yes")
    func write() async throws {
        let card = MifarePlusModel.ndefFormatted(.ev2, message: MifarePlusModel.presetMessage)
        try await withInsertedCard(card) { inserted in
            let r = inserted.reader
            let data1 = String(repeating: "A1", count: 16), data2 = String(repeating: "B2", count: 16)
            let w = try runAPDU(["plus", "write", "--block", "5", "--hex", data1, "--json", "-r", r], environment: ["APDU_MIFARE_PLUS_KEY": Self.ndefKey])
            #expect(w.status == 0 && (try? w.json() as? [String: Any])?["verified"] as? Bool == true, "\(w.stdout)\(w.stderr)")
            #expect(card.block(5).map(hex) == data1)
            let w2 = try runAPDU(["plus", "write", "--block", "6", "--hex", data2, "--plain", "-r", r], environment: ["APDU_MIFARE_PLUS_KEY": Self.ndefKey])
            #expect(w2.status == 0 && w2.stdout.contains("reads back as written"), "\(w2.stderr)")
            #expect(card.block(6).map(hex) == data2)
            let value = try runAPDU(["plus", "write", "--block", "8", "--value=-42", "-r", r], environment: ["APDU_MIFARE_PLUS_KEY": Self.ndefKey])
            #expect(value.status == 0 && card.block(8).map(hex) == "D6FFFFFF29000000D6FFFFFF08F708F7", "\(value.stderr)")
            let readValue = try runAPDU(["plus", "read", "--block", "8", "--json", "-r", r], environment: ["APDU_MIFARE_PLUS_KEY": Self.ndefKey])
            #expect(((try? readValue.json() as? [String: Any])?["blocks"] as? [[String: Any]])?.first?["value"] as? Int == -42, "\(readValue.stdout)")
            let trailer = try runAPDU(["plus", "write", "--block", "7", "--hex", String(repeating: "00", count: 16), "--key", Self.ndefKey, "-r", r])
            #expect(trailer.status == 77 && trailer.stderr.contains("--yes"), "\(trailer.stderr)")
            let brick = try runAPDU(["plus", "write", "--block", "0xB003", "--hex", String(repeating: "00", count: 16), "--key", "A:" + hex(MifarePlusModel.sl3KeyB), "-r", r])
            #expect(brick.status == 77 && brick.stderr.contains("unusable"), "\(brick.stderr)")
            let block0 = try runAPDU(["plus", "write", "--block", "0", "--hex", data1, "--key", Self.ndefKey, "-r", r])
            #expect(block0.status == 64, "\(block0.stderr)")
        }
    }

    @Test("personalise: WritePerso of every key (redacted in the trace), CommitPerso only with --yes, then SL3 with the new keys")
    func personalize() async throws {
        let card = MifarePlusModel(.ev1, level: .sl0)
        try await withInsertedCard(card) { inserted in
            let r = inserted.reader
            let unconfirmed = try runAPDU(["plus", "personalize", "--all-keys", Self.keyHex, "--commit", "sl3", "-r", r])
            #expect(unconfirmed.status == 77 && card.personalized.isEmpty && !unconfirmed.stderr.contains(Self.keyHex), "\(unconfirmed.stderr)")
            let done = try runAPDU(["plus", "personalize", "--commit", "sl3", "--yes", "--trace", "-r", r], environment: ["APDU_MIFARE_PLUS_PERSO_KEY": Self.keyHex])
            #expect(done.status == 0 && done.stdout.contains("sent 68 keys with WritePerso: 66 proved themselves in SL3") && card.level == .sl3, "\(done.stdout)\(done.stderr)")
            #expect(done.stdout.contains("in SL3 (checked after re-activation: the WritePerso probe answered 0B and the card authenticated with each of the "), "\(done.stdout)")
            #expect(!(done.stdout + done.stderr).contains(Self.keyHex) && !(done.stdout + done.stderr).contains(Self.keyHex.separatedPairs), "the trace shows no key")
        }
        try await withInsertedCard(card) { inserted in
            let read = try runAPDU(["plus", "read", "--block", "1-2", "--key", "B:" + Self.keyHex, "-r", inserted.reader])
            #expect(read.status == 0, "\(read.stderr)")
        }
    }

    @Test("SL1: the Classic path for read and write; the switch to SL3 needs --yes, a wrong key leaves SL1, the right one switches")
    func level1() async throws {
        var blocks = MifarePlusModel.factoryBlocks(sectors: 32, uid: [0x04, 1, 2, 3, 4, 5, 6])
        blocks[0x9003] = [UInt8](repeating: 0x5A, count: 16)
        let card = MifarePlusModel(.x, level: .sl1, blocks: blocks)
        try await withInsertedCard(card) { inserted in
            let r = inserted.reader
            let info = try runAPDU(["plus", "info", "--json", "-r", r])
            #expect((try? info.json() as? [String: Any])?["securityLevel"] as? Int == 1, "\(info.stdout)\(info.stderr)")
            let w = try runAPDU(["plus", "write", "--block", "4", "--hex", String(repeating: "42", count: 16), "--key", "A:FFFFFFFFFFFF", "-r", r])
            #expect(w.status == 0, "\(w.stderr)")
            let read = try runAPDU(["plus", "read", "--block", "4", "--key", "A:FFFFFFFFFFFF", "-r", r])
            #expect(read.status == 0 && read.stdout.contains(String(repeating: "42 ", count: 15)), "\(read.stdout)\(read.stderr)")
            let unconfirmed = try runAPDU(["plus", "personalize", "--switch-sl3", "--key", Self.keyHex, "-r", r])
            #expect(unconfirmed.status == 77 && unconfirmed.stderr.contains("cannot be undone") && card.level == .sl1, "\(unconfirmed.stderr)")
            let wrong = try runAPDU(["plus", "personalize", "--switch-sl3", "--key", String(repeating: "00", count: 16), "--yes", "-r", r])
            #expect(wrong.status == 1 && wrong.stderr.contains("stays in SL1") && card.level == .sl1, "\(wrong.stderr)")
            let ok = try runAPDU(["plus", "personalize", "--switch-sl3", "--key", Self.keyHex, "--yes", "-r", r])
            #expect(ok.status == 0 && card.level == .sl3, "\(ok.stderr)")
            #expect(card.block(4).map(hex) == String(repeating: "42", count: 16), "the data blocks carried over")
        }
    }

    @Test("a card pulled after every exchange of a write: one line, exit 74 (69 before connecting), the block old or new")
    func pulled() async throws {
        let total: Int
        do {
            let card = MifarePlusModel.ndefFormatted(.ev1, message: MifarePlusModel.presetMessage)
            try await withInsertedCard(card) { inserted in
                let w = try runAPDU(["plus", "write", "--block", "5", "--hex", String(repeating: "C3", count: 16), "--key", Self.ndefKey, "-r", inserted.reader])
                #expect(w.status == 0, "\(w.stderr)")
            }
            total = card.frames.count + 1
        }
        for n in 0..<total {
            let card = MifarePlusModel.ndefFormatted(.ev1, message: MifarePlusModel.presetMessage)
            let old = card.block(5)
            try await withInsertedCard(card, faults: Faults(removeAfter: n)) { inserted in
                let w = try runAPDU(["plus", "write", "--block", "5", "--hex", String(repeating: "C3", count: 16), "--key", Self.ndefKey, "-r", inserted.reader])
                #expect([74, 69, 0].contains(w.status) && w.stderr.split(separator: "\n").count <= 1 && !w.stderr.contains("Fatal"), "cut after \(n): \(w.status) \(w.stderr)")
                let now = card.block(5)
                #expect(now == old || now.map(hex) == String(repeating: "C3", count: 16))
                if w.stderr.contains("holds the new 16 bytes") { #expect(now.map(hex) == String(repeating: "C3", count: 16)) }
                if now != old && w.status != 0 {
                    #expect(w.stderr.contains("old 16 bytes or the new ones") || w.stderr.contains("holds the new 16 bytes"), "cut after \(n): \(w.stderr)")
                }
            }
        }
    }

    @Test("the emulator's forms: iso-only reader with an EV1 (the wrapping), with an S (exit 69, one line)")
    func readerForms() async throws {
        try await withInsertedCard(MifarePlusModel.ndefFormatted(.ev1, message: MifarePlusModel.presetMessage, readerForm: .isoOnly)) { inserted in
            let r = try runAPDU(["plus", "read", "--block", "4", "--key", Self.ndefKey, "-r", inserted.reader])
            #expect(r.status == 0, "\(r.stderr)")
        }
        try await withInsertedCard(MifarePlusModel.ndefFormatted(.s, message: MifarePlusModel.presetMessage, readerForm: .isoOnly)) { inserted in
            let r = try runAPDU(["plus", "info", "-r", inserted.reader])
            #expect(r.status == 69 && r.stderr.split(separator: "\n").count == 1, "\(r.status) \(r.stderr)")
        }
    }
}

extension String {
    /// "5A5A…" as "5A 5A …", the way traces print bytes.
    var separatedPairs: String {
        stride(from: 0, to: count, by: 2).map { String(self[index(startIndex, offsetBy: $0)..<index(startIndex, offsetBy: min($0 + 2, count))]) }.joined(separator: " ")
    }
}
