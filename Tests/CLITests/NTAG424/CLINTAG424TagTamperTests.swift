import Foundation
import Testing
import TestSupport
import SUN
import VirtualCard

/// NTAG 424 DNA TagTamper through pcscd and vpcd (issue 51): `ntag424 sdm --tamper`, `ntag424
/// info` reading GetTTStatus, `sun verify --tamper` on every tap while the emulated loop is
/// closed, opened and closed again; a chip without TagTamper refused before anything is written.
@Suite("apdu ntag424 sdm --tamper through pcscd")
struct CLINTAG424TagTamperTests {
    let zeroKey = String(repeating: "0", count: 32)
    func temp(_ name: String) -> String { FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID())").path }

    func servedURL(_ reader: String) throws -> String {
        let r = try runAPDU(["ndef-read", "--json", "-r", reader])
        let doc = try #require(try r.json() as? [String: Any], "\(r.stderr)")
        return try #require((doc["backgroundReading"] as? [String: Any])?["uri"] as? String, "\(r.stdout)")
    }

    @Test("clear and file placements: CC, then OO with the loop cut, then OC mended; info reads the same with GetTTStatus", arguments: [
        ("https://t.example/t?e={picc}&tt={tt}&c={mac}", "clear", nil),
        ("https://t.example/tagtt?picc_data={picc}&enc={file}&cmac={mac}", "file", "CC--------------"),
    ] as [(String, String, String?)])
    func loop(template: String, placement: String, fileData: String?) async throws {
        let state = temp("n424tt"), keyFile = temp("key")
        defer { for p in [state, keyFile] { try? FileManager.default.removeItem(atPath: p) } }
        try (zeroKey + "\n").write(toFile: keyFile, atomically: true, encoding: .utf8)
        let tag = NTAG424TagModel(tagTamper: true)
        try await withInsertedCard(ApplicationHost(atr: Type4TagModel.contactlessATR, applications: [tag], uid: tag.uid)) { inserted in
            var args = ["ntag424", "sdm", "--json", "--url", template, "--tamper", placement, "-r", inserted.reader]
            if let fileData { args += ["--file-data", fileData] }
            let sdm = try runAPDU(args, environment: ["APDU_NTAG424_KEY": zeroKey, "XDG_STATE_HOME": state])
            #expect(sdm.status == 0, "\(sdm.stderr)")
            let sdmDoc = try sdm.json() as? [String: Any]
            let offset = (sdmDoc?["sdm"] as? [String: Any])?["tamperOffset"] as? Int
            #expect(offset != nil)
            let keys = ["APDU_SDM_META_KEY": zeroKey, "APDU_SDM_FILE_KEY": zeroKey]
            func verify() throws -> (status: Int32, doc: [String: Any], text: String) {
                let url = try servedURL(inserted.reader)
                let j = try runAPDU(["sun", "verify", "--json", "--template", template, "--tamper", placement, url], environment: keys)
                let t = try runAPDU(["sun", "verify", "--template", template, "--tamper", placement, url], environment: keys)
                return (j.status, try #require(try j.json() as? [String: Any], "\(j.stderr)"), t.stdout)
            }
            let closed = try verify()
            #expect(closed.status == 0 && (closed.doc["tamper"] as? [String: String])?["seal"] == "intact" && closed.text.contains("TagTamper: CC (seal intact)"), "\(closed)")
            tag.openTamperLoop()
            let open = try verify()
            #expect(open.status == 0 && (open.doc["tamper"] as? [String: String]) == ["permanent": "open", "current": "open", "seal": "open"] && open.text.contains("TagTamper: OO (seal opened)"))
            tag.closeTamperLoop()
            let reclosed = try verify()
            #expect((reclosed.doc["tamper"] as? [String: String])?["seal"] == "reclosed" && reclosed.text.contains("TagTamper: OC"))
            let info = try runAPDU(["ntag424", "info", "--key-file", keyFile, "-r", inserted.reader])
            #expect(info.status == 0 && info.stdout.contains("NTAG 424 DNA TagTamper") && info.stdout.contains("TagTamper (GetTTStatus): OC, opened once, closed again"), "\(info.stdout) \(info.stderr)")
            #expect(info.stdout.contains("TagTamper status \(offset ?? -1)"))
            let infoJSON = try runAPDU(["ntag424", "info", "--json", "-r", inserted.reader])
            let doc = try #require(try infoJSON.json() as? [String: Any])
            #expect((doc["tagTamper"] as? [String: Any])?["reason"] as? String == "GetTTStatus needs an authenticated session: give --key-file")
        }
    }

    @Test("a chip without TagTamper: sdm --tamper is refused (exit 1, one line), nothing written")
    func refused() async throws {
        let state = temp("n424tt")
        defer { try? FileManager.default.removeItem(atPath: state) }
        let tag = NTAG424TagModel()
        try await withInsertedCard(ApplicationHost(atr: Type4TagModel.contactlessATR, applications: [tag], uid: tag.uid)) { inserted in
            let r = try runAPDU(["ntag424", "sdm", "--url", "https://t.example/t?e={picc}&tt={tt}&c={mac}", "--tamper", "clear", "-r", inserted.reader],
                                environment: ["APDU_NTAG424_KEY": zeroKey, "XDG_STATE_HOME": state])
            #expect(r.status == 1 && r.stderr.contains("without TagTamper") && r.stderr.contains("nothing was written") && r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
            #expect(tag.ndefFile.allSatisfy { $0 == 0 } && tag.file(2)?.sdmEnabled == false)
            let usage = try runAPDU(["ntag424", "sdm", "--url", "https://t.example/t?e={picc}&c={mac}", "--tamper", "clear", "-r", inserted.reader],
                                    environment: ["APDU_NTAG424_KEY": zeroKey, "XDG_STATE_HOME": state])
            #expect(usage.status == 64 && usage.stderr.contains("{tt}"), "\(usage.stderr)")
        }
    }
}
