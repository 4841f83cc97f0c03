// `apdu send` with thousands of APDUs on its command line, in time linear in their number.
import ISO7816

/// swift-argument-parser takes time quadratic in the number of values of a repeated positional
/// argument (each value re-unions a growing set of input origins and leaves the front of an
/// array): 30,000 APDUs on `apdu send`'s line took minutes of CPU before the first was sent.
/// So the trailing run of APDU-shaped words is set aside before the parser sees the line and
/// appended to what it parsed: the first word of the run stays, so whatever would take it (an
/// option's value, the first APDU) still does, and every later word of the run follows a word
/// that is no option, so it can only be one more APDU (no option of `send` takes two values).
package enum LongArgumentLists {
    /// The APDUs set aside from `send`'s line, in order; empty for any other command.
    nonisolated(unsafe) package private(set) static var sendTail: [String] = []

    /// The arguments (without the program's name) for the parser, the tail set aside.
    package static func setAside(_ arguments: [String]) -> [String] {
        guard arguments.first == "send", arguments.count > 3 else { return arguments }
        var start = arguments.count
        while start > 1, looksLikeAPDU(arguments[start - 1]) { start -= 1 }
        // The run is arguments[start...]; its first word stays with the parser.
        guard arguments.count - start >= 2 else { return arguments }
        sendTail = Array(arguments[(start + 1)...])
        return Array(arguments[...start])
    }

    /// Hex digits, maybe spaced with blanks or colons, at least a header's worth; never an
    /// option (no leading `-`).
    static func looksLikeAPDU(_ word: String) -> Bool {
        var word = word
        return word.withUTF8(looksLikeAPDU)
    }

    static func looksLikeAPDU(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var digits = 0
        let nibbles = Hex.nibbles.utf8Start
        for b in bytes {
            if nibbles[Int(b)] &- 0x30 < 16 { digits += 1 } else if b != UInt8(ascii: " ") && b != UInt8(ascii: ":") { return false }
        }
        return digits >= 8
    }
}
