import Foundation
import Testing
import TestSupport
import SUN
import VirtualCard

/// NTAG 424 DNA through pcscd and vpcd: describe, provision SUN, read the served URL twice, verify
/// both, refuse the replay; change keys with confirmation and redaction.
@Suite("apdu ntag424 through pcscd")
struct CLINTAG424Tests {
    let zeroKey = String(repeating: "0", count: 32)
    func temp(_ name: String) -> String { FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID())").path }

    func servedURL(_ reader: String) throws -> String {
        let r = try runAPDU(["ndef-read", "--json", "-r", reader])
        let doc = try #require(try r.json() as? [String: Any], "\(r.stderr)")
        return try #require((doc["backgroundReading"] as? [String: Any])?["uri"] as? String, "\(r.stdout)")
    }

    @Test("info, sdm, two taps verified, the replay refused; a wrong key changes nothing")
    func provisionAndVerify() async throws {
        let state = temp("n424"), store = temp("counters") + ".sqlite"
        defer { for p in [state, store, store + "-wal", store + "-shm"] { try? FileManager.default.removeItem(atPath: p) } }
        let tag = NTAG424TagModel()
        try await withInsertedCard(ApplicationHost(atr: Type4TagModel.contactlessATR, applications: [tag], uid: tag.uid)) { inserted in
            let info = try runAPDU(["ntag424", "info", "--json", "-r", inserted.reader])
            let doc = try #require(try info.json() as? [String: Any], "\(info.stderr)")
            #expect(doc["chip"] as? String == "NTAG 424 DNA" && (doc["files"] as? [[String: Any]])?.count == 3)
            // A wrong change key: refused by the tag (91 AE) before anything is written.
            let wrong = try runAPDU(["ntag424", "sdm", "--url", "https://example.com/t?e={picc}&c={mac}", "-r", inserted.reader],
                                    environment: ["APDU_NTAG424_KEY": "11" + String(repeating: "0", count: 30), "XDG_STATE_HOME": state])
            #expect(wrong.status == 1 && wrong.stderr.contains("91 AE") && tag.ndefFile.allSatisfy { $0 == 0 }, "\(wrong.stderr)")
            let sdm = try runAPDU(["ntag424", "sdm", "--json", "--url", "https://example.com/t?e={picc}&c={mac}", "-r", inserted.reader],
                                  environment: ["APDU_NTAG424_KEY": zeroKey, "XDG_STATE_HOME": state])
            #expect(sdm.status == 0, "\(sdm.stderr)")
            let keys = ["APDU_SDM_META_KEY": zeroKey, "APDU_SDM_FILE_KEY": zeroKey]
            let first = try servedURL(inserted.reader), second = try servedURL(inserted.reader)
            #expect(first != second && first.hasPrefix("https://example.com/t?e="))
            let v1 = try runAPDU(["sun", "verify", "--json", "--counter-store", store, first], environment: keys)
            let v2 = try runAPDU(["sun", "verify", "--json", "--counter-store", store, second], environment: keys)
            #expect(v1.status == 0 && v2.status == 0, "\(v1.stderr) \(v2.stderr)")
            let c1 = (try v1.json() as? [String: Any])?["counter"] as? Int ?? 0, c2 = (try v2.json() as? [String: Any])?["counter"] as? Int ?? 0
            let uid1 = (try v1.json() as? [String: Any])?["uid"] as? String
            #expect(c2 == c1 + 1 && uid1 == tag.uid.map { String(format: "%02X", $0) }.joined())
            let replay = try runAPDU(["sun", "verify", "--counter-store", store, first], environment: keys)
            #expect(replay.status == 1 && replay.stderr.contains("replay"), "\(replay.stderr)")
        }
    }

