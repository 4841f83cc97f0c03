import ISO7816
import Testing

@Suite("scriptor scripts")
struct ScriptTests {
    @Test("comments, reset, continuation, expectations with wildcards, exit")
    func parse() throws {
        let script = try APDUScript(parsing: """
            # select
            reset
            00 A4 04 00 06 F0 61 70 64 75 01 => 9000
            00 EE 00 00 \\
               02 CA FE # continued
            80 CA 00 00 00 => 9000, 61xx
            exit
            00 00 00 00
            """)
        #expect(script.steps.count == 4)
        guard case .reset(line: 2) = script.steps[0] else { Issue.record("no reset"); return }
        guard case let .apdu(c, expect, line) = script.steps[2] else { Issue.record("no apdu"); return }
        #expect(c.data == [0xCA, 0xFE] && expect == nil && line == 4)
        guard case let .apdu(_, patterns?, _) = script.steps[3] else { Issue.record("no patterns"); return }
        #expect(patterns.count == 2)
        #expect(patterns[1].matches(StatusWord(rawValue: 0x6110)))
        #expect(!patterns[1].matches(StatusWord(rawValue: 0x6210)))
    }

    @Test("errors name the line", arguments: [
        ("00A4\n", 1, "at least 4 bytes"),
        ("# ok\n00A40400 => 90\n", 2, "not a status word pattern"),
        ("00A40400 => 9000 => 9000", 1, "more than one"),
        ("00A4 \\", 1, "ends inside a continued line"),
        ("\n\n00 zz", 3, "invalid hex character"),
    ])
    func errors(text: String, line: Int, reason: String) {
        do {
            _ = try APDUScript(parsing: text)
            Issue.record("parsed")
        } catch {
            #expect(error.line == line)
            #expect(error.reason.contains(reason), "\(error)")
        }
    }
}

/// SplitMix64: a seeded generator, so a failing input can be found again.
struct Seeded: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// `apdu script` reads a plain APDU line straight off its bytes (issue 50); every other line, and
/// every error, takes the general path. The two must never disagree.
@Suite("scriptor scripts: the plain-line reader against the general one")
struct ScriptFastPathTests {
    /// Pieces a line is made of: hex as people type it, separators the general path takes or
    /// refuses, words, comments, expectations right and wrong, continuations, non-ASCII.
    static let pieces: [String] = [
        "00", "A4", "a4", "04", "0C", "06", "F0", "61", "70", "64", "75", "01", "FF", "ee", "CA", "FE", "0", "00A40400", "80CA9F7F00",
        " ", "  ", "\t", ":", "-", "_", "\u{0B}", "\u{0C}", "\u{A0}", "é", "#", "# comment", "#=> 9000", "\\", "\\\\",
        "=>", "=> 9000", "=>9000", "=> 61xx", "=> 61XX", "=> 9000, 6283", "=> 9000,,6283", "=> 90 00", "=> 900", "=> 9000,",
        "=> 9g00", "=", "= >", "=>=>", ">", ",", "reset", "RESET", "exit", "quit", "tag", "tag 60", "tag 60 => data", "tag A2 05 => ack, nak", "x", "z",
    ]

