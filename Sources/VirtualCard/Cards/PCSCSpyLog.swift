// pcsc-lite's `pcsc-spy` output (src/spy/pcsc-spy): one block per PC/SC call, its input (` i `)
// and output (` o `) parameters and its return code (` => `); each thread's calls indented by
// four more spaces, or marked `(tN)`. Before pcsc-lite 2.2 the return line reads
// `=> Command successful. (SCARD_S_SUCCESS [0x00000000])`, after it `=> SCARD_S_SUCCESS [0x00000000]`.
import ISO7816

enum PCSCSpyParser {
    /// A call's name line (`SCardTransmit`; `SCarControl` is how every pcsc-spy spells SCardControl).
    static func isCallName(_ line: String) -> Bool {
        guard let parsed = split(line), parsed.kind == .name else { return false }
        return parsed.text.hasPrefix("SCard") || parsed.text == "SCarControl"
    }

    enum Kind { case name, input, output, result }

    /// A line's thread, kind and text (without the ` i `/` o `/` => ` mark).
    static func split(_ line: String) -> (thread: String, kind: Kind, text: Substring)? {
        var rest = Substring(line)
        let lead = rest.prefix { $0 == " " }.count
        rest = rest.dropFirst(lead)
        var thread = ""
        var indent = lead
        if rest.hasPrefix("(t"), let close = rest.firstIndex(of: ")") {
            thread = String(rest[rest.startIndex...close])
            rest = rest[rest.index(after: close)...]
            guard rest.hasPrefix(" ") else { return nil }
            rest = rest.dropFirst()
            indent = 0
        }
        // Parameter lines carry one more space than their call's name line.
        let marked: [(String, Kind)] = [(" i ", .input), (" o ", .output), (" => ", .result)]
        let probe = thread.isEmpty ? " " + rest : rest
        for (mark, kind) in marked where probe.hasPrefix(mark) {
            let key = thread.isEmpty ? "\(max(indent - 1, 0))" : thread
            return (key, kind, probe.dropFirst(mark.count))
        }
        guard !rest.isEmpty, rest.first?.isLetter == true, !rest.contains(" ") else { return nil }
        return (thread.isEmpty ? "\(indent)" : thread, .name, rest)
    }

    struct Call {
        var name: String
        var line: Int
        /// Parameter lines: kind, text, line.
        var parameters: [(kind: Kind, text: Substring, line: Int)] = []
        var result: Substring?
    }

    static func parse(_ lines: [String]) throws(SessionLogError) -> (SessionLog.Format, [RecordedSession], [String]) {
        var open: [String: Call] = [:]
        var calls: [Call] = []
        var notes: [String] = []
        var old = false
        for (index, line) in lines.enumerated() {
            let number = index + 1
            if line.trimmingWhitespace.isEmpty { continue }
            guard let parsed = split(line) else {
                if !isFooter(line) { notes.append("line \(number): not pcsc-spy output, passed over") }
                continue
            }
            switch parsed.kind {
            case .name:
                if let unfinished = open[parsed.thread] {
                    notes.append("line \(unfinished.line): \(unfinished.name) has no return line; passed over")
                }
                open[parsed.thread] = Call(name: String(parsed.text), line: number)
            case .input, .output:
                guard open[parsed.thread] != nil else {
                    notes.append("line \(number): a parameter outside any call, passed over")
                    continue
                }
                open[parsed.thread]!.parameters.append((parsed.kind, parsed.text, number))
            case .result:
                guard var call = open.removeValue(forKey: parsed.thread) else {
                    notes.append("line \(number): a return line outside any call, passed over")
                    continue
                }
                if parsed.text.contains("Command successful") || parsed.text.contains(". (SCARD_") { old = true }
                call.result = parsed.text
                calls.append(call)
            }
        }
        var sessions = Sessions()
        for call in calls { try sessions.add(call, notes: &notes) }
        // A call the log ends inside: its exchange never came back whole.
        for call in open.values.sorted(by: { $0.line < $1.line }) {
            notes.append("line \(call.line): the log ends inside \(call.name); replayed up to the exchange before it")
        }
        return (old ? .pcscSpyOld : .pcscSpy, sessions.all, notes)
    }

