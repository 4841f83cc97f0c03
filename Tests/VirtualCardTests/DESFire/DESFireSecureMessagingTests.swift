import CardCrypto
import ISO7816
import Testing
import VirtualCard

/// The emulator against the test reader (the reader's half of every scheme, written apart in
/// DESFireTestReader.swift): every key type and scheme, every communication mode, files of every
/// type, answers of many frames, commands of many frames.
@Suite("DESFire emulator: authentication and plain / MAC / full communication, every scheme")
struct DESFireSecureMessagingTests {
    static let aid: UInt32 = 0x112233

    /// (key type, scheme, generation) for every way in.
    static let schemes: [(DESFireCard.KeyType, DESFireTestReader.Scheme, DESFireCard.Generation, String)] = [
        (.tdes, .legacy, .ev1, "DES, legacy 0A"),
        (.tdes, .iso, .ev1, "DES, ISO 1A"),
        (.tdes3, .iso, .ev1, "3K3DES, ISO 1A"),
        (.aes, .aes, .ev1, "AES, AA"),
        (.aes, .ev2First, .ev2, "AES, EV2First"),
        (.aes, .ev2First, .ev3, "AES, EV2First on EV3"),
    ]

    /// A card with one application of `type` keys (key 1 non-zero for 2K3DES, so the session is
    /// 2K3DES and not DES), files of every type in `mode`, read/write with key 1, change with 0.
    static func card(_ type: DESFireCard.KeyType, _ mode: DESFireCard.CommMode, generation: DESFireCard.Generation) -> (DESFireCard, DESFireCard.Key) {
        var app = DESFireCard.Application(aid: aid, keySettings: 0x0F, keyType: type, keyCount: 3)
        let key1: DESFireCard.Key = type == .tdes ? .tdes(Array(0x10..<0x20).map(UInt8.init), version: 0x42)
            : DESFireCard.Key(type, bytes: Array((0..<type.keyLength).map { UInt8($0 * 7 & 0xFF) }), version: 0x42)
        app.keys[1] = key1
        let rights = DESFireCard.AccessRights(read: 1, write: 1, readWrite: 1, change: 0)
        app.files = [
            DESFireCard.File(number: 1, commMode: mode, access: rights, content: .standard(Array((0..<200).map { UInt8($0 & 0xFF) }))),
            DESFireCard.File(number: 2, commMode: mode, access: rights, content: .backup([UInt8](repeating: 0, count: 40))),
            DESFireCard.File(number: 3, commMode: mode, access: rights, content: .value(DESFireCard.ValueFile(value: 100, lowerLimit: -50, upperLimit: 1000, limitedCreditEnabled: true))),
            DESFireCard.File(number: 4, commMode: mode, access: rights, content: .linearRecord(DESFireCard.RecordFile(recordSize: 12, maxRecords: 3))),
            DESFireCard.File(number: 5, commMode: mode, access: rights, content: .cyclicRecord(DESFireCard.RecordFile(recordSize: 5, maxRecords: 3))),
        ]
        let image = DESFireCard.Image(chip: DESFireCard.Chip(generation: generation), applications: [app])
        return (DESFireCard(image: image), key1)
    }

    @Test("every scheme × plain, MAC, full: read 200 bytes (4 answer frames), write across AF command frames, values, records, GetCardUID",
          arguments: schemes.indices, [DESFireCard.CommMode.plain, .mac, .full])
    func allModes(_ i: Int, _ mode: DESFireCard.CommMode) throws {
        let (type, scheme, generation, name) = Self.schemes[i]
        let (card, key1) = Self.card(type, mode, generation: generation)
        let reader = DESFireTestReader(card)
        reader.frameLimit = 55
        try reader.select(Self.aid)
        try reader.authenticate(1, key1, scheme)
        #expect(try reader.getCardUID() == card.image.chip.uid, "\(name)")

        // A 200-byte read comes in four frames of at most 59 bytes.
        #expect(try reader.readData(1, length: 200, mode: mode) == Array((0..<200).map { UInt8($0 & 0xFF) }), "\(name) \(mode)")
        // A 150-byte write goes in three command frames (the rest after AF).
        let text = Array((0..<150).map { UInt8(255 - $0) })
        try reader.writeData(1, offset: 25, text, mode: mode)
        #expect(try reader.readData(1, offset: 25, length: 150, mode: mode) == text)

        // Backup file: written, unchanged until CommitTransaction.
        try reader.writeData(2, offset: 3, Array("backup".utf8), mode: mode)
        #expect(try reader.readData(2, length: 9, mode: mode) == [UInt8](repeating: 0, count: 9))
        // Value: credit 50, debit 170 (reaching -20, within the lower limit -50).
        try reader.value(0x0C, 3, 50, mode: mode)
        try reader.value(0xDC, 3, 170, mode: mode)
        #expect(try reader.getValue(3, mode: mode) == 100, "GetValue sees the committed value")
        // Records: one new record per transaction, written twice.
        try reader.writeRecord(4, Array("first record".utf8), mode: mode)
        try reader.writeRecord(4, offset: 6, Array("RECORD".utf8), mode: mode)
        try reader.writeRecord(5, Array("abcde".utf8), mode: mode)
        #expect(try reader.commit() == 0x00)

        #expect(try reader.readData(2, length: 9, mode: mode) == [0, 0, 0] + Array("backup".utf8))
        #expect(try reader.getValue(3, mode: mode) == -20)
        #expect(try reader.readRecords(4, count: 1, recordSize: 12, mode: mode) == Array("first RECORD".utf8))
        // LimitedCredit up to the debits of the last transaction (170).
        try reader.value(0x1C, 3, 170, mode: mode)
        #expect(try reader.commit() == 0x00)
        #expect(try reader.getValue(3, mode: mode) == 150)
        // Cyclic file of 3 keeps 2 records, oldest first.
        for r in ["fghij", "klmno"] {
            try reader.writeRecord(5, Array(r.utf8), mode: mode)
            #expect(try reader.commit() == 0x00)
        }
        #expect(try reader.readRecords(5, count: 2, recordSize: 5, mode: mode) == Array("fghijklmno".utf8))
        #expect(try reader.readRecords(5, offset: 1, count: 1, recordSize: 5, mode: mode) == Array("fghij".utf8))
        // The session still holds after all of it.
        #expect(try reader.getKeyVersion(1) == 0x42)
    }