    static func line(_ rng: inout Seeded) -> String {
        // Mostly plain APDUs, so both paths are exercised, sometimes with a hostile piece.
        if Int.random(in: 0..<3, using: &rng) == 0 {
            return (0..<Int.random(in: 0...6, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined()
        }
        let count = Int.random(in: 0...12, using: &rng)
        var bytes: [UInt8] = [0x00, 0xA4, 0x04, 0x00]
        if count > 0 { bytes.append(UInt8(count)); bytes += (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) } }
        if Bool.random(using: &rng) { bytes.append(UInt8.random(in: 0...255, using: &rng)) }
        let separator = [" ", "", ":", "  ", "\t", "-"].randomElement(using: &rng)!
        var text = bytes.map { Bool.random(using: &rng) ? Hex.encode([$0]) : Hex.encode([$0]).lowercased() }.joined(separator: separator)
        if Int.random(in: 0..<4, using: &rng) == 0 { text += " " + pieces.randomElement(using: &rng)! }
        if Int.random(in: 0..<3, using: &rng) == 0 { text += " => " + ["9000", "61xx", "9000, 6A82", "6x8x", "90000"].randomElement(using: &rng)! }
        if Int.random(in: 0..<4, using: &rng) == 0 { text = " " + text + " # note" }
        return text
    }

    static func outcome(_ text: String, fast: Bool) -> String {
        do { return "\(try APDUScript(parsing: text, fastLines: fast).steps)" } catch { return "error \(error.line): \(error.reason)" }
    }

    @Test("20,000 generated lines and 2,000 scripts parse the same both ways")
    func agree() {
        var rng = Seeded(state: 0x5C41_7750)
        var disagreements: [String] = []
        for _ in 0..<20_000 {
            let text = Self.line(&rng)
            if Self.outcome(text, fast: true) != Self.outcome(text, fast: false) { disagreements.append(text) }
        }
        for _ in 0..<2_000 {
            let text = (0..<Int.random(in: 1...8, using: &rng)).map { _ in Self.line(&rng) }.joined(separator: ["\n", "\r\n", "\r"].randomElement(using: &rng)!)
            if Self.outcome(text, fast: true) != Self.outcome(text, fast: false) { disagreements.append(text) }
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(5).map { $0.debugDescription })")
    }

    @Test("plain lines are read by the fast reader, with their expectations")
    func plain() throws {
        let script = try APDUScript(parsing: "00 a4:04-00_02 3F00 => 9000, 61XX # select\n\t00B0000010\n")
        #expect(script.steps == [
            .apdu(CommandAPDU(cla: 0, ins: 0xA4, p1: 4, p2: 0, data: [0x3F, 0x00]),
                  expect: [try #require(.init("9000")), try #require(.init("61xx"))], line: 1),
            .apdu(CommandAPDU(cla: 0, ins: 0xB0, p1: 0, p2: 0, ne: 16), expect: nil, line: 2),
        ])
    }
}

@Suite("command encoding against a plain reference")
struct CommandEncodingTests {
    /// ISO 7816-3 §12.1 written out case by case, apart from CommandAPDU's encoder.
    static func reference(_ c: CommandAPDU) -> [UInt8] {
        var out = [c.cla, c.ins, c.p1, c.p2]
        let ne = c.ne.map { min(max($0, 1), 65536) }
        let extended = c.forceExtended || c.data.count > 255 || (ne ?? 0) > 256
        switch (c.data.isEmpty, ne) {
        case (true, nil): break
        case let (true, n?): out += extended ? [0, UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] : [UInt8(n & 0xFF)]
        case (false, nil): out += extended ? [0, UInt8(c.data.count >> 8), UInt8(c.data.count & 0xFF)] + c.data : [UInt8(c.data.count)] + c.data
        case let (false, n?):
            out += extended ? [0, UInt8(c.data.count >> 8), UInt8(c.data.count & 0xFF)] + c.data + [UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)]
                : [UInt8(c.data.count)] + c.data + [UInt8(n & 0xFF)]
        }
        return out
    }

    @Test("every case, short and extended, at the boundaries")
    func boundaries() throws {
        var rng = Seeded(state: 0xE7C0DE)
        for length in [0, 1, 2, 254, 255, 256, 257, 4096, 65535] {
            for ne in [nil, 1, 255, 256, 257, 65535, 65536] as [Int?] {
                for force in [false, true] {
                    let data = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
                    let c = CommandAPDU(cla: 0x80, ins: 0xCA, p1: 1, p2: 2, data: data, ne: ne, forceExtended: force)
                    let bytes = c.bytes
                    #expect(bytes == Self.reference(c), "data \(length), Ne \(ne.map(String.init) ?? "none"), forced \(force)")
                    #expect(bytes.count == c.encodedCount)
                    let back = try CommandAPDU(bytes: bytes)
                    #expect(back.data == data && back.ne == ne)
                }
            }
        }
    }

    @Test("hex written into a buffer is Hex.encode's")
    func hexWrite() {
        var rng = Seeded(state: 0x4E58)
        for length in [0, 1, 2, 3, 17, 300] {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            for separator in [nil, UInt8(ascii: " ")] {
                let text = [UInt8](unsafeUninitializedCapacity: 3 * length + 1) { out, count in
                    count = bytes.withUnsafeBufferPointer { Hex.write($0, separator: separator, into: out, at: 0) }
                }
                #expect(String(decoding: text, as: UTF8.self) == Hex.encode(bytes, separator: separator == nil ? "" : " "))
            }
        }
    }
}
