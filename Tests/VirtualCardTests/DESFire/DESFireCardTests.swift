import CardCrypto
import ISO7816
import Testing
import VirtualCard

/// The chip as a whole: GetVersion per generation and size, random ID, memory, the presets (a
/// transit-like card read without keys, an AN11004 NDEF application read as a Type 4 tag), the
/// card image on disk, and hostile input.
@Suite("DESFire emulator: chip, presets, card image, hostile input")
struct DESFireCardTests {
    @Test("GetVersion: vendor 04, type 01, hardware 01.00 / 12.00 / 33.00, storage 16 / 18 / 1A, protocol 05, then UID, batch, week, year",
          arguments: DESFireCard.Generation.allCases, DESFireCard.Storage.allCases)
    func version(_ g: DESFireCard.Generation, _ s: DESFireCard.Storage) throws {
        let chip = DESFireCard.Chip(generation: g, storage: s, uid: h("04112233445566"), batch: h("0102030405"), productionWeek: 0x21, productionYear: 0x24)
        let reader = DESFireTestReader(DESFireCard(image: .factory(chip)))
        let v = try reader.getVersion()
        let major: UInt8 = g == .ev1 ? 0x01 : g == .ev2 ? 0x12 : 0x33
        let size: UInt8 = s == .kb2 ? 0x16 : s == .kb4 ? 0x18 : 0x1A
        #expect(Array(v[0..<7]) == [0x04, 0x01, 0x01, major, 0x00, size, 0x05])
        let software: [UInt8] = g == .ev1 ? [0x01, 0x04] : g == .ev2 ? [0x02, 0x01] : [0x03, 0x00]
        #expect(Array(v[7..<14]) == [0x04, 0x01, 0x01] + software + [size, 0x05])
        #expect(Array(v[14...]) == h("04112233445566") + h("0102030405") + [0x21, 0x24])
        #expect(try reader.freeMemory() == (s == .kb2 ? 2304 : s == .kb4 ? 4864 : 7936))
    }

    @Test("random ID: the reader sees 08 xx xx xx, new at every activation; GetVersion's UID is zeros; GetCardUID gives the UID after authentication only")
    func randomID() throws {
        let card = DESFireCard(image: .factory(DESFireCard.Chip(uid: h("04AABBCCDDEEFF"))))
        #expect(card.process(h("FFCA000000")) == h("04AABBCCDDEEFF9000"))
        let reader = DESFireTestReader(card)
        try reader.select(0)
        try reader.authenticate(0, .zero(.tdes), .iso)
        try reader.command(0x5C, [0x00, 0x02], send: .enciphered(header: 1))
        #expect(card.image.randomUID)
        var seen: Set<[UInt8]> = []
        for _ in 0..<4 {
            card.reset()
            let uid = card.process(h("FFCA000000"))
            #expect(uid.count == 6 && uid[0] == 0x08 && uid.suffix(2) == [0x90, 0x00])
            seen.insert(uid)
        }
        #expect(seen.count > 1)
        let r = DESFireTestReader(card)
        #expect(Array(try r.getVersion()[14..<21]) == [UInt8](repeating: 0, count: 7))
        #expect(throws: DESFireTestReader.Failure.status(0xAE)) { _ = try r.getCardUID() }
        try r.authenticate(0, .zero(.tdes), .legacy)
        #expect(try r.getCardUID() == h("04AABBCCDDEEFF"))
        // Random ID cannot be turned off again.
        try r.command(0x5C, [0x00, 0x00], send: .enciphered(header: 1))
        #expect(card.image.randomUID)
    }

    @Test("FreeMemory falls with every application and file and comes back with DeleteFile, DeleteApplication and FormatPICC")
    func memory() throws {
        let card = DESFireCard.factory(DESFireCard.Chip(storage: .kb4))
        let reader = DESFireTestReader(card)
        try reader.select(0)
        try reader.authenticate(0, .zero(.tdes), .legacy)
        let blank = try reader.freeMemory()
        try reader.createApplication(0x010203, keys: 2, type: .aes)
        let withApp = try reader.freeMemory()
        #expect(withApp < blank)
        try reader.select(0x010203)
        try reader.authenticate(0, .zero(.aes), .aes)
        try reader.createStdFile(1, mode: .plain, access: 0xEEEE, size: 100)
        try reader.createStdFile(2, mode: .plain, access: 0xEEEE, size: 100, backup: true)
        #expect(try reader.freeMemory() == withApp - 128 - 256)
        try reader.command(0xDF, [2])
        #expect(try reader.freeMemory() == withApp - 128)
        try reader.select(0)
        try reader.authenticate(0, .zero(.tdes), .legacy)
        try reader.format()
        #expect(try reader.freeMemory() == blank)
        #expect(try reader.getApplicationIDs() == [])
    }

