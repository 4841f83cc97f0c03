import Foundation
import ISO7816
import NFCTags
import Testing
import TestSupport
import VirtualCard

/// transceive, tag-info, passwords, protect/unprotect and tags past 1 KB, through pcscd with the
/// reader models around the NTAG models.
@Suite("Native tag commands through pcscd: every dialect, signatures, passwords, sectors")
struct CLINativeCommandTests {
    static let readers: [ContactlessReader.Dialect] = [.transparent, .acr122u]
    // A published UID and signature pair (contactless-facts §3).
    static let uid: [UInt8] = [0x04, 0xAB, 0x87, 0xF2, 0xCA, 0x11, 0x90]
    static let signature = try! Hex.decode("67B1750BCCEB1174F9A33BF20E0226551A6366939B31F949848C3C087350FA90")

    func reader(_ dialect: ContactlessReader.Dialect, _ chip: Type2TagModel.Chip = .ntag216, memory: [UInt8]? = nil,
                signature: [UInt8] = signature) -> (ContactlessReader, Type2TagModel) {
        let tag = Type2TagModel(chip: chip, uid: Self.uid, memory: memory, signature: signature)
        return (ContactlessReader(dialect, tag: tag), tag)
    }

    @Test("tag-info: chip, UID, a valid signature and the dialect, through each reader", arguments: readers)
    func tagInfo(_ dialect: ContactlessReader.Dialect) async throws {
        let (card, _) = reader(dialect)
        try await withInsertedCard(card) { inserted in
            let r = try runAPDU(["tag-info", "--json", "-r", inserted.reader])
            #expect(r.status == 0, "\(r.stderr)")
            let doc = try #require(try r.json() as? [String: Any])
            #expect(doc["chip"] as? String == "NTAG216")
            #expect(doc["uid"] as? String == "04AB87F2CA1190")
            #expect(doc["dialect"] as? String == dialect.rawValue)
            #expect((doc["signature"] as? [String: Any])?["valid"] as? Bool == true)
            #expect(!card.sessionOpen)
        }
    }

    @Test("tag-info: a signature that does not verify is reported, exit 0")
    func invalidSignature() async throws {
        var flipped = Self.signature
        flipped[31] ^= 0x01
        let (card, _) = reader(.transparent, signature: flipped)
        try await withInsertedCard(card) { inserted in
            let r = try runAPDU(["tag-info", "--json", "-r", inserted.reader])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(((try r.json() as? [String: Any])?["signature"] as? [String: Any])?["valid"] as? Bool == false)
            let t = try runAPDU(["tag-info", "-r", inserted.reader])
            #expect(t.stdout.contains("NOT VALID"))
        }
    }

    @Test("a storage-only reader: tag-info says what it cannot ask; transceive fails in one line naming the reader")
    func storageOnly() async throws {
        let (card, _) = reader(.storageOnly)
        try await withInsertedCard(card) { inserted in
            let info = try runAPDU(["tag-info", "--json", "-r", inserted.reader])
            #expect(info.status == 0, "\(info.stderr)")
            let doc = try #require(try info.json() as? [String: Any])
            #expect(doc["uid"] as? String == "04AB87F2CA1190" && doc["signature"] is NSNull)
            #expect((doc["notes"] as? [String])?.first?.contains("no raw tag-command path") == true)
            let t = try runAPDU(["transceive", "60", "-r", inserted.reader])
            #expect(t.status == 69)
            #expect(t.stderr.contains(inserted.reader) && t.stderr.contains("no raw tag-command path") && t.stderr.split(separator: "\n").count == 1)
            // What needs no raw path still works.
            #expect(try runAPDU(["ndef-read", "-r", inserted.reader]).status == 0)
            #expect(card.frames.isEmpty)
        }
    }

    @Test("transceive: data, ACK, NAK and the passive ACK of SECTOR_SELECT, with JSON and exit codes", arguments: readers)
    func transceive(_ dialect: ContactlessReader.Dialect) async throws {
        let (card, tag) = reader(dialect, .twoSectorT2T)
        try await withInsertedCard(card) { inserted in
            let r = try runAPDU(["transceive", "--json", "-r", inserted.reader, "3000", "A2 05 11223344", "C2FF", "01000000", "3000"])
            #expect(r.status == 0, "\(r.stderr)")
            let doc = try #require(try r.json() as? [String: Any])
            #expect(doc["dialect"] as? String == dialect.rawValue)
            let answers = try #require(doc["exchanges"] as? [[String: Any]]).map { $0["answer"] as? String }
            #expect(answers == ["data", "ack", "ack", "none", "data"])
            #expect(Array(tag.contents[20..<24]) == [0x11, 0x22, 0x33, 0x44])
            // A NAK stops the batch, exit 1.
            // The session's end put the tag back in sector 0: page 0 is the UID page again.
            let n = try runAPDU(["transceive", "--json", "-r", inserted.reader, "A2 00 00000000", "3000"])
            #expect(n.status == 1)
            let nd = try #require(try n.json() as? [String: Any])
            #expect((nd["exchanges"] as? [[String: Any]])?.count == 1)
            #expect(!card.sessionOpen)
            // Malformed hex: usage, nothing sent.
            #expect(try runAPDU(["transceive", "-r", inserted.reader, "3G"]).status == 64)
        }
    }

