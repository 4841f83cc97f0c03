// Hex text to bytes and back, as people type it, with errors that give the character's position.

/// Hex text ↔ bytes, as people type it: either case, with spaces, tabs, colons or dashes
/// between bytes or digits.
public enum Hex {
    /// Why hex text was refused, with the 1-based character position people can find.
    public enum ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        /// A character that is neither a hex digit nor an allowed separator.
        case invalidCharacter(Character, position: Int)
        /// An odd number of digits: the last digit, at `position`, has no partner.
        case oddLength(digits: Int, position: Int)
        /// No digits at all.
        case empty

        public var description: String {
            switch self {
            case let .invalidCharacter(c, position):
                let shown = c.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F })
                    ? "'\(c)'" : c.unicodeScalars.map { "U+" + String($0.value, radix: 16, uppercase: true) }.joined()
                return "invalid hex character \(shown) at position \(position)"
            case let .oddLength(digits, position):
                return "odd number of hex digits (\(digits)): the digit at position \(position) has no partner"
            case .empty:
                return "no hex digits"
            }
        }
    }

    /// Decodes hex text. Separators (space, tab, newline, `:`, `-`, `_`) may stand anywhere.
    public static func decode(_ text: some StringProtocol, allowEmpty: Bool = false) throws(ParseError) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count / 2)
        var high: UInt8? = nil
        var highPosition = 0
        var position = 0
        var digits = 0
        // Scalars, not Characters: "\r\n" is one Character, and a leading byte order mark is
        // no hex digit but no error either.
        for scalar in text.unicodeScalars {
            position += 1
            if scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r"
                || scalar == ":" || scalar == "-" || scalar == "_" || (scalar == "\u{FEFF}" && position == 1) {
                continue
            }
            guard scalar.isASCII, let nibble = nibbleValue(UInt8(scalar.value)) else {
                throw .invalidCharacter(Character(scalar), position: position)
            }
            digits += 1
            if let h = high {
                bytes.append(h << 4 | nibble)
                high = nil
            } else {
                high = nibble
                highPosition = position
            }
        }
        if high != nil { throw .oddLength(digits: digits, position: highPosition) }
        if bytes.isEmpty && !allowEmpty { throw .empty }
        return bytes
    }

    /// Whether a byte may appear in hex text (a digit or a separator).
    public static func isHexOrSeparator(_ c: UInt8) -> Bool {
        nibbleValue(c) != nil || c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D || c == UInt8(ascii: ":") || c == UInt8(ascii: "-") || c == UInt8(ascii: "_")
    }

    @inline(__always)
    static func nibbleValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    private static let digits: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// Uppercase hex, optionally with a separator between bytes.
    public static func encode(_ bytes: [UInt8], separator: String = "") -> String {
        // The common case, written straight into the string's storage (`script` shows every APDU).
        let sep = Array(separator.utf8)
        guard !bytes.isEmpty else { return "" }
        let count = bytes.count * 2 + (bytes.count - 1) * sep.count
        return String(unsafeUninitializedCapacity: count) { out in
            var o = 0
            for (i, b) in bytes.enumerated() {
                if i > 0 { for s in sep { out[o] = s; o += 1 } }
                out[o] = digits[Int(b >> 4)]
                out[o + 1] = digits[Int(b & 0x0F)]
                o += 2
            }
            return o
        }
    }

    /// Writes the uppercase hex of `bytes` into `out` from `offset`, with `separator` between
    /// bytes, and returns the offset after it; `out` must have room (3 bytes per byte). Text made
    /// straight into an output line (`apdu script` prints a line per APDU, issue 50).
    public static func write(_ bytes: UnsafeBufferPointer<UInt8>, separator: UInt8? = nil,
                             into out: UnsafeMutableBufferPointer<UInt8>, at offset: Int) -> Int {
        guard let first = bytes.first else { return offset }
        out[offset] = digit(first >> 4)
        out[offset + 1] = digit(first & 0x0F)
        var o = offset + 2
        if let separator {
            for b in bytes.dropFirst() {
                out[o] = separator
                out[o + 1] = digit(b >> 4)
                out[o + 2] = digit(b & 0x0F)
                o += 3
            }
        } else {
            for b in bytes.dropFirst() {
                out[o] = digit(b >> 4)
                out[o + 1] = digit(b & 0x0F)
                o += 2
            }
        }
        return o
    }

    /// The uppercase hex digit of a nibble (0-15).
    @inline(__always)
    static func digit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? nibble + UInt8(ascii: "0") : nibble - 10 + UInt8(ascii: "A")
    }

    /// Uppercase hex of any byte sequence, optionally with a separator between bytes.
    public static func encode(_ bytes: some Sequence<UInt8>, separator: String = "") -> String {
        encode(Array(bytes), separator: separator)
    }
}

extension Sequence where Element == UInt8 {
    /// Uppercase hex with no separators.
    public var hexString: String { Hex.encode(self) }
}