    @Test("many applications: GetApplicationIDs answers 19 AIDs a frame, GetDFNames one application a frame")
    func directoryFrames() throws {
        let card = DESFireCard.factory()
        let reader = DESFireTestReader(card)
        try reader.select(0)
        try reader.authenticate(0, .zero(.tdes), .iso)
        for aid in 1...25 { try reader.createApplication(UInt32(aid), keys: 1, type: .tdes, isoFileID: UInt16(0x1000 + aid), dfName: Array("DF\(aid)".utf8)) }
        let ids = try reader.getApplicationIDs()
        #expect(ids == (1...25).flatMap { [UInt8($0), 0, 0] })
        // Raw: the first frame holds 19 AIDs.
        let plain = DESFireTestReader(card)
        try plain.select(0)
        #expect(card.process(h("906A000000")) == Array((1...19).flatMap { [UInt8($0), 0, 0] }) + h("91AF"))
        #expect(card.process(h("90AF000000")) == Array((20...25).flatMap { [UInt8($0), 0, 0] }) + h("9100"))
        var names: [[UInt8]] = []
        var frame = card.process(h("906D000000"))
        while true {
            names.append(Array(frame.dropLast(2)))
            guard frame.suffix(2) == [0x91, 0xAF] else { break }
            frame = card.process(h("90AF000000"))
        }
        #expect(names.count == 25)
        #expect(names[2] == [3, 0, 0, 0x03, 0x10] + Array("DF3".utf8))
    }

    @Test("a transit-like card read without any key: applications, file lists and settings, the plain files, the balance, the trips; the keyed file and every change refused")
    func transitWithoutKeys() throws {
        let card = DESFireCard(image: .transit())
        let reader = DESFireTestReader(card)
        try reader.select(0)
        #expect(try reader.getApplicationIDs() == h("F21190F31190"))
        #expect(try reader.getKeySettings() == [0x0B, 0x81])
        try reader.select(DESFireCard.Image.transitAID)
        #expect(try reader.getFileIDs() == [1, 2, 3, 4, 5])
        #expect(try reader.getFileSettings(4) == h("0003 10 11 100000"))
        #expect(try reader.readData(1, length: 17, mode: .plain) == Array("TRANSIT CARD 0001".utf8))
        #expect(try reader.getValue(2, mode: .plain) == 2500)
        let trips = try reader.readRecords(3, count: 3, recordSize: 16, mode: .plain)
        #expect(trips.count == 48 && trips[0] == 0x01 && trips[32] == 0x02)
        #expect(throws: DESFireTestReader.Failure.status(0xAE)) { _ = try reader.readData(4, length: 16, mode: .full) }
        try reader.select(DESFireCard.Image.transitAID)
        #expect(throws: DESFireTestReader.Failure.status(0xAE)) { try reader.value(0xDC, 2, 100, mode: .plain) }
        try reader.select(DESFireCard.Image.transitAID)
        #expect(throws: DESFireTestReader.Failure.status(0xAE)) { try reader.createStdFile(9, mode: .plain, access: 0xEEEE, size: 8) }
        try reader.select(DESFireCard.Image.transitPrivateAID)
        #expect(throws: DESFireTestReader.Failure.status(0xAE), "this application keeps its file list") { _ = try reader.getFileIDs() }
        // The operator, with the keys: the enciphered file and a debit.
        try reader.select(DESFireCard.Image.transitAID)
        try reader.authenticate(1, DESFireCard.Image.transitApplicationKeys[1], .aes)
        #expect(try reader.readData(4, length: 16, mode: .full) == Array("operator secret!".utf8))
        try reader.authenticate(2, DESFireCard.Image.transitApplicationKeys[2], .aes)
        try reader.value(0xDC, 2, 300, mode: .plain)
        #expect(try reader.commit() == 0x00)
        #expect(try reader.getValue(2, mode: .plain) == 2200)
    }

