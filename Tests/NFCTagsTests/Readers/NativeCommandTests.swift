import ISO7816
import NFCTags
import Testing
import TestSupport
import VirtualCard

/// The tag-command channel and the NTAG21x command set, every command through every dialect,
/// against the reader and chip models (no pcscd: the CLI and TagReader tests add it).
@Suite("Native tag commands: dialects, NTAG21x commands, signatures, sectors, passwords")
struct NativeCommandTests {
    static let dialects: [(ContactlessReader.Dialect, ReaderDialect)] = [(.transparent, .transparent), (.acr122u, .acr122u)]

    func channel(_ reader: ContactlessReader, _ dialect: ReaderDialect? = nil) throws -> TagCommandChannel {
        try TagCommandChannel.open(transport: APDUTransport(channel: EmulatedChannel(card: reader)), readerName: "Virtual PCD 00 00", override: dialect)
    }

    @Test("the probe finds each reader's dialect; a storage-only reader is named as such", arguments: ContactlessReader.Dialect.allCases)
    func probe(_ dialect: ContactlessReader.Dialect) throws {
        let reader = ContactlessReader(dialect, tag: Type2TagModel(chip: .ntag213))
        let found = try channel(reader).dialect
        #expect(found.rawValue == dialect.rawValue)
        // Probes stay in the reader: the tag saw nothing.
        #expect(reader.frames.isEmpty)
    }

    @Test("reader names announce their dialect")
    func names() {
        #expect(ReaderDialect.guess(readerName: "ACS ACR122U PICC Interface 00 00") == .acr122u)
        #expect(ReaderDialect.guess(readerName: "ACS ACR1252 Dual Reader [ACR1252 Dual Reader PICC] 00 00") == .transparent)
        #expect(ReaderDialect.guess(readerName: "Identiv uTrust 3700 F CL Reader [uTrust 3700 F CL Reader] 00 00") == .transparent)
        #expect(ReaderDialect.guess(readerName: "Virtual PCD 00 00") == nil)
    }

    @Test("every NTAG21x command through every dialect", arguments: dialects)
    func everyCommand(_ dialects: (ContactlessReader.Dialect, ReaderDialect)) throws {
        var image = Type2TagModel.factoryImage(chip: .ntag216)
        image[0xE4 * 4] |= 0x10                                  // ACCESS: NFC_CNT_EN
        for (i, b) in [0x12, 0x34, 0x56, 0x78, 0xAB, 0xCD].enumerated() { image[0xE5 * 4 + i] = UInt8(b) }  // PWD, PACK
        let model = Type2TagModel(chip: .ntag216, memory: image, signature: Array(0..<32))
        let reader = ContactlessReader(dialects.0, tag: model)
        let c = try channel(reader)
        #expect(c.dialect == dialects.1)
        try c.session { c in
            let version = try #require(try c.getVersion())
            #expect(version.productName == "NTAG216" && version.chip == .ntag216 && version.storageSize == 512...1024)
            #expect(try c.readSignature() == Array(0..<32))
            #expect(try c.readPages(at: 4)?.prefix(3) == [0x03, 0x00, 0xFE])
            #expect(try c.fastRead(0...59)?.count == 240)
            #expect(try c.writePage(4, [0x03, 0x00, 0xFE, 0x00]) == .ack)
            #expect(try c.readCounter() == 1)                      // the first READ counted
            #expect(try c.authenticate(password: [0x12, 0x34, 0x56, 0x78]) == [0xAB, 0xCD])
            #expect(try c.writePage(1, [0, 0, 0, 0]) == .nak(0))    // UID page: NAK, and the tag halts
            #expect(try c.readPages(at: 4) == nil)
            try c.reactivate()
            #expect(try c.readPages(at: 4) != nil)
        }
        #expect(!reader.sessionOpen)
    }

    @Test("AUTHLIM: past 2^AUTHLIM wrong passwords even the right one is refused; without a limit it opens")
    func authenticationLimit() throws {
        for (authlim, opens) in [(UInt8(1), false), (UInt8(0), true)] {
            var image = Type2TagModel.factoryImage(chip: .ntag213)
            image[0x2A * 4] |= authlim                               // ACCESS bits 2-0
            for (i, b) in [0x11, 0x22, 0x33, 0x44, 0x55, 0x66].enumerated() { image[0x2B * 4 + i] = UInt8(b) }
            let reader = ContactlessReader(.transparent, tag: Type2TagModel(chip: .ntag213, memory: image))
            try channel(reader).session { c in
                for _ in 0..<2 {
                    #expect(throws: TagError.self) { _ = try c.authenticate(password: [0, 0, 0, 0]) }
                    try c.reactivate()
                }
                if opens {
                    #expect(try c.authenticate(password: [0x11, 0x22, 0x33, 0x44]) == [0x55, 0x66])
                } else {
                    #expect(throws: TagError.self) { _ = try c.authenticate(password: [0x11, 0x22, 0x33, 0x44]) }
                }
            }
        }
    }

