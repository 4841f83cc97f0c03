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
}
