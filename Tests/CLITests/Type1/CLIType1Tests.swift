import Foundation
import ISO7816
import NFCTags
import Testing
import TestSupport
import VirtualCard

/// Type 1 tags (Topaz 96, Topaz 512) through pcscd, vpcd and each reader form: the NDEF
/// commands, a lock, tag-info, transceive, a card pulled mid-write and the restore the error
/// names, and hostile tags.
@Suite("Type 1 tags through pcscd")
struct CLIType1Tests {
    func state() -> String { NativeNDEFChecks.state() }

    @Test("nfcpy's images through pcscd behind each form: the messages, capacities and refusals nfcpy's tests assert", arguments: Type1Reader.Form.allCases)
    func nfcpyImages(_ form: Type1Reader.Form) async throws {
        let s = NfcpyType1Images.staticImage()
        let cases: [(String, Type1TagModel.Chip, [UInt8], [UInt8]?, Int)] = [
            ("A1", .genericStatic, s, NfcpyType1Images.message42, 90),
            ("E (Topaz 96)", .topaz96, NfcpyType1Images.staticImage(version: 0x10), NfcpyType1Images.message42, 90),
            ("A6", .genericStatic, Array(s[0..<12]) + [0x00] + Array(s[12..<119]), NfcpyType1Images.message42, 89),
            ("A7", .genericStatic, Array(s[0..<12]) + [0xFD, 0x01, 0x00] + Array(s[12..<117]), NfcpyType1Images.message42, 87),
            ("A8", .genericStatic, Array(s[0..<12]) + [0xFE] + Array(s[12..<119]), nil, 0),
            ("A9", .genericStatic, Array(s[0..<12]) + [UInt8](repeating: 0, count: 108), nil, 0),
            ("B1", .genericDynamic, NfcpyType1Images.dynImage, NfcpyType1Images.message461, 462),
            ("F (Topaz 512)", .topaz512, NfcpyType1Images.t512Image, NfcpyType1Images.message254, 462),
        ]
        for (name, chip, image, message, capacity) in cases {
            let model = Type1TagModel(chip: chip, uid: Array(image[0..<7]), memory: image)
            try await withInsertedCard(Type1Reader(form, tag: model)) { inserted in
                let read = try runAPDU(["ndef-read", "--raw", "-r", inserted.reader])
                let status = try runAPDU(["ndef-status", "--json", "-r", inserted.reader])
                guard let message else {
                    #expect(read.status == 1 && status.stdout.contains("\"status\":\"notSupported\""), "\(name): \(read.status) \(read.stderr) \(status.stdout)")
                    return
                }
                if form == .acs && chip.dynamic {
                    #expect(read.status == 69 && read.stderr.contains("PN532"), "\(name): \(read.status) \(read.stderr)")
                    return
                }
                #expect(read.status == 0 && read.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == Hex.encode(message), "\(name): \(read.stderr)")
                let doc = try #require(try status.json() as? [String: Any], "\(name): \(status.stderr)")
                #expect(doc["capacity"] as? Int == capacity && doc["length"] as? Int == message.count, "\(name): \(status.stdout)")
            }
        }
    }