    @Test("an AN11004 NDEF application is a Type 4 tag: the NFC Forum procedure reads the message through ISO SELECT and READ BINARY, UPDATE BINARY writes a new one")
    func ndefAsType4() throws {
        let message = h("D1010B5502") + Array("example.com".utf8)
        let card = DESFireCard(image: .ndef(message: message))
        // T4T 2.0: select the NDEF application by name (P2 00 with Le), the CC, read it.
        #expect(card.process(h("00A4040007D276000085010100")) == h("9000"))
        #expect(card.process(h("00A4000C02E103")) == h("9000"))
        let cc = card.process(h("00B000000F"))
        #expect(cc == h("000F20003B00340406E1041E000000") + h("9000"))
        #expect(card.process(h("00A4000C02E104")) == h("9000"))
        #expect(card.process(h("00B0000002")) == [0x00, UInt8(message.count), 0x90, 0x00])
        #expect(card.process([0x00, 0xB0, 0x00, 0x02, UInt8(message.count)]) == message + h("9000"))
        // Write a new message the way a Type 4 writer does: NLEN 0, the message, then NLEN.
        let next = h("D1010855016578616D706C65")
        #expect(card.process(h("00D60000020000")) == h("9000"))
        #expect(card.process([0x00, 0xD6, 0x00, 0x02, UInt8(next.count)] + next) == h("9000"))
        #expect(card.process([0x00, 0xD6, 0x00, 0x00, 0x02, 0x00, UInt8(next.count)]) == h("9000"))
        // The same file through the native commands.
        let reader = DESFireTestReader(card)
        try reader.select(DESFireCard.Image.ndefAID)
        #expect(try reader.readData(2, length: 2 + next.count, mode: .plain) == [0, UInt8(next.count)] + next)
        // The PICC level by its DF name and by 3F00; the application by its ISO FID E110.
        #expect(card.process(h("00A4040007D276000085010000")) == h("9000"))
        #expect(card.process(h("00A4000C023F00")) == h("9000"))
        #expect(card.process(h("00A4000C02E110")) == h("9000"))
        #expect(card.process(h("00A4000C02E104")) == h("9000"))
        #expect(card.process(h("00B0000002")) == [0, UInt8(next.count), 0x90, 0x00])
    }

    @Test("NDEF formatting with native commands, as libfreefare's mifare-desfire-create-ndef does it, makes the same Type 4 tag")
    func ndefFormatNatively() throws {
        let card = DESFireCard.factory(DESFireCard.Chip(storage: .kb4))
        let reader = DESFireTestReader(card)
        try reader.select(0)
        try reader.authenticate(0, .zero(.tdes), .legacy)
        try reader.createApplication(0x000001, settings: 0x0F, keys: 1, type: .tdes, isoFileID: 0xE110, dfName: h("D2760000850101"))
        try reader.select(0x000001)
        try reader.authenticate(0, .zero(.tdes), .legacy)
        try reader.createStdFile(1, mode: .plain, access: 0xE000, size: 15, isoFileID: 0xE103)
        try reader.writeData(1, h("000F20003B00340406E104100000 00"), mode: .plain)
        try reader.createStdFile(2, mode: .plain, access: 0xEEE0, size: 0x1000, isoFileID: 0xE104)
        #expect(try reader.command(0x61) == h("03E104E1"))
        #expect(card.process(h("00A4040007D276000085010100")) == h("9000"))
        #expect(card.process(h("00A4000C02E103")) == h("9000"))
        #expect(card.process(h("00B000000F")) == h("000F20003B00340406E104100000 00 9000"))
    }

