import ISO7816
import Testing

@Suite("Command and response APDUs")
struct APDUTests {
    struct Vector: Sendable, CustomTestStringConvertible {
        var hex: String
        var apduCase: CommandAPDU.Case
        var data: Int
        var ne: Int?
        var extended: Bool
        var testDescription: String { hex }
    }

    @Test("every case parses and re-encodes to the same bytes", arguments: [
        Vector(hex: "00A40400", apduCase: .case1, data: 0, ne: nil, extended: false),
        Vector(hex: "00B0000010", apduCase: .case2, data: 0, ne: 16, extended: false),
        Vector(hex: "00B0000000", apduCase: .case2, data: 0, ne: 256, extended: false),
        Vector(hex: "00B00000000000", apduCase: .case2, data: 0, ne: 65536, extended: true),
        Vector(hex: "00B00000000100", apduCase: .case2, data: 0, ne: 256, extended: true),
        Vector(hex: "00A4040007A0000000031010", apduCase: .case3, data: 7, ne: nil, extended: false),
        Vector(hex: "00A4040007A000000003101000", apduCase: .case4, data: 7, ne: 256, extended: false),
        Vector(hex: "00D600000000030102030000", apduCase: .case4, data: 3, ne: 65536, extended: true),
    ])
    func cases(_ v: Vector) throws {
        let apdu = try CommandAPDU(hex: v.hex)
        #expect(apdu.apduCase == v.apduCase)
        #expect(apdu.data.count == v.data)
        #expect(apdu.ne == v.ne)
        #expect(apdu.isExtended == v.extended)
        #expect(apdu.bytes.hexString == v.hex)
    }

    @Test("building chooses the short form until a field needs the extended one")
    func building() {
        #expect(CommandAPDU(cla: 0, ins: 0xB0, p1: 0, p2: 0, ne: 256).bytes == [0, 0xB0, 0, 0, 0])
        #expect(CommandAPDU(cla: 0, ins: 0xB0, p1: 0, p2: 0, ne: 257).bytes == [0, 0xB0, 0, 0, 0, 0x01, 0x01])
        #expect(CommandAPDU(cla: 0, ins: 0xB0, p1: 0, p2: 0, ne: 65536).bytes == [0, 0xB0, 0, 0, 0, 0, 0])
        let long = CommandAPDU(cla: 0, ins: 0xD6, p1: 0, p2: 0, data: [UInt8](repeating: 7, count: 300), ne: 2)
        #expect(Array(long.bytes.prefix(7)) == [0, 0xD6, 0, 0, 0, 0x01, 0x2C])
        #expect(Array(long.bytes.suffix(2)) == [0, 2])
        #expect(throws: CommandAPDU.ParseError.invalidNe(0)) { try CommandAPDU(cla: 0, ins: 0, p1: 0, p2: 0, ne: 0).validate() }
        #expect(throws: CommandAPDU.ParseError.invalidNe(65537)) { try CommandAPDU(cla: 0, ins: 0, p1: 0, p2: 0, ne: 65537).validate() }
    }

    @Test("malformed APDUs are refused with what is wrong", arguments: [
        ("00A4", "at least 4 bytes"),
        ("00A4040007A00000", "does not match its Lc of 7"),
        ("00A404000000", "expected 5 or 7"),
        ("00A404000000000102", "Lc of 0000"),
        ("00A4040G", "invalid hex character 'G' at position 8"),
        ("00 A4 04 0", "position 10 has no partner"),
    ])
    func malformed(hex: String, message: String) {
        do {
            _ = try CommandAPDU(hex: hex)
            Issue.record("\(hex) parsed")
        } catch {
            #expect(error.description.contains(message), "\(error)")
        }
    }

    @Test("hex accepts case, spaces, colons; names bad positions")
    func hex() throws {
        #expect(try Hex.decode("0a:Bc de\tF0") == [0x0A, 0xBC, 0xDE, 0xF0])
        #expect(throws: Hex.ParseError.empty) { try Hex.decode("  ") }
        #expect(throws: Hex.ParseError.invalidCharacter("x", position: 3)) { try Hex.decode("00x0") }
        #expect(throws: Hex.ParseError.oddLength(digits: 3, position: 4)) { try Hex.decode("00 0") }
        #expect(Hex.encode([0x00, 0xAB], separator: " ") == "00 AB")
        let control = Hex.ParseError.invalidCharacter("\u{1B}", position: 1).description
        #expect(!control.contains("\u{1B}"))
    }

    @Test("responses split data and status word; too short is an error")
    func responses() throws {
        let r = try ResponseAPDU(bytes: [0x01, 0x02, 0x90, 0x00])
        #expect(r.data == [1, 2])
        #expect(r.statusWord == .success)
        #expect(throws: ResponseAPDU.ResponseError.self) { try ResponseAPDU(bytes: [0x90]) }
    }

    @Test("status words explained by ISO 7816-4, unknown ones kept", arguments: [
        (0x9000, StatusWord.Category.success, "normal processing"),
        (0x6110, .success, "16 response bytes"),
        (0x6100, .success, "256 or more"),
        (0x63C2, .warning, "2 tries left"),
        (0x63C1, .warning, "1 try left"),
        (0x6282, .warning, "end of file"),
        (0x6700, .error, "wrong length"),
        (0x6982, .error, "security status not satisfied"),
        (0x6A82, .error, "file or application not found"),
        (0x6C20, .error, "32 bytes available"),
        (0x6D00, .error, "instruction code not supported"),
        (0x6E00, .error, "class not supported"),
        (0x9123, .success, "proprietary"),
        (0x1234, .unknown, "not an ISO 7816-4 status word"),
        (0x0000, .unknown, "not an ISO 7816-4 status word"),
    ] as [(UInt16, StatusWord.Category, String)])
    func statusWords(raw: UInt16, category: StatusWord.Category, text: String) {
        let sw = StatusWord(rawValue: raw)
        #expect(sw.category == category)
        #expect(sw.meaning.text.contains(text), "\(sw.meaning.text)")
    }

    @Test("every one of the 65536 status words has a meaning and never traps")
    func allStatusWords() {
        var categories: [StatusWord.Category: Int] = [:]
        for raw in 0...0xFFFF {
            let m = StatusWord(rawValue: UInt16(raw)).meaning
            #expect(!m.text.isEmpty)
            categories[m.category, default: 0] += 1
        }
        #expect(categories[.success]! > 0 && categories[.warning]! > 0 && categories[.error]! > 0)
    }
}
