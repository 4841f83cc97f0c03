import CardCrypto
import ISO7816
import Testing
import VirtualCard

/// Every status code, provoked the way a real card gives it, and what follows an error: the
/// session and the transaction are gone.
@Suite("DESFire emulator: every status code where the chip gives it")
struct DESFireStatusCodeTests {
    static let aid: UInt32 = 0x5A7A7A

    /// A card with application 5A7A7A (AES, 2 keys, settings 0F) holding a standard file 1
    /// (32 bytes, MAC, read key 1, write never), a value file 2 (0…100, plain, free) and file 3
    /// (32 bytes, full, read&write key 1).
    static func card(generation: DESFireCard.Generation = .ev1) -> DESFireCard {
        var app = DESFireCard.Application(aid: aid, keySettings: 0x0F, keyType: .aes, keyCount: 2)
        app.files = [
            DESFireCard.File(number: 1, commMode: .mac, access: DESFireCard.AccessRights(read: 1, write: 0xF, readWrite: 0xF, change: 0),
                             content: .standard([UInt8](repeating: 0x11, count: 32))),
            DESFireCard.File(number: 2, access: DESFireCard.AccessRights(0xEEEE), content: .value(DESFireCard.ValueFile(value: 10, lowerLimit: 0, upperLimit: 100))),
            DESFireCard.File(number: 3, commMode: .full, access: DESFireCard.AccessRights(read: 0xF, write: 0xF, readWrite: 1, change: 0),
                             content: .standard([UInt8](repeating: 0x33, count: 32))),
        ]
        return DESFireCard(image: DESFireCard.Image(chip: DESFireCard.Chip(generation: generation), applications: [app]))
    }

    static let select = h("905A0000037A7A5A00")
    func wrapped(_ ins: UInt8, _ data: String = "") -> [UInt8] {
        let d = h(data)
        return [0x90, ins, 0, 0] + (d.isEmpty ? [] : [UInt8(d.count)] + d) + [0]
    }

    @Test("00, AF, 0C: success, more frames, nothing to commit")
    func successCodes() {
        let card = Self.card()
        #expect(card.process(Self.select) == h("9100"))
        #expect(card.process(wrapped(0x60)).suffix(2) == [0x91, 0xAF])
        #expect(card.process(wrapped(0xAF)).suffix(2) == [0x91, 0xAF])
        #expect(card.process(wrapped(0xAF)).suffix(2) == [0x91, 0x00])
        #expect(card.process(wrapped(0xC7)) == h("910C"))
        #expect(card.process(wrapped(0xA7)) == h("910C"))
    }

    @Test("1C illegal command: an unknown code, AF with nothing pending, an EV2 command on EV1")
    func illegalCommand() {
        let card = Self.card()
        #expect(card.process(wrapped(0x99)) == h("911C"))
        #expect(card.process(wrapped(0xAF)) == h("911C"))
        #expect(card.process(h("9071000002000000")) == h("911C"))
        #expect(card.process([0x99]) == [0x1C], "native framing answers the status first")
    }

    @Test("CA command aborted: another command while frames of GetVersion or of an authentication were due")
    func commandAborted() throws {
        let card = Self.card()
        _ = card.process(wrapped(0x60))
        #expect(card.process(wrapped(0x6E)) == h("91CA"))
        #expect(card.process(wrapped(0xAF)) == h("911C"), "the exchange was dropped")
        _ = card.process(Self.select)
        #expect(card.process(wrapped(0xAA, "00")).suffix(2) == [0x91, 0xAF])
        #expect(card.process(wrapped(0x6F)) == h("91CA"))
        // Half a WriteData: its header announces 16 bytes, the first frame carries 2; AF asks for
        // the rest, and another command instead aborts it.
        let ndef = DESFireCard(image: .ndef())
        _ = ndef.process(h("905A00000301000000"))
        #expect(ndef.process(wrapped(0x3D, "02 000000 100000 0102")) == h("91AF"))
        #expect(ndef.process(wrapped(0x6F)) == h("91CA"))
        guard case .standard(let file) = ndef.image.application(0x000001)?.file(2)?.content else { Issue.record("no NDEF file"); return }
        #expect(file.prefix(2) == [0, 0], "nothing written")
    }

