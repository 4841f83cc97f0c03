// What in an imported session log looks secret, by the one table our traces and recordings
// redact by (`ISO7816.Redaction.rules`), read from the bytes alone since a foreign log marks
// nothing: PINs, keys, tag passwords, authentication cryptograms, a PACE nonce, PANs and track data.
import ISO7816

/// Secrets in a recorded session, found and masked.
public enum SessionRedaction {
    /// One secret: where it is and what it is.
    public struct Finding: Sendable, Hashable, CustomStringConvertible {
        /// The exchange, counting from 1, and its log line.
        public var exchange: Int
        public var line: Int
        /// `VERIFY: a PIN`, `the response: a PAN (5A)`.
        public var what: String
        /// Bytes of the command, and of the response, that hold it.
        public var command: Range<Int>?
        public var response: Range<Int>?
        public var description: String { "exchange \(exchange) (line \(line)): \(what)" }
    }

    /// Every secret the rules find in `session`.
    public static func findings(_ session: RecordedSession) -> [Finding] {
        session.exchanges.enumerated().flatMap { index, exchange in findings(exchange, number: index + 1) }
    }

    /// `session` with every secret byte masked (`**`: in a command it matches any byte when
    /// replayed, in a response it replays as 00), and what was masked.
    public static func redacted(_ session: RecordedSession) -> (session: RecordedSession, findings: [Finding]) {
        var out = session
        let found = findings(session)
        for finding in found {
            let i = finding.exchange - 1
            if let range = finding.command { for k in range where k < out.exchanges[i].command.count { out.exchanges[i].command[k] = nil } }
            if let range = finding.response { for k in range where k < out.exchanges[i].response.count { out.exchanges[i].response[k] = nil } }
        }
        return (out, found)
    }

    static func findings(_ exchange: RecordedSession.Exchange, number: Int) -> [Finding] {
        // A byte already masked is no secret left to find.
        let command = exchange.command.map { $0 ?? 0 }, response = exchange.response.map { $0 ?? 0 }
        func open(_ range: Range<Int>?, _ bytes: [UInt8?]) -> Bool {
            range.map { $0.clamped(to: 0..<bytes.count).contains { bytes[$0] != nil } } ?? false
        }
        return Redaction.secrets(command: command, response: response)
            .filter { open($0.command, exchange.command) || open($0.response, exchange.response) }
            .map { Finding(exchange: number, line: exchange.line, what: $0.what, command: $0.command, response: $0.response) }
    }
}
