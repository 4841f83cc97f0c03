// What the reviews of issue 48 found in session logs, recordings and private files, each
// reproduced as the review describes it: a hostile log, secrets a redaction left in the clear, a
// private file written wide or through a symlink, a reset or a crash called a match, an ATR a
// log names refused.
import Foundation
import MRTD
import Testing
import TestSupport
import VirtualCard

@Suite("Session logs and private files under attack (issue 48)")
struct CLIReplayHostileTests {
    static func temporaryDirectory(_ name: String) throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    static func mode(_ path: String) throws -> Int? {
        try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
    }

    /// A pcsc-spy transmit whose length line says Int.min, two dump lines after it.
    static let hostileSpy = """
        SCardConnect
         i szReader R 00 00
         o phCard 0x1 (1)
         => SCARD_S_SUCCESS [0x00000000]  [0.000001]
        SCardTransmit
         i hCard: 0x1
         i bSendLength 0x00000005 (-9223372036854775808)
         i bSendBuffer
         i  0000 00 A4 04 00 00 00 00 00 00 00 00 00 00 00 00 00  ................
         i  0010 00 A4 04 00 00 00 00 00 00 00 00 00 00 00 00 00  ................
         o bRecvLength 0x00000002 (2)
         o bRecvBuffer
         o  0000 90 00                                           ..
         => SCARD_S_SUCCESS [0x00000000]  [0.000001]

        """

    @Test("a pcsc-spy length of -9223372036854775808 before two dump lines: exit 65 naming its line in replay convert, replay-check and emulate replay, never a trap")
    func spyLengthOverflow() throws {
        let dir = try Self.temporaryDirectory("hostile-spy")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let log = dir + "/spy.log"
        try Self.hostileSpy.write(toFile: log, atomically: true, encoding: .utf8)
        for arguments in [["replay", "convert", log], ["replay-check", log, "--", apduBinary, "atr"], ["emulate", "replay", log]] {
            let r = try runAPDU(arguments)
            #expect(r.status == 65, "\(arguments): exit \(r.status) \(r.stderr)")
            #expect(r.stderr.contains("line 7: bSendLength says -9223372036854775808 bytes"), "\(arguments): \(r.stderr)")
            #expect(r.stderr.split(separator: "\n").count == 1, "one line: \(r.stderr)")
        }
    }

    /// A pcscd log holding, in turn, every secret the review found left in the clear.
    static let secretsLog = """
        00000001 winscard.c:253:SCardConnect() Attempting Connect to ACS ACR122U PICC Interface 00 00 using protocol: 3
        00000002 Card ATR: 3B 8F 80 01 80 4F 0C A0 00 00 03 06 03 00 01 00 00 00 00 6A 
        00000003 APDU: 90 A8 00 00 12 00 90 C1 C2 C3 C4 C5 C6 C7 C8 C9 CA CB CC CD CE CF C0 00 
        00000004 SW: 90 00 
        00000005 APDU: A8 01 40 D1 D2 D3 D4 D5 D6 D7 D8 D9 DA DB DC DD DE DF D0 
        00000006 SW: 90 00 
        00000007 APDU: 70 00 40 00 
        00000008 SW: 90 E1 E2 E3 E4 E5 E6 E7 E8 E9 EA EB EC ED EE EF E0 
        00000009 APDU: 90 72 00 00 20 F1 F2 F3 F4 F5 F6 F7 F8 F9 FA FB FC FD FE FF F0 F1 F2 F3 F4 F5 F6 F7 F8 F9 FA FB FC FD FE FF F0 00 
        00000010 SW: A1 A2 A3 A4 A5 A6 A7 A8 A9 AA AB AC AD AE AF A0 A1 A2 A3 A4 A5 A6 A7 A8 A9 AA AB AC AD AE AF A0 91 00 
        00000011 APDU: 76 00 40 
        00000012 SW: 90 B1 B2 B3 B4 B5 B6 B7 B8 B9 BA BB BC BD BE BF B0 
        00000013 APDU: FF 00 00 00 0F D4 40 01 60 04 6B 65 79 6B 65 79 01 02 03 04 
        00000014 SW: D5 41 00 90 00 
        00000015 APDU: FF 00 00 00 08 D4 40 01 1B 70 61 73 73 
        00000016 SW: D5 41 00 80 80 90 00 
        00000017 APDU: 00 26 00 81 06 31 39 37 33 31 39 
        00000018 SW: 90 00 
        00000019 APDU: 00 B2 01 0C 00 
        00000020 SW: 70 12 9F 0B 0F 53 45 43 52 45 54 48 4F 4C 44 45 52 4E 41 4D 90 00 
        00000021 APDU: 00 B2 02 0C 00 
        00000022 SW: 70 40 5A 08 47 61 73 90 01 01 00 10 90 00 
        00000023 APDU: 00 DB 3F FF 0A 4D 08 B6 00 7F 48 02 92 01 51 
        00000024 SW: 90 00 
        00000025 APDU: 00 FF FF FF 1B 03 9B 18 4B 4B 4B 4B 4B 4B 4B 4B 4B 4B 4B 4B 4B 4B 4B 4B 4B 4B 4B 4B 4B 4B 4B 4B 
        00000026 SW: 90 00 

        """

