// Text input made uniform before parsing: the UTF-8 byte order mark dropped, CRLF and CR turned
// into LF.

/// Text files and pipes as people really save them: LF, CRLF or CR line ends, with or without a
/// UTF-8 byte order mark. Every text input (scripts, allowlists, hex files) goes through here.
///
/// Swift treats `"\r\n"` as one `Character`, so a CRLF file split on `"\n"` never splits at all;
/// normalising first keeps every parser simple and right.
public enum TextInput {
    /// The UTF-8 byte order mark.
    public static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// The bytes without a leading UTF-8 byte order mark.
    public static func droppingByteOrderMark(_ bytes: some Collection<UInt8>) -> ArraySlice<UInt8> {
        let all = ArraySlice(bytes)
        return all.starts(with: byteOrderMark) ? all.dropFirst(byteOrderMark.count) : all
    }

    /// Decodes UTF-8 (invalid sequences become U+FFFD), drops a byte order mark, and turns CRLF
    /// and lone CR line ends into LF.
    public static func normalized(_ bytes: some Collection<UInt8>) -> String {
        // The common file, LF only and no mark, decoded as it is (scripts run to thousands of lines).
        if let plain = bytes.withContiguousStorageIfAvailable({ b -> String? in
            b.starts(with: byteOrderMark) || containsCR(UnsafeRawBufferPointer(b)) ? nil : String(decoding: b, as: UTF8.self)
        }), let plain { return plain }
        var out: [UInt8] = []
        let body = droppingByteOrderMark(bytes)
        out.reserveCapacity(body.count)
        var previousCR = false
        for b in body {
            if b == 0x0D {
                out.append(0x0A)
                previousCR = true
                continue
            }
            if b == 0x0A && previousCR {
                previousCR = false
                continue
            }
            previousCR = false
            out.append(b)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The same for text already decoded.
    public static func normalized(_ text: String) -> String {
        var text = text
        if !text.withUTF8({ containsCR(UnsafeRawBufferPointer($0)) || $0.starts(with: byteOrderMark) }) { return text }
        return normalized(Array(text.utf8))
    }

    /// Whether the bytes hold a CR (a script of 30,000 lines is checked on its way in: byte by
    /// byte that was a tenth of `apdu script`'s own CPU, issue 50).
    static func containsCR(_ bytes: UnsafeRawBufferPointer) -> Bool {
        offset(of: 0x0D, in: bytes, from: 0) < bytes.count
    }

    /// The offset of the first `byte` at or after `start`, or `bytes.count` when there is none:
    /// eight bytes at a time (a script's line ends are found this way, issue 50).
    package static func offset(of byte: UInt8, in bytes: UnsafeRawBufferPointer, from start: Int) -> Int {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let pattern = ones &* UInt64(byte)
        var i = start
        while i + 8 <= bytes.count {
            // A zero byte in word ^ pattern is the byte: the classic "has a zero byte" test, whose
            // lowest flag is always a true one (a borrow only flags bytes above a zero byte).
            let x = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)) ^ pattern
            let found = (x &- ones) & ~x & highs
            if found != 0 { return i + found.trailingZeroBitCount / 8 }
            i += 8
        }
        while i < bytes.count {
            if bytes[i] == byte { return i }
            i += 1
        }
        return bytes.count
    }
}