    @Test("a storage-only reader: one line naming the reader, nothing sent to the tag")
    func storageOnly() throws {
        let reader = ContactlessReader(.storageOnly, tag: Type2TagModel(chip: .ntag213))
        let c = try channel(reader)
        do {
            _ = try c.getVersion()
            Issue.record("no error")
        } catch let e as TagCommandError {
            #expect(e.kind == .noRawPath && e.message.contains("Virtual PCD 00 00") && !e.message.contains("\n"))
        }
        #expect(reader.frames.isEmpty)
    }

    @Test("SECTOR_SELECT: the silent second step is success, pages past 255 are reached", arguments: dialects)
    func sectorSelect(_ dialects: (ContactlessReader.Dialect, ReaderDialect)) throws {
        var image = Type2TagModel.factoryImage(chip: .twoSectorT2T)
        image[300 * 4] = 0x5A
        let reader = ContactlessReader(dialects.0, tag: Type2TagModel(chip: .twoSectorT2T, memory: image))
        try channel(reader).session { c in
            try c.selectSector(1)
            #expect(try c.readPages(at: 44)?.first == 0x5A)
            try c.selectSector(0)
            #expect(try c.readPages(at: 44)?.first != 0x5A)
            #expect(throws: TagError.self) { try c.selectSector(2) }
        }
        // A one-sector chip refuses the first step.
        try channel(ContactlessReader(dialects.0, tag: Type2TagModel(chip: .ntag216))).session { c in
            #expect(throws: TagError.self) { try c.selectSector(1) }
        }
    }

    @Test("GET_VERSION names each chip that has it")
    func versions() {
        for chip in [Type2TagModel.Chip.ntag210, .ntag212, .ntag213, .ntag215, .ntag216, .ultralightEV1, .ultralightEV1b] {
            let v = Type2Version(bytes: chip.version!)!
            #expect(v.chip?.name == chip.name, "\(chip.name)")
            #expect(v.vendor == "NXP Semiconductors")
        }
        #expect(Type2Version(bytes: [0x00, 0x04, 0x04, 0x05, 0x02, 0x02, 0x15, 0x03])?.productName == "NTAG I2C plus 2k")
        #expect(Type2Version(bytes: [0x00, 0x04]) == nil)
    }

    // Vectors from contactless-facts §3 (each checked against NXP's keys there).
    static let vectors: [(uid: String, signature: String, key: OriginalitySignature.PublicKey)] = [
        ("04AB87F2CA1190", "67B1750BCCEB1174F9A33BF20E0226551A6366939B31F949848C3C087350FA90", .ntag21x),
        ("04E10CDA993C80", "8B76052EE42F5567BEB53238B3E3F9950707C0DCC956B5C5EFCFDB709B2D82B3", .ntag21x),
        ("04C1285A373080", "CEA2EB0B3C95D0844A95B824A7553703B3702378033BF0987899DB70151A19E7", .ultralightEV1),
    ]

    @Test("published originality signatures verify; one flipped bit, another UID or the other key do not")
    func signatures() throws {
        for v in Self.vectors {
            let uid = try Hex.decode(v.uid), signature = try Hex.decode(v.signature)
            let s = OriginalitySignature(uid: uid, signature: signature)
            #expect(s.verifies(with: v.key), "\(v.uid)")
            #expect(s.verifyingKey()?.name == v.key.name)
            for bit in [0, 7, 130, 255] {
                var flipped = signature
                flipped[bit / 8] ^= 1 << (bit % 8)
                #expect(!OriginalitySignature(uid: uid, signature: flipped).verifies(with: v.key), "bit \(bit) of \(v.uid)")
            }
            var other = uid
            other[6] ^= 0x01
            #expect(!OriginalitySignature(uid: other, signature: signature).verifies(with: v.key))
            #expect(!s.verifies(with: v.key == .ntag21x ? .ultralightEV1 : .ntag21x))
        }
        #expect(!OriginalitySignature(uid: [4, 1, 2, 3, 4, 5, 6], signature: [UInt8](repeating: 0, count: 32)).verifies(with: .ntag21x))
        #expect(!OriginalitySignature(uid: [4, 1, 2, 3, 4, 5, 6], signature: [1, 2, 3]).verifies(with: .ntag21x))
    }
}

/// Type2Tag over a native path: FAST_READ, SECTOR_SELECT, passwords.
@Suite("Type 2 over a native path")
struct Type2NativeTests {
    func detect(_ reader: ContactlessReader, password: Type2Password? = nil) throws -> (Type2Tag, TagCommandChannel) {
        let transport = APDUTransport(channel: EmulatedChannel(card: reader))
        let c = try TagCommandChannel.open(transport: transport, readerName: "test reader")
        return (try Type2Tag.detect(transport, atr: reader.atr, commands: c, password: password), c)
    }

