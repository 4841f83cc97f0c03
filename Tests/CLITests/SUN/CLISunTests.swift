import Foundation
import Testing
import TestSupport

/// `apdu sun verify`, offline: valid and invalid taps, keys from files (CRLF) and the
/// environment and never printed, malformed URLs, the replay store.
@Suite("apdu sun verify")
struct CLISunTests {
    let an12196 = "https://ntag.nxp.com/424?e=EF963FF7828658A599F3041510671E88&c=94EED9EE65337086"
    let withFile = "https://www.my424dna.com/?picc_data=FD91EC264309878BE6345CBE53BADF40&enc=CEE9A53E3E463EF1F459635736738962&cmac=ECC1E7F6C6C73BF6"
    let zeroKeys = ["APDU_SDM_META_KEY": String(repeating: "0", count: 32), "APDU_SDM_FILE_KEY": String(repeating: "0", count: 32)]

    func temp(_ name: String) -> String { FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID())").path }

    @Test("a valid tap: exit 0, UID, counter and file data in text and JSON")
    func valid() throws {
        let r = try runAPDU(["sun", "verify", withFile], environment: zeroKeys)
        #expect(r.status == 0 && r.stdout.contains("UID 04958CAA5C5E80, read counter 8 (AES)") && r.stdout.contains("|xxxxxxxxxxxxxxxx|"), "\(r.stdout) \(r.stderr)")
        let j = try runAPDU(["sun", "verify", "--json", an12196], environment: zeroKeys)
        let doc = try #require(try j.json() as? [String: Any])
        #expect(j.status == 0 && doc["valid"] as? Bool == true && doc["uid"] as? String == "04DE5F1EACC040" && doc["counter"] as? Int == 61)
    }

    @Test("keys from files with CRLF and comments; a wrong key is invalid (exit 1) and no key is ever printed")
    func keyFiles() throws {
        let meta = temp("meta"), file = temp("file")
        defer { for p in [meta, file] { try? FileManager.default.removeItem(atPath: p) } }
        try "# SDMMetaReadKey\r\n00000000 00000000 00000000 00000000\r\n".write(toFile: meta, atomically: true, encoding: .utf8)
        try "A1B2C3D4E5F60718293A4B5C6D7E8F90\r\n".write(toFile: file, atomically: true, encoding: .utf8)
        let r = try runAPDU(["sun", "verify", "--json", "--meta-key-file", meta, "--file-key-file", file, an12196])
        let doc = try #require(try r.json() as? [String: Any])
        #expect(r.status == 1 && doc["valid"] as? Bool == false && doc["error"] as? String == "invalidMAC", "\(r.stdout)")
        #expect(!(r.stdout + r.stderr).contains("A1B2C3D4") && r.stderr.split(separator: "\n").count == 1)
        let bad = try runAPDU(["sun", "verify", an12196], environment: ["APDU_SDM_META_KEY": "SECRETXYZ", "APDU_SDM_FILE_KEY": String(repeating: "0", count: 32)])
        #expect(bad.status == 64 && !bad.stderr.contains("SECRETXYZ"), "\(bad.stderr)")
        let none = try runAPDU(["sun", "verify", an12196], environment: ["APDU_SDM_META_KEY": "", "APDU_SDM_FILE_KEY": ""])
        #expect(none.status == 64 && none.stderr.contains("--meta-key-file"), "\(none.stderr)")
    }

    @Test("malformed URLs are exit 65 with one line naming the parameter; a template names other parameters")
    func malformed() throws {
        for url in ["https://x/?e=XYZ&c=94EED9EE65337086", "https://x/?c=94EED9EE65337086", "not a url at all", "https://x/?e=EF963FF7828658A599F3041510671E88&c=12"] {
            let r = try runAPDU(["sun", "verify", url], environment: zeroKeys)
            #expect(r.status == 65 && r.stderr.split(separator: "\n").count == 1, "\(url): \(r.status) \(r.stderr)")
        }
        let t = try runAPDU(["sun", "verify", "--template", "https://x/t?p={picc}&s={mac}", "https://x/t?p=EF963FF7828658A599F3041510671E88&s=94EED9EE65337086"], environment: zeroKeys)
        #expect(t.status == 0, "\(t.stderr)")
        #expect(try runAPDU(["sun", "verify", "--template", "https://x/t?p=1", an12196], environment: zeroKeys).status == 64)
    }

    @Test("--counter-store: the first tap accepted, the same URL again refused as a replay (exit 1); the file created on first use")
    func replay() throws {
        let store = temp("counters") + ".sqlite"
        defer { for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: store + s) } }
        let first = try runAPDU(["sun", "verify", "--counter-store", store, an12196], environment: zeroKeys)
        #expect(first.status == 0, "\(first.stderr)")
        let again = try runAPDU(["sun", "verify", "--json", "--counter-store", store, an12196], environment: zeroKeys)
        let doc = try #require(try again.json() as? [String: Any])
        #expect(again.status == 1 && doc["error"] as? String == "replay" && again.stderr.contains("replay"), "\(again.stdout) \(again.stderr)")
        let unwritable = try runAPDU(["sun", "verify", "--counter-store", "/proc/nope/x.sqlite", an12196], environment: zeroKeys)
        #expect(unwritable.status == 74 && unwritable.stderr.split(separator: "\n").count == 1, "\(unwritable.stderr)")
    }

    @Test("--template of every shape: sdm-backend's bulk message with its custom keys, AN12196's tap in path segments; a tap of another shape exit 65, a template the tag cannot serve exit 64, one line each")
    func shapes() throws {
        let custom = ["APDU_SDM_META_KEY": "42AFF114F2CB3B6141BE6DC95DFC5416", "APDU_SDM_FILE_KEY": "B62A9BAF092439BD43C62AEE96B970C5"]
        let bulk = try runAPDU(["sun", "verify", "--json", "--template", "https://sdm.example/tag?e={picc}{file}{mac}",
                                "https://sdm.example/tag?e=8ACADDEF0A9B62CDAE39A16B83FC14DEB8436E11F627BB7F543FCC0C1E0D1A89238B2543A8DEBAD8"], environment: custom)
        let doc = try #require(try bulk.json() as? [String: Any], "\(bulk.stderr)")
        #expect(bulk.status == 0 && doc["uid"] as? String == "041D3C8A2D6B80" && doc["counter"] as? Int == 291 && doc["fileData"] as? String == "4E545858716E6F5F6F42467077792D56", "\(bulk.stdout)")
        let path = try runAPDU(["sun", "verify", "--template", "https://t.example/{picc}/{mac}", "https://t.example/EF963FF7828658A599F3041510671E88/94EED9EE65337086"], environment: zeroKeys)
        #expect(path.status == 0 && path.stdout.contains("UID 04DE5F1EACC040, read counter 61"), "\(path.stdout) \(path.stderr)")
        let other = try runAPDU(["sun", "verify", "--template", "https://t.example/{picc}/{mac}", an12196], environment: zeroKeys)
        #expect(other.status == 65 && other.stderr.split(separator: "\n").count == 1, "\(other.stderr)")
        let bad = try runAPDU(["sun", "verify", "--template", "https://t.example/{mac}/{file}/{picc}", an12196], environment: zeroKeys)
        #expect(bad.status == 64 && bad.stderr.contains("comes after {mac}"), "\(bad.stderr)")
    }
}