    /// The secret runs of `secretsLog`, as a converted recording would write them.
    static let secretRuns = ["C1C2C3C4C5C6C7C8C9CACBCCCDCECFC0", "D1D2D3D4D5D6D7D8D9DADBDCDDDEDFD0", "E1E2E3E4E5E6E7E8E9EAEBECEDEEEFE0",
                             "F1F2F3F4F5F6F7F8F9FAFBFCFDFEFFF0", "A1A2A3A4A5A6A7A8A9AAABACADAEAFA0", "B1B2B3B4B5B6B7B8B9BABBBCBDBEBFB0",
                             "6B65796B6579", "70617373", "313937333139", "534543524554484F4C4445524E414D", "4761739001010010",
                             "7F4802920151", "4B4B4B4B4B4B4B4B4B4B4B4B4B4B4B4B4B4B4B4B4B4B4B4B"]

    @Test("replay convert --redact and --redact-check: Plus WritePerso and authentication (native and wrapped), a MIFARE key and a password in InDataExchange, DISABLE VERIFICATION's PIN, 9F0B, a PAN in a template of the wrong length, OpenPGP key import, PIV's management key")
    func secretsMasked() throws {
        let dir = try Self.temporaryDirectory("hostile-secrets")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let log = dir + "/secrets.log"
        try Self.secretsLog.write(toFile: log, atomically: true, encoding: .utf8)
        let converted = try runAPDU(["replay", "convert", "--redact", log])
        #expect(converted.status == 0, "\(converted.stderr)")
        for run in Self.secretRuns {
            #expect(!converted.stdout.contains(run), "\(run) left in the clear:\n\(converted.stdout)")
        }
        // The status words and the commands' headers stay: the fixture still replays.
        #expect(converted.stdout.contains("\"command\":\"0026008106************\""), "\(converted.stdout)")
        let check = try runAPDU(["emulate", "replay", log, "--redact-check"])
        #expect(check.status == 1, "\(check.stdout)\(check.stderr)")
        for line in [3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25] {
            #expect(check.stdout.contains("(line \(line)):"), "line \(line) not named:\n\(check.stdout)")
        }
        // Converted once, nothing is left to find.
        let out = dir + "/secrets.jsonl"
        #expect(try runAPDU(["replay", "convert", "--redact", log, "-o", out]).status == 0)
        let again = try runAPDU(["emulate", "replay", out, "--redact-check"])
        #expect(again.status == 0 && again.stdout.contains("nothing in session 1 looks secret"), "\(again.stdout)")
    }

