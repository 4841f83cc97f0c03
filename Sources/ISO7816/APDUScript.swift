// APDU scripts in pcsc-tools' `scriptor` format, with expected status words and native `tag`
// frames, parsed with bounded lines.

/// A script in pcsc-tools' `scriptor` format, plus an optional expected status word per APDU:
///
/// ```
/// # comment
/// reset
/// 00 A4 04 00 07 A0 00 00 00 03 10 10 => 9000     # expect exactly 9000
/// 00 B0 00 00 \
///    10 => 9000, 6282                              # continued line, either word
/// 80 CA 9F 7F 00 => 61xx                            # x matches any hex digit
/// exit
/// ```
///
/// `tag` sends a contactless tag's own command through the reader's raw path (Part 3
/// transparent exchange, ACR122U) instead of an APDU, with an optional expected answer:
///
/// ```
/// tag 60 => data                  # GET_VERSION
/// tag A2 05 01 02 03 04 => ack    # WRITE page 5
/// tag C2 FF => ack                # SECTOR_SELECT…
/// tag 01 00 00 00 => none         # …acknowledged by silence
/// ```
public struct APDUScript: Hashable, Sendable {
    public enum Step: Hashable, Sendable {
        case reset(line: Int)
        case apdu(CommandAPDU, expect: [StatusWordPattern]?, line: Int)
        /// A native tag frame (no CRC) and the answers allowed.
        case tag([UInt8], expect: [TagAnswerKind]?, line: Int)
    }

    /// What a tag may answer a `tag` line with.
    public enum TagAnswerKind: String, Hashable, Sendable, CaseIterable {
        case data, ack, nak, none
    }

    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        public var line: Int
        public var reason: String
        public var description: String { "script line \(line): \(reason)" }
    }

    /// `9000`, `61xx`, `6Cx0`: four hex digits, `x` for any digit.
    public struct StatusWordPattern: Hashable, Sendable, CustomStringConvertible {
        /// Nibbles high to low; nil matches any.
        public var nibbles: [UInt8?]

        public init?(_ text: some StringProtocol) {
            let t = Array(text.filter { !$0.isWhitespace })
            guard t.count == 4 else { return nil }
            var n: [UInt8?] = []
            for c in t {
                if c == "x" || c == "X" { n.append(nil); continue }
                guard let a = c.asciiValue, let v = Hex.nibbleValue(a) else { return nil }
                n.append(v)
            }
            nibbles = n
        }

        public func matches(_ sw: StatusWord) -> Bool {
            let value = [sw.sw1 >> 4, sw.sw1 & 0xF, sw.sw2 >> 4, sw.sw2 & 0xF]
            return zip(nibbles, value).allSatisfy { $0 == nil || $0 == $1 }
        }

        public var description: String {
            nibbles.map { $0.map { String($0, radix: 16, uppercase: true) } ?? "x" }.joined()
        }
    }

    public var steps: [Step]

    /// Parses a script. Stops at `exit` or `quit`. Lines are limited to keep hostile input bounded.
    public init(parsing text: String) throws(ParseError) {
        var steps: [Step] = []
        var pending = ""
        var pendingLine = 0
        var number = 0
        // Lines split on the UTF-8 bytes: no grapheme breaking over a script of thousands of lines.
        for rawLine in TextInput.normalized(text).utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            number += 1
            var line = Substring(rawLine)
            if let hash = line.utf8.firstIndex(of: UInt8(ascii: "#")) { line = line[..<hash] }
            var trimmed = line.trimmingWhitespace
            if pending.isEmpty { pendingLine = number }
            if trimmed.utf8.last == UInt8(ascii: "\\") {
                trimmed.removeLast()
                pending += trimmed + " "
                guard pending.utf8.count < 300_000 else { throw ParseError(line: pendingLine, reason: "continued line too long") }
                continue
            }
            let full = pending.isEmpty ? trimmed : (pending + trimmed).trimmingWhitespace
            pending = ""
            if full.isEmpty { continue }
            // The words (exit, quit, reset, tag …) are short or start with t; an APDU line is
            // neither, and is not lowercased.
            let lower = full.utf8.count <= 5 || full.utf8.first.map({ $0 | 0x20 == UInt8(ascii: "t") }) == true ? full.lowercased() : ""
            if lower == "exit" || lower == "quit" { break }
            if lower == "reset" {
                steps.append(.reset(line: pendingLine))
                continue
            }
            let parts = full.utf8.contains(UInt8(ascii: "=")) ? full.components(separatedBy: "=>") : [full]
            guard parts.count <= 2 else { throw ParseError(line: pendingLine, reason: "more than one '=>'") }
            if lower.hasPrefix("tag ") || lower == "tag" {
                let frame: [UInt8]
                do { frame = try Hex.decode(parts[0].dropFirst(3)) } catch {
                    throw ParseError(line: pendingLine, reason: "tag frame: \(error.description)")
                }
                guard frame.count <= 250 else { throw ParseError(line: pendingLine, reason: "tag frame of \(frame.count) bytes; a reader carries at most 250") }
                var expect: [TagAnswerKind]?
                if parts.count == 2 {
                    expect = try parts[1].split(separator: ",").map { token throws(ParseError) in
                        guard let kind = TagAnswerKind(rawValue: token.trimmingWhitespace.lowercased()) else {
                            throw ParseError(line: pendingLine, reason: "'\(token.trimmingWhitespace)' is not a tag answer (data, ack, nak, none)")
                        }
                        return kind
                    }
                    guard expect?.isEmpty == false else { throw ParseError(line: pendingLine, reason: "'=>' needs an answer (data, ack, nak, none)") }
                }
                steps.append(.tag(frame, expect: expect, line: pendingLine))
                continue
            }
            let command: CommandAPDU
            do { command = try CommandAPDU(hex: parts[0]) } catch {
                throw ParseError(line: pendingLine, reason: error.description)
            }
            var expect: [StatusWordPattern]?
            if parts.count == 2 {
                var patterns: [StatusWordPattern] = []
                for token in parts[1].split(separator: ",") {
                    guard let p = StatusWordPattern(token) else {
                        throw ParseError(line: pendingLine, reason: "'\(token.trimmingWhitespace)' is not a status word pattern like 9000 or 61xx")
                    }
                    patterns.append(p)
                }
                guard !patterns.isEmpty else { throw ParseError(line: pendingLine, reason: "'=>' needs a status word") }
                expect = patterns
            }
            steps.append(.apdu(command, expect: expect, line: pendingLine))
        }
        if !pending.isEmpty { throw ParseError(line: pendingLine, reason: "the script ends inside a continued line") }
        self.steps = steps
    }
}