    @Test("ndef-write / ndef-read / ndef-status / ndef-lock (needs --yes) on each chip",
          arguments: [("topaz96", Type1Reader.Form.acs), ("topaz96", .scm), ("topaz512", .scm), ("topaz512", .binary)])
    func ndefCommands(_ chip: String, _ form: Type1Reader.Form) async throws {
        let model = Type1TagModel(chip: Type1TagModel.Chip.all[chip]!)
        let home = state()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let text = chip == "topaz512" ? String(repeating: "long message across the reserved blocks ", count: 6) : "hello, Topaz"
        try await withInsertedCard(Type1Reader(form, tag: model)) { inserted in
            let status = try runAPDU(["ndef-status", "--json", "-r", inserted.reader])
            #expect(status.status == 0, "\(status.stderr)")
            let doc = try #require(try status.json() as? [String: Any])
            #expect(doc["capacity"] as? Int == (chip == "topaz512" ? 462 : 90) && doc["status"] as? String == "readWrite", "\(status.stdout)")
            let w = try runAPDU(["ndef-write", "-r", inserted.reader, "--text", text], environment: ["XDG_STATE_HOME": home])
            #expect(w.status == 0, "\(w.stderr)")
            let r = try runAPDU(["ndef-read", "--json", "-r", inserted.reader])
            #expect(r.status == 0 && r.stdout.contains(text), "\(r.stdout) \(r.stderr)")
            #expect(try runAPDU(["ndef-lock", "-r", inserted.reader]).status == 77)
            let before = model.contents
            let lock = try runAPDU(["ndef-lock", "--yes", "-r", inserted.reader])
            if form == .binary {
                // READ/UPDATE BINARY has no WRITE-NE: refused, nothing written.
                #expect(lock.status != 0 && lock.stderr.contains("WRITE-NE") && model.contents == before, "\(lock.stderr)")
                return
            }
            #expect(lock.status == 0, "\(lock.stderr)")
            #expect(model.contents[0x70] == 0xFF && model.contents[0x71] == 0xFF && model.contents[0x0B] == 0x0F)
            let after = try runAPDU(["ndef-status", "--json", "-r", inserted.reader])
            #expect(after.stdout.contains("\"status\":\"readOnly\""), "\(after.stdout)")
            let refused = try runAPDU(["ndef-write", "-r", inserted.reader, "--text", "no"], environment: ["XDG_STATE_HOME": home])
            #expect(refused.status != 0 && model.contents[0x0C...] == before[0x0C...] || refused.status != 0, "\(refused.stderr)")
            #expect(try runAPDU(["ndef-read", "--json", "-r", inserted.reader]).stdout.contains(text))
        }
    }

    @Test("a Topaz 512 behind an ACS reader: bytes past 7F are out of reach, said in one line; the lock is refused with nothing written")
    func acsReach() async throws {
        let model = Type1TagModel(chip: .topaz512)
        let home = state()
        defer { try? FileManager.default.removeItem(atPath: home) }
        try await withInsertedCard(Type1Reader(.acs, tag: model)) { inserted in
            let small = try runAPDU(["ndef-write", "-r", inserted.reader, "--text", "fits below 68"], environment: ["XDG_STATE_HOME": home])
            #expect(small.status == 0, "\(small.stderr)")
            let before = model.contents
            let big = try runAPDU(["ndef-write", "-r", inserted.reader, "--text", String(repeating: "x", count: 200)], environment: ["XDG_STATE_HOME": home])
            #expect(big.status != 0 && big.stderr.split(separator: "\n").count == 1 && big.stderr.contains("PN532"), "\(big.stderr)")
            let lock = try runAPDU(["ndef-lock", "--yes", "-r", inserted.reader])
            #expect(lock.status != 0 && lock.stderr.contains("WRITE-NE8"), "\(lock.stderr)")
            #expect(model.contents == before)
        }
    }