    @Test("change-key: key 2 changed and proved, the SUN MAC follows it; key 0 needs --yes; no key in a trace")
    func changeKey() async throws {
        let state = temp("n424k")
        let old = temp("old"), new = temp("new")
        defer { for p in [state, old, new] { try? FileManager.default.removeItem(atPath: p) } }
        try "\(zeroKey)\n".write(toFile: old, atomically: true, encoding: .utf8)
        let newKey = "0F1E2D3C4B5A69788796A5B4C3D2E1F0"
        try "# key 2\r\n\(newKey)\r\n".write(toFile: new, atomically: true, encoding: .utf8)
        let tag = NTAG424TagModel()
        try await withInsertedCard(ApplicationHost(atr: Type4TagModel.contactlessATR, applications: [tag], uid: tag.uid)) { inserted in
            let env = ["APDU_NTAG424_KEY": zeroKey, "XDG_STATE_HOME": state]
            #expect(try runAPDU(["ntag424", "sdm", "--url", "https://example.com/t?e={picc}&c={mac}", "-r", inserted.reader], environment: env).status == 0)
            let change = try runAPDU(["ntag424", "change-key", "--trace", "--key-number", "2", "--old-key-file", old, "--new-key-file", new, "-r", inserted.reader], environment: env)
            #expect(change.status == 0 && change.stdout.contains("confirmed"), "\(change.stderr)")
            #expect(!(change.stdout + change.stderr).uppercased().contains(newKey) && change.stderr.contains("**"))
            let url = try servedURL(inserted.reader)
            #expect(try runAPDU(["sun", "verify", url], environment: ["APDU_SDM_META_KEY": newKey, "APDU_SDM_FILE_KEY": newKey]).status == 0)
            #expect(try runAPDU(["sun", "verify", url], environment: ["APDU_SDM_META_KEY": zeroKey, "APDU_SDM_FILE_KEY": zeroKey]).status != 0)
            let master = try runAPDU(["ntag424", "change-key", "--key-number", "0", "--old-key-file", old, "--new-key-file", new, "-r", inserted.reader], environment: env)
            #expect(master.status == 77 && tag.keys[0] == [UInt8](repeating: 0, count: 16), "\(master.stderr)")
        }
    }

    @Test("change-key --diversify: the tag gets its own AN10922 key from the master key and its UID (read by GetCardUID)")
    func diversifiedKey() async throws {
        let state = temp("n424d")
        let old = temp("old"), master = temp("master")
        defer { for p in [state, old, master] { try? FileManager.default.removeItem(atPath: p) } }
        try "\(zeroKey)\n".write(toFile: old, atomically: true, encoding: .utf8)
        let masterKey = "B62A9BAF092439BD43C62AEE96B970C5"
        try "\(masterKey)\n".write(toFile: master, atomically: true, encoding: .utf8)
        let tag = NTAG424TagModel()
        try await withInsertedCard(ApplicationHost(atr: Type4TagModel.contactlessATR, applications: [tag], uid: tag.uid)) { inserted in
            let env = ["APDU_NTAG424_KEY": zeroKey, "XDG_STATE_HOME": state]
            let bad = try runAPDU(["ntag424", "change-key", "--key-number", "3", "--old-key-file", old, "--new-key-file", master, "--diversify", "XYZ", "-r", inserted.reader], environment: env)
            #expect(bad.status == 64 && tag.keys[3] == [UInt8](repeating: 0, count: 16))
            let change = try runAPDU(["ntag424", "change-key", "--key-number", "3", "--old-key-file", old, "--new-key-file", master, "--diversify", "4272616E64", "-r", inserted.reader], environment: env)
            #expect(change.status == 0 && change.stdout.contains("confirmed"), "\(change.stderr)")
            let masterBytes: [UInt8] = stride(from: 0, to: 32, by: 2).map { i in UInt8(masterKey.dropFirst(i).prefix(2), radix: 16)! }
            let expected = try AN10922.diversify(masterKey: masterBytes, input: tag.uid + Array("Brand".utf8))
            #expect(tag.keys[3] == expected && expected != masterBytes)
        }
    }

