// Reading a session log for the commands that replay one (`apdu emulate replay`,
// `apdu replay-check`, `apdu replay convert`): one-line errors, the load report on stderr.
import APDUCommandLine
import FoundationEssentials
import ISO7816
import VirtualCard

/// A session log read from a file, the session picked from it.
struct ReplayLog {
    let path: String
    let log: SessionLog
    let number: Int
    let session: RecordedSession

    /// Reads `path` and picks session `number` (1-based).
    /// - Throws: `Failure(.usage)` for a file that cannot be read, `Failure(.badData)` for a log
    ///   that cannot be replayed (the reason names its line) or no such session.
    init(path: String, session number: Int) throws {
        guard let bytes = FileManager.default.contents(atPath: path) else {
            throw Failure(.usage, "cannot read the log '\(Terminal.safe(path))'")
        }
        do {
            log = try SessionLog(parsing: [UInt8](bytes))
            session = try log.session(number)
        } catch {
            throw Failure(.badData, "\(Terminal.safe(path)): \(Terminal.safe(error.description))")
        }
        self.path = path
        self.number = number
    }

    /// What the start line says of the card: the log, the session, where it was recorded.
    var description: String {
        let of = log.sessions.count > 1 ? ", session \(number) of \(log.sessions.count)" : ""
        let reader = session.reader.map { "; recorded on reader '\(Terminal.safe($0))'" } ?? ""
        return "the \(log.format.rawValue) log \(Terminal.safe(path))\(of) (\(session.exchanges.count) exchanges\(reader))"
    }

    /// Writes to standard error what the log's load found: a missing ATR, the escapes not
    /// replayed, what was passed over.
    func announce() {
        for line in report { Terminal.writeError("apdu: \(line)\n") }
    }

    private var report: [String] {
        var lines: [String] = []
        if session.atr == nil {
            lines.append("the log shows no ATR for this session: the card presents \(Hex.encode(ReplayCard.placeholderATR))")
        }
        for control in session.controls {
            lines.append("line \(control.line): SCardControl 0x\(String(control.code, radix: 16, uppercase: true)) listed, not replayed (vpcd carries no reader escapes)")
        }
        lines += log.notes.map { Terminal.safe($0) }
        return lines
    }

    func card(order: ReplayCard.Order) -> ReplayCard { ReplayCard(session: session, order: order) }
}