    @Test("the card image: presets survive JSON both ways; a changed card is saved through onChange; a hostile image is a typed error")
    func image() throws {
        for image in [DESFireCard.Image.factory(), .transit(), .ndef(message: [1, 2, 3])] {
            #expect(try DESFireCard.Image(decoding: image.encoded()) == image)
        }
        let card = DESFireCard(image: .transit(DESFireCard.Chip(generation: .ev3, storage: .kb4)))
        let saved = Locked<[UInt8]>([])
        card.onChange = { image in saved.withLock { $0 = image.encoded() } }
        let reader = DESFireTestReader(card)
        try reader.select(DESFireCard.Image.transitAID)
        try reader.authenticate(2, DESFireCard.Image.transitApplicationKeys[2], .ev2First)
        try reader.value(0xDC, 2, 1, mode: .plain)
        #expect(saved.current.isEmpty, "nothing is saved before the commit")
        #expect(try reader.commit() == 0x00)
        let restored = try DESFireCard.Image(decoding: saved.current)
        #expect(restored == card.image)
        guard case .value(let v) = restored.application(DESFireCard.Image.transitAID)?.file(2)?.content else { Issue.record("no value file"); return }
        #expect(v.value == 2499 && v.limitedCreditValue == 1)

        let good = String(decoding: DESFireCard.Image.transit().encoded(), as: UTF8.self)
        for hostile in ["", "{}", "[1,2]", good.replacing("\"AES\"", with: "\"ROT13\""),
                        good.replacing("\"recordSize\" : 16", with: "\"recordSize\" : 3"),
                        good.replacing("\"number\" : 4", with: "\"number\" : 99"),
                        good.replacing("\"storage\" : 8192", with: "\"storage\" : 1234"),
                        good.replacing("\"upperLimit\" : 100000", with: "\"upperLimit\" : -5")] {
            #expect(throws: DESFireCard.ImageError.self) { _ = try DESFireCard.Image(decoding: Array(hostile.utf8)) }
        }
        let key = DESFireCard.Image.transitMasterKey
        #expect(!key.description.contains(Hex.encode(key.bytes)) && !key.description.contains(Hex.encode(Array(key.bytes.prefix(4)))),
                "a key's description never shows its bytes")
    }

    @Test("hostile commands: 200 000 random and mutated APDUs, native and wrapped, with and without a session, each answered with a status and no trap")
    func hostileInput() throws {
        var rng = SplitMix(seed: 0xDE5F12E)
        let valid: [[UInt8]] = [
            h("905A00000331117300"), h("9060000000"), h("90AF000000"), h("90AA0000010000"), h("901A0000010000"), h("900A0000010000"),
            h("907100000200000000"), h("90BD000007010000000000000000"), h("903D00000F0100000008000001020304050607080000"),
            h("90C400002100") + [UInt8](repeating: 0, count: 32) + [0], h("90CA000005010203EF0300"), h("905400000800112233445566770000"),
            h("90CC000011020000EEEE0000000064000000000000000000"), h("903B00000B03000000040000AABBCCDD00"), h("90BB0000070300000000000000"),
            h("90C7000000"), h("90F5000001010000"), h("905F0000040100EEEE00"), h("00A4040007D276000085010100"), h("00B0000000"), h("00D60000020102"),
            h("FFCA000000"), h("0A00"), h("AF"), h("6A"),
        ]
        for round in 0..<4 {
            let card = DESFireCard(image: round % 2 == 0 ? .transit(DESFireCard.Chip(generation: .ev2)) : .ndef())
            let reader = DESFireTestReader(card)
            if round == 2 {
                try reader.select(DESFireCard.Image.transitAID)
                try reader.authenticate(1, DESFireCard.Image.transitApplicationKeys[1], .aes)
            }
            for i in 0..<50_000 {
                var apdu: [UInt8]
                switch rng.next() % 4 {
                case 0:
                    apdu = (0..<Int(rng.next() % 300)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                case 1:
                    let data = (0..<Int(rng.next() % 80)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                    apdu = [0x90, UInt8(truncatingIfNeeded: rng.next()), 0, 0, UInt8(data.count)] + data + [0]
                default:
                    apdu = valid[Int(rng.next() % UInt64(valid.count))]
                    for _ in 0..<Int(rng.next() % 4) where !apdu.isEmpty {
                        let at = Int(rng.next() % UInt64(apdu.count))
                        switch rng.next() % 3 {
                        case 0: apdu[at] = UInt8(truncatingIfNeeded: rng.next())
                        case 1: apdu.remove(at: at)
                        default: apdu.insert(UInt8(truncatingIfNeeded: rng.next()), at: at)
                        }
                    }
                }
                let answer = card.process(apdu)
                #expect(!answer.isEmpty, "round \(round) APDU \(i) \(Hex.encode(apdu)) got no answer")
                if answer.isEmpty { return }
                if i % 997 == 0 { card.reset() }
            }
        }
    }
}

/// SplitMix64: a small seeded generator, so a failing hostile input can be found again.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
