import ISO7816
import Testing
import VirtualCard

/// The Type 2 emulator against the chip behaviours the datasheets describe. Each probe sends
/// the pseudo-APDUs a reader would and compares with what a real chip does; with any one
/// behaviour switched off the model must fail at least one probe, or the tests that rely on the
/// model would prove nothing about real tags.
@Suite("Type 2 emulator: datasheet behaviours, each one needed")
struct Type2ChipConformanceTests {
    static let nak: [UInt8] = [0x63, 0x00]
    static let ok: [UInt8] = [0x90, 0x00]

    static func read(_ m: Type2TagModel, _ page: Int, p1: UInt8 = 0) -> [UInt8] { m.process([0xFF, 0xB0, p1, UInt8(page & 0xFF), 0x10]) }
    static func write(_ m: Type2TagModel, _ page: Int, _ data: [UInt8], p1: UInt8 = 0) -> [UInt8] { m.process([0xFF, 0xD6, p1, UInt8(page & 0xFF), 0x04] + data) }

    /// The probes: every datasheet fact the model claims, each a violation message when wrong.
    static func violations(_ realism: Type2TagModel.Realism) -> [String] {
        var bad: [String] = []
        func check(_ ok: Bool, _ what: String) { if !ok { bad.append(what) } }

        // Page count: NTAG213 has pages 00h-2Ch; READ 2Dh is NAKed.
        var m = Type2TagModel(chip: .ntag213, realism: realism)
        check(read(m, 0x2D) == nak, "READ past the last page must NAK")
        // Roll-over: READ 2Ch returns 2Ch, then pages 0-2.
        let r = read(m, 0x2C)
        check(r.count == 18 && Array(r[4..<16]) == Array(m.contents[0..<12]), "READ of the last page must roll over to page 0")
        // Static lock bits: L4 set, page 4 is read-only; BL9-4 set, L5 can no longer be set.
        check(write(m, 2, [0, 0, 0x12, 0x00]) == ok, "setting L4 and BL9-4")
        check(write(m, 4, [1, 2, 3, 4]) == nak, "a page locked by its static lock bit must refuse writes")
        _ = write(m, 2, [0, 0, 0x20, 0x00])
        check(m.contents[10] & 0x20 == 0, "a block-locked lock bit must stay clear")
        // Dynamic lock bits: bit 0 of page 28h locks pages 16-17.
        m = Type2TagModel(chip: .ntag213, realism: realism)
        check(write(m, 0x28, [0x01, 0, 0, 0]) == ok, "setting dynamic lock bit 0")
        check(write(m, 16, [1, 2, 3, 4]) == nak, "a page locked by a dynamic lock bit must refuse writes")
        check(write(m, 18, [1, 2, 3, 4]) == ok, "the next pair of pages stays writable")
        // One-time programmable: the CC only gains bits.
        check(write(m, 3, [0, 0, 0, 0]) == ok && Array(m.contents[12..<16]) == [0xE1, 0x10, 0x12, 0x00], "CC bits must stay set (OTP)")
        // Passwords: AUTH0 = 10h with PROT 0 protects writes from page 16; PWD reads as zeros.
        m = Type2TagModel(chip: .ntag213, realism: realism)
        check(write(m, 0x29, [0x04, 0, 0, 0x10]) == ok, "setting AUTH0")
        check(write(m, 0x14, [1, 2, 3, 4]) == nak, "a page past AUTH0 must refuse writes without PWD_AUTH")
        check(write(m, 0x0F, [1, 2, 3, 4]) == ok, "a page before AUTH0 stays writable")
        check(Array(read(m, 0x2B).prefix(4)) == [0, 0, 0, 0], "PWD must read as zeros")
        // PROT 1: reads from AUTH0 on are refused, and a READ across AUTH0 rolls over at AUTH0.
        // (PROT first: once AUTH0 is 10h the configuration pages are protected too.)
        m = Type2TagModel(chip: .ntag213, realism: realism)
        check(write(m, 0x2A, [0x80, 0x05, 0, 0]) == ok, "setting PROT")
        check(write(m, 0x29, [0x04, 0, 0, 0x10]) == ok, "setting AUTH0 after PROT")
        check(write(m, 0x2A, [0x00, 0x05, 0, 0]) == nak, "the configuration past AUTH0 must refuse writes")
        check(read(m, 0x10) == nak, "a read-protected page must NAK")
        let across = read(m, 0x0E)
        check(across.count == 18 && Array(across[8..<16]) == Array(m.contents[0..<8]), "a READ across AUTH0 must roll over at AUTH0")
        // Reader addressing: the page goes in P2 alone; P1 is dropped, so FF B0 01 00 reads page 0.
        let big = Type2TagModel(chip: .twoSectorT2T, realism: realism)
        check(read(big, 0x00, p1: 0x01) == read(big, 0x00), "the reader must put only P2 on the air (pages past 255 unreachable)")
        return bad
    }

    @Test("the full model passes every probe")
    func full() {
        #expect(Self.violations(.all) == [])
    }

    @Test("without any one behaviour, some probe fails", arguments: Type2TagModel.Realism.allCases.map(\.rawValue))
    func eachBehaviourNeeded(raw: Int) {
        let behaviour = Type2TagModel.Realism(rawValue: raw)
        let failures = Self.violations(Type2TagModel.Realism.all.subtracting(behaviour))
        #expect(!failures.isEmpty, "removing \(behaviour.name) from the model changes no probe")
    }

    @Test("every chip's page count, CC and lock page match its datasheet", arguments: [
        ("ultralight", 16, 0x06, nil), ("ultralight-c", 48, 0x12, 0x28), ("ultralight-ev1", 20, 0x06, nil), ("ultralight-ev1-21", 41, 0x10, 0x24),
        ("ntag210", 20, 0x06, nil), ("ntag212", 41, 0x10, 0x24), ("ntag213", 45, 0x12, 0x28), ("ntag215", 135, 0x3E, 0x82), ("ntag216", 231, 0x6D, 0xE2),
    ] as [(String, Int, Int, Int?)])
    func chips(name: String, pages: Int, cc: Int, lockPage: Int?) throws {
        let chip = try #require(Type2TagModel.Chip.all[name])
        #expect(chip.pages == pages && Int(chip.ccSize) == cc && chip.dynamicLockPage == lockPage)
        let m = Type2TagModel(chip: chip)
        #expect(Self.read(m, pages - 1).suffix(2) == Self.ok[...])
        #expect(Self.read(m, pages) == Self.nak)
    }
}