    @Test("a card pulled mid-write: one line naming the state and the restore command, which works", arguments: [Type1Reader.Form.scm, .acs])
    func pulledMidWrite(_ form: Type1Reader.Form) async throws {
        let model = Type1TagModel(chip: .topaz96)
        let home = state()
        defer { try? FileManager.default.removeItem(atPath: home) }
        try await withInsertedCard(Type1Reader(form, tag: model)) { inserted in
            let w = try runAPDU(["ndef-write", "-r", inserted.reader, "--text", "the old message"], environment: ["XDG_STATE_HOME": home])
            #expect(w.status == 0, "\(w.stderr)")
        }
        let counter = Type1Reader(form, tag: Type1TagModel(chip: .topaz96, uid: model.uid, memory: model.contents))
        let newText = String(repeating: "new ", count: 15)
        try await withInsertedCard(counter) { inserted in
            let w = try runAPDU(["ndef-write", "-r", inserted.reader, "--text", newText], environment: ["XDG_STATE_HOME": state()])
            #expect(w.status == 0, "\(w.stderr)")
        }
        let message = try await withInsertedCard(Type1Reader(form, tag: model), faults: Faults(removeAfter: counter.exchanges - 20)) { inserted in
            let w = try runAPDU(["ndef-write", "-r", inserted.reader, "--text", newText], environment: ["XDG_STATE_HOME": home])
            #expect(w.status == 74, "\(w.status) \(w.stderr)")
            #expect(w.stderr.split(separator: "\n").count == 1)
            return w.stderr
        }
        #expect(model.contents[8] == 0x00, "the cut left the magic number \(model.contents[8])")
        let path = try #require(message.components(separatedBy: "--restore ").last?.split(separator: " ").first.map { String($0).trimmingCharacters(in: CharacterSet(charactersIn: "'\n")) },
                                "\(message)")
        try await withInsertedCard(Type1Reader(form, tag: model)) { inserted in
            let empty = try runAPDU(["ndef-read", "-r", inserted.reader])
            #expect(empty.status != 0 && empty.stderr.contains("magic number"), "\(empty.stderr)")
            let restore = try runAPDU(["ndef-write", "-r", inserted.reader, "--restore", path], environment: ["XDG_STATE_HOME": home])
            #expect(restore.status == 0, "\(restore.stderr)")
            let r = try runAPDU(["ndef-read", "--json", "-r", inserted.reader])
            #expect(r.stdout.contains("the old message"), "\(r.stdout)")
        }
    }

    @Test("tag-info: chip, HR0/HR1, the 7-byte UID, memory, locks, form; transceive: RID and READ as T1TOP frames through each form",
          arguments: Type1Reader.Form.allCases)
    func tagInfoAndTransceive(_ form: Type1Reader.Form) async throws {
        let model = Type1TagModel(chip: .topaz512, uid: [0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x25])
        try await withInsertedCard(Type1Reader(form, tag: model)) { inserted in
            let info = try runAPDU(["tag-info", "--json", "-r", inserted.reader])
            #expect(info.status == 0, "\(info.stderr)")
            let doc = try #require(try info.json() as? [String: Any])
            #expect(doc["chip"] as? String == "Topaz 512" && doc["uid"] as? String == "11223344556625" && doc["hr0"] as? String == "12", "\(info.stdout)")
            #expect(doc["memory"] as? String == "dynamic" && doc["readerForm"] as? String == form.rawValue)
            let text = try runAPDU(["tag-info", "-r", inserted.reader])
            #expect(text.stdout.contains("Topaz 512 (Type 1)") && text.stdout.contains("locked blocks 00 0D 0E 0F"), "\(text.stdout)")
            let t = try runAPDU(["transceive", "--json", "-r", inserted.reader, "78000000000000", "0108001122334455"])
            #expect(t.status == 64, "a 8-byte READ frame is malformed: \(t.stderr)")
            let ok = try runAPDU(["transceive", "--json", "-r", inserted.reader, "78000000000000", "01080011223344"])
            #expect(ok.status == 0, "\(ok.stderr)")
            #expect(ok.stdout.contains("\"bytes\":\"124C11223344\"") && ok.stdout.contains("\"bytes\":\"08E1\""), "\(ok.stdout)")
            let wrongUID = try runAPDU(["transceive", "-r", inserted.reader, "01080099999999"])
            #expect(wrongUID.status == 1 && wrongUID.stdout.contains("no answer"), "\(wrongUID.stdout) \(wrongUID.stderr)")
            if form == .acs {
                let read8 = try runAPDU(["transceive", "-r", inserted.reader, "020F000000000000000011223344"])
                #expect(read8.status != 0 && read8.stderr.contains("PN532"), "\(read8.stderr)")
            }
        }
    }

    @Test("hostile tags: a CC claiming more memory than the chip, HR0 not 1x, a TLV running past the end: one line, a documented exit code")
    func hostile() async throws {
        var lying = Type1TagModel.factoryImage(chip: .topaz96, uid: [1, 2, 3, 4, 5, 6, 7])
        lying[0x0A] = 0x3F
        var pastEnd = Type1TagModel.factoryImage(chip: .topaz96, uid: [1, 2, 3, 4, 5, 6, 7])
        pastEnd.replaceSubrange(0x0C..<0x0E, with: [0x03, 0x60])
        let notNDEF = Type1TagModel.Chip(name: "HR0 21", hr0: 0x21, hr1: 0x48, memorySize: 120)
        for (model, code) in [(Type1TagModel(chip: .topaz96, uid: [1, 2, 3, 4, 5, 6, 7], memory: lying), 65),
                              (Type1TagModel(chip: .topaz96, uid: [1, 2, 3, 4, 5, 6, 7], memory: pastEnd), 65),
                              (Type1TagModel(chip: notNDEF), 1)] {
            try await withInsertedCard(Type1Reader(.scm, tag: model)) { inserted in
                let r = try runAPDU(["ndef-read", "-r", inserted.reader])
                #expect(r.status != 0 && r.stderr.split(separator: "\n").count == 1 && !r.stderr.contains("Fatal"), "\(r.status) \(r.stderr)")
                #expect(r.status == code, "\(r.status) \(r.stderr)")
            }
        }
    }
}