    @Test("native framing works the same as ISO wrapping for every scheme", arguments: schemes.indices)
    func nativeFraming(_ i: Int) throws {
        let (type, scheme, generation, _) = Self.schemes[i]
        let (card, key1) = Self.card(type, .full, generation: generation)
        let reader = DESFireTestReader(card, wrapped: false)
        try reader.select(Self.aid)
        try reader.authenticate(1, key1, scheme)
        try reader.writeData(1, Array("native".utf8), mode: .full)
        #expect(try reader.readData(1, length: 6, mode: .full) == Array("native".utf8))
    }

    @Test("free access is plain whatever the file's mode, even in a session (libfreefare test_mifare_desfire_free_read)")
    func freeAccessIsPlain() throws {
        for (type, scheme, generation, name) in Self.schemes {
            var app = DESFireCard.Application(aid: Self.aid, keySettings: 0x0F, keyType: type, keyCount: 2)
            app.files = [DESFireCard.File(number: 1, commMode: .full, access: DESFireCard.AccessRights(0xEFFF), content: .standard(Array("Hello World".utf8)))]
            let card = DESFireCard(image: DESFireCard.Image(chip: DESFireCard.Chip(generation: generation), applications: [app]))
            let reader = DESFireTestReader(card)
            try reader.select(Self.aid)
            try reader.authenticate(0, .zero(type), scheme)
            #expect(try reader.readData(1, length: 11, mode: .plain) == Array("Hello World".utf8), "\(name)")
            // The same read expecting enciphered data does not check out.
            #expect(throws: DESFireTestReader.Failure.self) { _ = try reader.readData(1, length: 11, mode: .full) }
        }
    }

    @Test("EV2NonFirst keeps TI and the command counter, with new session keys; without an EV2 session it is refused")
    func ev2NonFirst() throws {
        let (card, key1) = Self.card(.aes, .mac, generation: .ev2)
        let reader = DESFireTestReader(card)
        try reader.select(Self.aid)
        #expect(throws: DESFireTestReader.Failure.status(0xAE)) { try reader.authenticate(1, key1, .ev2NonFirst) }
        try reader.authenticate(1, key1, .ev2First)
        let ti = reader.transactionIdentifier
        _ = try reader.readData(1, length: 10, mode: .mac)
        _ = try reader.readData(1, length: 10, mode: .mac)
        try reader.authenticate(0, .zero(.aes), .ev2NonFirst)
        #expect(reader.transactionIdentifier == ti)
        #expect(try reader.getKeySettings() == [0x0F, 0x83])
        try reader.authenticate(1, key1, .ev2NonFirst)
        #expect(try reader.readData(1, length: 3, mode: .mac) == [0, 1, 2])
    }

    @Test("EV2 commands exist only on EV2 and EV3; AES keys only; EV1 answers 1C")
    func ev2Availability() throws {
        let (ev1, _) = Self.card(.aes, .plain, generation: .ev1)
        #expect(ev1.process(h("905A000003332211") + [0]) == h("9100"))
        #expect(ev1.process(h("9071000002000000")) == h("911C"))
        let (des, _) = Self.card(.tdes, .plain, generation: .ev2)
        _ = des.process(h("905A000003332211") + [0])
        #expect(des.process(h("9071000002000000")) == h("91AE"))
    }

    @Test("a wrong key is refused with 91 AE by every scheme, and the card holds no session")
    func wrongKey() throws {
        for (type, scheme, generation, name) in Self.schemes {
            let (card, _) = Self.card(type, .plain, generation: generation)
            let reader = DESFireTestReader(card)
            try reader.select(Self.aid)
            let wrong = DESFireCard.Key(type, bytes: [UInt8](repeating: 0x55, count: type.keyLength))
            #expect(throws: DESFireTestReader.Failure.status(0xAE), "\(name)") { try reader.authenticate(1, wrong, scheme) }
            #expect(!card.isAuthenticated)
        }
    }

    @Test("each scheme takes only its key types: 0A DES/2K3DES, 1A DES/2K3DES/3K3DES, AA AES (else 91 AE)")
    func schemeKeyTypes() {
        for (type, ok) in [(DESFireCard.KeyType.tdes, [0x0A, 0x1A]), (.tdes3, [0x1A]), (.aes, [0xAA])] {
            for ins: UInt8 in [0x0A, 0x1A, 0xAA] {
                let (card, _) = Self.card(type, .plain, generation: .ev1)
                _ = card.process(h("905A000003332211") + [0])
                let r = card.process([0x90, ins, 0, 0, 1, 0, 0])
                #expect((r.last == 0xAF) == ok.contains(Int(ins)), "\(type) with \(Hex.encode([ins]))")
            }
        }
    }
}
