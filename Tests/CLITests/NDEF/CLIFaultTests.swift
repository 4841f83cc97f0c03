import Foundation
import ISO7816
import NDEF
import PCSC
import Testing
import TestSupport
import VirtualCard

@Suite("faults and hostile arguments (the built binary, through pcscd)")
struct CLIFaultTests {
    func ntagWithMessage() -> (Type2TagModel, [UInt8]) {
        let message = try! NDEFMessage(records: [.uri("https://example.com/" + String(repeating: "r", count: 80))]).encoded()
        var image = Type2TagModel(chip: .ntag213).contents
        let tlv: [UInt8] = [0x03, UInt8(message.count)] + message + [0xFE]
        for (i, b) in tlv.enumerated() { image[21 + i] = b }
        return (Type2TagModel(chip: .ntag213, memory: image), message)
    }

    @Test("a card pulled after every APDU index of ndef-read: exit 74 with a message, every time", arguments: ["type4", "type2"])
    func pulledDuringRead(kind: String) async throws {
        var index = 0
        while true {
            let card: any EmulatedCard = kind == "type4" ? type4Host({ $0.mle = 32 }, message: sampleMessage).0 : ntagWithMessage().0
            let r = try await withInsertedCard(card, faults: Faults(removeAfter: index)) { inserted in
                try runAPDU(["ndef-read", "--json", "-r", inserted.reader])
            }
            if r.status == 0 { break }
            #expect(r.status == 74, "pulled after \(index): \(r.stderr)")
            #expect(r.stderr.hasPrefix("apdu: ") && r.stderr.contains("removed"), "\(r.stderr)")
            #expect(r.stdout.isEmpty)
            index += 1
            if index > 40 { Issue.record("the read never completed"); break }
        }
        print("pulled-card cases for a \(kind) read: \(index) failures, then a complete read")
        #expect(index >= 4)
    }

    @Test("misbehaving cards: slow, one byte, garbage, 61xx forever — bounded, clear errors")
    func misbehaving() async throws {
        try await withInsertedCard(ApplicationHost(applications: [DemoApplication()]), faults: Faults(delay: .milliseconds(150))) { inserted in
            let start = ContinuousClock.now
            let r = try runAPDU(["send", "-r", inserted.reader, demoSelect, "00CA000000"])
            #expect(r.status == 0)
            #expect(ContinuousClock.now - start >= .milliseconds(300))
        }
        try await withInsertedCard(ApplicationHost(applications: []), faults: Faults(garbage: [0x90])) { inserted in
            let r = try runAPDU(["send", "-r", inserted.reader, demoSelect])
            #expect(r.status == 74)
            #expect(r.stderr.contains("card answered 1 byte (90), too short for a status word"), "\(r.stderr)")
            let t = try runAPDU(["ndef-read", "-r", inserted.reader])
            #expect(t.status == 74)
        }
        try await withInsertedCard(ApplicationHost(applications: []), faults: Faults(garbage: [0x01, 0x02, 0x03, 0xFF, 0xFF, 0x63, 0xFF])) { inserted in
            let t = try runAPDU(["ndef-read", "-r", inserted.reader])
            #expect(t.status == 1 || t.status == 65, "\(t.stderr)")
            #expect(!t.stderr.contains("Fatal"))
        }
        let forever = ScriptedCard(rules: [ScriptedCard.Rule(pattern: [], matchesAnyTail: true, response: [0x00, 0x61, 0x10])])
        try await withInsertedCard(forever) { inserted in
            let start = ContinuousClock.now
            let r = try runAPDU(["send", "-r", inserted.reader, "00B0000010"])
            #expect(r.status == 74)
            #expect(r.stderr.contains("still answered 61xx after 256 GET RESPONSE rounds"))
            #expect(ContinuousClock.now - start < .seconds(10))
        }
    }