    @Test("7E length: GetVersion with data, SelectApplication with two bytes, an authentication cryptogram too short")
    func lengthError() {
        let card = Self.card()
        #expect(card.process(wrapped(0x60, "00")) == h("917E"))
        #expect(card.process(wrapped(0x5A, "7A7A")) == h("917E"))
        _ = card.process(Self.select)
        _ = card.process(wrapped(0xAA, "00"))
        #expect(card.process(wrapped(0xAF, "0011223344556677")) == h("917E"))
    }

    @Test("40 no such key, A0 application not found, F0 file not found, 9E parameter error, DE duplicate")
    func notFoundAndParameters() throws {
        let card = Self.card()
        #expect(card.process(wrapped(0x5A, "010203")) == h("91A0"))
        _ = card.process(Self.select)
        #expect(card.process(wrapped(0xAA, "05")) == h("9140"))
        #expect(card.process(wrapped(0x64, "02")) == h("9140"))
        #expect(card.process(wrapped(0xBD, "09 000000 010000")) == h("91F0"))
        #expect(card.process(wrapped(0xBD, "02 000000 010000")) == h("919E"), "ReadData of a value file")
        // Creation needs the master key here; with it, a comm mode of 2, a file 32, are parameters out of range.
        let reader = DESFireTestReader(card)
        try reader.select(Self.aid)
        try reader.authenticate(0, .zero(.aes), .aes)
        #expect(throws: DESFireTestReader.Failure.status(0x9E)) { try reader.createStdFile(4, mode: .mac, access: 0xEEEE, size: 0) }
        try reader.authenticate(0, .zero(.aes), .aes)
        #expect(throws: DESFireTestReader.Failure.status(0xDE)) { try reader.createStdFile(1, mode: .plain, access: 0xEEEE, size: 8) }
        try reader.authenticate(0, .zero(.aes), .aes)
        #expect(throws: DESFireTestReader.Failure.status(0x9E)) { try reader.command(0xCD, h("20 00 EEEE 080000")) }
        try reader.authenticate(0, .zero(.aes), .aes)
        #expect(throws: DESFireTestReader.Failure.status(0x9E)) { try reader.command(0xCD, h("04 02 EEEE 080000")) }
        // At the PICC level: an existing AID, 15 keys.
        try reader.select(0)
        try reader.authenticate(0, .zero(.tdes), .legacy)
        #expect(throws: DESFireTestReader.Failure.status(0xDE)) { try reader.createApplication(Self.aid, keys: 1, type: .aes) }
        try reader.authenticate(0, .zero(.tdes), .legacy)
        #expect(throws: DESFireTestReader.Failure.status(0x9E)) { try reader.command(0xCA, h("010203 0F 0F")) }
    }

    @Test("AE authentication error and 9D permission denied: a key needed and not in use, a right set to never, the PICC level for a file command, FormatPICC disabled, settings frozen")
    func accessCodes() throws {
        let card = Self.card()
        let reader = DESFireTestReader(card)
        try reader.select(Self.aid)
        #expect(throws: DESFireTestReader.Failure.status(0xAE)) { _ = try reader.readData(1, length: 4, mode: .mac) }
        #expect(throws: DESFireTestReader.Failure.status(0xAE)) { _ = try reader.getCardUID() }
        try reader.authenticate(0, .zero(.aes), .aes)
        #expect(throws: DESFireTestReader.Failure.status(0xAE), "key 0 is not the read key") { _ = try reader.readData(1, length: 4, mode: .mac) }
        try reader.authenticate(1, .zero(.aes), .aes)
        #expect(throws: DESFireTestReader.Failure.status(0x9D), "write is never") { try reader.writeData(1, [1], mode: .mac) }
        try reader.select(0)
        #expect(throws: DESFireTestReader.Failure.status(0x9D)) { _ = try reader.readData(1, length: 4, mode: .plain) }
        try reader.authenticate(0, .zero(.tdes), .iso)
        try reader.command(0x5C, [0x00, 0x01], send: .enciphered(header: 1))
        #expect(throws: DESFireTestReader.Failure.status(0x9D), "FormatPICC disabled by SetConfiguration") { try reader.format() }
        try reader.authenticate(0, .zero(.tdes), .iso)
        try reader.changeKeySettings(0x07)
        #expect(throws: DESFireTestReader.Failure.status(0x9D), "configuration frozen") { try reader.changeKeySettings(0x0F) }
        #expect(card.image.masterKeySettings == 0x07)
    }

