// A PC/SC session log of any kind users attach to bug reports, read into the card sessions it
// recorded: our own `--record` JSON Lines, pcsc-lite's `pcsc-spy` (both eras) and
// `pcscd --foreground --debug --apdu`.
import FoundationEssentials
import ISO7816

/// One connection to a card as a log recorded it: from SCardConnect to SCardDisconnect.
public struct RecordedSession: Sendable, Hashable {
    /// A command and the card's whole response (data and status word). A byte that was redacted
    /// (`**`) is nil; in a command it matches any byte, in a response it replays as 00.
    public struct Exchange: Sendable, Hashable {
        public var command: [UInt8?]
        public var response: [UInt8?]
        /// The log line the command is on (1-based).
        public var line: Int

        public init(command: [UInt8?], response: [UInt8?], line: Int) {
            self.command = command
            self.response = response
            self.line = line
        }
    }

    /// A reader escape (SCardControl): listed, never replayed (vpcd cannot carry them).
    public struct Control: Sendable, Hashable {
        public var code: UInt32
        public var sent: [UInt8]
        public var received: [UInt8]
        public var line: Int
    }

    /// The reader's name as the log gave it (pcscd names the vpcd slot itself).
    public var reader: String?
    /// The card's ATR, when the log shows it.
    public var atr: [UInt8]?
    public var exchanges: [Exchange] = []
    public var controls: [Control] = []
    /// Each reset of the card the log shows inside the session (SCardReconnect with
    /// SCARD_RESET_CARD or SCARD_UNPOWER_CARD, a recording's `reconnect`), as the number of
    /// exchanges before it.
    public var resets: [Int] = []
    /// The line the session starts on.
    public var line: Int

    public init(reader: String? = nil, atr: [UInt8]? = nil, line: Int) {
        self.reader = reader
        self.atr = atr
        self.line = line
    }
}

/// Why a log cannot be replayed: one line, naming the log's line where there is one.
public struct SessionLogError: Error, Sendable, Hashable, CustomStringConvertible {
    public var line: Int?
    public var reason: String
    public init(line: Int?, _ reason: String) {
        self.line = line
        self.reason = reason
    }
    public var description: String { line.map { "line \($0): \(reason)" } ?? reason }
}

/// A session log, its format detected from the content, and the card sessions it holds.
public struct SessionLog: Sendable {
    public enum Format: String, Sendable, Hashable {
        case recording = "apdu --record JSON Lines"
        case pcscSpy = "pcsc-spy (pcsc-lite 2.2 and later)"
        case pcscSpyOld = "pcsc-spy (pcsc-lite before 2.2)"
        case pcscd = "pcscd --debug --apdu"
    }

    public var format: Format
    /// In the order the log opened them.
    public var sessions: [RecordedSession]
    /// What was passed over or cut, one line each ("line 12: …"): never silent.
    public var notes: [String]

    /// Reads `bytes` (UTF-8; a BOM and CRLF are fine; ANSI colour is removed).
    /// - Throws: `SessionLogError` for a log of no known kind, a garbled line inside an exchange,
    ///   or a log without a card session.
    public init(parsing bytes: [UInt8]) throws(SessionLogError) {
        let lines = TextInput.normalized(bytes).split(separator: "\n", omittingEmptySubsequences: false).map { Self.withoutColour(String($0)) }
        guard let first = lines.firstIndex(where: { !$0.trimmingWhitespace.isEmpty }) else {
            throw SessionLogError(line: nil, "the log is empty")
        }
        var parsed: (Format, [RecordedSession], [String])
        if lines[first].trimmingWhitespace.hasPrefix("{") {
            parsed = try RecordingParser.parse(lines)
        } else if lines.contains(where: PCSCSpyParser.isCallName) {
            parsed = try PCSCSpyParser.parse(lines)
        } else if lines.contains(where: { PCSCDParser.body(of: $0) != nil }) {
            parsed = try PCSCDParser.parse(lines)
        } else {
            throw SessionLogError(line: first + 1, "not a log this reads: an apdu --record recording, pcsc-spy output or a pcscd --debug --apdu log")
        }
        (format, sessions, notes) = parsed
        guard !sessions.isEmpty else {
            // Say why when the log shows it (an exchange the card never answered, say).
            throw SessionLogError(line: nil, "the log holds no card session (no SCardConnect and no exchange with a card)"
                + (notes.first.map { "; \($0)" } ?? ""))
        }
    }

