import FoundationEssentials
import ISO7816
import Testing
@testable import VirtualCard

/// Session logs as users attach them (Tests/Fixtures/pcsc-logs/SOURCES.md cites each), and
/// hostile ones: each gives the sessions the log records, or one line naming its line.
@Suite("PC/SC session logs: pcsc-spy, pcscd --debug --apdu, our recordings")
struct SessionLogTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/pcsc-logs")

    static func fixture(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: folder.appendingPathComponent(name)))
    }

    static func parse(_ text: String) throws(SessionLogError) -> SessionLog { try SessionLog(parsing: Array(text.utf8)) }

    static func hex(_ bytes: [UInt8?]) -> String { bytes.map { $0.map { Hex.encode([$0]) } ?? "**" }.joined() }

    @Test("pcsc-spy of every era (1.8.26, 2.1.0, 2.5.1, in colour): one session, the reader, its ATR, SELECT then GET RESPONSE; the failed transmit and the escape are not exchanges",
          arguments: ["spy-1.8.26.log", "spy-2.1.0.log", "spy-2.5.1.log", "spy-2.5.1-colour.log"])
    func pcscSpyEras(_ name: String) throws {
        let log = try SessionLog(parsing: try Self.fixture(name))
        #expect(log.format == (name == "spy-2.5.1.log" || name == "spy-2.5.1-colour.log" ? .pcscSpy : .pcscSpyOld))
        #expect(log.sessions.count == 1)
        let session = try log.session(1)
        #expect(session.reader == "Gemalto PC Twin Reader 00 00")
        #expect(session.atr.map { Hex.encode($0) } == "3B8A80010031C173C8400000900090")
        #expect(session.exchanges.map { Self.hex($0.command) } == ["00A4040006D27600012401", "00C0000014"])
        #expect(session.exchanges.map { Self.hex($0.response) } == ["6114", "6F128406D27600012401A50873062A864886FC6B9000"])
        #expect(session.controls.map(\.code) == [0x4200_0D48] && session.controls.first?.received == [0x12, 0x04, 0x42, 0x33, 0x00, 0x12])
        #expect(log.notes.contains { $0.contains("SCardTransmit failed or brought no answer back") }, "\(log.notes)")
    }

    @Test("pcsc-spy with two threads (-t): the other thread's call inside a transmit does not break it; a handle never connected gets a session of its own")
    func pcscSpyThreads() throws {
        let log = try SessionLog(parsing: try Self.fixture("spy-2.5.1-threads.log"))
        let session = try log.session(1)
        #expect(session.reader == nil && session.atr == nil)
        #expect(session.exchanges.map { Self.hex($0.command) + "/" + Self.hex($0.response) } == ["00CA006E00/9000"])
        #expect(log.notes.isEmpty, "the footer is pcsc-spy's own: \(log.notes)")
    }

    @Test("pcscd 2.x colour log (web-eid): two SELECTs answered 90 00, trailing spaces lost; no ATR in the excerpt")
    func pcscdWebEID() throws {
        let log = try SessionLog(parsing: try Self.fixture("pcscd-webeid119-latvian-eid.log"))
        #expect(log.format == .pcscd)
        let session = try log.session(1)
        #expect(session.exchanges.map { Self.hex($0.command) } == ["00A4040C10A000000077010800070000FE00000100", "00A4090C04ADF13401"])
        #expect(session.exchanges.map { Self.hex($0.response) } == ["9000", "9000"])
        #expect(session.atr == nil && ReplayCard(session: session, order: .strict).atr == ReplayCard.placeholderATR)
    }

    @Test("pcscd 1.8 plain log (YubiKey NEO): the reader from Attempting Connect, the ATR from Card ATR; the PIV excerpt's last APDU has no SW and is not replayed")
    func pcscdYubiKey() throws {
        let connect = try SessionLog(parsing: try Self.fixture("pcscd-ypt63-yubikey-neo-connect.log"))
        #expect(connect.sessions.first?.reader == "Yubico Yubikey NEO OTP+CCID 00 00")
        #expect(connect.sessions.first?.atr.map { Hex.encode($0) } == "3BFC1300008131FE15597562696B65794E454F7233E1")
        // The two excerpts of the same paste, one after the other: the exchange lands in the connection.
        let both = try SessionLog(parsing: try Self.fixture("pcscd-ypt63-yubikey-neo-connect.log") + Self.fixture("pcscd-ypt63-yubikey-neo-piv.log"))
        let session = try both.session(1)
        #expect(session.reader == "Yubico Yubikey NEO OTP+CCID 00 00")
        #expect(session.exchanges.map { Self.hex($0.command) + "/" + Self.hex($0.response) } == ["00CB3FFF055C035FC10A/6A82"])
        #expect(both.notes.contains { $0.contains("the log ends before this APDU's SW line") }, "\(both.notes)")
    }

    @Test("pcscd: an SW with no APDU at the start is named and passed over; response data ending in 90 00 stays whole; CCID frames are never APDUs")
    func pcscdOpenPGP() throws {
        let log = try SessionLog(parsing: try Self.fixture("pcscd-ccid79-openpgp-getdata.log"))
        let session = try log.session(1)
        #expect(session.exchanges.map { Self.hex($0.command) + "/" + Self.hex($0.response) } == ["00CA5F5200/0031C573C001400590009000"])
        #expect(log.notes.first?.contains("an SW line with no APDU before it") == true, "\(log.notes)")
    }

    @Test("logs without a card session are refused in one line: a pcsc-spy log with no transmit, an empty SW, an APDU never answered")
    func noSession() throws {
        for (name, why) in [("spy-pcsc159-no-transmit.log", "no card session"), ("pcscd-pcsc117-empty-sw.log", "empty SW line"),
                            ("pcscd-ccid72-unanswered.log", "ends before this APDU's SW line")] {
            let bytes = try Self.fixture(name)
            #expect(throws: SessionLogError.self) { try SessionLog(parsing: bytes) }
            do { _ = try SessionLog(parsing: bytes) } catch {
                #expect(error.description.contains("no card session") && error.description.contains(why), "\(name): \(error)")
                #expect(!error.description.contains("\n"))
            }
        }
    }

    @Test("our recording still reads as before, now through the same parser")
    func recording() throws {
        let text = """
            {"type":"session","tool":"apdu 0.1.0","command":"send"}
            {"type":"connect","reader":"ACS ACR122U 00 00","atr":"3B8F8001804F0CA0000003060300030000000068"}
            {"type":"exchange","command":"0020008104********","response":"9000","us":812,"purpose":"command"}
            {"type":"end","status":0}
            """
        let log = try Self.parse(text)
        #expect(log.format == .recording && log.sessions.first?.reader == "ACS ACR122U 00 00")
        let card = ReplayCard(session: try log.session(1), order: .strict)
        #expect(card.process([0x00, 0x20, 0x00, 0x81, 0x04, 1, 2, 3, 4]) == [0x90, 0x00], "a redacted PIN matches any byte")
    }

    @Test("sessions run from SCardConnect to SCardDisconnect; --session picks one; there is no session 3")
    func sessions() throws {
        let connect = "00000001 winscard.c:1:SCardConnect() Attempting Connect to Reader A 00 00 using protocol: 3\n00000001 Card ATR: 3B 00 \n"
        let exchange = "00000001 APDU: 00 A4 00 00 \n00000001 SW: 90 00 \n"
        let disconnect = "00000001 winscard.c:2:SCardDisconnect() Active Contexts: 1\n"
        let second = "00000001 winscard.c:1:SCardConnect() Attempting Connect to Reader B 00 00 using protocol: 3\n00000001 APDU: 00 B0 00 00 02 \n00000001 SW: 12 34 90 00 \n"
        let log = try Self.parse(connect + exchange + disconnect + second)
        #expect(log.sessions.map(\.reader) == ["Reader A 00 00", "Reader B 00 00"])
        #expect(try log.session(2).exchanges.map { Self.hex($0.response) } == ["12349000"])
        #expect(throws: SessionLogError.self) { try log.session(3) }
    }

    @Test("interleaved threads in a pcscd log pair each APDU with its own thread's SW")
    func interleavedThreads() throws {
        let text = """
            00000001 [111] APDU: 00 01 00 00 
            00000001 [222] APDU: 00 02 00 00 
            00000001 [222] SW: 22 90 00 
            00000001 [111] SW: 11 90 00 
            """
        let session = try Self.parse(text).session(1)
        #expect(session.exchanges.map { Self.hex($0.command) + "/" + Self.hex($0.response) } == ["00020000/229000", "00010000/119000"])
    }

    @Test("hostile logs: garbled hex, a dump that jumps or lies about its length, a log of no kind, an empty one: one line naming the line, never a trap")
    func hostile() throws {
        let spyHead = "SCardTransmit\n i hCard: 0x1\n i bSendLength 0x00000004 (4)\n i bSendBuffer\n"
        let cases: [(String, String)] = [
            ("00000001 APDU: 00 ZZ 00 00 \n00000001 SW: 90 00 \n", "line 1: the APDU holds something that is not hex"),
            (spyHead + " i  0010 00 A4 04 00                                     ....\n o bRecvLength 0x00000002 (2)\n o bRecvBuffer\n o  0000 90 00  ..\n => SCARD_S_SUCCESS [0x00000000]  [0.000001]\n",
             "line 5: bSendBuffer jumps to offset 0010"),
            (spyHead + " i  0000 00 A4                                           ..\n o bRecvLength 0x00000002 (2)\n o bRecvBuffer\n o  0000 90 00  ..\n => SCARD_S_SUCCESS [0x00000000]  [0.000001]\n",
             "line 5: bSendBuffer holds something that is not hex where 4 bytes belong"),
            (spyHead + " i  0000 00 A4 GG 00                                     ....\n o bRecvLength 0x00000002 (2)\n o bRecvBuffer\n o  0000 90 00  ..\n => SCARD_S_SUCCESS [0x00000000]  [0.000001]\n",
             "line 5: bSendBuffer holds something that is not hex"),
            ("hello\nworld\n", "line 1: not a log this reads"),
            ("\n\n", "the log is empty"),
            ("{\"type\":\"exchange\",\"command\":\"00\"}\n", "line 1: an exchange needs a hex command and response"),
        ]
        for (text, message) in cases {
            do {
                _ = try Self.parse(text)
                Issue.record("accepted: \(text)")
            } catch {
                #expect(error.description.contains(message), "\(error.description) — wanted \(message)")
            }
        }
        // A transmit cut inside its dump: replayed up to the exchange before it.
        let whole = "SCardConnect\n i szReader R 00 00\n o phCard 0x1 (1)\n => SCARD_S_SUCCESS [0x00000000]  [0.000001]\n"
            + spyHead + " i  0000 00 A4 04 00                                     ....\n o bRecvLength 0x00000002 (2)\n o bRecvBuffer\n o  0000 90 00                                           ..\n => SCARD_S_SUCCESS [0x00000000]  [0.000001]\n"
        let cut = try Self.parse(whole + spyHead + " i  0000 00 B0")
        #expect(cut.sessions.first?.exchanges.count == 1)
        #expect(cut.notes.last?.contains("the log ends inside SCardTransmit; replayed up to the exchange before it") == true, "\(cut.notes)")
        // A 20,000-byte APDU line and a reader name with control characters parse; nothing is lost.
        let long = (0..<20_000).map { _ in "AB" }.joined(separator: " ")
        let odd = try Self.parse("00000001 winscard.c:1:SCardConnect() Attempting Connect to Evil\u{1B}[2J\u{7} 00 00 using protocol: 3\n00000001 APDU: \(long) \n00000001 SW: 90 00 \n")
        #expect(odd.sessions.first?.exchanges.first?.command.count == 20_000)
        #expect(odd.sessions.first?.reader?.contains("\u{7}") == true, "kept as logged; the CLI makes it safe to print")
    }

    @Test("redaction on import: VERIFY's PIN, a tag password, EXTERNAL AUTHENTICATE, a PAN and track 2 in a record; masked bytes still replay")
    func redaction() throws {
        let pan: [UInt8] = [0x70, 0x13, 0x5A, 0x08, 0x41, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x57, 0x07, 0x41, 0x11, 0x11, 0x11, 0xD2, 0x51, 0x20, 0x90, 0x00]
        var session = RecordedSession(atr: [0x3B, 0x00], line: 1)
        let exchanges: [([UInt8], [UInt8])] = [
            ([0x00, 0x20, 0x00, 0x81, 0x04, 0x31, 0x32, 0x33, 0x34], [0x90, 0x00]),
            ([0xFF, 0x00, 0x00, 0x00, 0x07, 0xD4, 0x42, 0x1B, 0xAA, 0xBB, 0xCC, 0xDD], [0xD5, 0x43, 0x00, 0x80, 0x80, 0x90, 0x00]),
            ([0x00, 0x82, 0x00, 0x00, 0x04, 0x01, 0x02, 0x03, 0x04], [0x05, 0x06, 0x90, 0x00]),
            ([0x00, 0xB2, 0x01, 0x0C, 0x00], pan),
            ([0x00, 0xA4, 0x04, 0x00, 0x02, 0x3F, 0x00], [0x90, 0x00]),
        ]
        for (i, (command, response)) in exchanges.enumerated() {
            session.exchanges.append(RecordedSession.Exchange(command: command, response: response, line: i + 2))
        }
        let findings = SessionRedaction.findings(session)
        #expect(findings.map(\.exchange) == [1, 2, 3, 4, 4], "\(findings)")
        let (masked, _) = SessionRedaction.redacted(session)
        #expect(Self.hex(masked.exchanges[0].command) == "0020008104********")
        #expect(Self.hex(masked.exchanges[1].command) == "FF00000007D4421B********")
        #expect(Self.hex(masked.exchanges[2].command) == "0082000004********" && Self.hex(masked.exchanges[2].response) == "****9000")
        #expect(!Self.hex(masked.exchanges[3].response).contains("4111111111111111") && Self.hex(masked.exchanges[3].response).hasSuffix("9000"))
        #expect(masked.exchanges[4] == session.exchanges[4], "a SELECT holds no secret")
        let card = ReplayCard(session: masked, order: .strict)
        #expect(card.process(exchanges[0].0.dropLast(4) + [9, 9, 9, 9]) == [0x90, 0x00], "the masked PIN matches any PIN")
    }
    @Test("issue 48: a pcsc-spy length of Int.min before two dump lines is one line naming the length line, never a trap")
    func spyLengthOverflow() throws {
        let text = "SCardTransmit\n i hCard: 0x1\n i bSendLength 0x00000005 (-9223372036854775808)\n i bSendBuffer\n"
            + " i  0000 00 A4 04 00 00 00 00 00 00 00 00 00 00 00 00 00  ................\n"
            + " i  0010 00 A4 04 00 00 00 00 00 00 00 00 00 00 00 00 00  ................\n"
            + " o bRecvLength 0x00000002 (2)\n o bRecvBuffer\n o  0000 90 00  ..\n => SCARD_S_SUCCESS [0x00000000]  [0.000001]\n"
        do {
            _ = try Self.parse(text)
            Issue.record("accepted")
        } catch {
            #expect(error.description == "line 3: bSendLength says -9223372036854775808 bytes; a buffer holds 0 to 65544", "\(error)")
        }
    }

    @Test("issue 48: a pcscd log whose only exchange has an empty SW keeps the ATR it names, with zero exchanges and the reason")
    func emptySWKeepsATR() throws {
        let log = try Self.parse("00000001 Card ATR: 3B 02 14 51 \n00000002 APDU: 00 A4 04 00 02 3F 00 \n00000003 SW: \n")
        let session = try log.session(1)
        #expect(session.atr == [0x3B, 0x02, 0x14, 0x51] && session.exchanges.isEmpty)
        #expect(log.notes.contains { $0.contains("line 2: the card's answer is not in the log (an empty SW line)") }, "\(log.notes)")
    }

    @Test("issue 48: resets inside a session are read from pcsc-spy's SCardReconnect and a recording's reconnect")
    func resets() throws {
        let recording = """
            {"type":"connect","reader":"R","atr":"3B00"}
            {"type":"exchange","command":"00A4000000","response":"9000"}
            {"type":"reconnect","reader":"R","atr":"3B00"}
            {"type":"exchange","command":"00B0000000","response":"9000"}
            """
        #expect(try Self.parse(recording).session(1).resets == [1])
        let exchange = "SCardTransmit\n i hCard: 0x1\n i bSendLength 0x00000004 (4)\n i bSendBuffer\n i  0000 00 A4 04 00  ....\n o bRecvLength 0x00000002 (2)\n o bRecvBuffer\n o  0000 90 00  ..\n => SCARD_S_SUCCESS [0x00000000]  [0.000001]\n"
        let reconnect = "SCardReconnect\n i hCard: 0x1\n i dwShareMode: SCARD_SHARE_SHARED (0x00000002)\n i dwPreferredProtocols: 0x00000003\n i dwInitialization: SCARD_RESET_CARD (0x00000001)\n o pdwActiveProtocol: 0x00000002\n => SCARD_S_SUCCESS [0x00000000]  [0.000001]\n"
        #expect(try Self.parse(exchange + reconnect + exchange).session(1).resets == [1])
    }

    @Test("issue 48: one table: each secret the review found is masked on import, and the trace and recording form of the same command hides the same bytes")
    func oneTable() throws {
        let cases: [(command: String, response: String, hidden: String)] = [
            ("90A800001200900102030405060708090A0B0C0D0E0F1000", "9000", "0102030405060708090A0B0C0D0E0F10"),
            ("A8014011121314151617181920212223242526", "90", "11121314151617181920212223242526"),
            ("70004000", "90A1A2A3A4A5A6A7A8A9AAABACADAEAFA0", "A1A2A3A4A5A6A7A8A9AAABACADAEAFA0"),
            ("76004000", "90B1B2B3B4B5B6B7B8B9BABBBCBDBEBFB0", "B1B2B3B4B5B6B7B8B9BABBBCBDBEBFB0"),
            ("FF0000000FD4400160046B65796B657901020304", "D54100" + "9000", "6B65796B6579"),
            ("FF00000008D440011B70617373", "D54100808090" + "00", "70617373"),
            ("0026008106313937333139", "9000", "313937333139"),
            ("00B2010C00", "70129F0B0F534543524554484F4C4445524E414D9000", "534543524554484F4C4445524E414D"),
            ("00B2020C00", "70405A0847617390010100109000", "4761739001010010"),
            ("00DB3FFF0A4D08B6007F4802920151", "9000", "7F4802920151"),
            ("00FFFFFF1B039B18" + String(repeating: "4B", count: 24), "9000", String(repeating: "4B", count: 24)),
        ]
        for (i, c) in cases.enumerated() {
            let command = try Hex.decode(c.command), response = try Hex.decode(c.response)
            var session = RecordedSession(atr: [0x3B, 0x00], line: 1)
            session.exchanges = [RecordedSession.Exchange(command: command, response: response, line: i + 1)]
            let masked = SessionRedaction.redacted(session).session.exchanges[0]
            #expect(!(Self.hex(masked.command) + "/" + Self.hex(masked.response)).contains(c.hidden), "case \(i + 1): \(Self.hex(masked.command))/\(Self.hex(masked.response))")
            // What traces and --record print: the command by the table, the response's data by it too.
            let secrets = Redaction.secrets(command: command, response: response)
            let traced = Redaction.hex(command, separator: "")
            var shownResponse = response.map { Optional($0) }
            for r in secrets.compactMap(\.response) { for k in r { shownResponse[k] = nil } }
            #expect(!(traced + "/" + Self.hex(shownResponse)).contains(c.hidden), "case \(i + 1) in a trace: \(traced)/\(Self.hex(shownResponse))")
        }
    }
}