    @Test("1E integrity: a flipped CMAC (EV1), a flipped CRC32 (EV1 full), a flipped legacy MAC, a flipped EV2 MAC; nothing is written")
    func integrity() throws {
        for (scheme, generation, mode) in [(DESFireTestReader.Scheme.aes, DESFireCard.Generation.ev1, DESFireCard.CommMode.mac), (.aes, .ev1, .full),
                                           (.ev2First, .ev2, .mac), (.ev2First, .ev2, .full)] {
            var app = DESFireCard.Application(aid: Self.aid, keySettings: 0x0F, keyType: .aes, keyCount: 2)
            app.files = [DESFireCard.File(number: 4, commMode: mode, access: DESFireCard.AccessRights(read: 1, write: 1, readWrite: 1, change: 0),
                                          content: .standard([UInt8](repeating: 0, count: 16)))]
            let card = DESFireCard(image: DESFireCard.Image(chip: DESFireCard.Chip(generation: generation), applications: [app]))
            let reader = DESFireTestReader(FlippingCard(card, ins: 0x3D, at: -2))
            try reader.select(Self.aid)
            try reader.authenticate(1, .zero(.aes), scheme)
            let before = card.image
            #expect(throws: DESFireTestReader.Failure.status(0x1E), "\(scheme) \(mode)") { try reader.writeData(4, Array("changed".utf8), mode: mode) }
            #expect(card.image == before)
            #expect(!card.isAuthenticated)
        }
        // Legacy: a 2K3DES application, files in MAC and full mode, the 4-byte MAC or the last
        // enciphered byte (so the CRC16) flipped.
        for mode in [DESFireCard.CommMode.mac, .full] {
            var app = DESFireCard.Application(aid: Self.aid, keySettings: 0x0F, keyType: .tdes, keyCount: 1)
            app.files = [DESFireCard.File(number: 1, commMode: mode, access: DESFireCard.AccessRights(read: 0, write: 0, readWrite: 0, change: 0),
                                          content: .standard([UInt8](repeating: 0, count: 16)))]
            let card = DESFireCard(image: DESFireCard.Image(applications: [app]))
            let reader = DESFireTestReader(FlippingCard(card, ins: 0x3D, at: -2))
            try reader.select(Self.aid)
            try reader.authenticate(0, .zero(.tdes), .legacy)
            #expect(throws: DESFireTestReader.Failure.status(0x1E), "legacy \(mode)") { try reader.writeData(1, Array("legacy".utf8), mode: mode) }
            #expect(card.image.application(Self.aid)?.file(1)?.content == .standard([UInt8](repeating: 0, count: 16)))
        }
    }

    @Test("1E for EV2 FULL data padded with zeros instead of 80 00 …, though its MAC is right")
    func ev2Padding() throws {
        var app = DESFireCard.Application(aid: Self.aid, keySettings: 0x0F, keyType: .aes, keyCount: 2)
        app.files = [DESFireCard.File(number: 4, commMode: .full, access: DESFireCard.AccessRights(read: 1, write: 1, readWrite: 1, change: 0),
                                      content: .standard([UInt8](repeating: 0, count: 16)))]
        let card = DESFireCard(image: DESFireCard.Image(chip: DESFireCard.Chip(generation: .ev2), applications: [app]))
        let reader = DESFireTestReader(card)
        try reader.select(Self.aid)
        try reader.authenticate(1, .zero(.aes), .ev2First)
        reader.ev2ZeroPadding = true
        #expect(throws: DESFireTestReader.Failure.status(0x1E)) { try reader.writeData(4, Array("padded badly".utf8), mode: .full) }
        reader.ev2ZeroPadding = false
        try reader.authenticate(1, .zero(.aes), .ev2First)
        try reader.writeData(4, Array("padded well".utf8), mode: .full)
    }

    @Test("BE boundary: a read past the end, a write past the end, a value above its limit")
    func boundary() throws {
        let card = Self.card()
        _ = card.process(Self.select)
        #expect(card.process(wrapped(0x6C, "02")).suffix(2) == [0x91, 0x00])
        #expect(card.process(wrapped(0x0C, "02 5B000000")) == h("91BE"))
        let reader = DESFireTestReader(card)
        try reader.select(Self.aid)
        try reader.authenticate(1, .zero(.aes), .aes)
        #expect(throws: DESFireTestReader.Failure.status(0xBE)) { _ = try reader.readData(1, offset: 30, length: 4, mode: .mac) }
        try reader.authenticate(1, .zero(.aes), .aes)
        #expect(throws: DESFireTestReader.Failure.status(0xBE)) { try reader.writeData(3, offset: 31, [1, 2], mode: .full) }
    }