    /// (template, --file-data, --no-counter)
    static let layouts: [(String, String?, Bool)] = [
        ("https://example.com/t?e={picc}&c={mac}", nil, false),
        ("https://example.com/t?e={picc}&enc={file}&c={mac}", "secret:0123456!!", false),
        ("https://example.com/t?e={picc}{file}{mac}", "0123456789abcdef0123456789ABCDEF", false),
        ("https://t.example/{picc}/{mac}", nil, false),
        ("https://t.example/{picc}{mac}", nil, true),
        ("https://t.example/b/{picc}?v=1&f={file}&c={mac}", "secret:0123456!!", false),
        ("https://t.example/{uid}x{ctr}/{mac}", nil, false),
        ("https://t.example/t?u={uid}{mac}", nil, true),
    ]

    @Test("every URL layout: sdm --url provisions it, the tag serves it, sun verify --template verifies two taps", arguments: layouts)
    func layout(template: String, fileData: String?, noCounter: Bool) async throws {
        let state = temp("n424l")
        defer { try? FileManager.default.removeItem(atPath: state) }
        let tag = NTAG424TagModel()
        try await withInsertedCard(ApplicationHost(atr: Type4TagModel.contactlessATR, applications: [tag], uid: tag.uid)) { inserted in
            var arguments = ["ntag424", "sdm", "--json", "--url", template, "-r", inserted.reader]
            if let fileData { arguments += ["--file-data", fileData] }
            if noCounter { arguments.append("--no-counter") }
            let sdm = try runAPDU(arguments, environment: ["APDU_NTAG424_KEY": zeroKey, "XDG_STATE_HOME": state])
            #expect(sdm.status == 0, "\(sdm.stderr)")
            let doc = try #require(try sdm.json() as? [String: Any], "\(sdm.stdout)")
            let originality = try #require(doc["originality"] as? [String: Any])
            #expect(originality["valid"] as? Bool == false && originality["uid"] as? String == tag.uid.map { String(format: "%02X", $0) }.joined())
            let keys = ["APDU_SDM_META_KEY": zeroKey, "APDU_SDM_FILE_KEY": zeroKey]
            var counters: [Int?] = []
            for _ in 0..<2 {
                let url = try servedURL(inserted.reader)
                let v = try runAPDU(["sun", "verify", "--json", "--template", template, url], environment: keys)
                #expect(v.status == 0, "\(url): \(v.stderr)")
                let result = try #require(try v.json() as? [String: Any])
                #expect(result["uid"] as? String == tag.uid.map { String(format: "%02X", $0) }.joined())
                if let fileData { #expect(result["fileData"] as? String == Array(fileData.utf8).map { String(format: "%02X", $0) }.joined()) }
                counters.append(result["counter"] as? Int)
                // The common parameter names do not read a layout of its own.
                if !template.contains("?e={picc}&") { #expect(try runAPDU(["sun", "verify", url], environment: keys).status != 0, "\(url)") }
            }
            if noCounter { #expect(counters == [nil, nil]) } else { #expect(counters.count == 2 && counters[1] == (counters[0] ?? -9) + 1, "\(counters)") }
        }
    }

    @Test("info and sdm check the originality signature: AN12196's genuine pair valid, the emulator's blank one not, random ID read with a key; --require-genuine refuses and writes nothing")
    func originality() async throws {
        let state = temp("n424o")
        let keyFile = temp("key")
        defer { for p in [state, keyFile] { try? FileManager.default.removeItem(atPath: p) } }
        try "\(zeroKey)\n".write(toFile: keyFile, atomically: true, encoding: .utf8)
        let uid = "04518DFAA96180"
        let signature = "D1940D17CFEDA4BFF80359AB975F9F6514313E8F90C1D3CAAF5941AD744A1CDF9A83F883CAFE0FE95D1939B1B7E47113993324473B785D21"
        func bytes(_ s: String) -> [UInt8] { stride(from: 0, to: s.count, by: 2).map { UInt8(s.dropFirst($0).prefix(2), radix: 16)! } }
        // Genuine, random ID on: the reader sees 08…, GetVersion no UID.
        let genuine = NTAG424TagModel(uid: bytes(uid), originalitySignature: bytes(signature), randomID: true)
        try await withInsertedCard(ApplicationHost(atr: Type4TagModel.contactlessATR, applications: [genuine], uid: [0x08, 0x1F, 0x2E, 0x3D])) { inserted in
            let withoutKey = try runAPDU(["ntag424", "info", "--json", "-r", inserted.reader])
            #expect(withoutKey.status == 0, "\(withoutKey.stderr)")
            let a = try #require(try withoutKey.json() as? [String: Any])
            let ao = try #require(a["originality"] as? [String: Any])
            #expect(a["randomID"] as? Bool == true && a["uid"] is NSNull && ao["valid"] is NSNull && (ao["reason"] as? String)?.contains("random ID") == true, "\(withoutKey.stdout)")
            let withKey = try runAPDU(["ntag424", "info", "--json", "--key-file", keyFile, "--key-number", "2", "-r", inserted.reader])
            #expect(withKey.status == 0, "\(withKey.stderr)")
            let b = try #require(try withKey.json() as? [String: Any])
            let bo = try #require(b["originality"] as? [String: Any])
            #expect(b["uid"] as? String == uid && bo["valid"] as? Bool == true && bo["uidSource"] as? String == "getCardUID" && bo["signature"] as? String == signature, "\(withKey.stdout)")
            let text = try runAPDU(["ntag424", "info", "--key-file", keyFile, "-r", inserted.reader])
            #expect(text.status == 0 && text.stdout.contains("UID \(uid) (random ID on: the reader sees 081F2E3D)") && text.stdout.contains("genuine"), "\(text.stdout)")
            #expect(!text.stdout.contains(zeroKey))
            let sdm = try runAPDU(["ntag424", "sdm", "--require-genuine", "--url", "https://t.example/{picc}/{mac}", "-r", inserted.reader],
                                  environment: ["APDU_NTAG424_KEY": zeroKey, "XDG_STATE_HOME": state])
            #expect(sdm.status == 0 && sdm.stdout.contains("originality signature over UID \(uid): genuine"), "\(sdm.stderr)")
        }
        // The emulator's blank signature: reported, exit 0; --require-genuine refuses before writing.
        let blank = NTAG424TagModel()
        try await withInsertedCard(ApplicationHost(atr: Type4TagModel.contactlessATR, applications: [blank], uid: blank.uid)) { inserted in
            let info = try runAPDU(["ntag424", "info", "-r", inserted.reader])
            #expect(info.status == 0 && info.stdout.contains("NOT VALID") && info.stdout.contains("all zeros"), "\(info.stdout)")
            let refused = try runAPDU(["ntag424", "sdm", "--require-genuine", "--url", "https://t.example/{picc}/{mac}", "-r", inserted.reader],
                                      environment: ["APDU_NTAG424_KEY": zeroKey, "XDG_STATE_HOME": state])
            #expect(refused.status == 1 && refused.stderr.contains("nothing was written") && refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
            #expect(blank.ndefFile.allSatisfy { $0 == 0 } && blank.file(2)?.sdmEnabled == false)
        }
    }

    @Test("sdm --url refuses a template the tag cannot serve: exit 64, one line naming why, nothing sent", arguments: [
        ("https://t.example/{picc}", "no {mac}"),
        ("https://t.example/{mac}/{file}/{picc}", "comes after {mac}"),
        ("https://{picc}.t.example/{mac}", "host"),
        ("https://t.example/{picc}{mac}#{file}", "fragment"),
        ("https://t.example/" + String(repeating: "p", count: 230) + "/{picc}{mac}", "NDEF file holds"),
    ])
    func refusedTemplates(template: String, reason: String) throws {
        let r = try runAPDU(["ntag424", "sdm", "--url", template, "-r", "no such reader"], environment: ["APDU_NTAG424_KEY": zeroKey])
        #expect(r.status == 64 && r.stderr.contains(reason), "\(r.stderr)")
    }
}
