import Foundation
import ISO7816
import NDEF
import NFCTags
import SUN
import Testing
import VirtualCard

/// Every URL layout through the service: an emulated NTAG 424 DNA provisioned with a group's
/// template (`NTAG424Tag.provisionSDM`), its taps sent as a phone's browser sends them (path and
/// query), verified once and refused as replays.
@Suite("apdu-sun-server: provision-then-verify for every URL layout")
struct ShapeTests {
    static let zero = [UInt8](repeating: 0, count: 16)

    /// (group, template, file data, counter mirrored)
    static let layouts: [(String, String, String?, Bool)] = [
        ("query", "https://t.example/query?e={picc}&c={mac}", nil, true),
        ("queryfile", "https://t.example/queryfile?e={picc}&enc={file}&c={mac}", "secret:0123456!!", true),
        ("bulk", "https://t.example/bulk?e={picc}{file}{mac}", "0123456789abcdef0123456789ABCDEF", true),
        ("bulkplain", "https://t.example/bulkplain?m={uid}{ctr}{mac}", nil, true),
        ("path", "https://t.example/p/{picc}/{mac}", nil, true),
        ("run", "https://t.example/r/{picc}{mac}", nil, true),
        ("pathfile", "https://t.example/f/{picc}/{file}/{mac}", "secret:0123456!!", true),
        ("mixed", "https://t.example/m/{picc}?v=1&f={file}&c={mac}", "secret:0123456!!", true),
        ("plainpath", "https://t.example/u/{uid}x{ctr}?c={mac}", nil, true),
        ("nocounter", "https://t.example/n/{picc}{mac}", nil, false),
    ]

    static var keyFile: String {
        let groups = layouts.map { "\"\($0.0)\": { \"metaReadKey\": \"\(zeroKey)\", \"fileReadKey\": \"\(zeroKey)\", \"template\": \"\($0.1)\" }" }
        return "{ \"default\": \"factory\", \"groups\": { \"factory\": { \"metaReadKey\": \"\(zeroKey)\", \"fileReadKey\": \"\(zeroKey)\" }, \(groups.joined(separator: ", ")) } }"
    }

    /// Provisions a fresh emulated tag with `template` and returns `count` taps as the server
    /// sees them (path and query).
    static func taps(_ template: String, fileData: String?, counter: Bool, count: Int, uid: [UInt8]) throws -> [String] {
        let model = NTAG424TagModel(uid: uid)
        let transport = APDUTransport(channel: EmulatedChannel(card: ApplicationHost(applications: [model], uid: model.uid)))
        let tag = try #require(try NTAG424Tag.detect(transport))
        let plan = try SUNURLTemplate(template, fileData: fileData.map { Array($0.utf8) }, mirrorsCounter: counter)
        var urls = [try tag.provisionSDM(plan, key: zero) { _ in }.served]
        while urls.count < count {
            let bytes = try tag.plainRead(length: plan.fileContents.count)
            guard case let .uri(url)? = try NDEFMessage(decoding: Array(bytes.dropFirst(2))).records.first?.content() else { throw HTTPFailure(description: "no URI served") }
            urls.append(url)
        }
        return urls.map { String($0.dropFirst("https://t.example".count)) }
    }

    @Test("each group's layout: two taps valid, their replays 409, file data decrypted; without the counter the MAC verifies but the tap is refused as unprotected")
    func everyLayout() throws {
        let scratch = Scratch()
        let server = try ServerProcess(keys: scratch.write("keys.json", Self.keyFile), database: scratch.file("c.sqlite"), scratch: scratch)
        let c = try HTTPConnection(port: server.port)
        for (n, layout) in Self.layouts.enumerated() {
            let uid: [UInt8] = [0x04, 0x10, UInt8(n), 0x20, 0x30, 0x40, 0x50]
            let uidHex = uid.map { String(format: "%02X", $0) }.joined()
            let targets = try Self.taps(layout.1, fileData: layout.2, counter: layout.3, count: 2, uid: uid)
            for (i, target) in targets.enumerated() {
                let answer = try c.get(target)
                guard layout.3 else {
                    #expect(answer.status == 403 && answer.json["code"] as? String == "unsupported", "\(layout.0) \(target): \(answer.status) \(answer.body)")
                    continue
                }
                #expect(answer.status == 200 && answer.json["uid"] as? String == uidHex && answer.json["counter"] as? Int == i + 1, "\(layout.0) \(target): \(answer.status) \(answer.body)")
                if let data = layout.2 {
                    #expect(answer.json["fileData"] as? String == Array(data.utf8).map { String(format: "%02X", $0) }.joined(), "\(layout.0)")
                }
                #expect(try c.get(target).status == 409, "\(layout.0) replay of \(target)")
            }
            // One hex digit of the MAC changed: refused (403), not a 500, in every layout.
            var forged = Array(targets[0].utf8)
            let macDigit = layout.1.contains("{mac}&") || layout.1.contains("{mac}?") ? nil : forged.count - 1
            if let at = macDigit {
                forged[at] = forged[at] == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
                let answer = try c.get(String(decoding: forged, as: UTF8.self))
                #expect(answer.status == 403 && answer.json["code"] as? String == "invalidMAC", "\(layout.0): \(answer.status) \(answer.body)")
            }
        }
        // A path no template has: 404 with one line, never a 500.
        let unknown = try c.get("/nowhere/EF963FF7828658A599F3041510671E88/94EED9EE65337086")
        #expect(unknown.status == 404 && unknown.json["code"] as? String == "unknownGroup", "\(unknown.body)")
        // A group's path template given the query alone: 400, one line.
        let queryOnly = try c.get("/path?e=EF963FF7828658A599F3041510671E88&c=94EED9EE65337086")
        #expect(queryOnly.status == 400 && !(queryOnly.json["reason"] as? String ?? "\n").contains("\n"), "\(queryOnly.body)")
        #expect(try c.get("/healthz").status == 200)
        #expect(server.stop() == 0)
    }

    @Test("--template with placeholders in the path serves the default group; AN12196's tap in that layout")
    func defaultPathTemplate() throws {
        let scratch = Scratch()
        let keys = "{ \"default\": \"factory\", \"groups\": { \"factory\": { \"metaReadKey\": \"\(zeroKey)\", \"fileReadKey\": \"\(zeroKey)\" }, \"other\": { \"metaReadKey\": \"\(metaKey)\", \"fileReadKey\": \"\(masterKey)\" } } }"
        let server = try ServerProcess(keys: scratch.write("keys.json", keys), database: scratch.file("c.sqlite"),
                                       arguments: ["--template", "https://t.example/{picc}{mac}"], scratch: scratch)
        let c = try HTTPConnection(port: server.port)
        let tap = "/EF963FF7828658A599F3041510671E8894EED9EE65337086"
        // The other group, named by the group parameter, with its own keys: its meta-read key
        // decrypts no UID from this tap (403 unsupported), so the tap is not accepted there.
        let other = try c.get(tap + "?group=other")
        #expect(other.status == 403 && ["invalidMAC", "unsupported"].contains(other.json["code"] as? String ?? ""), "\(other.body)")
        let first = try c.get(tap)
        #expect(first.status == 200 && first.json["uid"] as? String == "04DE5F1EACC040" && first.json["counter"] as? Int == 61, "\(first.body)")
        #expect(try c.get(tap).status == 409)
        #expect(server.stop() == 0)
    }
}
