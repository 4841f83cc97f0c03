import Foundation
import ISO7816
import Testing
import TestSupport
import VirtualCard

@Suite("apdu send/select/sw: ISO 7816 handling through pcscd")
struct CLIISO7816Tests {
    func host(_ configure: (inout HostBehaviour) -> Void) -> ApplicationHost {
        var b = HostBehaviour()
        configure(&b)
        return ApplicationHost(applications: [DemoApplication()], behaviour: b)
    }

    @Test("61xx answered with GET RESPONSE in the command's own CLA: 1000 bytes arrive whole")
    func getResponse() async throws {
        let card = host { $0.usesGetResponse = true; $0.requiresGetResponseCLA = true }
        try await withInsertedCard(card) { inserted in
            let r = try runAPDU(["send", "--json", "-r", inserted.reader, demoSelect, "80EE03E800"])
            #expect(r.status == 0, "\(r.stderr)")
            let doc = try #require(try r.json() as? [String: Any])
            let exchanges = try #require(doc["exchanges"] as? [[String: Any]])
            let data = try #require(exchanges[1]["data"] as? String)
            #expect(data.count == 2000)
            #expect(exchanges[1]["sw"] as? String == "9000")
            // Proof from the card's own log: every GET RESPONSE after the long command used CLA 80.
            let log = card.log
            let getResponses = log.drop { $0.first != 0x80 || $0[1] != 0xEE }.filter { $0.count == 5 && $0[1] == 0xC0 }
            #expect(getResponses.count == 4 && getResponses.allSatisfy { $0[0] == 0x80 })
        }
    }

    @Test("--raw leaves 61xx to the user")
    func raw() async throws {
        try await withInsertedCard(host { $0.usesGetResponse = true }) { inserted in
            let r = try runAPDU(["send", "--raw", "-r", inserted.reader, demoSelect])
            #expect(r.status == 0)
            #expect(r.stdout.contains("< 61 1D  (611D: 29 response bytes still available"))
        }
    }

