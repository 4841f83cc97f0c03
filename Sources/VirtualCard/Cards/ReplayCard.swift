// An emulated card that answers from an `apdu --record` recording, in strict order or by
// command.
import FoundationEssentials
import ISO7816

/// A card that answers from a recording (`apdu … --record FILE`): the desktop twin of apdu4j's
/// replay, so a session captured once with a real card runs in CI with no hardware.
///
/// Strict order answers the n-th command with the n-th recorded response and refuses (`6F 00`)
/// a command that differs from the recorded one; by-command answers any recorded command with
/// its recorded responses in turn (the last one again when they run out). A redacted byte
/// (`**` in the recording: a PIN, a tag password, a key) matches any byte.
public final class ReplayCard: EmulatedCard, @unchecked Sendable {
    /// How commands are matched to the recording.
    public enum Order: String, Sendable, CaseIterable {
        case strict
        case byCommand = "by-command"
    }

    /// A recorded command: bytes, nil where the recording redacted them.
    struct Pattern: Hashable {
        let bytes: [UInt8?]
        func matches(_ command: [UInt8]) -> Bool {
            bytes.count == command.count && zip(bytes, command).allSatisfy { $0 == nil || $0 == $1 }
        }
    }

    /// Why a recording cannot be replayed, with the line that says so.
    public struct ParseError: Error, CustomStringConvertible {
        public let line: Int
        public let reason: String
        public var description: String { "line \(line): \(reason)" }
    }

    public let atr: [UInt8]
    public let order: Order
    /// The reader the recording was made with.
    public let reader: String?
    let exchanges: [(command: Pattern, response: [UInt8])]
    private let state = Locked(State())

    struct State {
        var next = 0
        var used: [Int: Int] = [:]
        var mismatches: [String] = []
    }

    /// Commands that did not match the recording, described for a log.
    public var mismatches: [String] { state.current.mismatches }

    /// - Parameters:
    ///   - recording: the JSON Lines file's bytes.
    ///   - order: strict order, or answer by command.
    /// - Throws: ``ParseError`` for a line that is not a recording line, or a recording with no card.
    public init(recording: [UInt8], order: Order) throws(ParseError) {
        struct Line: Decodable {
            let type: String
            let reader: String?
            let atr: String?
            let command: String?
            let response: String?
        }
        var atr: [UInt8]?
        var reader: String?
        var exchanges: [(command: Pattern, response: [UInt8])] = []
        let decoder = JSONDecoder()
        for (index, raw) in TextInput.normalized(recording).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            let text = raw.trimmingWhitespace
            if text.isEmpty { continue }
            let line: Line
            do { line = try decoder.decode(Line.self, from: Data(text.utf8)) } catch {
                throw ParseError(line: number, reason: "not a recording line (JSON with a \"type\")")
            }
            switch line.type {
            case "connect", "reconnect":
                guard let hex = line.atr, let bytes = try? Hex.decode(hex), !bytes.isEmpty else { continue }
                if atr == nil { atr = bytes; reader = line.reader }
            case "exchange":
                // A redacted answer (`**`: a passport's access cryptogram) replays as zeros: it
                // could never be answered again anyway, its keys being the session's.
                guard let command = line.command, let response = line.response,
                      let pattern = Self.pattern(command), let answer = Self.pattern(response) else {
                    throw ParseError(line: number, reason: "an exchange needs a hex command and response")
                }
                exchanges.append((pattern, answer.bytes.map { $0 ?? 0 }))
            default:
                continue
            }
        }
        guard let atr else { throw ParseError(line: 1, reason: "the recording holds no connection (no ATR to present)") }
        self.atr = atr
        self.reader = reader
        self.order = order
        self.exchanges = exchanges
    }

    /// Hex with `**` for redacted bytes.
    static func pattern(_ text: String) -> Pattern? {
        let chars = Array(text.filter { $0 != " " })
        guard chars.count % 2 == 0 else { return nil }
        var bytes: [UInt8?] = []
        for i in stride(from: 0, to: chars.count, by: 2) {
            let pair = String(chars[i..<i + 2])
            if pair == "**" { bytes.append(nil); continue }
            guard let byte = UInt8(pair, radix: 16) else { return nil }
            bytes.append(byte)
        }
        return Pattern(bytes: bytes)
    }

    /// Number of recorded exchanges.
    public var count: Int { exchanges.count }

    public func reset() {}

    public func process(_ apdu: [UInt8]) -> [UInt8] {
        state.withLock { s in
            switch order {
            case .strict:
                guard s.next < exchanges.count else {
                    s.mismatches.append("command \(s.next + 1) (\(Hex.encode(apdu))): the recording has only \(exchanges.count)")
                    return [0x6F, 0x00]
                }
                let recorded = exchanges[s.next]
                guard recorded.command.matches(apdu) else {
                    s.mismatches.append("command \(s.next + 1): got \(Hex.encode(apdu)), the recording has \(recorded.command.bytes.map { $0.map { Hex.encode([$0]) } ?? "**" }.joined())")
                    return [0x6F, 0x00]
                }
                s.next += 1
                return recorded.response
            case .byCommand:
                let candidates = exchanges.indices.filter { exchanges[$0].command.matches(apdu) }
                guard let first = candidates.first else {
                    s.mismatches.append("\(Hex.encode(apdu)): not in the recording")
                    return [0x6F, 0x00]
                }
                let key = first
                let turn = s.used[key, default: 0]
                s.used[key] = turn + 1
                return exchanges[candidates[min(turn, candidates.count - 1)]].response
            }
        }
    }
}