    /// The statistics pcsc-spy prints when it ends.
    static func isFooter(_ line: String) -> Bool {
        let t = line.trimmingWhitespace
        return t.hasPrefix("Thread ") || t.hasPrefix("Results sorted") || t.hasPrefix("total time:") || t.contains(" calls) ")
            || t.hasPrefix("parsing ") || t.hasPrefix("Tag ") || t.hasPrefix("Garbage:") || t.hasPrefix("Unknown function:")
    }

    /// The sessions, opened by SCardConnect, keyed by card handle.
    struct Sessions {
        var all: [RecordedSession] = []
        var byHandle: [String: Int] = [:]
        /// The last ATR SCardGetStatusChange showed for each reader.
        var atrs: [String: [UInt8]] = [:]

        mutating func session(for handle: String?, line: Int) -> Int {
            if let handle, let index = byHandle[handle] { return index }
            // A log that starts after the connection: a session with no reader named.
            all.append(RecordedSession(line: line))
            if let handle { byHandle[handle] = all.count - 1 }
            return all.count - 1
        }

        mutating func add(_ call: Call, notes: inout [String]) throws(SessionLogError) {
            let success = call.result?.contains("[0x00000000]") == true
            func value(_ kind: Kind, _ key: String) -> Substring? {
                call.parameters.first { $0.kind == kind && ($0.text.hasPrefix(key + " ") || $0.text.hasPrefix(key + ":")) }
                    .map { $0.text.dropFirst(key.count + 1).drop { $0 == " " } }
            }
            func handle(_ text: Substring?) -> String? { text.flatMap { $0.split(separator: " ").first.map(String.init) } }
            switch call.name {
            case "SCardConnect":
                guard success else { return }
                let reader = value(.input, "szReader").map(String.init)
                all.append(RecordedSession(reader: reader, atr: reader.flatMap { atrs[$0] }, line: call.line))
                if let h = handle(value(.output, "phCard")) { byHandle[h] = all.count - 1 }
            case "SCardReconnect":
                // The card reset or powered down and up: its volatile state is gone.
                guard success, call.parameters.contains(where: { $0.kind == .input && ($0.text.contains("RESET_CARD") || $0.text.contains("UNPOWER_CARD")) }) else { return }
                let index = session(for: handle(value(.input, "hCard")), line: call.line)
                if !all[index].exchanges.isEmpty { all[index].resets.append(all[index].exchanges.count) }
            case "SCardStatus":
                guard success, let h = handle(value(.input, "hCard")), let text = value(.output, "bAtr"),
                      let atr = SessionLog.bytes(text), !atr.isEmpty else { return }
                all[session(for: h, line: call.line)].atr = atr.map { $0 ?? 0 }
            case "SCardGetStatusChange":
                guard success else { return }
                var reader: String?
                for p in call.parameters where p.kind == .output {
                    if p.text.hasPrefix("szReader: ") { reader = String(p.text.dropFirst("szReader: ".count)) }
                    if p.text.hasPrefix(" Atr: "), let reader, let atr = SessionLog.bytes(p.text.dropFirst(" Atr: ".count)), !atr.isEmpty {
                        atrs[reader] = atr.map { $0 ?? 0 }
                    }
                }
            case "SCardTransmit":
                let sent = try buffer(call, .input, "bSendBuffer", length: "bSendLength")
                let received = try buffer(call, .output, "bRecvBuffer", length: "bRecvLength")
                let index = session(for: handle(value(.input, "hCard")), line: call.line)
                guard success, let sent, let received, !sent.isEmpty, received.count >= 2 else {
                    notes.append("line \(call.line): SCardTransmit failed or brought no answer back; not replayed")
                    return
                }
                all[index].exchanges.append(RecordedSession.Exchange(command: sent, response: received, line: call.line))
            case "SCardControl", "SCarControl":
                let sent = try buffer(call, .input, "bSendBuffer", length: "bSendLength") ?? []
                let received = try buffer(call, .output, "bRecvBuffer", length: "bRecvLength") ?? []
                let codeText = value(.input, "dwControlCode").flatMap { text -> Substring? in
                    guard let open = text.lastIndex(of: "("), let close = text.lastIndex(of: ")"), open < close else { return text }
                    return text[text.index(after: open)..<close]
                }
                let code = codeText.flatMap { UInt32($0.hasPrefix("0x") ? $0.dropFirst(2) : $0, radix: 16) } ?? 0
                let index = session(for: handle(value(.input, "hCard")), line: call.line)
                all[index].controls.append(RecordedSession.Control(code: code, sent: sent.map { $0 ?? 0 }, received: received.map { $0 ?? 0 }, line: call.line))
            case "SCardDisconnect":
                if let h = handle(value(.input, "hCard")) { byHandle[h] = nil }
            default:
                return
            }
        }

