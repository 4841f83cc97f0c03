// Real sessions in: a pcsc-spy or pcscd log served as the card through pcscd, a command checked
// against it, and a log converted into a fixture with its secrets masked.
import Foundation
import Testing
import TestSupport

@Suite("Session logs as cards: apdu emulate replay, replay-check, replay convert")
struct CLIReplayLogTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/pcsc-logs").path

    static func fixture(_ name: String) -> String { folder + "/" + name }

    /// Runs the emulator on `arguments` in `slot` until `body` is done; its standard error.
    func serving<R>(_ arguments: [String], in slot: ReaderSlot, _ body: () throws -> R) throws -> (R, String) {
        try withEmulator(arguments, in: slot, body)
    }

    @Test("a pcscd log from a bug report (web-eid, Latvian eID) is the card: the same SELECTs get the logged answers; another gets 6F00")
    func pcscdLogAsCard() async throws {
        try await withEmptySlot { slot in
            let (answers, stderr) = try serving(["replay", Self.fixture("pcscd-webeid119-latvian-eid.log")], in: slot) {
                [try runAPDU(["send", "--raw", "-r", slot.reader, "00A4040C10A000000077010800070000FE00000100"]),
                 try runAPDU(["send", "--raw", "-r", slot.reader, "00A4090C04ADF13401"]),
                 try runAPDU(["send", "--raw", "-r", slot.reader, "00A4090C04ADF13401"])]
            }
            #expect(answers[0].status == 0 && answers[0].stdout.contains("90 00"), "\(answers[0].stdout)\(answers[0].stderr)")
            #expect(answers[1].status == 0 && answers[1].stdout.contains("90 00"))
            #expect(answers[2].stdout.contains("6F 00"), "strict order: nothing was recorded third: \(answers[2].stdout)")
            #expect(stderr.contains("pcscd --debug --apdu log") && stderr.contains("2 exchanges") && stderr.contains("shows no ATR"), "\(stderr)")
        }
    }

    @Test("a pcsc-spy log (current era) is the card: its ATR, the reader it was made on, SELECT then GET RESPONSE; the escape listed, not replayed")
    func pcscSpyLogAsCard() async throws {
        try await withEmptySlot { slot in
            let (result, stderr) = try serving(["replay", Self.fixture("spy-2.5.1.log")], in: slot) {
                (try runAPDU(["atr", "--json", "-r", slot.reader]), try runAPDU(["send", "-r", slot.reader, "00A4040006D27600012401"]))
            }
            #expect(result.0.stdout.contains("3B8A80010031C173C8400000900090"), "\(result.0.stdout)")
            // apdu send answers 61 14 with GET RESPONSE itself, as the logged client did.
            #expect(result.1.status == 0 && result.1.stdout.contains("6F 12 84 06 D2 76 00 01 24 01"), "\(result.1.stdout)\(result.1.stderr)")
            #expect(stderr.contains("recorded on reader 'Gemalto PC Twin Reader 00 00'") && stderr.contains("SCardControl 0x42000D48 listed, not replayed"), "\(stderr)")
        }
    }

    @Test("replay-check: the command the log recorded matches (exit 0); another diverges at command 1, named with the nearest recorded one (exit 1)")
    func replayCheck() async throws {
        try await withEmptySlot { slot in
            try waitForCard(in: slot.reader, present: false)
            let log = Self.fixture("spy-2.5.1.log")
            let good = try runAPDU(["replay-check", "--port", String(slot.port), log, "--", apduBinary, "send", "00A4040006D27600012401"], environment: ["APDU_READER": slot.reader])
            #expect(good.status == 0, "\(good.stdout)\(good.stderr)")
            #expect(good.stdout.contains("matches the log: 2 of 2 recorded commands") && good.stdout.contains("the command succeeded (exit 0)"), "\(good.stdout)")
            try waitForCard(in: slot.reader, present: false)
            let bad = try runAPDU(["replay-check", "--port", String(slot.port), log, "--", apduBinary, "send", "00A4040006D27600012402"], environment: ["APDU_READER": slot.reader])
            #expect(bad.status == 1, "\(bad.stdout)\(bad.stderr)")
            #expect(bad.stdout.contains("diverged at command 1: sent 00A4040006D27600012402"), "\(bad.stdout)")
            #expect(bad.stdout.contains("the nearest recorded command is command 1 (line 40): 00A4040006D27600012401"), "\(bad.stdout)")
            try waitForCard(in: slot.reader, present: false)
            let short = try runAPDU(["replay-check", "--port", String(slot.port), log, "--", apduBinary, "send", "--raw", "00A4040006D27600012401"], environment: ["APDU_READER": slot.reader])
            #expect(short.status == 1 && short.stdout.contains("stopped short: sent 1 of the 2 recorded commands"), "\(short.stdout)")
            let usage = try runAPDU(["replay-check", log])
            #expect(usage.status == 64 && usage.stderr.contains("give the command to check after --"))
        }
    }

    @Test("replay convert --redact: a PIN and a PAN masked, the list on stderr; the converted fixture still replays; --redact-check exits 1 on secrets, 0 on none")
    func convertRedacted() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("replay-convert-\(UUID())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let pcscd = """
            00000001 winscard.c:253:SCardConnect() Attempting Connect to ACS ACR39U ICC Reader 00 00 using protocol: 3
            00000002 Card ATR: 3B 68 00 00 00 73 C8 40 12 00 90 00 
            00000003 APDU: 00 A4 04 00 07 A0 00 00 00 03 10 10 00 
            00000004 SW: 6F 08 84 06 A0 00 00 00 03 10 90 00 
            00000005 APDU: 00 20 00 80 08 24 12 34 FF FF FF FF FF 
            00000006 SW: 90 00 
            00000007 APDU: 00 B2 01 0C 00 
            00000008 SW: 70 0A 5A 08 41 11 11 11 11 11 11 11 90 00 
            """
        let log = dir + "/pin.log"
        try pcscd.write(toFile: log, atomically: true, encoding: .utf8)
        let check = try runAPDU(["emulate", "replay", log, "--redact-check"])
        #expect(check.status == 1 && check.stdout.contains("exchange 2 (line 5): VERIFY: a PIN") && check.stdout.contains("a PAN (5A)"), "\(check.stdout)\(check.stderr)")
        let old = try runAPDU(["emulate", "--replay", log, "--redact-check"])
        #expect(old.status == 1 && old.stdout == check.stdout, "the old flag form: \(old.stdout)\(old.stderr)")
        let clean = try runAPDU(["emulate", "replay", Self.fixture("pcscd-webeid119-latvian-eid.log"), "--redact-check"])
        #expect(clean.status == 0 && clean.stdout.contains("nothing in session 1 looks secret"), "\(clean.stdout)")
        let converted = try runAPDU(["replay", "convert", "--redact", log, "-o", dir + "/pin.jsonl"])
        #expect(converted.status == 0 && converted.stderr.contains("masked exchange 2 (line 5): VERIFY: a PIN"), "\(converted.stderr)")
        let text = try String(contentsOfFile: dir + "/pin.jsonl", encoding: .utf8)
        #expect(text.contains("\"command\":\"0020008008****************\"") && !text.contains("2412"), "\(text)")
        #expect(!text.contains("4111111111111111") && text.contains("\"reader\":\"ACS ACR39U ICC Reader 00 00\""), "\(text)")
        let attributes = try FileManager.default.attributesOfItem(atPath: dir + "/pin.jsonl")
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        try await withEmptySlot { slot in
            let (answers, _) = try serving(["replay", dir + "/pin.jsonl"], in: slot) {
                [try runAPDU(["send", "--raw", "-r", slot.reader, "00A4040007A000000003101000"]),
                 try runAPDU(["send", "--raw", "-r", slot.reader, "002000800811111111FFFFFFFF"])]
            }
            #expect(answers[0].stdout.contains("90 00") && answers[1].stdout.contains("90 00"), "a masked PIN matches any: \(answers.map(\.stdout))")
        }
    }

    @Test("logs that cannot be replayed: one line naming the problem, exit 65; a session that is not there, 65; the old --replay flag reads logs too")
    func refused() async throws {
        for (name, message) in [("spy-pcsc159-no-transmit.log", "no card session"), ("pcscd-pcsc117-empty-sw.log", "empty SW line")] {
            let r = try runAPDU(["emulate", "replay", Self.fixture(name)])
            #expect(r.status == 65 && r.stderr.contains(message) && r.stderr.split(separator: "\n").count == 1, "\(name): \(r.stderr)")
        }
        let missing = try runAPDU(["emulate", "replay", Self.fixture("spy-2.5.1.log"), "--session", "2"])
        #expect(missing.status == 65 && missing.stderr.contains("there is no session 2"), "\(missing.stderr)")
        let nothing = try runAPDU(["emulate", "replay", "/nonexistent.log"])
        #expect(nothing.status == 64 && nothing.stderr.contains("cannot read the log"))
        let garbled = FileManager.default.temporaryDirectory.appendingPathComponent("garbled-\(UUID()).log").path
        try "00000001 APDU: 00 A4 0Z \n".write(toFile: garbled, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: garbled) }
        let bad = try runAPDU(["emulate", "replay", garbled])
        #expect(bad.status == 65 && bad.stderr.contains("line 1: the APDU holds something that is not hex"), "\(bad.stderr)")
        try await withEmptySlot { slot in
            let (answer, _) = try serving(["--replay", Self.fixture("pcscd-webeid119-latvian-eid.log")], in: slot) {
                try runAPDU(["send", "--raw", "-r", slot.reader, "00A4040C10A000000077010800070000FE00000100"])
            }
            #expect(answer.stdout.contains("90 00"), "\(answer.stdout)")
        }
    }
}