    @Test("6Cxx: re-sent with the exact Le, shown in the trace")
    func wrongLe() async throws {
        try await withInsertedCard(host { $0.answersWrongLe = true }) { inserted in
            let r = try runAPDU(["send", "--trace", "-r", inserted.reader, "00A4040C06F06170647501", "00CA000000"])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stdout.contains("< 53 4E 2D 30 30 30 31 90 00"))
            #expect(r.stderr.contains("trace: < 6C 07"))
            #expect(r.stderr.contains("trace: > 00 CA 00 00 07 [resendWithLe]"))
        }
    }

    @Test("an allowlist refuses other SELECTs with 77 before anything reaches the card")
    func allowlist() async throws {
        let card = host { _ in }
        try await withInsertedCard(card) { inserted in
            let refused = try runAPDU(["send", "-r", inserted.reader, "--allow-aid", "A0000000031010", demoSelect])
            #expect(refused.status == 77)
            #expect(refused.stderr.contains("SELECT of AID F06170647501 refused"))
            let viaEnv = try runAPDU(["select", "-r", inserted.reader, "F06170647501"], environment: ["APDU_ALLOW_AIDS": "A000000003*"])
            #expect(viaEnv.status == 77)
            #expect(card.log.isEmpty, "the refused SELECT reached the card: \(card.log)")
            let allowed = try runAPDU(["send", "-r", inserted.reader, "--allow-aid", "F0617064*", demoSelect])
            #expect(allowed.status == 0)
            #expect(card.log.count == 1)
        }
    }

    @Test("an iOS Info.plist's select-identifiers is an allowlist")
    func plistAllowlist() async throws {
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0"><dict>
            <key>com.apple.developer.nfc.readersession.iso7816.select-identifiers</key>
            <array><string>D2760000850101</string><string>F06170647501</string></array>
            </dict></plist>
            """
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("Info-\(UUID()).plist")
        try plist.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let card = host { _ in }
        try await withInsertedCard(card) { inserted in
            let ok = try runAPDU(["select", "-r", inserted.reader, "--allow-aids", file.path, "F06170647501"])
            #expect(ok.status == 0, "\(ok.stderr)")
            let no = try runAPDU(["select", "-r", inserted.reader, "--allow-aids", file.path, "A0000000031010"])
            #expect(no.status == 77)
            #expect(card.log.count == 1)
        }
        let bad = try runAPDU(["select", "--allow-aids", "/nonexistent", "F06170647501"])
        #expect(bad.status == 64)
    }

    @Test("PINs are redacted in traces and JSON unless --show-secrets")
    func redaction() async throws {
        try await withInsertedCard(host { _ in }) { inserted in
            let r = try runAPDU(["send", "--trace", "--json", "-r", inserted.reader, demoSelect, "0020008104 31323334"])
            #expect(r.status == 0)
            #expect(!r.stderr.contains("31 32 33 34"))
            #expect(r.stderr.contains("trace: > 00 20 00 81 04 ** ** ** **"))
            #expect(!r.stdout.contains("31323334"))
            #expect(r.stdout.contains("\"redacted\":true"))
            let text = try runAPDU(["send", "-r", inserted.reader, demoSelect, "0020008104 31323334"])
            #expect(!text.stdout.contains("31 32 33 34"))
            let shown = try runAPDU(["send", "--trace", "--show-secrets", "-r", inserted.reader, demoSelect, "0020008104 31323334"])
            #expect(shown.stderr.contains("31 32 33 34"))
        }
    }

    @Test("select decodes the FCI as a TLV tree; JSON carries it")
    func select() async throws {
        try await withInsertedCard(host { _ in }) { inserted in
            let r = try runAPDU(["select", "-r", inserted.reader, "F06170647501"])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stdout.contains("SELECT F06170647501: 9000"))
            #expect(r.stdout.contains("  84 (DF name (AID)) F0 61 70 64 75 01"))
            #expect(r.stdout.contains("\"swift-apdu demo\""))
            let j = try runAPDU(["select", "--json", "-r", inserted.reader, "F06170647501"])
            let doc = try #require(try j.json() as? [String: Any])
            let tlv = try #require(doc["tlv"] as? [[String: Any]])
            #expect(tlv.first?["tag"] as? String == "6F")
            let missing = try runAPDU(["select", "-r", inserted.reader, "A0000000031010"])
            #expect(missing.status == 1)
            #expect(missing.stderr.contains("6A82"))
        }
    }

    @Test("sw explains offline; bad words are usage errors")
    func sw() throws {
        let r = try runAPDU(["sw", "63 C2"])
        #expect(r.stdout == "63C2: warning: verification failed: 2 tries left (counter 2)\n")
        let bad = try runAPDU(["sw", "9"])
        #expect(bad.status == 64)
    }
}

@Suite("apdu atr")
struct CLIATRTests {
    @Test("an Ultralight storage-card ATR: Part 3 fields, TCK, pcsc-tools name")
    func storageCard() throws {
        let r = try runAPDU(["atr", "3B 8F 80 01 80 4F 0C A0 00 00 03 06 03 00 03 00 00 00 00 68"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("PC/SC storage card: ISO 14443 A part 3, MIFARE Ultralight (0003)"))
        #expect(r.stdout.contains("TCK 68  valid"))
        #expect(r.stdout.contains("known as: RFID - ISO 14443 Type A - NXP Mifare Ultralight"))
    }

    @Test("the ATR of the card in a reader, as JSON")
    func fromReader() async throws {
        try await withInsertedCard(ApplicationHost(applications: [])) { inserted in
            let r = try runAPDU(["atr", "--json", "-r", inserted.reader])
            #expect(r.status == 0, "\(r.stderr)")
            let doc = try #require(try r.json() as? [String: Any])
            #expect(doc["atr"] as? String == ApplicationHost.defaultATR.hexString)
            #expect(doc["historicalBytes"] as? String == Array("swift-apdu".utf8).hexString)
            #expect(doc["tckValid"] as? Bool == true)
        }
    }

    @Test("malformed ATRs are usage errors naming the byte", arguments: [
        ("3B8F80", "TD2 announced but missing"),
        ("3C00", "TS must be 3B or 3F"),
        ("3B", "at least TS and T0"),
        ("3B0201", "2 historical bytes, only 1"),
        ("3B80010000", "unexpected bytes after TCK"),
    ])
    func malformed(hex: String, message: String) throws {
        let r = try runAPDU(["atr", hex])
        #expect(r.status == 64)
        #expect(r.stderr.contains(message), "\(r.stderr)")
    }
}

@Suite("apdu script")
struct CLIScriptTests {
    @Test("a scriptor script runs on one connection; expectations pass")
    func runs() async throws {
        let card = ApplicationHost(applications: [DemoApplication()])
        try await withInsertedCard(card) { inserted in
            let script = "# demo\n00A4040006F06170647501 00 => 9000\nreset\n00CA000000 => 6D00\n00A4040006F06170647501\n00 EE 00 00 \\\n 02 CA FE => 9000\n"
            let r = try runAPDU(["script", "-r", inserted.reader, "-"], stdin: script)
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stdout.contains("reset"))
            #expect(r.stdout.contains("< CA FE 90 00"))
            let j = try runAPDU(["script", "--json", "-r", inserted.reader, "-"], stdin: script)
            let doc = try #require(try j.json() as? [String: Any])
            #expect(doc["ok"] as? Bool == true)
            #expect((doc["steps"] as? [Any])?.count == 5)
        }
    }

    @Test("every exchange prints as two lines, the same from script and send: the command (a PIN as **), the answer and its word explained")
    func lines() async throws {
        let card = ApplicationHost(applications: [DemoApplication()])
        try await withInsertedCard(card) { inserted in
            let commands = ["00A4040006F06170647501", "00EE000002CAFE", "0020008104 31323334", "00CA000000"]
            let r = try runAPDU(["script", "--keep-going", "-r", inserted.reader, "-"], stdin: commands.map { $0 + " => 9000" }.joined(separator: "\n"))
            // What the card answers, asked of a twin in process; the lines are built here from it.
            let twin = ApplicationHost(applications: [DemoApplication()])
            let answers = try commands.map { twin.process(try Hex.decode($0)) }
            #expect(card.log == twin.log)
            let shown = ["00 A4 04 00 06 F0 61 70 64 75 01", "00 EE 00 00 02 CA FE", "00 20 00 81 04 ** ** ** **", "00 CA 00 00 00"]
            var expected: [String] = []
            for (command, answer) in zip(shown, answers) {
                let word = StatusWord(answer[answer.count - 2], answer[answer.count - 1])
                expected.append("> " + command)
                expected.append("< " + Hex.encode(answer, separator: " ") + "  (\(word): \(word.meaning.text))" + (word == .success ? "" : "  MISMATCH"))
            }
            #expect(r.status == (answers.allSatisfy { $0.suffix(2) == [0x90, 0x00] } ? 0 : 1), "\(r.stderr)")
            #expect(r.stdout.split(separator: "\n").map(String.init) == expected)
            #expect(!r.stdout.contains("31 32 33 34"))
            let sent = try runAPDU(["send", "-r", inserted.reader] + commands)
            #expect(sent.stdout.split(separator: "\n").map(String.init) == expected.map { $0.replacingOccurrences(of: "  MISMATCH", with: "") })
        }
    }

    @Test("a mismatch stops the script with exit 1 naming the line")
    func mismatch() async throws {
        let card = ApplicationHost(applications: [DemoApplication()])
        try await withInsertedCard(card) { inserted in
            let r = try runAPDU(["script", "-r", inserted.reader, "-"], stdin: "00A4040005A000000003 => 9000\n00CA000000\n")
            #expect(r.status == 1)
            #expect(r.stderr.contains("line 1: answered 6A82"))
            #expect(card.log.count == 1)
        }
    }

    @Test("a malformed script is bad data (65) before anything is sent; an allowlist refusal is 77")
    func malformed() async throws {
        let bad = try runAPDU(["script", "-"], stdin: "00A4040006F06170647501\n00 zz\n")
        #expect(bad.status == 65)
        #expect(bad.stderr.contains("script line 2"))
        let refused = try runAPDU(["script", "--allow-aid", "A0000000031010", "-"], stdin: "00A4040006F06170647501\n")
        #expect(refused.status == 77)
        let missing = try runAPDU(["script", "/nonexistent/script"])
        #expect(missing.status == 64)
    }
}

@Suite("extended and chained commands through pcscd")
struct CLIExtendedTests {
    @Test("a 600-byte command goes through pcscd as one extended APDU, answered whole")
    func longCommands() async throws {
        let data = (0..<600).map { UInt8($0 % 256) }
        let command = "00EE0000" + "000258" + data.hexString + "0000"
        let extendedCard = ApplicationHost(applications: [DemoApplication()])
        try await withInsertedCard(extendedCard) { inserted in
            let r = try runAPDU(["send", "--json", "-r", inserted.reader, demoSelect, command])
            #expect(r.status == 0, "\(r.stderr)")
            let doc = try #require(try r.json() as? [String: Any])
            let exchanges = try #require(doc["exchanges"] as? [[String: Any]])
            #expect(exchanges[1]["data"] as? String == data.hexString)
            let lastLength = extendedCard.log.last?.count ?? 0
            #expect(lastLength == 609)
        }
    }

    @Test("GET RESPONSE asks for no more than the caller wants")
    func wantedLe() async throws {
        var b = HostBehaviour()
        b.usesGetResponse = true
        let card = ApplicationHost(applications: [DemoApplication()], behaviour: b)
        try await withInsertedCard(card) { inserted in
            // ECHO of 32 pattern bytes with Ne 16: the card says 61 20, we ask for 10 (16 wanted).
            let r = try runAPDU(["send", "--trace", "-r", inserted.reader, demoSelect, "00EE002010"])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stderr.contains("trace: > 00 C0 00 00 10 [getResponse]"))
        }
    }
}
