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

        /// The same from ASCII bytes (`apdu script`'s plain lines): whitespace anywhere, four
        /// digits or `x`; nil for anything else, as the text form.
        init?(ascii bytes: UnsafeBufferPointer<UInt8>) {
            var n: [UInt8?] = []
            for b in bytes {
                if b == 0x20 || (0x09...0x0D).contains(b) { continue }
                guard n.count < 4 else { return nil }
                if b | 0x20 == UInt8(ascii: "x") { n.append(nil); continue }
                guard let v = Hex.nibbleValue(b) else { return nil }
                n.append(v)
            }
            guard n.count == 4 else { return nil }
            nibbles = n
        }

        public func matches(_ sw: StatusWord) -> Bool {
            // Checked per APDU of a script: the nibbles of the word, high first, without an array.
            for (i, nibble) in nibbles.enumerated() {
                if let nibble, nibble != UInt8(truncatingIfNeeded: sw.rawValue >> (12 - 4 * i) & 0xF) { return false }
            }
            return true
        }

        public var description: String {
            nibbles.map { $0.map { String($0, radix: 16, uppercase: true) } ?? "x" }.joined()
        }
    }

    /// The steps as the script is run: an APDU as its encoding, validated when it was read and
    /// sent as it is (issue 50: a script of thousands of lines makes no command per line).
    package enum Item: Hashable, Sendable {
        case reset(line: Int)
        case apdu(encoded: [UInt8], expect: [StatusWordPattern]?, line: Int)
        case tag([UInt8], expect: [TagAnswerKind]?, line: Int)
    }

    /// Made by the parser alone, so every APDU's encoding is a valid one.
    package private(set) var items: [Item]

    /// The steps, each APDU decoded.
    public var steps: [Step] {
        get {
            items.map { item in
                switch item {
                case let .reset(line): return .reset(line: line)
                // Made by the parser from a valid encoding: decoding it again cannot fail.
                case let .apdu(encoded, expect, line): return .apdu(try! CommandAPDU(bytes: encoded), expect: expect, line: line)
                case let .tag(frame, expect, line): return .tag(frame, expect: expect, line: line)
                }
            }
        }
    }

    /// Parses a script. Stops at `exit` or `quit`. Lines are limited to keep hostile input bounded.
    public init(parsing text: String) throws(ParseError) {
        try self.init(parsing: text, fastLines: true)
    }

    /// `fastLines: false` parses every line the general way: the reference the fast path is
    /// tested against.
    package init(parsing text: String, fastLines: Bool) throws(ParseError) {
        try self.init(parsingNormalized: TextInput.normalized(text), fastLines: fastLines)
    }

    /// Parses text that `TextInput.normalized` made (`apdu script` normalizes a file once).
    package init(parsingNormalized text: String, fastLines: Bool = true) throws(ParseError) {
        var parser = Parser(fastLines: fastLines)
        var text = text
        // Lines split on the UTF-8 bytes: no grapheme breaking over a script of thousands of lines.
        let failure = text.withUTF8 { (bytes) -> ParseError? in
            var start = 0
            while start <= bytes.count {
                let end = TextInput.offset(of: UInt8(ascii: "\n"), in: UnsafeRawBufferPointer(bytes), from: start)
                do throws(ParseError) {
                    if try !parser.line(UnsafeBufferPointer(rebasing: bytes[start..<end])) { return nil }
                } catch { return error }
                start = end + 1
            }
            return nil
        }
        if let failure { throw failure }
        if !parser.pending.isEmpty { throw ParseError(line: parser.pendingLine, reason: "the script ends inside a continued line") }
        self.items = parser.items
    }

    /// The state of a parse, one line at a time.
    private struct Parser {
        let fastLines: Bool
        var items: [Item] = []
        var pending = ""
        var pendingLine = 0
        var number = 0
        init(fastLines: Bool) {
            self.fastLines = fastLines
        }

        /// Takes one line; false at `exit` or `quit`.
        mutating func line(_ bytes: UnsafeBufferPointer<UInt8>) throws(ParseError) -> Bool {
            number += 1
            // `apdu script` runs files of thousands of APDUs, which CI runs against pcscd: a plain
            // APDU line (hex, maybe `=> SW`) is read straight off its bytes (issue 50). Anything
            // else, and every error, takes the general path below, so messages stay the same.
            if fastLines, pending.isEmpty, let item = Self.plainAPDU(bytes, line: number) {
                items.append(item)
                return true
            }
            return try generalLine(String(decoding: bytes, as: UTF8.self))
        }

        /// A line that is only hex (and separators), optionally `=> PATTERN[, PATTERN…]` and a
        /// `#` comment, all ASCII; nil for anything else, or anything wrong.
        static func plainAPDU(_ bytes: UnsafeBufferPointer<UInt8>, line: Int) -> Item? {
            // One pass: the hex decoded on the stack up to `=>`, the rest only checked (a `#`
            // ends the line; a continuation, a second `=`, a byte outside ASCII are the general
            // path's). The encoding is the line's one allocation.
            var end = bytes.count
            var arrow: Int?
            let parsed = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bytes.count / 2 + 1) { out -> [UInt8]? in
                var high: UInt8 = 0xFF
                var count = 0
                var i = 0
                let nibbles = Hex.nibbles.utf8Start
                while i < end {
                    let b = bytes[i]
                    i += 1
                    // One table look-up per digit (issue 50): 0x30 + value for a hex digit.
                    let nibble = nibbles[Int(b)] &- 0x30
                    if nibble < 16, arrow == nil {
                        if high == 0xFF { high = nibble } else { out[count] = high << 4 | nibble; count += 1; high = 0xFF }
                    } else if b == 0x20 || b == 0x09 || (arrow == nil && (b == UInt8(ascii: ":") || b == UInt8(ascii: "-") || b == UInt8(ascii: "_"))) {
                        // Hex.decode's separators, but for line ends (none inside a line): any other
                        // byte, even whitespace that trimming would take at an edge, is the general path's.
                        continue
                    } else if b == UInt8(ascii: "#") {
                        end = i - 1
                    } else if b == UInt8(ascii: "=") {
                        guard arrow == nil, i < bytes.count, bytes[i] == UInt8(ascii: ">") else { return nil }
                        arrow = i - 1
                        i += 1
                    } else if arrow == nil || b >= 0x80 || b == UInt8(ascii: "\\") {
                        return nil
                    }
                }
                // Fewer than five digits may be a word (`exit`, `reset`) or an error: the general path.
                guard high == 0xFF, count >= 4 else { return nil }
                let encoding = UnsafeBufferPointer(rebasing: out[0..<count])
                guard (try? CommandAPDU.Shape(encoding: encoding)) != nil else { return nil }
                return Array(encoding)
            }
            guard let encoded = parsed else { return nil }
            guard let arrow else { return .apdu(encoded: encoded, expect: nil, line: line) }
            var patterns: [StatusWordPattern] = []
            var k = arrow + 2
            while k <= end {
                var tokenEnd = k
                while tokenEnd < end, bytes[tokenEnd] != UInt8(ascii: ",") { tokenEnd += 1 }
                guard let pattern = StatusWordPattern(ascii: UnsafeBufferPointer(rebasing: bytes[k..<tokenEnd])) else { return nil }
                patterns.append(pattern)
                k = tokenEnd + 1
            }
            return .apdu(encoded: encoded, expect: patterns, line: line)
        }

        /// Any line: words, `tag` frames, continuations, and every error's message.
        mutating func generalLine(_ text: String) throws(ParseError) -> Bool {
            var line = Substring(text)
            if let hash = line.utf8.firstIndex(of: UInt8(ascii: "#")) { line = line[..<hash] }
            var trimmed = line.trimmingWhitespace
            if pending.isEmpty { pendingLine = number }
            if trimmed.utf8.last == UInt8(ascii: "\\") {
                trimmed.removeLast()
                pending += trimmed + " "
                guard pending.utf8.count < 300_000 else { throw ParseError(line: pendingLine, reason: "continued line too long") }
                return true
            }
            let full = pending.isEmpty ? trimmed : (pending + trimmed).trimmingWhitespace
            pending = ""
            if full.isEmpty { return true }
            // The words (exit, quit, reset, tag …) are short or start with t; an APDU line is
            // neither, and is not lowercased.
            let lower = full.utf8.count <= 5 || full.utf8.first.map({ $0 | 0x20 == UInt8(ascii: "t") }) == true ? full.lowercased() : ""
            if lower == "exit" || lower == "quit" { return false }
            if lower == "reset" {
                items.append(.reset(line: pendingLine))
                return true
            }
            let parts = full.utf8.contains(UInt8(ascii: "=")) ? full.components(separatedBy: "=>") : [full]
            guard parts.count <= 2 else { throw ParseError(line: pendingLine, reason: "more than one '=>'") }
            let pendingLine = self.pendingLine
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
                items.append(.tag(frame, expect: expect, line: pendingLine))
                return true
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
            items.append(.apdu(encoded: command.bytes, expect: expect, line: pendingLine))
            return true
        }
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
