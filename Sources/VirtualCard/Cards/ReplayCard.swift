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
        var firstDivergence: Divergence?
        var received = 0
        var resets: [Int] = []
    }

    /// The first command that left the recording: its number (from 1), its bytes as sent, and
    /// the recorded command nearest to it (the one expected next in strict order, else the
    /// closest in bytes), or nil when the recording had no more.
    public struct Divergence: Sendable {
        public var number: Int
        public var sent: [UInt8]
        public var nearest: (index: Int, command: [UInt8?])?
    }

    /// Commands that did not match the recording, described for a log.
    public var mismatches: [String] { state.current.mismatches }
    /// The first command that did not match, when one did not.
    public var firstDivergence: Divergence? { state.current.firstDivergence }
    /// Commands answered from the recording in strict order.
    public var answered: Int { state.current.next }
    /// Each reset or power-up after the first command, as the number of commands received
    /// before it: the card's volatile state (selected application, PIN verified, session keys)
    /// was gone from there on, so a log without a reset there does not hold what followed.
    public var resets: [Int] { state.current.resets }

    /// The recorded command `apdu` is nearest to: the most equal bytes at the same places.
    func nearest(_ apdu: [UInt8], expected: Int?) -> (index: Int, command: [UInt8?])? {
        if let expected, expected < exchanges.count { return (expected, exchanges[expected].command.bytes) }
        func score(_ p: Pattern) -> Int { zip(p.bytes, apdu).filter { $0 == nil || $0 == $1 }.count - abs(p.bytes.count - apdu.count) }
        guard let best = exchanges.indices.max(by: { score(exchanges[$0].command) < score(exchanges[$1].command) }) else { return nil }
        return (best, exchanges[best].command.bytes)
    }

    /// - Parameters:
    ///   - recording: the JSON Lines file's bytes.
    ///   - order: strict order, or answer by command.
    /// - Throws: ``ParseError`` for a line that is not a recording line, or a recording with no card.
    public convenience init(recording: [UInt8], order: Order) throws(ParseError) {
        do {
            let log = try SessionLog(parsing: recording)
            self.init(session: try log.session(1), order: order)
        } catch {
            throw ParseError(line: error.line ?? 1, reason: error.reason)
        }
    }

    /// A session read from any log `SessionLog` reads. Without an ATR in the log the card
    /// presents ``placeholderATR``.
    public init(session: RecordedSession, order: Order) {
        atr = session.atr ?? Self.placeholderATR
        reader = session.reader
        self.order = order
        // A redacted answer (`**`: a passport's access cryptogram) replays as zeros: it could
        // never be answered again anyway, its keys being the session's.
        exchanges = session.exchanges.map { (Pattern(bytes: $0.command), $0.response.map { $0 ?? 0 }) }
    }

    /// What a session whose log shows no ATR presents: T=1, no historical bytes.
    public static let placeholderATR: [UInt8] = [0x3B, 0x80, 0x80, 0x01, 0x01]

    /// Number of recorded exchanges.
    public var count: Int { exchanges.count }

    public func reset() {
        // Before the first command a reset is the power-up every session starts with.
        state.withLock { s in if s.received > 0 { s.resets.append(s.received) } }
    }

    /// A power-down is no reset by itself; the power-up after it is.
    public func powerOff() {}

    public func process(_ apdu: [UInt8]) -> [UInt8] {
        state.withLock { s in
            s.received += 1
            func diverged(expected: Int?) {
                if s.firstDivergence == nil { s.firstDivergence = Divergence(number: s.received, sent: apdu, nearest: nearest(apdu, expected: expected)) }
            }
            switch order {
            case .strict:
                guard s.next < exchanges.count else {
                    diverged(expected: nil)
                    s.mismatches.append("command \(s.next + 1) (\(Hex.encode(apdu))): the recording has only \(exchanges.count)")
                    return [0x6F, 0x00]
                }
                let recorded = exchanges[s.next]
                guard recorded.command.matches(apdu) else {
                    diverged(expected: s.next)
                    s.mismatches.append("command \(s.next + 1): got \(Hex.encode(apdu)), the recording has \(recorded.command.bytes.map { $0.map { Hex.encode([$0]) } ?? "**" }.joined())")
                    return [0x6F, 0x00]
                }
                s.next += 1
                return recorded.response
            case .byCommand:
                let candidates = exchanges.indices.filter { exchanges[$0].command.matches(apdu) }
                guard let first = candidates.first else {
                    diverged(expected: nil)
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