    @Test("CE count: the 29th application; 0E out of EEPROM: a file larger than the free memory")
    func countAndMemory() throws {
        let card = DESFireCard(image: .factory(DESFireCard.Chip(storage: .kb8)))
        let reader = DESFireTestReader(card)
        try reader.select(0)
        try reader.authenticate(0, .zero(.tdes), .legacy)
        for aid in 1...28 { try reader.createApplication(UInt32(aid), keys: 1, type: .tdes) }
        #expect(throws: DESFireTestReader.Failure.status(0xCE)) { try reader.createApplication(29, keys: 1, type: .tdes) }
        try reader.authenticate(0, .zero(.tdes), .legacy)
        let free = try reader.freeMemory()
        try reader.select(1)
        try reader.authenticate(0, .zero(.tdes), .legacy)
        #expect(throws: DESFireTestReader.Failure.status(0x0E)) { try reader.createStdFile(1, mode: .plain, access: 0xEEEE, size: free + 1) }
        try reader.authenticate(0, .zero(.tdes), .legacy)
        try reader.createStdFile(1, mode: .plain, access: 0xEEEE, size: free)
        #expect(try reader.freeMemory() == 0)
    }

    @Test("EE: an EEPROM write that fails (injected) changes nothing; F1: a damaged file (injected) answers file integrity error")
    func injectedFaults() throws {
        let card = Self.card()
        let reader = DESFireTestReader(card)
        try reader.select(Self.aid)
        card.inject(.eepromError)
        #expect(throws: DESFireTestReader.Failure.status(0xEE)) { try reader.value(0x0C, 2, 5, mode: .plain); _ = try reader.commit() }
        #expect(try reader.getValue(2, mode: .plain) == 10)
        try reader.value(0x0C, 2, 5, mode: .plain)
        #expect(try reader.commit() == 0x00)
        #expect(try reader.getValue(2, mode: .plain) == 15)
        card.inject(.fileIntegrity(aid: Self.aid, file: 2))
        #expect(throws: DESFireTestReader.Failure.status(0xF1)) { _ = try reader.getValue(2, mode: .plain) }
    }

    @Test("after an error the card holds no session and no pending transaction")
    func errorEndsSession() throws {
        let card = Self.card()
        let reader = DESFireTestReader(card)
        try reader.select(Self.aid)
        try reader.authenticate(1, .zero(.aes), .aes)
        try reader.value(0x0C, 2, 5, mode: .plain)
        #expect(throws: DESFireTestReader.Failure.status(0xF0)) { _ = try reader.readData(7, length: 1, mode: .plain) }
        #expect(!card.isAuthenticated)
        #expect(!card.hasPendingTransaction)
    }

    @Test("ISO 7816: 6A82 no such file or DF name, 6986 no file selected, 6982 access not free, 6D00 unknown instruction, 6700 a malformed APDU, 6A86 P1-P2")
    func isoCodes() {
        let card = DESFireCard(image: .ndef())
        #expect(card.process(h("00A4040007D276000085019900")) == h("6A82"))
        #expect(card.process(h("00A4040007D276000085010100")) == h("9000"))
        #expect(card.process(h("00B0000002")) == h("6986"))
        #expect(card.process(h("00A4000C02E105")) == h("6A82"))
        #expect(card.process(h("00A4000C02E103")) == h("9000"))
        #expect(card.process(h("00D60000020000")) == h("6982"), "the CC is read-only")
        #expect(card.process(h("00CA000000")) == h("6D00"))
        #expect(card.process(h("00A40400")) == h("6700"))
        #expect(card.process(h("00A4080002E103")) == h("6A86"))
        #expect(card.process(h("905A0000")) == h("917E"))
        #expect(card.process(h("905A01000300000000")) == h("6A86"))
        #expect(card.process([]) == h("6700"))
    }
}

extension FlippingCard {
    /// Flips a bit of the byte at `at` (negative: from the end) of every command `ins`.
    convenience init(_ inner: DESFireCard, ins: UInt8, at: Int) {
        self.init(inner, ins: ins)
        position = at
    }
}
