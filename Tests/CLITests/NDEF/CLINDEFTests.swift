import Foundation
import Testing
import TestSupport

@Suite("apdu ndef encode/decode")
struct CLINDEFTests {
    @Test("encode then decode: records in command-line order, JSON as docs/ndef.md says")
    func roundTrip() throws {
        let enc = try runAPDU(["ndef", "encode", "--uri", "https://example.com/a", "--text", "Grüße", "--lang", "de",
                               "--smart-poster", "tel:+49123", "--title", "Call", "--action", "do", "--aar", "com.example.app",
                               "--mime", "application/json", "--data", "7B7D", "--id", "j1"])
        #expect(enc.status == 0, "\(enc.stderr)")
        #expect(enc.stderr.isEmpty)
        let hex = enc.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let dec = try runAPDU(["ndef", "decode", "--json", hex])
        #expect(dec.status == 0)
        let doc = try #require(try dec.json() as? [String: Any])
        let message = try #require(doc["message"] as? [String: Any])
        #expect(message["hex"] as? String == hex)
        let records = try #require(message["records"] as? [[String: Any]])
        #expect(records.count == 5)
        #expect(records[0]["uri"] as? String == "https://example.com/a")
        #expect(records[1]["text"] as? String == "Grüße" && records[1]["language"] as? String == "de")
        #expect(records[2]["uri"] as? String == "tel:+49123")
        #expect(records[2]["action"] as? String == "do")
        #expect((records[2]["records"] as? [Any])?.count == 3)
        #expect(records[3]["androidPackage"] as? String == "com.example.app")
        #expect(records[4]["mimeType"] as? String == "application/json" && records[4]["text"] as? String == "{}")
        #expect(records[4]["id"] as? String == "j1")
        let verdict = try #require(doc["backgroundReading"] as? [String: Any])
        #expect(verdict["eligible"] as? Bool == true)
        #expect(verdict["uri"] as? String == "https://example.com/a")
    }

    @Test("encode warns when iPhones would ignore the tag, and why")
    func warning() throws {
        let r = try runAPDU(["ndef", "encode", "--text", "no link here"])
        #expect(r.status == 0)
        #expect(r.stderr.contains("warning: iPhones will not act on this message in background reading: no URI record"))
    }

    @Test("binary output round-trips through standard input")
    func binary() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("m-\(UUID()).ndef")
        defer { try? FileManager.default.removeItem(at: file) }
        let r = try runAPDU(["ndef", "encode", "--binary", "--uri", "https://a.b"])
        #expect(r.status == 0)
        #expect([UInt8](r.stdoutData) == [0xD1, 0x01, 0x04, 0x55, 0x04, 0x61, 0x2E, 0x62])
        try r.stdoutData.write(to: file)
        let d = try runAPDU(["ndef", "decode", "--file", file.path])
        #expect(d.stdout.contains("[0] URI  https://a.b"))
    }

    @Test("hostile text never reaches the terminal raw; JSON stays valid for every byte value")
    func hostile() throws {
        // A Text record whose text, type-adjacent fields and ID carry all 256 byte values.
        let all = (0...255).map { UInt8($0) }
        var payload: [UInt8] = [0x02, 0x65, 0x6E] + all
        // Long record (payload > 255) with an ID of 255 arbitrary bytes and a MIME type of odd bytes.
        let id = Array(all.prefix(255))
        var wire: [UInt8] = [0x89, 0x01, 0, 0, 1, 3, 255, 0x54] + id + payload
        let mimeType = Array(all[1...40]) + [0x2F] + Array(all[200...255])
        payload = all
        wire += [0x42, UInt8(mimeType.count), 0, 0, 1, 0] + mimeType + payload
        let hex = wire.map { String(format: "%02X", $0) }.joined()
        let textOut = try runAPDU(["ndef", "decode", "--relaxed", hex])
        #expect(textOut.status == 0, "\(textOut.stderr)")
        let forbidden = textOut.stdout.unicodeScalars.filter { ($0.value < 0x20 && $0 != "\n") || (0x7F..<0xA0).contains($0.value) }
        #expect(forbidden.isEmpty, "raw control characters: \(forbidden.map { $0.value })")
        #expect(textOut.stdout.contains("\\u{1B}"))
        let jsonOut = try runAPDU(["ndef", "decode", "--relaxed", "--json", hex])
        let doc = try #require(try jsonOut.json() as? [String: Any])
        let records = try #require((doc["message"] as? [String: Any])?["records"] as? [[String: Any]])
        #expect(records.count == 2)
        #expect(records[0]["idHex"] as? String == Data(id).map { String(format: "%02X", $0) }.joined())
        #expect(!jsonOut.stdout.dropLast().unicodeScalars.contains { $0.value < 0x20 })
    }

    @Test("bad input: usage 64 or bad data 65, naming the problem", arguments: [
        (["ndef", "decode", "D1 01 0"], 64, "odd number of hex digits"),
        (["ndef", "decode", "D1010855"], 65, "NDEF byte 0: the payload length exceeds"),
        (["ndef", "decode", "50 00 00"], 65, "MB"),
        (["ndef", "decode"], 64, "give the message"),
        (["ndef", "decode", "--file", "/nonexistent"], 64, "cannot read"),
        (["ndef", "encode"], 64, "at least one record"),
        (["ndef", "encode", "--text", "x", "--lang", ""], 64, "language code"),
        (["ndef", "encode", "--mime", "text/plain", "--data", "0G"], 64, "invalid hex character"),
        (["ndef", "encode", "--smart-poster", "https://a.b", "--action", "fly"], 64, "not do, save or open"),
        (["ndef", "encode", "--frobnicate"], 64, "unknown record option"),
        (["ndef", "encode", "--json-payload", "/nonexistent"], 64, "cannot read"),
        (["ndef", "encode", "--uri", "https://a.b", "--chunk-size", "0"], 64, "--chunk-size"),
    ] as [([String], Int32, String)])
    func badInput(arguments: [String], status: Int32, message: String) throws {
        let r = try runAPDU(arguments)
        #expect(r.status == status, "\(r.stderr)")
        #expect(r.stderr.contains(message), "\(r.stderr)")
    }

    @Test("--json-payload must be JSON (65 otherwise)")
    func jsonPayload() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("p-\(UUID()).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try "{\"ok\": true}".write(to: file, atomically: true, encoding: .utf8)
        let ok = try runAPDU(["ndef", "encode", "--uri", "https://a.b", "--json-payload", file.path])
        #expect(ok.status == 0)
        try "{not json".write(to: file, atomically: true, encoding: .utf8)
        let bad = try runAPDU(["ndef", "encode", "--json-payload", file.path])
        #expect(bad.status == 65)
    }
}
