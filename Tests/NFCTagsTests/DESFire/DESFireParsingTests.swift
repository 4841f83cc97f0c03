import ISO7816
@testable import NFCTags
import Testing

/// The card's answers decoded into types, frames split and joined, and hostile answers turned
/// into typed errors, never traps.
@Suite("DESFire: decoding, frames, status codes, hostile answers")
struct DESFireParsingTests {
    @Test("GetFileSettings of each file type: standard, backup, value, linear and cyclic records, MAC and full modes")
    func fileSettings() throws {
        let std = try DESFireFileSettings(parsing: h("00001100500000"))
        #expect(std.type == .standardData && std.size == 80 && std.access.readWrite == .key(1) && std.access.read == .key(0))
        let backup = try DESFireFileSettings(parsing: h("0101E0EE400000"))
        #expect(backup.type == .backupData && backup.commMode == .mac && backup.access.read == .free && backup.access.change == .key(0))
        #expect(backup.readMode(authenticatedWith: nil) == .plain && backup.writeMode(authenticatedWith: 0) == .plain)
        let value = try DESFireFileSettings(parsing: h("0203" + "1032" + "9CFFFFFF" + "E8030000" + "05000000" + "03"))
        #expect(value.type == .value && value.commMode == .full && value.limits?.lower == -100 && value.limits?.upper == 1000)
        #expect(value.limits?.limitedCreditValue == 5 && value.limits?.limitedCreditEnabled == true && value.limits?.freeGetValue == true)
        #expect(value.readMode(authenticatedWith: 1) == .full && value.readMode(authenticatedWith: nil) == .full)
        let cyclic = try DESFireFileSettings(parsing: h("0400" + "EEEE" + "100000" + "050000" + "030000"))
        #expect(cyclic.type == .cyclicRecord && cyclic.records == .init(recordSize: 16, maxRecords: 5, currentRecords: 3) && cyclic.capacity == 80)
        for bad in ["", "00", "000011", "09001100500000", "0000110050", "02031032"] {
            #expect(throws: DESFireError.self) { try DESFireFileSettings(parsing: bad.isEmpty ? [] : h(bad)) }
        }
    }

    @Test("access rights: the wire's two bytes, the 16-bit value, and who may read and write")
    func access() {
        let a = DESFireAccessRights(0x12E0)
        #expect(a.read == .key(1) && a.write == .key(2) && a.readWrite == .free && a.change == .key(0))
        #expect(a.wire == [0xE0, 0x12] && DESFireAccessRights(wire: [0xE0, 0x12]) == a)
        #expect(a.allowsRead(with: nil) && a.allowsWrite(with: nil))
        let b = DESFireAccessRights(0x12F0)
        #expect(!b.allowsRead(with: nil) && b.allowsRead(with: 1) && !b.allowsRead(with: 2) && b.allowsWrite(with: 2))
        #expect("\(DESFireAccessRights(0xE000))" == "read free, write key 0, read-write key 0, change key 0")
    }

    @Test("key settings in words; which changes freeze something; GetKeySettings' family bits")
    func keySettings() throws {
        let s = DESFireKeySettings(rawValue: 0x0F)
        #expect(s.masterKeyChangeable && s.freeDirectoryListing && s.freeCreateDelete && s.configurationChangeable && s.changeKeyAccess == .key(0))
        #expect(DESFireKeySettings(rawValue: 0x07).freezes(from: s, cardLevel: false))
        #expect(DESFireKeySettings(rawValue: 0x0E).freezes(from: s, cardLevel: false))
        #expect(DESFireKeySettings(rawValue: 0xFF).freezes(from: s, cardLevel: false))
        #expect(!DESFireKeySettings(rawValue: 0xED).freezes(from: s, cardLevel: false))
        #expect(DESFireKeySettings(rawValue: 0xE9).words(cardLevel: false).contains("each key changes itself"))
        let info = try DESFireKeyInfo(parsing: [0x0F, 0x82])
        #expect(info.family == .aes && info.keyCount == 2)
        #expect(throws: DESFireError.self) { try DESFireKeyInfo(parsing: [0x0F, 0xC2]) }
        #expect(throws: DESFireError.self) { try DESFireKeyInfo(parsing: [0x0F]) }
    }

    @Test("status codes: each named and typed, unknown ones kept")
    func statuses() {
        let e = DESFireError.status(StatusWord(rawValue: 0x919D), "ReadData of file 1")
        #expect(e.kind == .permissionDenied && e.status == .permissionDenied && e.message.contains("91 9D") && e.message.contains("permission denied"))
        #expect(DESFireStatus.boundaryError.name == "BOUNDARY_ERROR" && DESFireError.status(StatusWord(rawValue: 0x91BE), "x").kind == .boundaryError)
        #expect(DESFireError.status(StatusWord(rawValue: 0x91F0), "x").kind == .fileNotFound)
        #expect(DESFireError.status(StatusWord(rawValue: 0x9177), "x").kind == .refused && DESFireStatus(rawValue: 0x77).name.contains("77"))
        #expect(DESFireError.status(StatusWord(rawValue: 0x6A82), "x").status == nil)
        // NTAG 424 DNA's errors are the same type.
        let n: NTAG424Error = DESFireError.status(StatusWord(rawValue: 0x91AE), "x")
        #expect(n.kind == .authenticationError)
    }

