import Foundation
import ISO7816
import NDEF
import NFCTags
import SUN
import Testing
import VirtualCard

/// An emulated NTAG 424 DNA TagTamper, provisioned with the status in the clear, its taps sent
/// to the real server while its loop is closed, cut and mended (issue 51).
final class EmulatedTagTamper: @unchecked Sendable {
    let model = NTAG424TagModel(uid: [0x04, 0x51, 0x42, 0x33, 0x24, 0x15, 0x80], tagTamper: true)
    let tag: NTAG424Tag
    let plan: SUNURLTemplate
    static let zero = [UInt8](repeating: 0, count: 16)

    init(path: String = "/tt2") throws {
        let transport = APDUTransport(channel: EmulatedChannel(card: ApplicationHost(applications: [model], uid: model.uid)))
        guard let tag = try NTAG424Tag.detect(transport) else { throw HTTPFailure(description: "no NTAG 424 DNA") }
        self.tag = tag
        plan = try SUNURLTemplate("https://sun.example\(path)?e={picc}&tt={tt}&c={mac}", tamper: .clear)
        _ = try tag.provisionSDM(plan, key: Self.zero) { _ in }
    }

    /// The next tap as the phone opens it: path and query.
    func tap() throws -> String {
        let bytes = try tag.plainRead(length: plan.fileContents.count)
        guard case let .uri(url)? = try NDEFMessage(decoding: Array(bytes.dropFirst(2))).records.first?.content(),
              let range = url.range(of: "https://sun.example") else { throw HTTPFailure(description: "no URI") }
        return String(url[range.upperBound...])
    }
}

@Suite("apdu-sun-server: the emulated TagTamper's taps, closed, opened, reclosed")
struct TagTamperServerTests {
    static let keys = PageTests.keys.replacingOccurrences(of: "\"tt\": {", with: "\"tt2\": { \"metaReadKey\": \"\(zeroKey)\", \"fileReadKey\": \"\(zeroKey)\", \"tamper\": \"clear\" },\n\"tt\": {")

    @Test("each tap verified: JSON tamper closed/closed, then open/open, then open/closed; the page says Seal intact, Seal opened, Seal opened (closed again since)")
    func loop() throws {
        let scratch = Scratch()
        let server = try ServerProcess(keys: scratch.write("keys.json", Self.keys), database: scratch.file("c.sqlite"), scratch: scratch)
        let c = try HTTPConnection(port: server.port)
        let tt = try EmulatedTagTamper()
        for (step, (json, words)) in [(["permanent": "closed", "current": "closed", "seal": "intact"], ">Seal intact</p>"),
                                      (["permanent": "open", "current": "open", "seal": "open"], ">Seal opened</p>"),
                                      (["permanent": "open", "current": "closed", "seal": "reclosed"], ">Seal opened (closed again since)</p>")].enumerated() {
            if step == 1 { tt.model.openTamperLoop() }
            if step == 2 { tt.model.closeTamperLoop() }
            let a = try c.get(try tt.tap())
            #expect(a.status == 200 && (a.json["tamper"] as? [String: String]) == json, "\(a.body)")
            let page = try c.get(try tt.tap(), headers: PageTests.browser)
            #expect(page.status == 200 && page.body.contains(words) && page.body.contains("<h1>Genuine</h1>"), "\(page.body)")
        }
        // A tap whose letters were changed in transit: the MAC covers them.
        let forged = try tt.tap().replacingOccurrences(of: "tt=OC", with: "tt=CC")
        #expect(forged.contains("tt=CC"))
        let refused = try c.get(forged)
        #expect(refused.status == 403 && refused.json["code"] as? String == "invalidMAC")
        #expect(server.stop() == 0)
    }
}

/// The pages in a real browser: Debian's chromium, headless, against the server on 127.0.0.1,
/// at a phone's viewport and a desktop's. The rendered DOM must say the verdict; the
/// screenshots go to $APDU_SUN_SCREENSHOTS (docs/sun-service/ for the docs) or the scratch folder.
@Suite("apdu-sun-server pages in headless Chromium")
struct BrowserTests {
    /// Debian's chromium, installed when missing (as root, as Scripts/with-postgres installs
    /// PostgreSQL); nil when it cannot be.
    static func chromium() throws -> String? {
        let path = "/usr/bin/chromium"
        if FileManager.default.isExecutableFile(atPath: path) { return path }
        guard getuid() == 0 else { return nil }
        _ = try spawn("/usr/bin/apt-get", ["install", "-y", "--no-install-recommends", "chromium"], capture: false)
        if !FileManager.default.isExecutableFile(atPath: path) {
            _ = try spawn("/usr/bin/apt-get", ["update"], capture: false)
            _ = try spawn("/usr/bin/apt-get", ["install", "-y", "--no-install-recommends", "chromium"], capture: false)
        }
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }

    static func run(_ chromium: String, profile: String, _ arguments: [String]) throws -> String {
        try spawn(chromium, ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars", "--user-data-dir=\(profile)",
                             "--lang=en-US", "--virtual-time-budget=2000"] + arguments).output
    }

    @Test("valid, replayed, forged and a seal opened: the rendered text says the verdict at 390×844 and 1280×800; screenshots saved")
    func pages() throws {
        guard let chromium = try Self.chromium() else {
            Issue.record("chromium is not installed and cannot be (not root): apt-get install -y --no-install-recommends chromium")
            return
        }
        let scratch = Scratch()
        let server = try ServerProcess(keys: scratch.write("keys.json", TagTamperServerTests.keys), database: scratch.file("c.sqlite"), scratch: scratch)
        let out = ProcessInfo.processInfo.environment["APDU_SUN_SCREENSHOTS"] ?? scratch.file("shots")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let base = "http://127.0.0.1:\(server.port)"
        let tt = try EmulatedTagTamper()
        // Each load is a tap: a fresh one for every valid page, the first one again for the replay.
        let fresh = try freshTaps(count: 5, first: 4200)
        let forged = String(fresh[4].replacingOccurrences(of: "&c=", with: "&c=0").dropLast())
        let names = ["valid", "replayed", "forged", "seal-opened"]
        let expectations = ["Genuine", "Already used: this link was opened before", "Not genuine", "Seal opened"]
        for (n, name) in names.enumerated() {
            for (v, (viewport, size)) in [("phone", "390,844"), ("desktop", "1280,800")].enumerated() {
                let expected = expectations[n]
                var dom: String, shot: String
                switch name {
                case "valid": (dom, shot) = (fresh[2 * v], fresh[2 * v + 1])
                case "replayed": (dom, shot) = (fresh[0], fresh[1])
                case "forged": (dom, shot) = (forged, forged)
                default:
                    tt.model.openTamperLoop()
                    (dom, shot) = (try tt.tap(), try tt.tap())
                }
                let profile = scratch.file("profile-\(name)-\(viewport)")
                let text = try Self.run(chromium, profile: profile, ["--window-size=\(size)", "--dump-dom", base + dom])
                #expect(text.contains("<h1>\(name == "seal-opened" ? "Genuine" : expected)</h1>") && text.contains(expected), "\(name) \(viewport): \(text.prefix(300))")
                let png = out + "/sun-page-\(name)-\(viewport).png"
                try? FileManager.default.removeItem(atPath: png)
                _ = try Self.run(chromium, profile: profile, ["--window-size=\(size)", "--screenshot=\(png)", base + shot])
                let bytes = FileManager.default.contents(atPath: png) ?? Data()
                #expect(bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) && bytes.count > 2000, "\(png): \(bytes.count) bytes")
            }
        }
        #expect(server.stop() == 0)
    }
}
