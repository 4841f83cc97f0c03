import ISO7816
import Testing
import VirtualCard

/// The hostile DESFire profiles (`DESFireCard.Hostile`) do what their documentation says, and
/// nothing else: each breaks its one rule with answers the session's MACs vouch for.
@Suite("DESFire emulator: hostile profiles")
struct DESFireHostileTests {
    static let aid: UInt32 = 0x00D5F1
    static let key = DESFireCard.Key(.aes, bytes: (0..<16).map { UInt8($0 * 3 + 1) }, version: 1)

    /// An application with an AES key 0 and files 1 (standard, 80 bytes, MAC), 2 (backup, 48
    /// bytes, full), 3 (value 1000, MAC), every right key 0.
    static func card(_ hostile: DESFireCard.Hostile, _ generation: DESFireCard.Generation = .ev1) throws -> (DESFireCard, DESFireTestReader) {
        let access = DESFireCard.AccessRights(read: 0, write: 0, readWrite: 0, change: 0)
        var app = DESFireCard.Application(aid: aid, keyType: .aes, keyCount: 1, files: [
            DESFireCard.File(number: 1, commMode: .mac, access: access, content: .standard((0..<80).map { UInt8($0) })),
            DESFireCard.File(number: 2, commMode: .full, access: access, content: .backup([UInt8](repeating: 0x22, count: 48))),
            DESFireCard.File(number: 3, commMode: .mac, access: access, content: .value(DESFireCard.ValueFile(value: 1000, lowerLimit: 0, upperLimit: 5000))),
        ])
        app.keys = [key]
        let card = DESFireCard(image: DESFireCard.Image(chip: DESFireCard.Chip(generation: generation), applications: [app]), hostile: hostile)
        let reader = DESFireTestReader(card)
        try reader.select(aid)
        return (card, reader)
    }

    static func announcedSize(_ settings: [UInt8]) -> Int { Int(settings[4]) | Int(settings[5]) << 8 | Int(settings[6]) << 16 }

    @Test("a size announced larger or smaller: GetFileSettings lies, ReadData and WriteData keep to the file",
          arguments: [(DESFireCard.Hostile.fileSizeLarger, 120), (.fileSizeSmaller, 40)])
    func sizes(_ hostile: DESFireCard.Hostile, _ announced: Int) throws {
        let (_, reader) = try Self.card(hostile)
        try reader.authenticate(0, Self.key, .aes)
        #expect(Self.announcedSize(try reader.getFileSettings(1)) == announced)
        #expect(Self.announcedSize(try reader.getFileSettings(2)) == announced * 48 / 80)
        #expect(try reader.readData(1, length: 80, mode: .mac) == (0..<80).map { UInt8($0) })
        // Length 0 reads the whole file, its real 80 bytes.
        let whole = try reader.command(0xBD, [1, 0, 0, 0, 0, 0, 0], send: .read(.mac), receive: .management)
        #expect(whole == (0..<80).map { UInt8($0) })
        #expect(throws: DESFireTestReader.Failure.status(0xBE)) { try reader.readData(1, length: 81, mode: .mac) }
    }

    @Test("commit ignored: 91 00 with the session's MAC, and the backup file, the value keep their old contents")
    func commitIgnored() throws {
        let (card, reader) = try Self.card(.commitIgnored)
        try reader.authenticate(0, Self.key, .aes)
        try reader.writeData(2, [UInt8](repeating: 0x99, count: 48), mode: .full)
        try reader.value(0x0C, 3, 250, mode: .mac)
        #expect(try reader.commit() == 0x00)
        #expect(!card.hasPendingTransaction)
        #expect(card.image.application(Self.aid)?.file(2)?.content == .backup([UInt8](repeating: 0x22, count: 48)))
        #expect(try reader.getValue(3, mode: .mac) == 1000)
    }

    @Test("EV2 without EV2First: GetVersion names an EV2, 71 and 77 are illegal commands (91 1C), AA still works")
    func ev2WithoutEV2First() throws {
        let (_, reader) = try Self.card(.ev2WithoutEV2First, .ev2)
        #expect(try reader.getVersion()[3] == 0x12)
        #expect(throws: DESFireTestReader.Failure.status(0x1C)) { try reader.authenticate(0, Self.key, .ev2First) }
        #expect(throws: DESFireTestReader.Failure.status(0x1C)) { try reader.exchange(0x77, [0x00, 0x00]) }
        try reader.authenticate(0, Self.key, .aes)
        #expect(try reader.readData(1, length: 80, mode: .mac) == (0..<80).map { UInt8($0) })
    }
}
