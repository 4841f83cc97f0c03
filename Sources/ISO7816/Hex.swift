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
        // ASCII hex with separators, the common case, straight off the UTF-8 bytes (`apdu send`
        // takes thousands of APDUs on one line, issue 50); anything else, and every error, the
        // scalar walk below, whose positions the messages give.
        if let fast = text.utf8.withContiguousStorageIfAvailable({ decodeASCII($0) }), let bytes = fast {
            if bytes.isEmpty && !allowEmpty { throw .empty }
            return bytes
        }
        return try decodeScalars(text, allowEmpty: allowEmpty)
    }

    /// The same for a `String`, specialised here rather than at each caller (`apdu send` decodes
    /// every APDU of its line).
    public static func decode(_ text: String, allowEmpty: Bool = false) throws(ParseError) -> [UInt8] {
        var text = text
        if let bytes = text.withUTF8({ decodeASCII($0) }) {
            if bytes.isEmpty && !allowEmpty { throw .empty }
            return bytes
        }
        return try decodeScalars(text, allowEmpty: allowEmpty)
    }

    /// The general decoding, scalar by scalar: any text, and the error's position.
    static func decodeScalars(_ text: some StringProtocol, allowEmpty: Bool) throws(ParseError) -> [UInt8] {
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

    /// Hex digits and separators only, an even number of digits: the bytes; nil for anything
    /// else (the general path then finds the error).
    static func decodeASCII(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        // Decoded on the stack, a digit's value by table, then copied out whole (issue 50).
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: text.count / 2 + 1) { out -> [UInt8]? in
            let nibbles = Hex.nibbles.utf8Start
            var high: UInt8 = 0xFF
            var count = 0
            for c in text {
                let nibble = nibbles[Int(c)] &- 0x30
                if nibble < 16 {
                    if high == 0xFF { high = nibble } else { out[count] = high << 4 | nibble; count += 1; high = 0xFF }
                } else if !(c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D || c == UInt8(ascii: ":") || c == UInt8(ascii: "-") || c == UInt8(ascii: "_")) {
                    return nil
                }
            }
            return high == 0xFF ? Array(UnsafeBufferPointer(rebasing: out[0..<count])) : nil
        }
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
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return offset }
        // `apdu script` writes three of these per APDU (issue 50): one bounds check for the whole
        // run, then table lookups and plain pointer stores.
        let count = bytes.count
        let needed = separator == nil ? 2 * count : 3 * count - 1
        precondition(offset >= 0 && offset + needed <= out.count, "Hex.write: the output is too small")
        // Both digits of a byte in one 16-bit copy from the table of pairs.
        let pairs = UnsafeRawPointer(upperPairs.utf8Start)
        var target = UnsafeMutableRawPointer(out.baseAddress! + offset)
        target.storeBytes(of: pairs.loadUnaligned(fromByteOffset: 2 * Int(source[0]), as: UInt16.self), as: UInt16.self)
        target += 2
        if let separator {
            for i in 1..<count {
                target.storeBytes(of: separator, as: UInt8.self)
                target.storeBytes(of: pairs.loadUnaligned(fromByteOffset: 2 * Int(source[i]), as: UInt16.self), toByteOffset: 1, as: UInt16.self)
                target += 3
            }
        } else {
            for i in 1..<count {
                target.storeBytes(of: pairs.loadUnaligned(fromByteOffset: 2 * Int(source[i]), as: UInt16.self), as: UInt16.self)
                target += 2
            }
        }
        return offset + needed
    }

    /// The uppercase hex digit of a nibble (0-15).
    @inline(__always)
    static func digit(_ nibble: UInt8) -> UInt8 {
        // A table, not a branch per nibble: three hex runs per APDU that `apdu script` prints.
        upperDigits.utf8Start[Int(nibble & 0x0F)]
    }

    private static let upperDigits: StaticString = "0123456789ABCDEF"
    /// "00" to "FF", byte by byte: `write`'s table.
    private static let upperPairs: StaticString = "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F202122232425262728292A2B2C2D2E2F303132333435363738393A3B3C3D3E3F404142434445464748494A4B4C4D4E4F505152535455565758595A5B5C5D5E5F606162636465666768696A6B6C6D6E6F707172737475767778797A7B7C7D7E7F808182838485868788898A8B8C8D8E8F909192939495969798999A9B9C9D9E9FA0A1A2A3A4A5A6A7A8A9AAABACADAEAFB0B1B2B3B4B5B6B7B8B9BABBBCBDBEBFC0C1C2C3C4C5C6C7C8C9CACBCCCDCECFD0D1D2D3D4D5D6D7D8D9DADBDCDDDEDFE0E1E2E3E4E5E6E7E8E9EAEBECEDEEEFF0F1F2F3F4F5F6F7F8F9FAFBFCFDFEFF"
    /// Per byte value, `0x30 + value` for a hex digit and `~` for anything else (bytes past 0x7F
    /// included): a script line's decoding table (issue 50).
    package static let nibbles: StaticString = "~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~0123456789~~~~~~~:;<=>?~~~~~~~~~~~~~~~~~~~~~~~~~~:;<=>?~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~"

    /// Uppercase hex of any byte sequence, optionally with a separator between bytes.
    public static func encode(_ bytes: some Sequence<UInt8>, separator: String = "") -> String {
        encode(Array(bytes), separator: separator)
    }
}

extension Sequence where Element == UInt8 {
    /// Uppercase hex with no separators.
    public var hexString: String { Hex.encode(self) }
}
