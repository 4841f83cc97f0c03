import Foundation
import Testing
import TestSupport
import VirtualCard

/// `apdu desfire` through pcscd and vpcd against the DESFire card model: a transit card read
/// without keys (and with one), a factory card taken through every command, keys confirmed and
/// redacted, NDEF formatting read back by the Type 4 procedure.
@Suite("apdu desfire through pcscd")
struct CLIDESFireTests {
    static let aesZero = "aes:" + String(repeating: "0", count: 32)
    static let desZero = "0:des:" + String(repeating: "0", count: 16)

    func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02X", $0) }.joined() }
    func temp(_ name: String) -> String { FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID())").path }

    @Test("a transit-like card without keys: info, ls, read of the free files; the enciphered file needs its key, and reads with it")
    func transit() async throws {
        let card = DESFireCard(image: .transit())
        try await withInsertedCard(card) { inserted in
            let r = inserted.reader
            let info = try runAPDU(["desfire", "info", "--json", "-r", r])
            let doc = try #require(try info.json() as? [String: Any], "\(info.stderr)")
            #expect(doc["generation"] as? String == "ev1" && doc["storageSize"] as? Int == 8192 && doc["productionYear"] as? Int == 2013, "\(info.stdout)")
            #expect(doc["uid"] as? String == hex(card.image.chip.uid))
            let text = try runAPDU(["desfire", "info", "-r", r])
            #expect(text.status == 0 && text.stdout.contains("MIFARE DESFire EV1") && text.stdout.contains("week 49 of 2013"), "\(text.stdout)")

            let ls = try runAPDU(["desfire", "ls", "-r", r])
            #expect(ls.status == 0 && ls.stdout.contains("2 applications") && ls.stdout.contains("file 3: cyclic record, 3 of 6 records of 16 bytes"), "\(ls.stdout)\(ls.stderr)")
            #expect(ls.stdout.contains("91 9D") || ls.stdout.contains("91 AE"), "the private application's refusal is named: \(ls.stdout)")
            let lsJSON = try #require(try runAPDU(["desfire", "ls", "--json", "--contents", "-r", r]).json() as? [String: Any])
            let apps = try #require(lsJSON["applications"] as? [[String: Any]])
            let files = try #require(apps.first?["files"] as? [[String: Any]])
            #expect(apps.count == 2 && files.count == 5)
            #expect(((files[0]["contents"] as? [String: Any])?["hex"] as? String)?.hasPrefix(hex(Array("TRANSIT CARD".utf8))) == true)

            let aid = String(format: "%06X", DESFireCard.Image.transitAID)
            let read = try runAPDU(["desfire", "read", "--app", aid, "--file", "1", "--json", "-r", r])
            #expect(read.status == 0 && read.stdout.contains(hex(Array("TRANSIT CARD 0001".utf8))), "\(read.stderr)")
            let records = try runAPDU(["desfire", "read", "--app", aid, "--file", "3", "-r", r])
            #expect(records.status == 0 && records.stdout.contains("record 2:"), "\(records.stdout)\(records.stderr)")
            let locked = try runAPDU(["desfire", "read", "--app", aid, "--file", "4", "-r", r])
            #expect(locked.status == 1 && locked.stderr.contains("--key"), "\(locked.stderr)")
            let key = "1:aes:" + hex(DESFireCard.Image.transitApplicationKeys[1].bytes)
            let keyed = try runAPDU(["desfire", "read", "--app", aid, "--file", "4", "-r", r], environment: ["APDU_DESFIRE_KEY": key])
            #expect(keyed.status == 0 && keyed.stdout.contains("6F 70 65 72 61 74 6F 72"), "\(keyed.stdout)\(keyed.stderr)")
            // A wrong key: the card refuses (91 AE), and the key is not in the message.
            let wrong = try runAPDU(["desfire", "read", "--app", aid, "--file", "4", "--key", "1:" + Self.aesZero, "-r", r])
            #expect(wrong.status == 1 && wrong.stderr.contains("91 AE") && !wrong.stderr.contains(String(repeating: "0", count: 32)), "\(wrong.stderr)")
        }
    }

