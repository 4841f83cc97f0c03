// `pcscd --foreground --debug --apdu` logs: each line a delta in microseconds (8 digits), a
// thread id in brackets in colour mode, then the message. `APDU:` and `SW:` lines (ifdwrapper.c
// IFDTransmit) hold a command and the card's whole response, data and status word; `Card ATR:`
// the ATR; `Attempting Connect to NAME using protocol: N` a connection. The CCID driver's frames
// (`-> 000000 6F …`, `<- 000000 80 …`) and T=1 blocks are not APDUs and are never taken as such.
import ISO7816

enum PCSCDParser {
    /// A line's thread id (empty without one) and message, after an optional syslog or journald
    /// prefix (`pcscd[1234]: `) and the delta; nil for a line that is not pcscd's.
    static func body(of line: String) -> (thread: String, message: Substring)? {
        var rest = Substring(line)
        if let range = rest.firstRange(of: "pcscd["), let close = rest[range.upperBound...].firstRange(of: "]: ") {
            rest = rest[close.upperBound...]
        }
        let digits = rest.prefix { $0.isASCII && $0.isNumber }
        // Eight digits, clamped at 99999999; seven where a paste lost one.
        guard (7...8).contains(digits.count), rest.dropFirst(digits.count).first == " " else { return nil }
        rest = rest.dropFirst(digits.count + 1)
        var thread = ""
        if rest.first == "[", let close = rest.firstIndex(of: "]") {
            thread = String(rest[rest.index(after: rest.startIndex)..<close])
            rest = rest[rest.index(after: close)...].drop { $0 == " " }
        }
        return (thread, rest)
    }

    static func parse(_ lines: [String]) throws(SessionLogError) -> (SessionLog.Format, [RecordedSession], [String]) {
        var sessions: [RecordedSession] = []
        var notes: [String] = []
        /// The command each thread sent and has not seen answered: bytes, line.
        var pending: [String: (command: [UInt8], line: Int)] = [:]
        var current: Int?
        var insertedInto: String?
        var lastATR: [String: [UInt8]] = [:]
        /// The last ATR the log showed, whichever reader: an excerpt may name none.
        var anyATR: [UInt8]?
        var awaitingATR = false

        func hex(_ text: Substring, _ number: Int, _ what: String) throws(SessionLogError) -> [UInt8] {
            guard let bytes = SessionLog.bytes(text), !bytes.contains(nil) else {
                throw SessionLogError(line: number, "\(what) holds something that is not hex bytes")
            }
            return bytes.map { $0! }
        }

        func openSession(at line: Int) {
            guard current == nil else { return }
            let atr = insertedInto.map { lastATR[$0] } ?? anyATR
            sessions.append(RecordedSession(reader: insertedInto, atr: atr, line: line))
            current = sessions.count - 1
        }

        for (index, line) in lines.enumerated() {
            let number = index + 1
            if line.trimmingWhitespace.isEmpty { continue }
            guard let (thread, message) = body(of: line) else {
                notes.append("line \(number): not a pcscd log line, passed over")
                continue
            }
            if message.hasPrefix("APDU:") {
                let command = try hex(message.dropFirst(5), number, "the APDU")
                if let earlier = pending[thread] {
                    notes.append("line \(earlier.line): an APDU with no SW line after it; not replayed")
                }
                guard !command.isEmpty else { continue }
                // A command sent is a card session, whether or not its answer made it into the
                // log: its ATR is served with the exchanges that did (issue 48).
                openSession(at: number)
                pending[thread] = (command, number)
            } else if message.hasPrefix("SW:") {
                let response = try hex(message.dropFirst(3), number, "the SW line")
                guard let sent = pending.removeValue(forKey: thread) else {
                    notes.append("line \(number): an SW line with no APDU before it (the log starts mid-exchange); not replayed")
                    continue
                }
                // An empty SW: the transmit failed, nothing came back, nothing to replay.
                guard response.count >= 2 else {
                    notes.append("line \(sent.line): the card's answer is not in the log (an empty SW line); not replayed")
                    continue
                }
                openSession(at: sent.line)
                sessions[current!].exchanges.append(RecordedSession.Exchange(command: sent.command, response: response, line: sent.line))
            } else if message.hasPrefix("Card ATR:") {
                let text = message.dropFirst("Card ATR:".count).trimmingWhitespace
                guard text != "(NULL)", let atr = try? hex(Substring(text), number, "the ATR"), !atr.isEmpty else { continue }
                if let reader = insertedInto { lastATR[reader] = atr }
                anyATR = atr
                if let current, awaitingATR || sessions[current].atr == nil { sessions[current].atr = atr }
                awaitingATR = false
            } else if let range = message.firstRange(of: "Attempting Connect to ") {
                var reader = message[range.upperBound...]
                if let using = reader.firstRange(of: " using protocol:") { reader = reader[..<using.lowerBound] }
                let name = String(reader)
                sessions.append(RecordedSession(reader: name, atr: lastATR[name], line: number))
                current = sessions.count - 1
                insertedInto = name
                awaitingATR = true
            } else if let range = message.firstRange(of: "Card inserted into ") {
                insertedInto = String(message[range.upperBound...])
            } else if message.contains("SCardReconnect()"), message.lowercased().contains("reset") || message.lowercased().contains("unpower") {
                if let current, !sessions[current].exchanges.isEmpty { sessions[current].resets.append(sessions[current].exchanges.count) }
            } else if message.contains("SCardDisconnect()") || message.contains("Received command: DISCONNECT") {
                current = nil
            }
        }
        for (_, open) in pending.sorted(by: { $0.value.line < $1.value.line }) {
            notes.append("line \(open.line): the log ends before this APDU's SW line; replayed up to the exchange before it")
        }
        // A session with neither an ATR nor a whole exchange has nothing to serve.
        return (.pcscd, sessions.filter { $0.atr != nil || !$0.exchanges.isEmpty }, notes)
    }
}