    @Test("two ndef-write processes on one tag at once: each exchange stays whole, the tag holds one message")
    func concurrentWrites() async throws {
        let (host, model) = type4Host({ $0.mlc = 8 }, message: sampleMessage)
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("conc-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: state) }
        try await withInsertedCard(host) { inserted in
            let a = try NDEFMessage(records: [.uri("https://a.example/" + String(repeating: "a", count: 100))]).encoded()
            let b = try NDEFMessage(records: [.text(String(repeating: "b", count: 120))]).encoded()
            let dir = URL(fileURLWithPath: state)
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            try Data(a).write(to: dir.appendingPathComponent("a.ndef"))
            try Data(b).write(to: dir.appendingPathComponent("b.ndef"))
            let results = Locked([Int32]())
            let threads = ["a", "b"].map { name in
                Thread {
                    let r = try? runAPDU(["ndef-write", "-r", inserted.reader, "--message", dir.appendingPathComponent("\(name).ndef").path], environment: ["XDG_STATE_HOME": state])
                    results.withLock { $0.append(r?.status ?? -1) }
                }
            }
            threads.forEach { $0.start() }
            while results.current.count < 2 { usleep(10_000) }
            #expect(results.current.allSatisfy { $0 == 0 || $0 == 75 }, "\(results.current)")
            #expect(model.message == a || model.message == b)
        }
    }

    @Test("a reader another program holds in a transaction: exit 75 after a moment, or the read with --wait once it is free")
    func busyReader() async throws {
        let (host, _) = type4Host(message: sampleMessage)
        try await withInsertedCard(host) { inserted in
            // This test process is the other program: it holds a transaction for 4 s.
            let holder = try Context().connect(reader: inserted.reader)
            let held = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let thread = Thread {
                try? holder.withTransaction {
                    held.signal()
                    _ = release.wait(timeout: .now() + 4)
                }
            }
            thread.start()
            held.wait()
            let start = ContinuousClock.now
            let busy = try runAPDU(["ndef-read", "--json", "-r", inserted.reader])
            let gaveUpAfter = ContinuousClock.now - start
            #expect(busy.status == 75, "\(busy.stderr)")
            #expect(busy.stderr.hasPrefix("apdu: ") && busy.stderr.contains("busy") && busy.stderr.contains("--wait"), "\(busy.stderr)")
            #expect(busy.stdout.isEmpty)
            #expect(gaveUpAfter >= .seconds(1.5) && gaveUpAfter < .seconds(3.9), "\(gaveUpAfter)")
            // With --wait the command waits the transaction out and reads the tag.
            let waited = try runAPDU(["ndef-read", "--json", "--wait", "10", "-r", inserted.reader])
            #expect(waited.status == 0, "\(waited.stderr)")
            #expect(waited.stdout.contains("\"length\""))
            release.signal()
            try holder.disconnect()
        }
    }

    @Test("a card reset by another program between script lines: reconnect, report the line, stop, replay nothing")
    func resetBetweenCommands() async throws {
        let host = ApplicationHost(applications: [DemoApplication()])
        try await withInsertedCard(host, faults: Faults(delay: .milliseconds(400))) { inserted in
            // Eight lines at 400 ms each: the reset below lands well before the script could end.
            let lines = [demoSelect] + (1...7).map { "00EE000003AABB" + String(format: "%02X", $0) }
            let result = Locked<CommandResult?>(nil)
            let thread = Thread {
                let r = try? runAPDU(["script", "-r", inserted.reader, "-"], stdin: lines.joined(separator: "\n") + "\n")
                result.withLock { $0 = r }
            }
            thread.start()
            // Another program resets the card while the script's first answers are on their way.
            while host.log.isEmpty { usleep(10_000) }
            try Context().connect(reader: inserted.reader).reconnect(initialization: .reset)
            let deadline = ContinuousClock.now + .seconds(20)
            while result.current == nil && ContinuousClock.now < deadline { usleep(20_000) }
            let r = try #require(result.current)
            #expect(r.status == 74, "\(r.stderr)")
            #expect(r.stderr.contains("reset by another program") && r.stderr.contains("was not sent") && r.stderr.contains("nothing was replayed"), "\(r.stderr)")
            // The card saw each line before the failing one once, and nothing after it.
            let match = try #require(r.stderr.firstMatch(of: /line (\d+):/), "exit \(r.status): \(r.stderr)")
            let line = try #require(Int(match.1))
            #expect(line >= 2)
            print("reset between script lines: \(r.stderr)", terminator: "")
            #expect(host.log.map(\.hexString) == lines.prefix(line - 1).map { $0 }, "\(host.log.map(\.hexString))")
        }
    }

    @Test("every subcommand refuses bad arguments with 64 and names the argument", arguments: [
        (["readers", "--bogus"], "--bogus"),
        (["watch", "--count", "0"], "--count"),
        (["watch", "--count", "x"], "--count"),
        (["send", "--wait", "abc", "00A40400"], "--wait"),
        (["send", "--reader"], "--reader"),
        (["script"], "<file>"),
        (["script", "--raw", "--frob", "x"], "--frob"),
        (["select"], "<aid>"),
        (["select", "A0GG"], "AID"),
        (["select", String(repeating: "A0", count: 17)], "1 to 16 bytes"),
        (["atr", "3B8"], "odd number"),
        (["sw"], "<sw>"),
        (["sw", "12345"], "not a status word"),
        (["ndef", "decode", "zz"], "invalid hex"),
        (["ndef", "encode", "--uri"], "--uri needs a value"),
        (["ndef-read", "--wait", "-5"], "--wait"),
        (["ndef-write"], "say what to write"),
        (["ndef-write", "--message", "a", "--restore", "b"], "not several"),
        (["ndef-write", "--all-readers", "-r", "x", "--uri", "https://a.b"], "--all-readers and --reader"),
        (["ndef-write", "--all-readers", "--wait", "5", "--uri", "https://a.b"], "--wait does not apply"),
        (["ndef-status", "--json", "--nope"], "--nope"),
        (["ndef-lock", "--yes", "--wait", "x"], "--wait"),
        (["ul-read", "--pages", "a-b"], "--pages"),
        (["emulate", "--port", "0"], "--port"),
        (["emulate", "--port", "70000"], "--port"),
        (["emulate", "--type2", "ntag999"], "unknown --type2 chip"),
        (["emulate", "--type4", "--mle", "3"], "--mle"),
        (["emulate", "--type4", "--file-size", "100000"], "--mapping 3.0"),
        (["emulate", "--save"], "--save needs --ndef"),
    ])
    func badArguments(arguments: [String], names: String) throws {
        let r = try runAPDU(arguments)
        #expect(r.status == 64, "\(arguments): \(r.stderr)")
        #expect(r.stderr.contains(names), "\(arguments): \(r.stderr)")
        #expect(!r.stderr.contains("Fatal error") && !r.stderr.contains("Stack dump") && !r.stderr.contains("0x0000"))
    }
}