    @Test("script tag lines: apdu hands the script to apdu-tags, standard input and file alike; answers, expectations and the session's end", arguments: readers)
    func scriptTagLines(_ dialect: ContactlessReader.Dialect) async throws {
        let (card, tag) = reader(dialect, .twoSectorT2T)
        let script = "# a tag's own frames\ntag 3000 => data\ntag A2 05 11223344 => ack\ntag 3005 => data\n"
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tag-script-\(UUID()).apdu").path
        try script.write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        try await withInsertedCard(card) { inserted in
            // Standard input read by apdu (to find the tag lines) reaches apdu-tags whole.
            let piped = try runAPDU(["script", "--json", "-r", inserted.reader, "-"], stdin: script)
            #expect(piped.status == 0, "\(piped.stderr)")
            let steps = try #require((try piped.json() as? [String: Any])?["steps"] as? [[String: Any]])
            #expect(steps.map { $0["line"] as? Int } == [2, 3, 4] && steps.map { $0["answer"] as? String } == ["data", "ack", "data"])
            #expect((steps[2]["bytes"] as? String)?.hasPrefix("11223344") == true, "\(steps[2])")
            #expect(Array(tag.contents[20..<24]) == [0x11, 0x22, 0x33, 0x44])
            let text = try runAPDU(["script", "-r", inserted.reader, file])
            #expect(text.status == 0 && text.stdout.contains("tag> A2 05 11 22 33 44") && text.stdout.contains("tag< ACK"), "\(text.stdout)\(text.stderr)")
            // An expectation the tag does not meet: exit 1 naming the line, from apdu-tags.
            let wrong = try runAPDU(["script", "-r", inserted.reader, "-"], stdin: "tag 3000 => ack\n")
            #expect(wrong.status == 1 && wrong.stderr.contains("line 1: the tag answered") && wrong.stderr.contains("expected ack"), "\(wrong.stderr)")
            #expect(!card.sessionOpen)
        }
    }

    @Test("a card pulled inside a transparent session: a one-line I/O error; the next command opens a fresh session")
    func pullInsideSession() async throws {
        let (card, _) = reader(.transparent)
        // Pulled after the probe, the session start and one frame.
        try await withInsertedCard(card, faults: Faults(removeAfter: 3)) { inserted in
            let r = try runAPDU(["transceive", "-r", inserted.reader, "60", "3000", "3004"])
            #expect(r.status == 74 || r.status == 69, "\(r.status) \(r.stderr)")
            #expect(r.stderr.split(separator: "\n").count == 1)
        }
        // The same reader and tag presented again: the library opens a new session (the pull
        // ended the old one) and ends it.
        try await withInsertedCard(card) { inserted in
            let r = try runAPDU(["transceive", "-r", inserted.reader, "60"])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(!card.sessionOpen)
        }
    }

