import Foundation
import ISO7816
import NDEF
import NFCTags
import Testing
import TestSupport
import VirtualCard

/// A reader in front of `tag` that answers every storage READ BINARY 64 00.
final class FailingReads: EmulatedCard, @unchecked Sendable {
    let tag: any EmulatedCard
    init(_ tag: any EmulatedCard) { self.tag = tag }
    var atr: [UInt8] { tag.atr }
    func reset() { tag.reset() }
    func process(_ apdu: [UInt8]) -> [UInt8] { apdu.starts(with: [0xFF, 0xB0]) ? [0x64, 0x00] : tag.process(apdu) }
}

/// Readers that differ, through pcscd and vpcd: the forms the tool learns, the status words and
/// exit codes it gives, reads that go on where it is safe, and restore commands that work when
/// pasted.
@Suite("Every reader through pcscd: learned forms, honest status, liberal reads, pasteable restores")
struct CLIReaderDialectTests {
    func state() -> String { FileManager.default.temporaryDirectory.appendingPathComponent("rd-\(UUID())").path }

    /// The words of a command line as a shell splits them ('…' quoting, as the tool prints it).
    static func shellWords(_ line: String) -> [String] {
        var words: [String] = [], word = "", quoted = false, inWord = false
        for ch in line {
            if ch == "'" { quoted.toggle(); inWord = true; continue }
            if ch == " " && !quoted {
                if inWord { words.append(word); word = ""; inWord = false }
                continue
            }
            word.append(ch)
            inWord = true
        }
        if inWord { words.append(word) }
        return words
    }

    @Test("a Type 5 tag behind a storage reader that wants the exact Le: read, status, write and tag-info work, and say the form",
          arguments: [ContactlessReader.Model.ReadLe.exactWrongLength, .exactCorrectLength])
    func exactLe(_ readLe: ContactlessReader.Model.ReadLe) async throws {
        var reader = ContactlessReader.Model(.storageOnly)
        reader.readLe = readLe
        let home = state()
        defer { try? FileManager.default.removeItem(atPath: home) }
        for chip in [ISO15693TagModel.Chip.icodeSlix, .eightByteBlocks] {
            let tag = ISO15693TagModel(chip: chip)
            try await withInsertedCard(ContactlessReader(model: reader, tag: tag)) { inserted in
                let w = try runAPDU(["ndef-write", "-r", inserted.reader, "--text", "exact Le"], environment: ["XDG_STATE_HOME": home])
                #expect(w.status == 0, "\(chip.name): \(w.stderr)")
                let r = try runAPDU(["ndef-read", "--json", "-r", inserted.reader])
                #expect(r.status == 0 && r.stdout.contains("exact Le"), "\(chip.name): \(r.stderr)")
                let s = try runAPDU(["ndef-status", "--json", "-r", inserted.reader])
                #expect((try s.json() as? [String: Any])?["status"] as? String == "readWrite", "\(s.stdout) \(s.stderr)")
                let i = try runAPDU(["tag-info", "--json", "-r", inserted.reader])
                let forms = (try i.json() as? [String: Any])?["readerForms"] as? [String: Any]
                #expect(forms?["readBinaryLe"] as? String == "exact" && forms?["dialect"] as? String == "storage", "\(i.stdout) \(i.stderr)")
            }
        }
    }

    @Test("a Type 5 CC of an unknown major version: ndef-status notSupported (exit 0, the version in JSON); ndef-read and ndef-write refuse with 1")
    func newerMapping() async throws {
        var image = ISO15693TagModel.factoryImage(chip: .icodeSlix)
        image[1] = 0x80                                          // version 2.0
        let tag = ISO15693TagModel(chip: .icodeSlix, memory: image)
        try await withInsertedCard(ContactlessReader(.transparent, tag: tag)) { inserted in
            let s = try runAPDU(["ndef-status", "--json", "-r", inserted.reader])
            let doc = try #require(try s.json() as? [String: Any], "\(s.stdout) \(s.stderr)")
            #expect(s.status == 0 && doc["status"] as? String == "notSupported" && doc["mappingVersion"] as? String == "2.0", "\(s.stdout)")
            #expect((doc["reason"] as? String)?.contains("version 2.0") == true)
            let r = try runAPDU(["ndef-read", "-r", inserted.reader])
            #expect(r.status == 1 && r.stderr.contains("version 2.0"), "\(r.stderr)")
            let w = try runAPDU(["ndef-write", "-r", inserted.reader, "--text", "x"], environment: ["XDG_STATE_HOME": state()])
            #expect(w.status == 1, "\(w.stderr)")
        }
        #expect(tag.contents == image)
    }

