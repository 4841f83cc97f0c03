import Foundation
import PCSC
import Testing
import TestSupport
import VirtualCard

/// Record and replay, `apdu doctor`, colour and `--version`: the built binary against a real pcscd.
@Suite("apdu --record / emulate --replay, doctor, colour, --version")
struct CLIShipTests {
    static func temporary(_ name: String) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID())")
    }

    /// Runs `arguments` against an emulator started with `emulator`, recording to a file; then
    /// replays the file and runs the same command again. Returns both outputs and the recording.
    static func roundTrip(emulator: [String], command: [String], order: String = "strict") async throws -> (first: CommandResult, second: CommandResult, recording: String) {
        let recording = temporary("rec").path
        defer { try? FileManager.default.removeItem(atPath: recording) }
        return try await withEmptySlot { slot in
            let first: CommandResult
            do {
                let live = try startAPDU(["emulate", "--port", String(slot.port)] + emulator)
                defer { live.terminate(); live.waitUntilExit(); try? waitForCard(in: slot.reader, present: false) }
                try waitForCard(in: slot.reader, present: true)
                first = try runAPDU(command + ["-r", slot.reader, "--record", recording])
            }
            let text = try String(contentsOfFile: recording, encoding: .utf8)
            let replay = try startAPDU(["emulate", "--port", String(slot.port), "--replay", recording, "--replay-order", order])
            defer { replay.terminate(); replay.waitUntilExit(); try? waitForCard(in: slot.reader, present: false) }
            try waitForCard(in: slot.reader, present: true)
            let second = try runAPDU(command + ["-r", slot.reader])
            return (first, second, text)
        }
    }

    @Test("ndef-read recorded on an emulated Type 4 tag replays to identical output, in strict order and by command")
    func ndefReadRoundTrip() async throws {
        let message = Self.temporary("msg")
        defer { try? FileManager.default.removeItem(at: message) }
        let encoded = try runAPDU(["ndef", "encode", "--uri", "https://example.com/replayed", "--text", "hello"])
        try encoded.stdout.trimmingCharacters(in: .whitespacesAndNewlines).write(to: message, atomically: true, encoding: .utf8)
        for order in ["strict", "by-command"] {
            let (first, second, recording) = try await Self.roundTrip(emulator: ["--type4", "--ndef", message.path], command: ["ndef-read"], order: order)
            #expect(first.status == 0, "\(first.stderr)")
            #expect(first.stdout.contains("https://example.com/replayed"))
            #expect(second.status == 0, "\(second.stderr)")
            #expect(second.stdout == first.stdout)
            let lines = recording.split(separator: "\n")
            #expect(lines.first?.contains("\"type\":\"session\"") == true)
            #expect(lines.contains { $0.contains("\"type\":\"connect\"") && $0.contains("\"atr\":\"3B") })
            #expect(lines.filter { $0.contains("\"type\":\"exchange\"") }.count >= 5)
            #expect(lines.last == "{\"type\":\"end\",\"status\":0}")
        }
    }

    @Test("ndef-read on an emulated NTAG215 behind a storage reader replays to identical output")
    func type2RoundTrip() async throws {
        let memory = Self.temporary("ntag").path
        defer { try? FileManager.default.removeItem(atPath: memory) }
        try await withEmptySlot { slot in
            let live = try startAPDU(["emulate", "--port", String(slot.port), "--type2", "ntag215", "--memory", memory])
            defer { live.terminate(); live.waitUntilExit(); try? waitForCard(in: slot.reader, present: false) }
            try waitForCard(in: slot.reader, present: true)
            let w = try runAPDU(["ndef-write", "-r", slot.reader, "--uri", "https://example.com/t2"],
                                environment: ["XDG_STATE_HOME": FileManager.default.temporaryDirectory.path])
            #expect(w.status == 0, "\(w.stderr)")
        }
        let (first, second, _) = try await Self.roundTrip(emulator: ["--type2", "ntag215", "--memory", memory], command: ["ndef-read"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("https://example.com/t2"))
        #expect(second.stdout == first.stdout)
        #expect(second.status == 0, "\(second.stderr)")
    }

    @Test("send recorded on the demo card replays identically; a PIN is redacted and still matches")
    func sendRoundTrip() async throws {
        let command = ["send", "00A4040006F0617064750100", "00EE000002CAFE", "0020008104" + "31323334"]
        let (first, second, recording) = try await Self.roundTrip(emulator: [], command: command)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(second.stdout == first.stdout)
        #expect(recording.contains("\"command\":\"0020008104********\""))
        #expect(!recording.contains("31323334"))
        #expect(recording.hasPrefix("{\"type\":\"session\",\"tool\":\"apdu 0.1.0\",\"command\":\"send\"}\n"))
    }

    @Test("a replay in strict order answers 6F00 to a command the recording does not have next")
    func strictMismatch() async throws {
        let command = ["send", "00A4040006F0617064750100", "00EE000002CAFE"]
        let recording = Self.temporary("rec").path
        defer { try? FileManager.default.removeItem(atPath: recording) }
        try await withEmptySlot { slot in
            do {
                let live = try startAPDU(["emulate", "--port", String(slot.port)])
                defer { live.terminate(); live.waitUntilExit(); try? waitForCard(in: slot.reader, present: false) }
                try waitForCard(in: slot.reader, present: true)
                #expect(try runAPDU(command + ["-r", slot.reader, "--record", recording]).status == 0)
            }
            let replay = try startAPDU(["emulate", "--port", String(slot.port), "--replay", recording])
            defer { replay.terminate(); replay.waitUntilExit(); try? waitForCard(in: slot.reader, present: false) }
            try waitForCard(in: slot.reader, present: true)
            let other = try runAPDU(["send", "-r", slot.reader, "00EE000002CAFE"])
            #expect(other.stdout.contains("< 6F 00"))
        }
    }

    @Test("emulate --replay refuses a file that is not a recording, naming the line")
    func badRecording() throws {
        let file = Self.temporary("bad")
        try "{\"type\":\"session\"}\nnot json\n".write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try runAPDU(["emulate", "--port", "1", "--replay", file.path])
        #expect(result.status == 65)
        #expect(result.stderr.contains("line 2"))
    }

    @Test("--version names the version, the revision and the pcsclite in use")
    func version() throws {
        let result = try runAPDU(["--version"])
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines.first?.hasPrefix("apdu ") == true)
        #expect(lines.dropFirst().first?.hasPrefix("git ") == true)
        #expect(lines.last?.contains("pcsclite ") == true && lines.last?.contains("libpcsclite") == true)
    }

    @Test("colour: none in a pipe or with NO_COLOR; --color always paints the status word; --color never wins")
    func colour() throws {
        let piped = try runAPDU(["sw", "6A82"])
        #expect(!piped.stdout.contains("\u{1B}["))
        let always = try runAPDU(["sw", "6A82", "--color", "always"])
        #expect(always.stdout.contains("\u{1B}[1;31m6A82"))
        let success = try runAPDU(["sw", "9000", "--color", "always"])
        #expect(success.stdout.contains("\u{1B}[32m9000"))
        let never = try runAPDU(["sw", "6A82", "--color", "never"], environment: ["TERM": "xterm"])
        #expect(!never.stdout.contains("\u{1B}["))
        let json = try runAPDU(["sw", "6A82", "--json", "--color", "always"])
        #expect(!json.stdout.contains("\u{1B}["))
        // A real terminal, through script(1): coloured by default, plain under NO_COLOR.
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/script") {
            let tty = try Self.runCommand("/usr/bin/script", ["-qec", "\(apduBinary) sw 6A82", "/dev/null"], environment: ["TERM": "xterm"])
            #expect(tty.contains("\u{1B}[1;31m"))
            let noColor = try Self.runCommand("/usr/bin/script", ["-qec", "\(apduBinary) sw 6A82", "/dev/null"], environment: ["TERM": "xterm", "NO_COLOR": "1"])
            #expect(!noColor.contains("\u{1B}[") && noColor.contains("6A82"))
        }
    }

    @Test("progress: a full dump shows sector progress on a terminal, nothing in a pipe or with --json")
    func progress() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else { return }
        try await withEmptySlot { slot in
            let card = try startAPDU(["emulate", "--port", String(slot.port), "--classic", "classic-1k"])
            defer { card.terminate(); card.waitUntilExit(); try? waitForCard(in: slot.reader, present: false) }
            try waitForCard(in: slot.reader, present: true)
            let command = "\(apduBinary) classic-dump -r '\(slot.reader)'"
            let tty = try Self.runCommand("/usr/bin/script", ["-qec", command, "/dev/null"], environment: ["TERM": "xterm"])
            #expect(tty.contains("dumping sector 15 (16/16)"))
            #expect(tty.contains("\r\u{1B}[K"))
            let piped = try runAPDU(["classic-dump", "-r", slot.reader])
            #expect(piped.status == 0, "\(piped.stderr)")
            #expect(!piped.stderr.contains("dumping") && !piped.stdout.contains("dumping"))
            let json = try Self.runCommand("/usr/bin/script", ["-qec", command + " --json", "/dev/null"], environment: ["TERM": "xterm"])
            #expect(!json.contains("dumping"))
        }
    }

    @Test("progress: a big write on a slow tag shows each step on a terminal, nothing in a pipe, with --json or --trace")
    func writeProgress() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else { return }
        try await withEmptySlot { slot in
            let card = try startAPDU(["emulate", "--port", String(slot.port), "--type5", "st25dv64k", "--reader-model", "transparent"])
            defer { card.terminate(); card.waitUntilExit(); try? waitForCard(in: slot.reader, present: false) }
            try waitForCard(in: slot.reader, present: true)
            let state = FileManager.default.temporaryDirectory.appendingPathComponent("progress-\(UUID())").path
            defer { try? FileManager.default.removeItem(atPath: state) }
            let payload = state + ".bin"
            FileManager.default.createFile(atPath: payload, contents: Data((0..<2000).map { UInt8($0 % 251) }))
            defer { try? FileManager.default.removeItem(atPath: payload) }
            let command = "\(apduBinary) ndef-write -r '\(slot.reader)' --mime x/y --file \(payload)"
            let env = ["TERM": "xterm", "XDG_STATE_HOME": state]
            // A 2,009-byte message (a long MIME record): its TLV (03 FF 07D9, the message, FE) runs from
            // byte 8 through blocks 2-505 of 4 bytes; the tag is empty, so no step clears the length:
            // blocks 3-505, their read-back before the length, block 2 (the length), then its read-back.
            let tty = try Self.runCommand("/usr/bin/script", ["-qec", command, "/dev/null"], environment: env)
            #expect(tty.contains("ndef-write: write block 3 (1/506)"), "\(tty.prefix(600))")
            #expect(tty.contains("ndef-write: read the written blocks back (506/506)\r\u{1B}[K"))
            #expect(tty.contains("wrote 2009 bytes"))
            for extra in [" --json", " --trace"] {
                let quiet = try Self.runCommand("/usr/bin/script", ["-qec", command + extra, "/dev/null"], environment: env)
                #expect(!quiet.contains("ndef-write: write"), "\(extra)")
            }
            let piped = try runAPDU(["ndef-write", "-r", slot.reader, "--mime", "x/y", "--file", payload], environment: ["XDG_STATE_HOME": state])
            #expect(piped.status == 0 && !piped.stderr.contains("ndef-write:"), "\(piped.stderr)")
        }
    }

    /// A program's standard output, run with `NO_COLOR` unset (the colour tests set it themselves).
    static func runCommand(_ path: String, _ arguments: [String], environment: [String: String]) throws -> String {
        try runProgram(path, arguments, environment: environment, unsetting: ["APDU_READER", "NO_COLOR"]).stdout
    }
}