extension StringProtocol {
    /// The text without leading and trailing whitespace (Foundation's trimming, without Foundation).
    package var trimmingWhitespace: String {
        // ASCII whitespace on the UTF-8 bytes (scripts run to thousands of lines); the Unicode
        // way only when a non-ASCII whitespace character sits at an edge.
        func isSpace(_ b: UInt8) -> Bool { b == 0x20 || (0x09...0x0D).contains(b) }
        let whole = Substring(self)
        let bytes = whole.utf8
        var start = bytes.startIndex, end = bytes.endIndex
        while start < end, isSpace(bytes[start]) { start = bytes.index(after: start) }
        while start < end, isSpace(bytes[bytes.index(before: end)]) { end = bytes.index(before: end) }
        var core = whole[start..<end]
        if let f = core.unicodeScalars.first, let l = core.unicodeScalars.last,
           (!f.isASCII && f.properties.isWhitespace) || (!l.isASCII && l.properties.isWhitespace) {
            while let f = core.first, f.isWhitespace { core.removeFirst() }
            while let l = core.last, l.isWhitespace { core.removeLast() }
        }
        return String(core)
    }

    /// The pieces between occurrences of `separator` (Foundation's `components(separatedBy:)`).
    package func components(separatedBy separator: String) -> [String] {
        var result: [String] = []
        var rest = Substring(self)
        while let range = rest.range(of: separator) {
            result.append(String(rest[..<range.lowerBound]))
            rest = rest[range.upperBound...]
        }
        result.append(String(rest))
        return result
    }
}

extension Substring {
    /// The first occurrence of `needle`, found in the UTF-8 bytes (a script of thousands of lines
    /// is parsed before the first APDU goes out, so this runs once per line).
    func range(of needle: String) -> Range<Index>? {
        let pattern = Array(needle.utf8)
        guard let first = pattern.first else { return nil }
        let bytes = utf8
        var from = bytes.startIndex
        while let start = bytes[from...].firstIndex(of: first) {
            if bytes[start...].starts(with: pattern) { return start..<bytes.index(start, offsetBy: pattern.count) }
            from = bytes.index(after: start)
        }
        return nil
    }
}
