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