    @Test("the chip comes from GET_VERSION; a full NTAG216 message reads in 4 FAST_READs", arguments: NativeCommandTests.dialects)
    func fastReadWholeTag(_ dialects: (ContactlessReader.Dialect, ReaderDialect)) throws {
        let model = Type2TagModel(chip: .ntag216)
        let reader = ContactlessReader(dialects.0, tag: model)
        let (tag, c) = try detect(reader)
        let message = patternMessage(tag.capacity, seed: 3)
        try c.session { _ in try tag.writeNDEF(message) }
        #expect(ReferenceType2.read(model.contents) == .message(message))
        let (again, c2) = try detect(reader)
        #expect(again.chip.chip == .ntag216 && again.chip.evidence.contains("GET_VERSION"))
        let before = c2.framesSent
        #expect(try c2.session { _ in try again.readNDEF() } == message)
        #expect(c2.framesSent - before <= 4, "\(c2.framesSent - before) frames")
        #expect(reader.frames.dropFirst(reader.frames.count - (c2.framesSent - before)).allSatisfy { $0.first == 0x3A })
        #expect(!reader.sessionOpen)
    }

    @Test("a whole-tag page map costs ⌈bytes / frame⌉ reads plus the GET_VERSION that proves the chip",
          arguments: [(Type2TagModel.Chip.ntag215, ContactlessReader.Dialect.transparent), (.ntag216, .acr122u), (.ntag213, .transparent), (.ntag216, .transparent)])
    func wholeTagFrames(_ chip: Type2TagModel.Chip, _ dialect: ContactlessReader.Dialect) throws {
        let model = Type2TagModel(chip: chip)
        let reader = ContactlessReader(dialect, tag: model)
        let transport = APDUTransport(channel: EmulatedChannel(card: reader))
        let commands = try TagCommandChannel.open(transport: transport, readerName: "test reader")
        let map = try commands.session { c in try Type2Tag.pageMap(transport, atr: model.atr, pages: nil, commands: c) }
        #expect(map.rows.count == chip.pages && map.rows.allSatisfy { $0.bytes == Array(model.contents[($0.page * 4)..<($0.page * 4 + 4)]) || chip.passwords?.secretPages.contains($0.page) == true })
        let reads = reader.frames.filter { $0.first == 0x30 || $0.first == 0x3A }
        let minimum = (chip.pages * 4 + commands.maxAnswerBytes - 1) / commands.maxAnswerBytes
        #expect(reads.count == minimum, "\(chip.name) through \(dialect): \(reads.count) reads, \(minimum) the minimum: \(reads.map(\.hexString))")
        #expect(reader.frames.filter { $0 == [0x60] }.count == 1)
    }

    @Test("a two-sector tag: the whole data area is written and read through SECTOR_SELECT", arguments: NativeCommandTests.dialects)
    func twoSectors(_ dialects: (ContactlessReader.Dialect, ReaderDialect)) throws {
        let model = Type2TagModel(chip: .twoSectorT2T)
        let reader = ContactlessReader(dialects.0, tag: model)
        let (tag, c) = try detect(reader)
        #expect(tag.reachableCapacity == tag.capacity && tag.capacity > 1024)
        let message = patternMessage(tag.capacity, seed: 9)
        try c.session { _ in try tag.writeNDEF(message) }
        #expect(ReferenceType2.read(model.contents) == .message(message))
        #expect(reader.frames.contains([0xC2, 0xFF]))
        let (again, c2) = try detect(reader)
        #expect(try c2.session { _ in try again.readNDEF() } == message)
    }

    @Test("passwords: PWD_AUTH opens protected pages, a wrong PACK stops before any write, no password is refused by the tag")
    func passwords() throws {
        var image = Type2TagModel.factoryImage(chip: .ntag213)
        image[0x29 * 4 + 3] = 0x04                              // AUTH0: from page 4
        image[0x2A * 4] = 0x80                                   // PROT: reads too
        for (i, b) in [0x11, 0x22, 0x33, 0x44, 0x55, 0x66].enumerated() { image[0x2B * 4 + i] = UInt8(b) }
        let model = Type2TagModel(chip: .ntag213, memory: image)
        let reader = ContactlessReader(.transparent, tag: model)
        let right = Type2Password(password: [0x11, 0x22, 0x33, 0x44], pack: [0x55, 0x66])!
        let (tag, c) = try detect(reader, password: right)
        #expect(tag.pack == [0x55, 0x66])
        let message = patternMessage(100, seed: 4)
        try c.session { _ in try tag.writeNDEF(message) }
        #expect(ReferenceType2.read(model.contents) == .message(message))
        // Without the password the pages refuse.
        #expect(throws: (any Error).self) { _ = try self.detect(reader).0.readNDEF() }
        // A PACK other than expected: nothing is written.
        let before = model.contents
        do {
            _ = try detect(reader, password: Type2Password(password: [0x11, 0x22, 0x33, 0x44], pack: [0x00, 0x00])!)
            Issue.record("accepted a wrong PACK")
        } catch let e as TagError { #expect(e.kind == .authenticationFailed) }
        #expect(model.contents == before)
        // A storage-only reader cannot send PWD_AUTH: said so, nothing sent.
        #expect(throws: TagCommandError.self) { _ = try self.detect(ContactlessReader(.storageOnly, tag: model), password: right) }
    }
}
