import Foundation
import ISO7816
import PCSC
import Testing
import TestSupport
import VirtualCard

let demoSelect = "00A4040006" + DemoApplication.defaultAID.hexString + "00"

@Suite("apdu readers, send, emulate (the built binary)")
struct CLIBasicsTests {
    func demo() -> ApplicationHost { ApplicationHost(applications: [DemoApplication()]) }

    @Test("readers --json lists every virtual reader and the card in ours")
    func readersJSON() async throws {
        try await withInsertedCard(demo()) { inserted in
            let result = try runAPDU(["readers", "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            let doc = try #require(try result.json() as? [String: Any])
            let readers = try #require(doc["readers"] as? [[String: Any]])
            let names = readers.compactMap { $0["name"] as? String }
            for slot in ReaderSlots.shared.all { #expect(names.contains(slot.reader)) }
            let ours = try #require(readers.first { $0["name"] as? String == inserted.reader })
            #expect(ours["cardPresent"] as? Bool == true)
            #expect(ours["atr"] as? String == ApplicationHost.defaultATR.hexString)
            #expect(ours["protocol"] as? String == "T=1")
        }
    }

    @Test("readers prints one line per reader for people")
    func readersText() async throws {
        try await withInsertedCard(demo()) { inserted in
            let result = try runAPDU(["readers"])
            #expect(result.status == 0)
            let line = try #require(result.stdout.split(separator: "\n").first { $0.contains(inserted.reader) })
            #expect(line.contains("card  ATR 3B 8A 80 01"))
        }
    }

    @Test("send transmits in order on one connection and explains status words")
    func send() async throws {
        try await withInsertedCard(demo()) { inserted in
            let result = try runAPDU(["send", "--reader", inserted.reader, demoSelect, "00 ee 00 00 02 ca fe", "00:20:00:81"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("< CA FE 90 00  (9000: normal processing)"))
            #expect(result.stdout.contains("< 63 C3  (63C3: verification failed: 3 tries left"))
            // The ECHO only works because the SELECT before it ran on the same connection.
            let host = inserted.client.card as! ApplicationHost
            #expect(host.log.count == 3)
        }
    }

    /// `apdu send` sets the trailing run of APDUs aside from swift-argument-parser, which takes
    /// quadratic time over a long list; what is sent, in what order, and what an option takes
    /// must not change.
    @Test("send with thousands of APDUs: all sent in order; options between them and hex-like option values kept")
    func sendLongList() async throws {
        try await withInsertedCard(demo()) { inserted in
            let echoes = (0..<2000).map { String(format: "00EE000002%04X", $0) }
            let result = try runAPDU(["send", "--json", demoSelect, echoes[0], "--reader", inserted.reader] + echoes.dropFirst())
            #expect(result.status == 0, "\(result.stderr)")
            let doc = try #require(try result.json() as? [String: Any])
            let exchanges = try #require(doc["exchanges"] as? [[String: Any]])
            #expect(exchanges.count == 2001)
            // Each ECHO answers its own two bytes: the order is the command line's.
            #expect(exchanges.dropFirst().enumerated().allSatisfy { i, e in e["data"] as? String == String(format: "%04X", i) })
            let host = inserted.client.card as! ApplicationHost
            #expect(host.log.count == 2001)
            // A reader name that looks like hex is still the option's value, and a bad APDU deep in
            // the run is still named by its place.
            let named = try runAPDU(["send", "-r", "00A4040000", "00B0000000", "00B0000000"])
            #expect(named.status != 0 && named.stderr.contains("00A4040000"), "\(named.stderr)")
            let bad = try runAPDU(["send", "-r", inserted.reader] + echoes.prefix(10) + ["00EE00zz"] + echoes.prefix(10))
            #expect(bad.status == 64 && bad.stderr.contains("APDU 11"), "\(bad.stderr)")
        }
    }

    @Test("send --expect: other status words exit 1 naming the APDU; JSON stays one document")
    func sendExpect() async throws {
        try await withInsertedCard(demo()) { inserted in
            let result = try runAPDU(["send", "--json", "--expect", "9000", "-r", inserted.reader, demoSelect, "0020008100"])
            #expect(result.status == 1)
            #expect(result.stderr.contains("APDU 2 answered 63C3"))
            let doc = try #require(try result.json() as? [String: Any])
            let exchanges = try #require(doc["exchanges"] as? [[String: Any]])
            #expect(exchanges.count == 2)
            #expect(exchanges[1]["sw"] as? String == "63C3")
            #expect(exchanges[1]["category"] as? String == "warning")
            let ok = try runAPDU(["send", "--expect", "9000,63C3", "-r", inserted.reader, demoSelect, "0020008100"])
            #expect(ok.status == 0)
        }
    }

    @Test("bad input is a usage error naming the problem", arguments: [
        (["send", "00A4040"], "position 7"),
        (["send", "00A4zz00"], "invalid hex character 'z' at position 5"),
        (["send", "00A4"], "at least 4 bytes"),
        (["send", "00A4040007A000"], "does not match its Lc"),
        (["send"], "hex"),
        (["send", "--expect", "90", "00A40400"], "--expect"),
        (["send", "--wait", "-1", "00A40400"], "--wait"),
        (["emulate", "--card", "nonsense"], "unknown --card"),
        (["emulate", "--script", "/nonexistent"], "cannot read"),
        (["frobnicate"], "frobnicate"),
    ])
    func badInput(arguments: [String], message: String) throws {
        let result = try runAPDU(arguments)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(!result.stderr.contains("Fatal error"))
    }

    /// Issue 33: every family is a group; the old hyphenated names keep working, hidden.
    @Test("families are groups; the old names work the same and are hidden from help", arguments: [
        ("ul-read", ["ultralight", "read"]), ("ul-protect", ["ultralight", "protect"]), ("ul-unprotect", ["ultralight", "unprotect"]),
        ("classic-keys", ["classic", "keys"]), ("classic-dump", ["classic", "dump"]), ("classic-read", ["classic", "read"]),
        ("classic-write", ["classic", "write"]),
    ])
    func legacyNames(old: String, new: [String]) throws {
        let oldHelp = try runAPDU([old, "--help"]), newHelp = try runAPDU(new + ["--help"])
        #expect(oldHelp.status == 0 && newHelp.status == 0)
        // The same help but for the name in the usage line.
        func body(_ text: String) -> [Substring] { text.split(separator: "\n").filter { !$0.contains("USAGE") } }
        #expect(body(oldHelp.stdout) == body(newHelp.stdout))
        #expect(newHelp.stdout.contains("apdu \(new.joined(separator: " "))"))
        let top = try runAPDU(["--help"])
        #expect(!top.stdout.contains(old), "\(old) shows in apdu --help")
        #expect(top.stdout.contains("  \(new[0]) "))
        // Parsing and validation run the same way under both names.
        let bad = old == "ul-read" ? ["--pages", "x-"] : ["--no-such-option"]
        let a = try runAPDU([old] + bad), b = try runAPDU(new + bad)
        #expect(a.status == 64 && b.status == 64, "\(a.stderr) / \(b.stderr)")
        #expect(a.stderr.split(separator: "\n").first == b.stderr.split(separator: "\n").first)
    }

    @Test("unknown reader is a usage error listing the readers; an empty reader is 69")
    func readerErrors() async throws {
        let unknown = try runAPDU(["send", "-r", "No Such Reader", "00A40400"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("unknown reader 'No Such Reader'"))
        #expect(unknown.stderr.contains("Virtual PCD"))
        let index = try runAPDU(["send", "-r", "99", "00A40400"])
        #expect(index.status == 64)
        try await withEmptySlot { slot in
            let empty = try runAPDU(["send", "-r", slot.reader, "00A40400"])
            #expect(empty.status == 69)
            #expect(empty.stderr.contains("no card in reader '\(slot.reader)'"))
            let start = ContinuousClock.now
            let waited = try runAPDU(["send", "-r", slot.reader, "--wait", "0.5", "00A40400"])
            #expect(waited.status == 69)
            #expect(ContinuousClock.now - start >= .milliseconds(450))
        }
    }

    @Test("--wait picks up a card presented while waiting; APDU_READER chooses the reader")
    func waitsForCard() async throws {
        try await withEmptySlot { slot in
            let client = VPCDClient(port: slot.port, card: demo())
            let inserter = Thread {
                usleep(700_000)
                client.start()
            }
            inserter.start()
            defer { client.stop() }
            let result = try runAPDU(["send", "--wait", "10", demoSelect], environment: ["APDU_READER": slot.reader])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("(9000: normal processing)"))
        }
    }

    @Test("emulate puts the demo card in a slot until it is stopped")
    func emulate() async throws {
        try await withEmptySlot { slot in
            let emulator = try startAPDU(["emulate", "--port", String(slot.port)])
            try waitForCard(in: slot.reader, present: true)
            let result = try runAPDU(["send", "-r", slot.reader, demoSelect, "00CA000000"])
            #expect(result.status == 0)
            #expect(result.stdout.contains("53 4E 2D 30 30 30 31 90 00"))
            emulator.terminate()
            emulator.waitUntilExit()
            try waitForCard(in: slot.reader, present: false)
        }
    }

    @Test("emulate --script answers from a table")
    func emulateScript() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("card-\(UUID()).txt")
        try "80 CA ?? ?? 00 => 12 34 90 00\n* => 6A 82\n".write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        try await withEmptySlot { slot in
            let emulator = try startAPDU(["emulate", "--port", String(slot.port), "--script", file.path])
            defer { emulator.terminate(); emulator.waitUntilExit(); try? waitForCard(in: slot.reader, present: false) }
            try waitForCard(in: slot.reader, present: true)
            let result = try runAPDU(["send", "-r", slot.reader, "80CA9F7F00", "00B0000010"])
            #expect(result.stdout.contains("< 12 34 90 00"))
            #expect(result.stdout.contains("< 6A 82"))
        }
    }

    @Test("a card pulled during send exits 74 with a message, never hangs")
    func pulledDuringSend() async throws {
        try await withInsertedCard(demo(), faults: Faults(removeAfter: 1)) { inserted in
            let result = try runAPDU(["send", "-r", inserted.reader, demoSelect, demoSelect])
            #expect(result.status == 74)
            #expect(result.stderr.contains("the card was removed"))
        }
    }
}