        /// The longest buffer a transmit carries: an extended APDU's 65,535 data bytes, its
        /// header, Lc and Le.
        static let largestBuffer = 65_544

        /// A buffer's bytes from its dump lines (`0000 00 A4 04 00 …  ASCII`), as many as its
        /// length line says; nil for `NULL` or no buffer.
        func buffer(_ call: Call, _ kind: Kind, _ name: String, length lengthName: String) throws(SessionLogError) -> [UInt8?]? {
            guard let start = call.parameters.firstIndex(where: { $0.kind == kind && $0.text == Substring(name) }) else { return nil }
            let lengthLine = call.parameters.first { $0.kind == kind && $0.text.hasPrefix(lengthName + " ") }
            var expected: Int?
            if let text = lengthLine?.text, let open = text.lastIndex(of: "("), let close = text.lastIndex(of: ")"), open < close {
                let number = text[text.index(after: open)..<close]
                // A hostile log may say any number (-9223372036854775808 trapped the offset
                // arithmetic below, issue 48): a buffer is 0 to 65,544 bytes (an extended APDU).
                guard let value = Int(number), (0...Self.largestBuffer).contains(value) else {
                    throw SessionLogError(line: lengthLine!.line, "\(lengthName) says \(number.prefix(24)) bytes; a buffer holds 0 to \(Self.largestBuffer)")
                }
                expected = value
            }
            var bytes: [UInt8?] = []
            var offset = 0
            for p in call.parameters[(start + 1)...] {
                guard p.kind == kind, p.text.hasPrefix(" ") else { break }
                let dump = p.text.dropFirst()
                if dump == "NULL" { return nil }
                let tokens = dump.split(separator: " ", omittingEmptySubsequences: true)
                guard let first = tokens.first, first.count == 4, let at = Int(first, radix: 16) else {
                    throw SessionLogError(line: p.line, "a \(name) line that is no hex dump (offset, then bytes)")
                }
                guard at == offset else { throw SessionLogError(line: p.line, "\(name) jumps to offset \(first), expected \(Hex.encode([UInt8(offset >> 8 & 0xFF), UInt8(offset & 0xFF)]))") }
                // At most 16 bytes a line; the ASCII column after them may look like hex, so the
                // length line says how many tokens are bytes (without one: the byte-shaped ones).
                let count = expected.map { min(16, max($0 - offset, 0)) }
                    ?? tokens.dropFirst().prefix(16).prefix { $0.count == 2 && UInt8($0, radix: 16) != nil }.count
                let taken = tokens.dropFirst().prefix(count)
                guard taken.count == count, let line = SessionLog.bytes(Substring(taken.joined(separator: " "))) else {
                    throw SessionLogError(line: p.line, "\(name) holds something that is not hex where \(count) bytes belong")
                }
                bytes += line
                offset += 16
            }
            if expected == nil { expected = bytes.count }
            guard bytes.count == expected else {
                throw SessionLogError(line: call.line, "\(name) holds \(bytes.count) bytes; its length line says \(expected!)")
            }
            return bytes
        }
    }
}

