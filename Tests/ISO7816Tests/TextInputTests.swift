@testable import ISO7816
import Testing

@Suite("Text input: BOM and CRLF")
struct TextInputTests {
    @Test("the word-at-a-time CR scan agrees with a byte-by-byte one at every length and position")
    func crScanMatchesReference() {
        // Bytes next to CR in value, and with the high bit set, must not count.
        let fillers: [UInt8] = [0x0C, 0x0E, 0x8D, 0x0A, 0x00, 0xFF, 0x30]
        for length in 0...40 {
            for filler in fillers {
                let plain = [UInt8](repeating: filler, count: length)
                #expect(!plain.withUnsafeBytes { TextInput.containsCR($0) }, "length \(length) filler \(filler)")
                for position in 0..<length {
                    var bytes = plain
                    bytes[position] = 0x0D
                    #expect(bytes.withUnsafeBytes { TextInput.containsCR($0) }, "length \(length) CR at \(position)")
                }
            }
        }
    }

    @Test("the word-at-a-time byte search finds the first occurrence from any start, as a byte-by-byte one")
    func byteSearchMatchesReference() {
        var generator = SystemRandomNumberGenerator()
        // Few distinct values, so targets repeat and sit beside their neighbours (a borrow in the
        // word test could flag the byte above a match: the first one must still be found).
        let values: [UInt8] = [0x0A, 0x0B, 0x09, 0x00, 0x01, 0x8A, 0xFF, 0x0D]
        for _ in 0..<20_000 {
            let bytes = (0..<Int.random(in: 0...40, using: &generator)).map { _ in values.randomElement(using: &generator)! }
            let target = values.randomElement(using: &generator)!
            let start = Int.random(in: 0...bytes.count, using: &generator)
            let expected = bytes[start...].firstIndex(of: target) ?? bytes.count
            let found = bytes.withUnsafeBytes { TextInput.offset(of: target, in: $0, from: start) }
            #expect(found == expected, "\(bytes) target \(target) from \(start)")
        }
    }

    @Test("CRLF, lone CR and a BOM normalise; plain text comes back as it is")
    func normalises() {
        #expect(TextInput.normalized(Array("\u{FEFF}a\r\nb\rc\n".utf8)) == "a\nb\nc\n")
        #expect(TextInput.normalized("00 A4 04 00\r\n00 B0 00 00 10\r\n") == "00 A4 04 00\n00 B0 00 00 10\n")
        let long = String(repeating: "00 EE 00 00 02 CA FE\n", count: 100)
        #expect(TextInput.normalized(long) == long)
        #expect(TextInput.normalized(long + "\r") == long + "\n")
    }
}

@Suite("Hex decoding's ASCII fast path")
struct HexFastPathTests {
    @Test("the fast path and the scalar walk agree on bytes and errors, on 20,000 random texts")
    func fastPathMatchesScalarWalk() {
        let alphabet: [String] = ["0", "9", "a", "F", "g", " ", "\t", "\n", "\r", ":", "-", "_", "\u{FEFF}", "é", "x", "\r\n", "#"]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let text = (0..<Int.random(in: 0...12, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }.joined()
            for allowEmpty in [false, true] {
                let fast = Result { () throws(Hex.ParseError) in try Hex.decode(text, allowEmpty: allowEmpty) }
                let reference = Result { () throws(Hex.ParseError) in try Hex.decodeScalars(text, allowEmpty: allowEmpty) }
                #expect(fast == reference, "\(text.debugDescription)")
                // The String overload and the generic one (a Substring) alike.
                let generic = Result { () throws(Hex.ParseError) in try Hex.decode(Substring(text), allowEmpty: allowEmpty) }
                #expect(generic == reference, "\(text.debugDescription)")
                let sub = Substring("<" + text + ">").dropFirst().dropLast()
                #expect(Result { () throws(Hex.ParseError) in try Hex.decode(sub, allowEmpty: allowEmpty) } == reference)
            }
        }
    }
}

@Suite("Hex tables")
struct HexTableTests {
    @Test("the script parser's digit table gives every byte value's nibble, and nothing for the rest")
    func nibbleTableMatchesNibbleValue() {
        let table = Hex.nibbles.utf8Start
        #expect(Hex.nibbles.utf8CodeUnitCount == 256)
        for b in 0...255 {
            let fromTable = table[b] &- 0x30
            #expect((fromTable < 16 ? fromTable : nil) == Hex.nibbleValue(UInt8(b)), "byte \(b)")
        }
    }

    @Test("every byte value is written as its two digits, with and without a separator")
    func pairTableCoversEveryByte() {
        let bytes = (0...255).map { UInt8($0) }
        for separator in [nil, UInt8(ascii: " ")] {
            let text = [UInt8](unsafeUninitializedCapacity: 3 * 256) { out, count in
                count = bytes.withUnsafeBufferPointer { Hex.write($0, separator: separator, into: out, at: 0) }
            }
            let expected = bytes.map { String($0, radix: 16, uppercase: true) }.map { $0.count == 1 ? "0" + $0 : $0 }
            #expect(String(decoding: text, as: UTF8.self) == expected.joined(separator: separator == nil ? "" : " "))
        }
    }
}