    @Test("the same table in traces and recordings: the review's secrets sent to the log served as a card show as ** in --trace and in --record")
    func sameTableInTraces() async throws {
        let dir = try Self.temporaryDirectory("hostile-trace")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let log = dir + "/secrets.log", recording = dir + "/trace.jsonl"
        try Self.secretsLog.write(toFile: log, atomically: true, encoding: .utf8)
        let lines = Self.secretsLog.split(separator: "\n").filter { $0.contains("APDU: 90 A8") || $0.contains("APDU: 90 72") || $0.contains("APDU: FF ") || $0.contains("APDU: 00 ") }
        let commands = lines.map { $0.split(separator: ":", maxSplits: 1)[1].replacingOccurrences(of: " ", with: "") }
        #expect(commands.count == 9)
        try await withEmptySlot { slot in
            let (sent, _) = try withEmulator(["replay", log, "--order", "by-command"], in: slot) {
                try runAPDU(["send", "--raw", "--trace", "--record", recording, "-r", slot.reader] + commands)
            }
            #expect(sent.stderr.contains("trace: <"), "\(sent.stdout)\(sent.stderr)")
            let recorded = try String(contentsOfFile: recording, encoding: .utf8)
            #expect(recorded.contains("0026008106************"), "\(recorded)")
            let traced = sent.stderr.replacingOccurrences(of: " ", with: "")
            for run in Self.secretRuns where !["D1D2D3D4D5D6D7D8D9DADBDCDDDEDFD0", "E1E2E3E4E5E6E7E8E9EAEBECEDEEEFE0", "B1B2B3B4B5B6B7B8B9BABBBCBDBEBFB0"].contains(run) {
                #expect(!traced.contains(run), "--trace shows \(run):\n\(sent.stderr)")
                #expect(!recorded.contains(run), "--record holds \(run):\n\(recorded)")
            }
        }
    }

