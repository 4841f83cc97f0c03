import ISO7816
import Testing
import VirtualCard

/// GetFileSettings and ChangeFileSettings: the settings as the chip answers them, a change
/// enciphered with the Change key or plain when Change is free, and the refusals.
@Suite("DESFire emulator: file settings")
struct DESFireFileSettingsTests {
    static let aid: UInt32 = 0xF5F5F5

    static func card(_ type: DESFireCard.KeyType, generation: DESFireCard.Generation, change: UInt8) -> DESFireCard {
        var app = DESFireCard.Application(aid: aid, keySettings: 0x0F, keyType: type, keyCount: 3)
        app.files = [
            DESFireCard.File(number: 1, commMode: .plain, access: DESFireCard.AccessRights(read: 1, write: 2, readWrite: 0xF, change: change),
                             content: .standard(Array("settings".utf8))),
            DESFireCard.File(number: 2, isoFileID: 0x1234, commMode: .mac, access: DESFireCard.AccessRights(0x1324),
                             content: .linearRecord(DESFireCard.RecordFile(recordSize: 25, maxRecords: 4, records: [[UInt8](repeating: 1, count: 25)]))),
            DESFireCard.File(number: 3, commMode: .full, access: DESFireCard.AccessRights(0x1324),
                             content: .value(DESFireCard.ValueFile(value: -1_000_000, lowerLimit: -987_654_321, upperLimit: -1000, limitedCreditEnabled: true))),
        ]
        return DESFireCard(image: DESFireCard.Image(chip: DESFireCard.Chip(generation: generation), applications: [app]))
    }

    @Test("GetFileSettings answers type, mode, access rights (least significant byte first) and the type's numbers, as libfreefare reads them")
    func getFileSettings() throws {
        let reader = DESFireTestReader(Self.card(.tdes, generation: .ev1, change: 0))
        try reader.select(Self.aid)
        #expect(try reader.getFileSettings(1) == h("00 00 F0 12 080000"))
        #expect(try reader.getFileSettings(2) == h("03 01 24 13 190000 040000 010000"))
        // lower -987654321 = 4F 97 21 C5, upper -1000 = 18 FC FF FF (least significant first), limited credit 0, enabled.
        #expect(try reader.getFileSettings(3) == h("02 03 24 13 4F9721C5 18FCFFFF 00000000 01"))
        #expect(throws: DESFireTestReader.Failure.status(0xF0)) { _ = try reader.getFileSettings(9) }
    }

    @Test("ChangeFileSettings with the Change key, enciphered under every scheme; the new mode and rights hold",
          arguments: [(DESFireCard.KeyType.tdes, DESFireTestReader.Scheme.legacy, DESFireCard.Generation.ev1), (.tdes, .iso, .ev1), (.tdes3, .iso, .ev1),
                      (.aes, .aes, .ev1), (.aes, .ev2First, .ev2)])
    func enciphered(_ type: DESFireCard.KeyType, _ scheme: DESFireTestReader.Scheme, _ generation: DESFireCard.Generation) throws {
        let card = Self.card(type, generation: generation, change: 2)
        let reader = DESFireTestReader(card)
        try reader.select(Self.aid)
        try reader.authenticate(2, .zero(type), scheme)
        try reader.changeFileSettings(1, mode: .full, access: 0x1EEE, enciphered: true)
        let f = try #require(card.image.application(Self.aid)?.file(1))
        #expect(f.commMode == .full && f.access == DESFireCard.AccessRights(read: 1, write: 0xE, readWrite: 0xE, change: 0xE))
        // Change is free now: the next change goes plain, from any session.
        try reader.authenticate(1, .zero(type), scheme)
        try reader.changeFileSettings(1, mode: .plain, access: 0xEEEF, enciphered: false)
        #expect(card.image.application(Self.aid)?.file(1)?.access.change == 0xF)
        #expect(throws: DESFireTestReader.Failure.status(0x9D), "Change is never now") { try reader.changeFileSettings(1, mode: .mac, access: 0xEEEE, enciphered: false) }
    }

    @Test("ChangeFileSettings refused: no session (AE), another key (AE), a comm mode of 2 (9E); nothing changes")
    func refused() throws {
        let card = Self.card(.aes, generation: .ev1, change: 2)
        let reader = DESFireTestReader(card)
        try reader.select(Self.aid)
        let before = card.image
        #expect(card.process(h("905F0000040100EEEE00")) == h("91AE"))
        try reader.authenticate(1, .zero(.aes), .aes)
        #expect(throws: DESFireTestReader.Failure.status(0xAE)) { try reader.changeFileSettings(1, mode: .mac, access: 0xEEEE, enciphered: true) }
        try reader.authenticate(2, .zero(.aes), .aes)
        #expect(throws: DESFireTestReader.Failure.status(0x9E)) { try reader.changeFileSettings(1, mode: DESFireCard.CommMode.plain, access: 0xEEEE, enciphered: true, rawMode: 2) }
        #expect(card.image == before)
    }
}