    @Test("GetVersion: EV1, EV2, EV3, Light and D40 told apart; NTAG 424 DNA is not a DESFire; random ID; storage sizes")
    func versions() throws {
        func v(_ type: String, _ major: String, storage: String = "18", uid: String = "04063F72633480") throws -> DESFireVersion {
            try DESFireVersion(bytes: h("04\(type)01\(major)00\(storage)05" + "04\(type)01\(major)00\(storage)05" + uid + "BA4519E320" + "4913"))
        }
        #expect(try v("01", "01").generation == .ev1 && (try v("01", "01")).storageSize.bytes == 4096)
        #expect(try v("01", "12").generation == .ev2 && (try v("01", "22")).generation == .ev2 && (try v("01", "33")).generation == .ev3)
        #expect(try v("01", "00").generation == .d40 && (try v("08", "30")).generation == .light)
        #expect(try !v("04", "30").isDESFire && (try v("01", "01")).isDESFire)
        #expect(try v("01", "01", uid: "00000000000000").uidHidden)
        #expect(try v("01", "01", storage: "19").storageSize == (4096, true))
        #expect(throws: DESFireError.self) { try DESFireVersion(bytes: [0x04, 0x01]) }
        // A production date that is not BCD is unknown, not a wrong number.
        #expect(try DESFireVersion(bytes: h("04010101001A05" + "04010101041A05" + "04063F72633480" + "BA4519E320" + "4AFF")).productionWeek == nil)
    }

    @Test("frames: a 120-byte write goes in frames of 54 (90 3D, then 90 AF), and a 3-frame answer is joined")
    func frames() throws {
        var sent: [[UInt8]] = []
        let card = DESFireCard(transport: APDUTransport(channel: ComputedCard { c in
            sent.append(c)
            return sent.count < 3 ? [0x91, 0xAF] : [0x91, 0x00]
        }))
        let data = (0..<120).map { UInt8($0) }
        try card.writeData(4, data: data, mode: .plain)
        let payload = [4, 0, 0, 0, 120, 0, 0] + data
        #expect(sent.map { $0[1] } == [0x3D, 0xAF, 0xAF] && sent.map { Int($0[4]) } == [54, 54, 19])
        #expect(sent.flatMap { $0.dropFirst(5).dropLast() } == payload)
        var frames = 0
        let reader = DESFireCard(transport: APDUTransport(channel: ComputedCard { _ in
            frames += 1
            return [UInt8](repeating: UInt8(frames), count: frames < 3 ? 59 : 2) + [0x91, frames < 3 ? 0xAF : 0x00]
        }))
        let read = try reader.readData(1, length: 120, mode: .plain)
        #expect(read.count == 120 && frames == 3 && read[59] == 2)
        // A card that stops mid-write: its status comes back, the remaining frames are not sent.
        var count = 0
        let refusing = DESFireCard(transport: APDUTransport(channel: ComputedCard { _ in count += 1; return [0x91, 0x9D] }))
        #expect(throws: DESFireError.self) { try refusing.writeData(4, data: data, mode: .plain) }
        #expect(count == 1)
    }

    @Test("hostile answers: wrong lengths and shapes are typed errors, never traps")
    func hostile() throws {
        for answer: [UInt8] in [[0x91, 0x00], [0x01, 0x02, 0x91, 0x00], [0x01, 0x91, 0x00]] {
            let card = DESFireCard(transport: APDUTransport(channel: ComputedCard { _ in answer }))
            #expect(throws: DESFireError.self) { try card.freeMemory() }
            if answer.count != 4 { #expect(throws: DESFireError.self) { try card.keySettings() } }
            #expect(throws: DESFireError.self) { try card.getValue(1, mode: .plain) }
        }
        let ids = DESFireCard(transport: APDUTransport(channel: ComputedCard { _ in [0x01, 0x02, 0x91, 0x00] }))
        #expect(throws: DESFireError.self) { try ids.applicationIDs() }
        let short = DESFireCard(transport: APDUTransport(channel: ComputedCard { _ in [0x01, 0x91, 0x00] }))
        #expect(throws: DESFireError.self) { try short.readData(1, length: 4, mode: .plain) }
        #expect(throws: DESFireError.self) { try short.dfNames() }
        // A card that answers 91 AF forever is stopped.
        let endless = DESFireCard(transport: APDUTransport(channel: ComputedCard { _ in [UInt8](repeating: 0, count: 59) + [0x91, 0xAF] }))
        #expect(throws: DESFireError.self) { try endless.fileIDs() }
        // Authentication answers of the wrong size.
        let auth = DESFireCard(transport: APDUTransport(channel: ComputedCard { _ in [1, 2, 3, 0x91, 0xAF] }))
        #expect(throws: DESFireError.self) { try auth.authenticate(keyNumber: 0, key: .zero(.aes), scheme: .aes) }
    }

    @Test("application IDs: written most significant first, sent least significant first; GetDFNames one frame per application")
    func applications() throws {
        // Clipper is 0x9011F2 (Metrodroid), on the wire F2 11 90 (proxmark3's aid_desfire.json: F21190).
        let clipper = try #require(DESFireApplicationID(hex: "9011F2"))
        #expect(clipper.wire == [0xF2, 0x11, 0x90] && DESFireApplicationID(wire: [0xF2, 0x11, 0x90]) == clipper)
        #expect(DESFireKnownApplications.name(of: clipper)?.name == "Clipper" && DESFireApplicationID(hex: "F2119") == nil)
        var n = 0
        let card = DESFireCard(transport: APDUTransport(channel: ComputedCard { _ in
            n += 1
            return n == 1 ? h("010000" + "10E1" + "D2760000850101") + [0x91, 0xAF] : h("563412" + "20E1" + "4142") + [0x91, 0x00]
        }))
        let names = try card.dfNames()
        #expect(names.count == 2 && names[0].name == DESFireCard.ndefDFName && names[0].isoFileID == 0xE110 && names[1].aid.description == "123456")
    }
}
