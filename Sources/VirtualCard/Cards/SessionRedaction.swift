// What in an imported session log looks secret, by the rules our traces and recordings redact
// by (`ISO7816.Redaction`), read from the bytes alone since a foreign log marks nothing: PINs,
// reader keys, tag passwords, authentication cryptograms, a PACE nonce, PANs and track data.
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
        var out: [Finding] = []
        func add(_ what: String, command c: Range<Int>? = nil, response r: Range<Int>? = nil) {
            out.append(Finding(exchange: number, line: exchange.line, what: what, command: c, response: r))
        }
        let data = commandData(command)
        let answer = response.count > 2 ? 0..<(response.count - 2) : nil
        guard command.count >= 4 else { return out }
        let (cla, ins) = (command[0], command[1])
        if Redaction.isSecret(command), let data {
            let name = cla == 0xFF && ins == 0x82 ? "LOAD KEYS: a reader key" : [0x20: "VERIFY", 0x21: "VERIFY", 0x24: "CHANGE REFERENCE DATA",
                                                                                0x2C: "RESET RETRY COUNTER"][ins].map { "\($0): a PIN" } ?? "a PIN"
            add(name, command: data)
        } else if cla & 0xF0 != 0x90 && cla != 0xFF && ins == 0x82, let data {
            add("EXTERNAL/MUTUAL AUTHENTICATE: a cryptogram made with a key (BAC's, from the MRZ)", command: data, response: answer)
        } else if cla & 0xF0 != 0x90 && ins == 0x86, let answer, Array(response.prefix(3)).starts(with: [0x7C]), response.count > 4, response[2] == 0x80 {
            add("GENERAL AUTHENTICATE: PACE's encrypted nonce (made with the MRZ or CAN)", response: answer)
        } else if cla == 0x90, [0x0A, 0x1A, 0xAA, 0x71, 0x77, 0xAF].contains(ins) {
            add("DESFire authentication: cryptograms made with a key", command: data, response: answer)
        }
        // A tag's password (PWD_AUTH: 1B and four bytes), inside the ACR122U's direct transmit
        // (FF 00 00 00 … D4 42 frame) or a PC/SC Part 3 transparent exchange (FF C2 00 01 … 95 L frame).
        if cla == 0xFF, let data, let frame = Self.tagFrame(command, data), frame.count >= 5, command[frame.lowerBound] == 0x1B {
            add("PWD_AUTH: a tag password", command: (frame.lowerBound + 1)..<(frame.lowerBound + 5))
        }
        if let answer {
            for (tag, range) in cardholderData(response, in: answer) {
                add("the response: \(tag)", response: range)
            }
        }
        return out
    }

    /// Where a tag's own frame sits in a reader pseudo-APDU's data.
    static func tagFrame(_ command: [UInt8], _ data: Range<Int>) -> Range<Int>? {
        if command[1] == 0x00, data.count > 2, command[data.lowerBound] == 0xD4, command[data.lowerBound + 1] == 0x42 {
            return (data.lowerBound + 2)..<data.upperBound
        }
        guard command[1] == 0xC2 else { return nil }
        var i = data.lowerBound
        while i + 1 < data.upperBound {
            let (tag, length) = (command[i], Int(command[i + 1]))
            guard length < 0x80, i + 2 + length <= data.upperBound else { return nil }
            if tag == 0x95 { return (i + 2)..<(i + 2 + length) }
            i += 2 + length
        }
        return nil
    }

    /// The data field of a short or extended command.
    static func commandData(_ command: [UInt8]) -> Range<Int>? {
        guard let parsed = try? CommandAPDU(bytes: command), !parsed.data.isEmpty else { return nil }
        let start = parsed.isExtended ? 7 : 5
        return start..<(start + parsed.data.count)
    }

    /// The EMV data objects that hold a card's number or its holder: 5A (PAN), 57 and 9F6B
    /// (track 2), 56 and 9F1F (track 1), 5F20 (holder's name), 9F20 (track 2 discretionary data).
    static let cardholderTags: [[UInt8]: String] = [
        [0x5A]: "a PAN (5A)", [0x57]: "track 2 data (57)", [0x9F, 0x6B]: "track 2 data (9F6B)", [0x56]: "track 1 data (56)",
        [0x9F, 0x1F]: "track 1 discretionary data (9F1F)", [0x5F, 0x20]: "the cardholder's name (5F20)", [0x9F, 0x20]: "track 2 discretionary data (9F20)",
    ]

    /// The values of `cardholderTags` anywhere in a BER-TLV response (constructed objects walked).
    static func cardholderData(_ bytes: [UInt8], in range: Range<Int>) -> [(String, Range<Int>)] {
        var found: [(String, Range<Int>)] = []
        func walk(_ range: Range<Int>, depth: Int) {
            var i = range.lowerBound
            while i < range.upperBound, depth < 8 {
                if bytes[i] == 0x00 || bytes[i] == 0xFF { i += 1; continue }
                var tagEnd = i + 1
                if bytes[i] & 0x1F == 0x1F { while tagEnd < range.upperBound, bytes[tagEnd] & 0x80 != 0 { tagEnd += 1 }; tagEnd += 1 }
                guard tagEnd < range.upperBound else { return }
                var length = Int(bytes[tagEnd]), valueStart = tagEnd + 1
                if length & 0x80 != 0 {
                    let count = length & 0x7F
                    guard (1...3).contains(count), valueStart + count <= range.upperBound else { return }
                    length = bytes[valueStart..<(valueStart + count)].reduce(0) { $0 << 8 | Int($1) }
                    valueStart += count
                }
                guard valueStart + length <= range.upperBound else { return }
                let tag = Array(bytes[i..<tagEnd])
                if let name = cardholderTags[tag] {
                    found.append((name, valueStart..<(valueStart + length)))
                } else if bytes[i] & 0x20 != 0 {
                    walk(valueStart..<(valueStart + length), depth: depth + 1)
                }
                i = valueStart + length
            }
        }
        walk(range, depth: 0)
        return found
    }
}
