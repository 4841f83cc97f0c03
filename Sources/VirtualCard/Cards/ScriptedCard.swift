// An emulated card that answers from a text file of command patterns and responses.
import Dispatch
import FoundationEssentials
import Glibc
import ISO7816

/// A card that answers from a table of command patterns, read from a text file:
///
/// ```
/// # comment
/// atr 3B 80 80 01 01
/// 00 A4 04 00 07 A0000000031010 => 6F 10 84 07 A0000000031010 A5 05 50 03 414243 90 00
/// 80 CA ?? ?? 00                => 01 02 90 00
/// 00 B0 *                       => 6A 82
/// *                             => 6D 00
/// ```
///
/// `??` matches any one byte, a trailing `*` any remaining bytes (none included). The first
/// matching rule answers; with no match the card answers `6D00`.
public final class ScriptedCard: EmulatedCard, @unchecked Sendable {
    public struct Rule: Hashable, Sendable {
        /// `nil` entries are `??` wildcards.
        public var pattern: [UInt8?]
        public var matchesAnyTail: Bool
        public var response: [UInt8]

        public init(pattern: [UInt8?], matchesAnyTail: Bool, response: [UInt8]) {
            self.pattern = pattern
            self.matchesAnyTail = matchesAnyTail
            self.response = response
        }

        public func matches(_ apdu: [UInt8]) -> Bool {
            if matchesAnyTail ? apdu.count < pattern.count : apdu.count != pattern.count { return false }
            for (i, p) in pattern.enumerated() where p != nil && p != apdu[i] { return false }
            return true
        }
    }

    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        public var line: Int
        public var reason: String
        public init(line: Int, reason: String) {
            self.line = line
            self.reason = reason
        }
        public var description: String { "card script line \(line): \(reason)" }
    }

    public let atr: [UInt8]
    public let rules: [Rule]
    private let received = Locked([[UInt8]]())

    public init(atr: [UInt8] = ApplicationHost.defaultATR, rules: [Rule]) {
        self.atr = atr
        self.rules = rules
    }

    /// Parses the text format above.
    public convenience init(script: String) throws(ParseError) {
        var atr = ApplicationHost.defaultATR
        var rules: [Rule] = []
        for (index, rawLine) in TextInput.normalized(script).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            var line = Substring(rawLine)
            if let hash = line.firstIndex(of: "#") { line = line[..<hash] }
            let trimmed = line.trimmingWhitespace
            if trimmed.isEmpty { continue }
            if trimmed.lowercased().hasPrefix("atr ") || trimmed.lowercased() == "atr" {
                do { atr = try Hex.decode(trimmed.dropFirst(3)) } catch {
                    throw ParseError(line: number, reason: "bad ATR: \(error)")
                }
                continue
            }
            let sides = trimmed.components(separatedBy: "=>")
            guard sides.count == 2 else { throw ParseError(line: number, reason: "expected 'COMMAND => RESPONSE'") }
            var left = sides[0].filter { !$0.isWhitespace && $0 != ":" }
            var anyTail = false
            if left.hasSuffix("*") { anyTail = true; left.removeLast() }
            guard left.count % 2 == 0 else { throw ParseError(line: number, reason: "odd number of hex digits in the command pattern") }
            var pattern: [UInt8?] = []
            var i = left.startIndex
            while i < left.endIndex {
                let pair = left[i..<left.index(i, offsetBy: 2)]
                if pair == "??" { pattern.append(nil) } else if let b = UInt8(pair, radix: 16) { pattern.append(b) } else {
                    throw ParseError(line: number, reason: "'\(pair)' is neither a hex byte nor ??")
                }
                i = left.index(i, offsetBy: 2)
            }
            let response: [UInt8]
            do { response = try Hex.decode(sides[1]) } catch { throw ParseError(line: number, reason: "bad response: \(error)") }
            guard response.count >= 2 else { throw ParseError(line: number, reason: "a response needs at least SW1 SW2") }
            rules.append(Rule(pattern: pattern, matchesAnyTail: anyTail, response: response))
        }
        self.init(atr: atr, rules: rules)
    }

    /// Every APDU received, in order.
    public var log: [[UInt8]] { received.current }

    public func reset() {}

    public func process(_ apdu: [UInt8]) -> [UInt8] {
        received.withLock { $0.append(apdu) }
        return rules.first { $0.matches(apdu) }?.response ?? [0x6D, 0x00]
    }
}
