// The hostile matrix for what is read from text, not from a card (session logs): each line of
// the text mutated in turn, each parse judged (a value, or the parser's own typed error).
import Foundation

/// One change to one line of a text.
public enum HostileLineMutation: String, Sendable, CaseIterable, CustomStringConvertible {
    /// The line emptied.
    case empty
    /// The line one character short.
    case cutOneByte = "cut-one-byte"
    /// The line cut to its first half.
    case cutHalf = "cut-half"
    /// One bit flipped in the line's middle character.
    case flipData = "flip-data"
    /// The line's last number made the most negative 64-bit integer (hex: 0x8000000000000000).
    case numberMinimum = "number-minimum"
    /// The line's first number made the largest 64-bit integer (hex where it was hex).
    case numberMaximum = "number-maximum"
    /// Every number of the line made one past the largest unsigned 64-bit integer.
    case numberOverflow = "number-overflow"
    /// The line given twice.
    case duplicate
    /// The line left out.
    case delete
    /// The line replaced by the one before it (an earlier answer replayed).
    case replay

    public var description: String { rawValue }

    /// `lines` with line `i` changed, or nil when this mutation cannot change it.
    func apply(_ lines: [String], at i: Int) -> [String]? {
        var out = lines
        let line = lines[i]
        switch self {
        case .empty: guard !line.isEmpty else { return nil }; out[i] = ""
        case .cutOneByte: guard !line.isEmpty else { return nil }; out[i] = String(line.dropLast())
        case .cutHalf: guard line.count > 1 else { return nil }; out[i] = String(line.prefix(line.count / 2))
        case .flipData:
            var bytes = Array(line.utf8)
            guard !bytes.isEmpty else { return nil }
            bytes[bytes.count / 2] ^= 0x01
            out[i] = String(decoding: bytes, as: UTF8.self)
        case .numberMinimum, .numberMaximum, .numberOverflow:
            // The minimum goes to the line's last number (pcsc-spy's decimal in parentheses after
            // the hex), the maximum to its first, the overflow to every one.
            let numbers = Self.numbers(line)
            guard !numbers.isEmpty else { return nil }
            let chosen = self == .numberMinimum ? [numbers.last!] : self == .numberMaximum ? [numbers[0]] : numbers
            var changed = line
            for range in chosen.reversed() {
                let hex = line[range].hasPrefix("0x")
                let replacement: String
                switch self {
                case .numberMinimum: replacement = hex ? "0x8000000000000000" : "-9223372036854775808"
                case .numberMaximum: replacement = hex ? "0xFFFFFFFFFFFFFFFF" : "9223372036854775807"
                default: replacement = hex ? "0x10000000000000000" : "18446744073709551616"
                }
                changed.replaceSubrange(range, with: replacement)
            }
            out[i] = changed
        case .duplicate: out.insert(line, at: i)
        case .delete: out.remove(at: i)
        case .replay: guard i > 0, lines[i - 1] != line else { return nil }; out[i] = lines[i - 1]
        }
        return out == lines ? nil : out
    }

    /// The decimal and 0x-hex numbers standing alone in `line`, in order.
    static func numbers(_ line: String) -> [Range<String.Index>] {
        var out: [Range<String.Index>] = []
        var from = line.startIndex
        while from < line.endIndex,
              let r = line.range(of: #"(?<![0-9A-Za-z])(0x[0-9A-Fa-f]+|-?[0-9]+)(?![0-9A-Za-z])"#, options: .regularExpression, range: from..<line.endIndex) {
            out.append(r)
            from = r.upperBound
        }
        return out
    }
}

/// Runs a text parser under every line mutation.
public enum HostileLogMatrix {
    /// Parses `text` clean, then with each (line, mutation) of `mode`. `parse` returns what the
    /// parse shows (its sessions, its notes) or throws; `typed` says whether an error is the
    /// parser's own (one line naming the log's line), not something that escaped it. `mode` is
    /// `.full` unless asked: a parse takes microseconds, and a sample missed the one line (pcsc-spy's
    /// `bSendLength … (-9223372036854775808)`) that trapped before issue 48.
    public static func run(family: String, operation: String, text: String, mode: HostileMatrix.Mode = .full,
                           secrets: [HostileSecret] = [], parse: (String) throws -> String, typed: (any Error) -> Bool) -> HostileReport {
        let start = ContinuousClock.now
        var report = HostileReport(family: family, operation: operation)
        let note = HostileTrapNote.slot()
        defer { HostileTrapNote.release(note) }
        let lines = text.components(separatedBy: "\n")
        report.exchanges = lines.count
        func judge(_ body: () throws -> String, line: Int?, mutation: String?) {
            report.runs += 1
            func fail(_ invariant: HostileInvariant, _ detail: String) {
                report.failures.append(HostileFailure(invariant: invariant, family: family, operation: operation, exchange: line, mutation: mutation, detail: detail))
            }
            do {
                let shown = try body()
                if line != nil { report.sameAnswer += 1 }
                for s in secrets where s.found(in: shown) { fail(.noSecrets, "a secret (\(s)) is in what the parse shows") }
            } catch {
                if line != nil { report.threw += 1 }
                if !typed(error) { fail(.noTrap, "an error that is not the parser's own: \(type(of: error)): \(error)") }
                for s in secrets where s.found(in: String(describing: error)) { fail(.noSecrets, "a secret (\(s)) is in the error") }
            }
        }
        note.set("\(family) \(operation) clean")
        judge({ try parse(text) }, line: nil, mutation: nil)
        // The cases, as the card matrix picks them (mutations over lines).
        let all = HostileLineMutation.allCases
        let picks: [(Int, HostileLineMutation)]
        switch mode {
        case .full: picks = (0..<lines.count).flatMap { i in all.map { (i, $0) } }
        case .sample(let budget):
            let s = max(1, (lines.count * all.count + budget - 1) / max(budget, 1))
            picks = all.enumerated().flatMap { k, m in
                let at = Array(stride(from: k % s, to: lines.count, by: s))
                return (at.isEmpty ? [k % max(lines.count, 1)] : at).map { ($0, m) }
            }
        }
        for (i, m) in picks where i < lines.count {
            guard let changed = m.apply(lines, at: i) else { report.notApplicable += 1; continue }
            report.mutations[m.rawValue, default: 0] += 1
            note.set("\(family) \(operation) line \(i + 1) \(m)")
            judge({ try parse(changed.joined(separator: "\n")) }, line: i, mutation: m.rawValue)
        }
        report.seconds = HostileMatrix.seconds(since: start)
        return report
    }
}