    @Test("ndef-write / ndef-read on a 2 KiB tag through SECTOR_SELECT; ul-read reaches pages past 255", arguments: readers)
    func pastOneKilobyte(_ dialect: ContactlessReader.Dialect) async throws {
        let (card, tag) = reader(dialect, .twoSectorT2T)
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("nat-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: state) }
        try await withInsertedCard(card) { inserted in
            let text = String(repeating: "x", count: 1500)
            let w = try runAPDU(["ndef-write", "-r", inserted.reader, "--text", text], environment: ["XDG_STATE_HOME": state])
            #expect(w.status == 0, "\(w.stderr)")
            #expect(tag.contents[300 * 4..<(300 * 4 + 4)].contains(0x78))
            let r = try runAPDU(["ndef-read", "--json", "-r", inserted.reader])
            let records = try #require(((try r.json() as? [String: Any])?["message"] as? [String: Any])?["records"] as? [[String: Any]])
            #expect(records.first?["text"] as? String == text)
            let u = try runAPDU(["ul-read", "--json", "--pages", "300-301", "-r", inserted.reader])
            let pages = try #require((try u.json() as? [String: Any])?["pages"] as? [[String: Any]])
            #expect(pages.first?["hex"] as? String == Array(tag.contents[1200..<1204]).hexString)
        }
        // The same tag on a storage-only reader: the message is out of reach, said so.
        let storage = ContactlessReader(.storageOnly, tag: tag)
        try await withInsertedCard(storage) { inserted in
            let r = try runAPDU(["ndef-read", "-r", inserted.reader])
            #expect(r.status == 69 && r.stderr.contains("SECTOR_SELECT"), "\(r.stderr)")
        }
    }

    @Test("passwords: protect, read and write with the password file, refused without it, unprotect; never printed")
    func passwords() async throws {
        let (card, tag) = reader(.transparent, .ntag213)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pwd-\(UUID())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let pwd = dir.appendingPathComponent("pwd").path
        // CRLF, a BOM and a comment, as editors save it.
        try Data([0xEF, 0xBB, 0xBF] + Array("# tag 1\r\nC0FFEE11 5A5A\r\n".utf8)).write(to: URL(fileURLWithPath: pwd))
        let env = ["XDG_STATE_HOME": dir.path]
        try await withInsertedCard(card) { inserted in
            let p = try runAPDU(["ul-protect", "--new-password-file", pwd, "--reads", "--json", "--trace", "-r", inserted.reader], environment: env)
            #expect(p.status == 0, "\(p.stderr)")
            #expect(tag.contents[0x29 * 4 + 3] == 4 && tag.contents[0x2A * 4] & 0x80 != 0)
            #expect(Array(tag.contents[(0x2B * 4)..<(0x2B * 4 + 4)]) == [0xC0, 0xFF, 0xEE, 0x11])
            #expect(!p.stderr.uppercased().contains("C0 FF EE 11") && !p.stderr.uppercased().contains("C0FFEE11"))
            #expect(p.stderr.contains("**"))
            // Without the password: the tag refuses.
            #expect(try runAPDU(["ndef-read", "-r", inserted.reader]).status != 0)
            let w = try runAPDU(["ndef-write", "--password-file", pwd, "--uri", "https://example.com/p", "-r", inserted.reader, "--trace"], environment: env)
            #expect(w.status == 0, "\(w.stderr)")
            #expect(!w.stderr.uppercased().contains("C0 FF EE 11"))
            let r = try runAPDU(["ndef-read", "--json", "-r", inserted.reader], environment: ["APDU_TAG_PASSWORD": "c0ffee11"])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stdout.contains("https://example.com/p"))
            // A wrong PACK: refused before anything is written.
            let before = tag.contents
            let bad = try runAPDU(["ndef-write", "--uri", "https://x.y", "-r", inserted.reader], environment: env.merging(["APDU_TAG_PASSWORD": "C0FFEE11 0000"]) { $1 })
            #expect(bad.status == 1 && bad.stderr.contains("PACK"), "\(bad.stderr)")
            #expect(tag.contents == before)
            // Malformed password: usage, and the value is not echoed.
            let m = try runAPDU(["ndef-read", "-r", inserted.reader], environment: ["APDU_TAG_PASSWORD": "SECRETXY"])
            #expect(m.status == 64 && !m.stderr.contains("SECRETXY"))
            let u = try runAPDU(["ul-unprotect", "--password-file", pwd, "-r", inserted.reader], environment: env)
            #expect(u.status == 0, "\(u.stderr)")
            #expect(tag.contents[0x29 * 4 + 3] == 0xFF)
            #expect(try runAPDU(["ndef-read", "-r", inserted.reader]).status == 0)
        }
    }

    @Test("--reader-dialect storage forces the storage path; a password then says it needs a raw path")
    func override() async throws {
        let (card, _) = reader(.transparent, .ntag213)
        try await withInsertedCard(card) { inserted in
            let r = try runAPDU(["ndef-status", "--json", "--reader-dialect", "storage", "-r", inserted.reader])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(((try r.json() as? [String: Any])?["tag"] as? [String: Any])?["dialect"] as? String == "storage")
            #expect(card.frames.isEmpty)
            let p = try runAPDU(["ndef-read", "--reader-dialect", "storage", "-r", inserted.reader], environment: ["APDU_TAG_PASSWORD": "11223344"])
            #expect(p.status == 69 && p.stderr.contains("PWD_AUTH"), "\(p.stderr)")
        }
    }
}