    @Test("a factory card through every command: create-app, create-file, write (committed), read, change-key (proved, redacted, --yes), delete-app, format")
    func lifecycle() async throws {
        let card = DESFireCard.factory(DESFireCard.Chip(generation: .ev2))
        try await withInsertedCard(card) { inserted in
            let r = inserted.reader
            let picc = ["APDU_DESFIRE_KEY": Self.desZero]
            let create = try runAPDU(["desfire", "create-app", "--aid", "F00001", "--keys", "2", "--key-type", "aes", "-r", r], environment: picc)
            #expect(create.status == 0 && card.image.application(0xF00001)?.keys.count == 2, "\(create.stderr)")
            let appKey = ["APDU_DESFIRE_KEY": "0:" + Self.aesZero]
            for args in [["--file", "1", "--type", "backup", "--size", "32", "--comm", "full", "--access", "0000"],
                         ["--file", "2", "--type", "value", "--upper", "500", "--value", "10", "--comm", "mac", "--access", "0000"],
                         ["--file", "3", "--type", "linear", "--record-size", "4", "--max-records", "5", "--access", "EEEE"]] {
                let made = try runAPDU(["desfire", "create-file", "--app", "F00001"] + args + ["-r", r], environment: appKey)
                #expect(made.status == 0, "\(args): \(made.stderr)")
            }
            let write = try runAPDU(["desfire", "write", "--app", "F00001", "--file", "1", "--data", "0102030405", "--json", "-r", r], environment: appKey)
            let written = try #require((try? write.json()) as? [String: Any], "status \(write.status): \(write.stderr)")
            #expect(written["committed"] as? Bool == true && written["readBack"] as? Bool == true, "\(write.stdout)")
            let back = try runAPDU(["desfire", "read", "--app", "F00001", "--file", "1", "--length", "5", "-r", r], environment: appKey)
            #expect(back.status == 0 && back.stdout.contains("01 02 03 04 05"), "\(back.stdout)\(back.stderr)")
            #expect(try runAPDU(["desfire", "write", "--app", "F00001", "--file", "2", "--credit", "25", "-r", r], environment: appKey).stdout.contains("committed"))
            let value = try runAPDU(["desfire", "read", "--app", "F00001", "--file", "2", "-r", r], environment: appKey)
            #expect(value.stdout.contains("value 35"), "\(value.stdout)\(value.stderr)")
            let record = try runAPDU(["desfire", "write", "--app", "F00001", "--file", "3", "--new-record", "CAFEF00D", "-r", r])
            guard case let .linearRecord(records)? = card.image.application(0xF00001)?.file(3)?.content else {
                Issue.record("file 3 is not a linear record file")
                return
            }
            #expect(record.status == 0 && records.records.last == [0xCA, 0xFE, 0xF0, 0x0D], "\(record.stderr)")
            // The option that does not fit the file's type names the ones that do, before anything is written.
            let misfit = try runAPDU(["desfire", "write", "--app", "F00001", "--file", "3", "--data", "CAFEF00D", "-r", r])
            #expect(misfit.status == 64 && misfit.stderr.contains("--data does not apply to file 3") && misfit.stderr.contains("give --new-record"), "\(misfit.stderr)")
            #expect(misfit.stderr.split(separator: "\n").count == 1)
            let valueMisfit = try runAPDU(["desfire", "write", "--app", "F00001", "--file", "2", "--new-record", "00", "-r", r], environment: appKey)
            #expect(valueMisfit.status == 64 && valueMisfit.stderr.contains("give --credit, --debit or --limited-credit"), "\(valueMisfit.stderr)")
            if case let .linearRecord(after)? = card.image.application(0xF00001)?.file(3)?.content { #expect(after == records, "nothing was written") }

            // Another key, proved, the cryptogram redacted in the trace.
            let newKey = "0F1E2D3C4B5A69788796A5B4C3D2E1F0"
            let change = try runAPDU(["desfire", "change-key", "--app", "F00001", "--key-number", "1", "--new", "aes:" + newKey, "--old", Self.aesZero, "--trace", "-r", r],
                                     environment: appKey)
            #expect(change.status == 0 && change.stdout.contains("proved"), "\(change.stderr)")
            #expect(change.stderr.contains("**") && !(change.stdout + change.stderr).uppercased().contains(newKey))
            #expect(card.image.application(0xF00001)?.keys[1].bytes == Array(Data(hexString: newKey)))
            let probe = try runAPDU(["desfire", "change-key", "--app", "F00001", "--key-number", "1", "--new", "aes:" + newKey, "--old", Self.aesZero, "--probe", "-r", r],
                                    environment: appKey)
            #expect(probe.status == 0 && probe.stdout.contains("NEW key"), "\(probe.stdout)\(probe.stderr)")
            // The application master key needs --yes.
            let master = try runAPDU(["desfire", "change-key", "--app", "F00001", "--key-number", "0", "--new", "aes:" + newKey, "-r", r], environment: appKey)
            #expect(master.status == 77 && card.image.application(0xF00001)?.keys[0].bytes == [UInt8](repeating: 0, count: 16), "\(master.stderr)")
            let confirmed = try runAPDU(["desfire", "change-key", "--app", "F00001", "--key-number", "0", "--new", "aes:" + newKey, "--yes", "-r", r], environment: appKey)
            #expect(confirmed.status == 0, "\(confirmed.stderr)")
            // A key of the wrong length: usage, the value never shown.
            let bad = try runAPDU(["desfire", "ls", "--app", "F00001", "--key", "0:aes:ABCDEF0123", "-r", r])
            #expect(bad.status == 64 && !bad.stderr.contains("ABCDEF0123"), "\(bad.stderr)")

            #expect(try runAPDU(["desfire", "delete-app", "--aid", "F00001", "-r", r], environment: picc).status == 77)
            let deleted = try runAPDU(["desfire", "delete-app", "--aid", "F00001", "--yes", "-r", r], environment: picc)
            #expect(deleted.status == 0 && card.image.application(0xF00001) == nil, "\(deleted.stderr)")
            #expect(try runAPDU(["desfire", "create-app", "--aid", "F00002", "-r", r], environment: picc).status == 0)
            #expect(try runAPDU(["desfire", "format", "-r", r], environment: picc).status == 77)
            let formatted = try runAPDU(["desfire", "format", "--yes", "-r", r], environment: picc)
            #expect(formatted.status == 0 && card.image.applications.isEmpty, "\(formatted.stderr)")
        }
    }

    @Test("ndef-format --desfire: then ndef-write and ndef-read work on it (the Type 4 procedure); again: nothing to do")
    func ndef() async throws {
        let state = temp("desfire-ndef")
        defer { try? FileManager.default.removeItem(atPath: state) }
        let card = DESFireCard.factory(DESFireCard.Chip(storage: .kb4))
        try await withInsertedCard(card) { inserted in
            let r = inserted.reader
            let format = try runAPDU(["ndef-format", "--desfire", "--json", "-r", r])
            let doc = try #require(try format.json() as? [String: Any], "\(format.stderr)")
            #expect(doc["capacity"] as? Int == 4094 && (doc["done"] as? [Any])?.count == 4, "\(format.stdout)")
            let write = try runAPDU(["ndef-write", "--uri", "https://example.com/desfire", "-r", r], environment: ["XDG_STATE_HOME": state])
            #expect(write.status == 0, "\(write.stderr)")
            let read = try runAPDU(["ndef-read", "--json", "-r", r])
            #expect(read.stdout.contains("https://example.com/desfire"), "\(read.stdout)\(read.stderr)")
            let again = try runAPDU(["ndef-format", "--desfire", "-r", r])
            #expect(again.status == 0 && again.stdout.contains("already"), "\(again.stdout)\(again.stderr)")
        }
    }

    @Test("change-key with the card pulled before and after the change: exit 74 naming what is known; --probe then says which key holds",
          arguments: [7, 8])
    func interruptedChangeKey(_ removeAfter: Int) async throws {
        // GetVersion 3, SELECT 1, AuthenticateAES 2, GetKeySettings 1, then ChangeKey (8th), then the proof.
        var image = DESFireCard.Image.factory()
        image.applications = [DESFireCard.Application(aid: 0xF00001, keyType: .aes, keyCount: 2)]
        let card = DESFireCard(image: image)
        let newKey = "00112233445566778899AABBCCDDEEFF"
        let args = ["desfire", "change-key", "--app", "F00001", "--key-number", "1", "--new", "aes:" + newKey, "--old", Self.aesZero]
        let env = ["APDU_DESFIRE_KEY": "0:" + Self.aesZero]
        try await withInsertedCard(card, faults: Faults(removeAfter: removeAfter)) { inserted in
            let cut = try runAPDU(args + ["-r", inserted.reader], environment: env)
            #expect(cut.status == 74 && cut.stderr.contains("ChangeKey 1") && cut.stderr.contains("old or the new"), "\(cut.stderr)")
        }
        let changed = card.image.application(0xF00001)?.keys[1].bytes != [UInt8](repeating: 0, count: 16)
        #expect(changed == (removeAfter == 8))
        try await withInsertedCard(card) { inserted in
            let probe = try runAPDU(args + ["--probe", "-r", inserted.reader], environment: env)
            #expect(probe.status == 0 && probe.stdout.contains(changed ? "NEW key" : "OLD key"), "\(probe.stdout)\(probe.stderr)")
        }
    }

    @Test("--record: the ChangeKey cryptogram is ** in the recording")
    func recording() async throws {
        let file = temp("desfire-record") + ".jsonl"
        defer { try? FileManager.default.removeItem(atPath: file) }
        let card = DESFireCard(image: .ndef())
        try await withInsertedCard(card) { inserted in
            let change = try runAPDU(["desfire", "change-key", "--app", "000001", "--key", "0:des:0000000000000000", "--key-number", "0",
                                      "--new", "2k3des:00102031405060708090A0B0B0A09080", "--yes", "--record", file, "-r", inserted.reader])
            #expect(change.status == 0, "\(change.stderr)")
        }
        let recorded = try String(contentsOfFile: file, encoding: .utf8)
        #expect(recorded.contains("90C40000") && recorded.contains("**") && !recorded.contains("00102031405060708090A0B0B0A09080"), "\(recorded)")
    }
}

private extension Data {
    init(hexString: String) {
        var bytes: [UInt8] = []
        var i = hexString.startIndex
        while i < hexString.endIndex, let j = hexString.index(i, offsetBy: 2, limitedBy: hexString.endIndex) {
            bytes.append(UInt8(hexString[i..<j], radix: 16) ?? 0)
            i = j
        }
        self.init(bytes)
    }
}

/// `apdu emulate --desfire`: the card model in a vpcd slot, as users and CI put it there.
@Suite("apdu emulate --desfire through pcscd")
struct CLIDESFireEmulateTests {
    @Test("emulate --desfire transit: ls and read without keys; --desfire-image keeps a change; bad flags are usage errors")
    func emulate() async throws {
        let image = FileManager.default.temporaryDirectory.appendingPathComponent("desfire-\(UUID()).json").path
        defer { try? FileManager.default.removeItem(atPath: image) }
        try await withEmptySlot { slot in
            let card = try startAPDU(["emulate", "--port", String(slot.port), "--desfire", "transit", "--desfire-generation", "ev2"])
            defer { card.terminate(); card.waitUntilExit(); try? waitForCard(in: slot.reader, present: false) }
            try waitForCard(in: slot.reader, present: true)
            let info = try runAPDU(["desfire", "info", "--json", "-r", slot.reader])
            #expect(info.status == 0, "\(info.stderr)")
            #expect(info.stdout.contains("EV2"), "\(info.stdout)")
            let ls = try runAPDU(["desfire", "ls", "-r", slot.reader])
            #expect(ls.status == 0, "\(ls.stderr)")
            #expect(ls.stdout.contains("9011F2") && ls.stdout.contains("Clipper"), "\(ls.stdout)")
        }
        // A factory card saved to an image: an application made in one run is there in the next.
        for run in 0..<2 {
            try await withEmptySlot { slot in
                let card = try startAPDU(["emulate", "--port", String(slot.port), "--desfire", "factory", "--desfire-image", image])
                defer { card.terminate(); card.waitUntilExit(); try? waitForCard(in: slot.reader, present: false) }
                try waitForCard(in: slot.reader, present: true)
                if run == 0 {
                    let made = try runAPDU(["desfire", "create-app", "-r", slot.reader, "--key", "0:des:0000000000000000", "--aid", "0A0B0C"])
                    #expect(made.status == 0, "\(made.stderr)")
                } else {
                    let ls = try runAPDU(["desfire", "ls", "-r", slot.reader])
                    #expect(ls.stdout.contains("0A0B0C"), "\(ls.stdout)")
                }
            }
        }
        for (arguments, message) in [(["emulate", "--desfire", "nope"], "--desfire"), (["emulate", "--desfire-generation", "ev3"], "are for --desfire"),
                                     (["emulate", "--desfire", "factory", "--type4"], "exclude each other")] {
            let bad = try runAPDU(arguments)
            #expect(bad.status == 64 && bad.stderr.contains(message), "\(bad.stderr)")
        }
    }
}