    /// The session `number` (1-based), as `--session N` picks it.
    public func session(_ number: Int) throws(SessionLogError) -> RecordedSession {
        guard (1...sessions.count).contains(number) else {
            throw SessionLogError(line: nil, "the log holds \(sessions.count) session\(sessions.count == 1 ? "" : "s"); there is no session \(number)")
        }
        return sessions[number - 1]
    }

    static func withoutColour(_ line: String) -> String {
        guard line.contains("\u{1B}") else { return line }
        var out = ""
        var chars = line.makeIterator()
        while let c = chars.next() {
            guard c == "\u{1B}" else { out.append(c); continue }
            // CSI: ESC [ parameters final-letter.
            guard let bracket = chars.next(), bracket == "[" else { continue }
            while let p = chars.next(), !p.isLetter {}
        }
        return out
    }

    /// Hex bytes separated by spaces (`00 A4 04 00`), `**` for a redacted byte; nil when any
    /// token is not a byte.
    static func bytes(_ text: Substring) -> [UInt8?]? {
        var out: [UInt8?] = []
        for token in text.split(separator: " ", omittingEmptySubsequences: true) {
            if token == "**" { out.append(nil); continue }
            guard token.count == 2, let byte = UInt8(token, radix: 16) else { return nil }
            out.append(byte)
        }
        return out
    }
}

// MARK: apdu --record JSON Lines

enum RecordingParser {
    static func parse(_ lines: [String]) throws(SessionLogError) -> (SessionLog.Format, [RecordedSession], [String]) {
        struct Line: Decodable {
            let type: String
            let reader: String?
            let atr: String?
            let command: String?
            let response: String?
        }
        var session: RecordedSession?
        let decoder = JSONDecoder()
        for (index, raw) in lines.enumerated() {
            let number = index + 1
            let text = raw.trimmingWhitespace
            if text.isEmpty { continue }
            let line: Line
            do { line = try decoder.decode(Line.self, from: Data(text.utf8)) } catch {
                throw SessionLogError(line: number, "not a recording line (JSON with a \"type\")")
            }
            switch line.type {
            case "connect", "reconnect":
                if line.type == "reconnect", let count = session?.exchanges.count, count > 0 { session!.resets.append(count) }
                guard let hex = line.atr, let atr = try? Hex.decode(hex), !atr.isEmpty else { continue }
                if session == nil { session = RecordedSession(reader: line.reader, atr: atr, line: number) }
            case "exchange":
                guard let command = line.command.flatMap(pairs), !command.isEmpty, let response = line.response.flatMap(pairs), response.count >= 2 else {
                    throw SessionLogError(line: number, "an exchange needs a hex command and response")
                }
                if session == nil { session = RecordedSession(line: number) }
                session!.exchanges.append(RecordedSession.Exchange(command: command, response: response, line: number))
            default:
                continue
            }
        }
        guard let session, session.atr != nil else {
            throw SessionLogError(line: 1, "the recording holds no connection (no ATR to present)")
        }
        return (.recording, [session], [])
    }

    /// Hex as recordings write it, in pairs without spaces (`00A4**`), `**` for a redacted
    /// byte; nil when a pair is not a byte.
    static func pairs(_ hex: String) -> [UInt8?]? {
        let chars = Array(hex.filter { $0 != " " })
        guard chars.count % 2 == 0 else { return nil }
        return SessionLog.bytes(Substring(stride(from: 0, to: chars.count, by: 2).map { String(chars[$0..<$0 + 2]) }.joined(separator: " ")))
    }
}