    @Test("a READ BINARY that fails on a storage reader is an I/O error (74) for ndef-status, never notSupported")
    func failedReadIsIO() async throws {
        // A Type 5 tag whose reader answers every READ BINARY 64 00 (execution error).
        let tag = ISO15693TagModel(chip: .icodeSlix)
        let card = FailingReads(tag)
        try await withInsertedCard(card) { inserted in
            let s = try runAPDU(["ndef-status", "--json", "-r", inserted.reader])
            #expect(s.status == 74 && !s.stdout.contains("notSupported"), "\(s.status) \(s.stdout) \(s.stderr)")
            #expect(s.stderr.split(separator: "\n").count == 1)
        }
    }

    @Test("a lock control TLV of the wrong length: ndef-read skips it and reads the message; ndef-write and ndef-lock refuse with nothing written")
    func malformedControlTLV() async throws {
        let message = try NDEFMessage(records: [.uri("https://example.com/liberal")]).encoded()
        var image = Type2TagModel.factoryImage(chip: .ntag213)
        let tlvs: [UInt8] = [0x01, 0x04, 0xA0, 0x0C, 0x34, 0x00, 0x03, UInt8(message.count)] + message + [0xFE]
        for (i, b) in tlvs.enumerated() { image[16 + i] = b }
        let model = Type2TagModel(chip: .ntag213, memory: image)
        try await withInsertedCard(model) { inserted in
            let r = try runAPDU(["ndef-read", "--json", "-r", inserted.reader])
            #expect(r.status == 0 && r.stdout.contains("example.com/liberal"), "\(r.stderr)")
            let w = try runAPDU(["ndef-write", "-r", inserted.reader, "--text", "x"], environment: ["XDG_STATE_HOME": state()])
            #expect(w.status == 1 && w.stderr.contains("length 4") && w.stderr.contains("nothing was written"), "\(w.stderr)")
            let l = try runAPDU(["ndef-lock", "--yes", "-r", inserted.reader])
            #expect(l.status == 1 && l.stderr.contains("nothing was written"), "\(l.stderr)")
        }
        #expect(model.contents == image)
    }

    @Test("a Type 4 file shorter than its CC's maximum: the read stops at the file's end (62 82) and never asks past NLEN")
    func shortFile() async throws {
        let message = try NDEFMessage(records: [.uri("https://e.x/short")]).encoded()
        let (host, model) = type4Host({ $0.fileSize = 40; $0.announcedFileSize = 2048 }, message: message)
        try await withInsertedCard(host) { inserted in
            let r = try runAPDU(["ndef-read", "--json", "-r", inserted.reader])
            #expect(r.status == 0 && r.stdout.contains("e.x/short"), "\(r.stderr)")
        }
        _ = model
    }

    @Test("an interrupted Type 3 write: ndef-read names the newest backup of that tag, the reader and the dialect; the command works pasted")
    func type3Restore() async throws {
        let home = state()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let chip = FeliCaTagModel.Chip.liteS
        let tag = FeliCaTagModel(chip: chip)
        let card = ContactlessReader(.transparent, tag: tag)
        try await withInsertedCard(card) { inserted in
            for text in ["the old message", "the new message"] {
                let w = try runAPDU(["ndef-write", "-r", inserted.reader, "--reader-dialect", "transparent", "--text", text], environment: ["XDG_STATE_HOME": home])
                #expect(w.status == 0, "\(w.stderr)")
            }
        }
        // The tag as a write cut after WriteF 0F leaves it.
        var blocks = tag.contents
        var attribute = try #require(blocks[0])
        attribute[9] = 0x0F
        let sum = attribute[0..<14].reduce(0) { $0 + Int($1) }
        attribute[14] = UInt8(sum >> 8)
        attribute[15] = UInt8(sum & 0xFF)
        blocks[0] = attribute
        let cut = FeliCaTagModel(chip: chip, idm: tag.idm, blocks: blocks)
        try await withInsertedCard(ContactlessReader(.transparent, tag: cut)) { inserted in
            let r = try runAPDU(["ndef-read", "--reader-dialect", "transparent", "-r", inserted.reader], environment: ["XDG_STATE_HOME": home])
            #expect(r.status == 65 && r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
            let line = try #require(r.stderr.components(separatedBy: "with: ").last?.trimmingCharacters(in: .whitespacesAndNewlines), "\(r.stderr)")
            let words = Self.shellWords(line)
            #expect(words.starts(with: ["apdu", "ndef-write", "-r", inserted.reader, "--reader-dialect", "transparent", "--restore"]), "\(words)")
            #expect(words.last?.hasPrefix(home) == true, "\(words)")
            let restore = try runAPDU(Array(words.dropFirst()), environment: ["XDG_STATE_HOME": home])
            #expect(restore.status == 0, "\(restore.stderr)")
            let again = try runAPDU(["ndef-read", "--json", "-r", inserted.reader])
            #expect(again.status == 0 && again.stdout.contains("the old message"), "\(again.stdout) \(again.stderr)")
        }
    }
}