    @Test("replay convert -o and --record: an existing 0644 file ends 0600; a symlink is refused and what it points to is untouched")
    func privateFiles() throws {
        let dir = try Self.temporaryDirectory("private-files")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let log = dir + "/pin.log"
        try "00000001 Card ATR: 3B 00 \n00000002 APDU: 00 20 00 81 04 31 32 33 34 \n00000003 SW: 90 00 \n".write(toFile: log, atomically: true, encoding: .utf8)
        let wide = dir + "/wide.jsonl"
        try "old".write(toFile: wide, atomically: true, encoding: .utf8)
        chmod(wide, 0o644)
        let converted = try runAPDU(["replay", "convert", log, "-o", wide])
        #expect(converted.status == 0, "\(converted.stderr)")
        #expect(try Self.mode(wide) == 0o600, "the clear PIN stays world-readable")
        #expect(try String(contentsOfFile: wide, encoding: .utf8).contains("0020008104"))
        let target = dir + "/target", link = dir + "/link.jsonl"
        try "untouched".write(toFile: target, atomically: true, encoding: .utf8)
        chmod(target, 0o644)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let refused = try runAPDU(["replay", "convert", log, "-o", link])
        #expect(refused.status == 77 && refused.stderr.contains("symlink"), "\(refused.status) \(refused.stderr)")
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "untouched" && (try Self.mode(target)) == 0o644)
        // --record opens its file before any reader is looked for.
        let recording = dir + "/record.jsonl"
        try "old".write(toFile: recording, atomically: true, encoding: .utf8)
        chmod(recording, 0o644)
        _ = try runAPDU(["select", "-r", "no such reader", "--record", recording, "A000000527210101"])
        #expect(try Self.mode(recording) == 0o600)
        let recorded = try runAPDU(["select", "-r", "no such reader", "--record", link, "A000000527210101"])
        #expect(recorded.status != 0 && recorded.stderr.contains("symlink"), "\(recorded.status) \(recorded.stderr)")
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "untouched" && (try Self.mode(target)) == 0o644)
    }

    @Test("mrtd read --out and --face: a DG1 left 0644 ends 0600; a face path that is a symlink is refused, its target untouched")
    func passportFiles() async throws {
        let specimen = CLIMRTDSpecimens.standard
        let dir = try Self.temporaryDirectory("private-mrtd")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let dump = dir + "/dump"
        try FileManager.default.createDirectory(atPath: dump, withIntermediateDirectories: true)
        try "old".write(toFile: dump + "/DG1.bin", atomically: true, encoding: .utf8)
        chmod(dump + "/DG1.bin", 0o644)
        let target = dir + "/target"
        try "untouched".write(toFile: target, atomically: true, encoding: .utf8)
        chmod(target, 0o644)
        try FileManager.default.createSymbolicLink(atPath: dir + "/face.jpg", withDestinationPath: target)
        try await withInsertedCard(MRTDChip(document: specimen.document)) { inserted in
            let out = try runAPDU(["mrtd", "read", "-r", inserted.reader, "--mrz", specimen.mrzText, "--out", dump])
            #expect(out.status == 0, "\(out.stderr)")
            #expect(try Self.mode(dump + "/DG1.bin") == 0o600, "the MRZ stays world-readable")
            #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: dump + "/DG1.bin"))) == specimen.document.files[.dataGroup(1)])
            let face = try runAPDU(["mrtd", "read", "-r", inserted.reader, "--can", "123456", "--face", dir + "/face.jpg"])
            #expect(face.status == 77 && face.stderr.contains("symlink"), "\(face.status) \(face.stderr)")
        }
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "untouched" && (try Self.mode(target)) == 0o644)
    }

    @Test("replay-check: a command that resets the card where the log holds no reset, and one that crashes after sending every recorded APDU, are not matches (exit 1)")
    func resetAndCrash() async throws {
        let dir = try Self.temporaryDirectory("replay-reset")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let log = dir + "/two.log"
        try """
            00000001 winscard.c:253:SCardConnect() Attempting Connect to Reader 00 00 using protocol: 3
            00000002 Card ATR: 3B 02 14 50 
            00000003 APDU: 00 A4 04 00 02 3F 00 
            00000004 SW: 90 00 
            00000005 APDU: 00 B0 00 00 02 
            00000006 SW: 12 34 90 00 

            """.write(toFile: log, atomically: true, encoding: .utf8)
        let plain = dir + "/plain.script", reset = dir + "/reset.script"
        try "00A40400023F00\n00B0000002\n".write(toFile: plain, atomically: true, encoding: .utf8)
        try "00A40400023F00\nreset\n00B0000002\n".write(toFile: reset, atomically: true, encoding: .utf8)
        try await withEmptySlot { slot in
            let environment = ["APDU_READER": slot.reader]
            let good = try runAPDU(["replay-check", "--port", String(slot.port), log, "--", apduBinary, "script", plain], environment: environment)
            #expect(good.status == 0 && good.stdout.contains("matches the log: 2 of 2"), "\(good.stdout)\(good.stderr)")
            try waitForCard(in: slot.reader, present: false)
            let resetting = try runAPDU(["replay-check", "--port", String(slot.port), log, "--", apduBinary, "script", reset], environment: environment)
            #expect(resetting.status == 1, "\(resetting.stdout)\(resetting.stderr)")
            #expect(!resetting.stdout.contains("matches the log") && resetting.stdout.contains("reset the card after command 1; the log holds no reset there"), "\(resetting.stdout)")
            try waitForCard(in: slot.reader, present: false)
            let crash = try runAPDU(["replay-check", "--port", String(slot.port), log, "--", "/bin/sh", "-c", "\"$0\" script \"$1\" && kill -SEGV $$", apduBinary, plain],
                                    environment: environment)
            #expect(crash.status == 1, "\(crash.stdout)\(crash.stderr)")
            #expect(!crash.stdout.contains("matches the log") && crash.stdout.contains("crashed (signal 11, exit 139)"), "\(crash.stdout)")
        }
    }

    @Test("a pcscd log whose only exchange has an empty SW line, and one with no exchange, are served with the ATR they name and zero exchanges; the empty answer is named")
    func atrWithoutExchanges() async throws {
        let dir = try Self.temporaryDirectory("replay-atr")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let emptySW = dir + "/empty-sw.log", none = dir + "/none.log"
        try """
            00000001 readerfactory.c:1:RFAddReader() Card inserted into Reader 00 00
            00000002 Card ATR: 3B 02 14 51 
            00000003 APDU: 00 A4 04 00 02 3F 00 
            00000004 SW: 

            """.write(toFile: emptySW, atomically: true, encoding: .utf8)
        try """
            00000001 winscard.c:253:SCardConnect() Attempting Connect to Reader 00 00 using protocol: 3
            00000002 Card ATR: 3B 02 14 52 

            """.write(toFile: none, atomically: true, encoding: .utf8)
        for (log, atr) in [(emptySW, "3B021451"), (none, "3B021452")] {
            try await withEmptySlot { slot in
                let (answer, stderr) = try withEmulator(["replay", log], in: slot) { try runAPDU(["atr", "--json", "-r", slot.reader]) }
                #expect(answer.status == 0 && answer.stdout.contains(atr), "\(answer.stdout)\(answer.stderr)\(stderr)")
                #expect(stderr.contains("0 exchanges"), "\(stderr)")
                if log == emptySW { #expect(stderr.contains("line 3: the card's answer is not in the log (an empty SW line)"), "\(stderr)") }
            }
        }
    }
}
