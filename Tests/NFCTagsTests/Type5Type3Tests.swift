import ISO7816
import NFCTags
import Testing
import VirtualCard

/// Type 5 and Type 3 tags through the reader models: detection, the command sets, NDEF
/// read/write/restore/lock, and the chip behaviours the procedures depend on.
@Suite("Type 5 (ISO 15693) and Type 3 (FeliCa) tags")
struct Type5Type3Tests {
    enum Path: String, CaseIterable, Sendable { case transparent, acr122u, storage }

    static func channel(_ model: any NativeTagModel, _ path: Path, observer: ((Exchange) -> Void)? = nil) -> (APDUTransport, TagCommandChannel, ContactlessReader) {
        let reader = ContactlessReader(path == .transparent ? .transparent : path == .acr122u ? .acr122u : .storageOnly, tag: model)
        let transport = APDUTransport(channel: EmulatedChannel(card: reader), observer: observer)
        let dialect: ReaderDialect = path == .transparent ? .transparent : path == .acr122u ? .acr122u : .storageOnly
        return (transport, TagCommandChannel(transport: transport, dialect: dialect, readerName: "test reader"), reader)
    }

    static func type5(_ model: ISO15693TagModel, _ path: Path = .transparent, tolerant: Bool = false) throws -> (Type5Tag, TagCommandChannel, ContactlessReader) {
        let (transport, commands, reader) = channel(model, path)
        return (try Type5Tag.detect(transport, atr: model.atr, tolerant: tolerant, commands: commands), commands, reader)
    }

    static func type3(_ model: FeliCaTagModel, _ path: Path = .transparent, tolerant: Bool = false) throws -> (Type3Tag, TagCommandChannel, ContactlessReader) {
        let (transport, commands, reader) = channel(model, path)
        return (try Type3Tag.detect(transport, commands: commands, tolerant: tolerant), commands, reader)
    }

    @Test("Type 5: every chip on both paths detects, writes and reads back messages at its boundaries",
          arguments: ISO15693TagModel.Chip.all.keys.sorted(), [Path.transparent, .storage])
    func type5RoundTrip(chipName: String, path: Path) throws {
        let chip = ISO15693TagModel.Chip.all[chipName]!
        let model = ISO15693TagModel(chip: chip)
        let (tag, _, _) = try Self.type5(model, path)
        #expect(Type5Tag.isType5(atr: model.atr))
        #expect(tag.blockSize == chip.blockSize)
        #expect(tag.uid?.first == 0xE0)
        if path == .transparent { #expect(tag.blockCount == chip.blocks) }
        #expect(try tag.readNDEF() == [])
        #expect(tag.status == .readWrite)
        for size in [1, 254, 255, tag.capacity] where size <= tag.capacity {
            let message = (0..<size).map { UInt8(truncatingIfNeeded: $0 * 7 + 3) }
            try tag.writeNDEF(message)
            let again = try Self.type5(model, path).0
            #expect(try again.readNDEF() == message, "\(chipName) \(path) size \(size)")
        }
    }

    @Test("Type 5: capacities as the CC and memory give them")
    func type5Capacity() throws {
        // ICODE SLIX: 112 bytes, CC 4: 108 bytes of TLV area, 106 of message.
        #expect(try Self.type5(ISO15693TagModel(chip: .icodeSlix)).0.capacity == 106)
        // ST25DV64K: 8 KB, CC 8: 8184 bytes, 3-byte length: 8180.
        let st = try Self.type5(ISO15693TagModel(chip: .st25dv64k)).0
        #expect(st.capacity == 8180)
        #expect(st.capabilityContainer.size == 8)
    }

    @Test("Type 5: a 1 KB message is read in as few READ MULTIPLE BLOCKS as the frame allows")
    func type5Frames() throws {
        let model = ISO15693TagModel(chip: .st25dv64k)
        try Self.type5(model).0.writeNDEF([UInt8](repeating: 0x41, count: 1024))
        let (tag, commands, reader) = try Self.type5(model)
        let before = reader.frames.count
        #expect(try tag.readNDEF().count == 1024)
        // 1024 + 4 header + 8 CC bytes = 1036 bytes: 259 blocks, 59 per frame: 5 READ MULTIPLE
        // BLOCKS in all, the first during detection; and the two GET SYSTEM INFO (standard, then
        // extended for the memory size).
        #expect(commands.framesSent == 7, "\(commands.framesSent) frames")
        #expect(reader.frames.filter { $0[1] == 0x33 }.count == 5)
        // Detection walked the TLV to its end: the message is in memory already.
        #expect(reader.frames.count == before)
    }

    @Test("Type 5: lock = CC write access 11 + LOCK BLOCK on every block, confirmed; the tag then refuses writes",
          arguments: ["icode-slix", "tagit"])
    func type5Lock(chipName: String) throws {
        let chip = ISO15693TagModel.Chip.all[chipName]!
        let model = ISO15693TagModel(chip: chip)
        try Self.type5(model).0.writeNDEF([0xD0, 0x00, 0x00])
        let report = try Self.type5(model).0.makeReadOnly()
        #expect(report.refusesWrites)
        #expect(report.state.isFullyLocked)
        #expect(model.lockedBlocks == Set(0..<(chip.blocks)))
        let after = try Self.type5(model).0
        #expect(after.status == .readOnly)
        #expect(try after.readNDEF() == [0xD0, 0x00, 0x00])
        #expect(throws: TagError.self) { try after.writeNDEF([0xD0, 0x00, 0x00, 0x01]) }
    }

    @Test("the ISO 15693 model's lock enforcement is what refuses the write (removed, the write goes through)")
    func type5LockEnforcement() throws {
        for realism in [ISO15693TagModel.Realism.all, []] {
            let model = ISO15693TagModel(chip: .icodeSlix, locked: [5], realism: realism)
            let (_, commands, _) = Self.channel(model, .transparent)
            let iso = try ISO15693Commands(channel: commands)
            _ = try iso.getSystemInfo()
            let result = Result { try iso.writeSingleBlock(5, data: [9, 9, 9, 9]) }
            #expect((try? result.get()) == nil ? realism == .all : realism.isEmpty)
            #expect((model.contents[20..<24] == [9, 9, 9, 9]) == realism.isEmpty)
        }
    }

    @Test("Type 5: lock on a storage-only path is refused before anything is written")
    func type5LockStorage() throws {
        let model = ISO15693TagModel(chip: .icodeSlix)
        let before = model.contents
        #expect(throws: TagCommandError.self) { try Self.type5(model, .storage).0.makeReadOnly() }
        #expect(model.contents == before && model.lockedBlocks.isEmpty)
    }

    @Test("Type 5: TI Tag-it writes carry the option flag (without it the chip refuses)")
    func tagItOptionFlag() throws {
        let model = ISO15693TagModel(chip: .tagIt)
        let (tag, _, reader) = try Self.type5(model)
        try tag.writeNDEF([0xD0, 0x00, 0x00])
        let writes = reader.frames.filter { $0.count > 1 && $0[1] == 0x21 }
        #expect(!writes.isEmpty && writes.allSatisfy { $0[0] & 0x40 != 0 })
        let (_, commands, _) = Self.channel(model, .transparent)
        let iso = try ISO15693Commands(channel: commands)
        _ = try iso.getSystemInfo()
        iso.optionFlagOnWrites = false
        #expect(throws: ISO15693Error.self) { try iso.writeSingleBlock(5, data: [1, 2, 3, 4]) }
    }

    @Test("Type 5: the ACR122U has no ISO 15693")
    func type5ACR122U() throws {
        let (transport, commands, _) = Self.channel(ISO15693TagModel(chip: .icodeSlix), .acr122u)
        #expect(throws: TagCommandError.self) { try Type5Tag.detect(transport, commands: commands) }
    }

    @Test("Type 3: both chips through both raw dialects: detect, write, read back")
    func type3RoundTrip() throws {
        for chip in [FeliCaTagModel.Chip.liteS, .standard] {
            for path in [Path.transparent, .acr122u] {
                let model = FeliCaTagModel(chip: chip)
                let (tag, _, _) = try Self.type3(model, path)
                #expect(Type3Tag.isType3(atr: model.atr))
                #expect(tag.capacity == (chip.userBlocks - 1) * 16)
                #expect(try tag.readNDEF() == [])
                for size in [1, 16, 17, tag.capacity] {
                    let message = (0..<size).map { UInt8(truncatingIfNeeded: $0 * 5 + 1) }
                    try tag.writeNDEF(message)
                    #expect(try Self.type3(model, path).0.readNDEF() == message, "\(chip.name) \(path) \(size)")
                }
            }
        }
    }

    @Test("Type 3: storage-only readers are refused with the reason")
    func type3Storage() throws {
        #expect(throws: TagCommandError.self) { try Self.type3(FeliCaTagModel(chip: .liteS), .storage) }
    }

    @Test("Type 3: a tag found with WriteF 0F is reported interrupted; a restore clears it")
    func type3Interrupted() throws {
        let model = FeliCaTagModel(chip: .liteS)
        let (tag, _, _) = try Self.type3(model)
        var backup: TagBackup?
        try tag.replaceNDEF(with: [0xD0, 0x00, 0x00]) { backup = $0 }
        try tag.replaceNDEF(with: [0xD1, 0x01, 0x00, 0x54]) { backup = $0 }
        let attribute = FeliCaTagModel.attributeBlock(chip: .liteS, ln: 4, writeF: 0x0F)
        let broken = FeliCaTagModel(chip: .liteS, blocks: model.contents.merging([0: attribute]) { $1 })
        let found = try Self.type3(broken, tolerant: true).0
        #expect { try found.readNDEF() } throws: { ($0 as? TagError)?.kind == .interrupted }
        try found.restore(try #require(backup))
        #expect(try Self.type3(broken).0.readNDEF() == [0xD0, 0x00, 0x00])
    }

    @Test("Type 3: the Lite-S lock sets RWFlag 00 and freezes the MC; a Standard card is refused")
    func type3Lock() throws {
        let model = FeliCaTagModel(chip: .liteS)
        try Self.type3(model).0.writeNDEF([0xD0, 0x00, 0x00])
        let report = try Self.type3(model).0.makeReadOnly()
        #expect(report.refusesWrites && report.state.isFullyLocked)
        #expect(model.contents[0x88]![2] == 0x00)
        let after = try Self.type3(model).0
        #expect(after.status == .readOnly)
        #expect(try after.readNDEF() == [0xD0, 0x00, 0x00])
        let standard = FeliCaTagModel(chip: .standard)
        #expect { try Self.type3(standard).0.makeReadOnly() } throws: { ($0 as? TagError)?.kind == .unsafe }
    }

    @Test("Type 3: a frozen MC refuses its own rewrite (the emulator's lock enforcement)")
    func type3MCFrozen() throws {
        let model = FeliCaTagModel(chip: .liteS)
        _ = try Self.type3(model).0.makeReadOnly()
        let (_, commands, _) = Self.channel(model, .transparent)
        let felica = try FeliCaCommands(channel: commands)
        _ = try felica.polling(systemCode: 0x12FC)
        #expect(throws: FeliCaStatusError.self) { try felica.write(blocks: [0x88], data: [0xFF, 0xFF, 0xFF, 0x01] + [UInt8](repeating: 0, count: 12)) }
        #expect(throws: FeliCaStatusError.self) { try felica.write(blocks: [1], data: [UInt8](repeating: 0, count: 16)) }
        let unenforced = FeliCaTagModel(chip: .liteS, blocks: model.contents, realism: [])
        let (_, c2, _) = Self.channel(unenforced, .transparent)
        let f2 = try FeliCaCommands(channel: c2)
        _ = try f2.polling()
        try f2.write(blocks: [1], data: [UInt8](repeating: 0, count: 16))
    }

    @Test("FeliCa commands: Request Service, Request System Code, multi-block reads within Nbr")
    func feliCaCommands() throws {
        let (_, commands, _) = Self.channel(FeliCaTagModel(chip: .liteS), .transparent)
        let felica = try FeliCaCommands(channel: commands)
        let polled = try #require(try felica.polling())
        #expect(polled.icCode == 0xF1 && polled.isLite)
        #expect(try felica.requestService([.ndefRead, .ndefReadWrite, FeliCaServiceCode(0x1234)]) == [0, 0, 0xFFFF])
        #expect(try felica.requestSystemCode() == [0x12FC])
        #expect(try felica.read(blocks: [0, 1, 2, 3]).count == 64)
        #expect(throws: FeliCaStatusError.self) { try felica.read(blocks: [0, 1, 2, 3, 4]) }
        #expect(try felica.polling(systemCode: 0x0003) == nil)
    }

    @Test("ISO 15693 commands: system info (standard and extended), security status, custom command")
    func iso15693Commands() throws {
        let (_, commands, _) = Self.channel(ISO15693TagModel(chip: .st25dv64k), .transparent)
        let iso = try ISO15693Commands(channel: commands)
        let info = try iso.getSystemInfo()
        #expect(info.blockCount == nil && info.icReference == 0x26 && info.manufacturer == 0x02)
        let ext = try iso.getSystemInfo(extended: true)
        #expect(ext.blockCount == 2048 && ext.blockSize == 4)
        #expect(try iso.readSingleBlock(300, blockSize: 4, extended: true) == [0, 0, 0, 0])
        #expect(throws: ISO15693Error.self) { try iso.readSingleBlock(2048, blockSize: 4, extended: true) }
        try iso.lockBlock(300, extended: true)
        #expect(try iso.securityStatus(299, count: 3, extended: true) == [false, true, false])
        #expect { try iso.lockBlock(300, extended: true) } throws: { ($0 as? ISO15693Error)?.code == 0x11 }
        let (_, c2, _) = Self.channel(ISO15693TagModel(chip: .icodeSlix), .transparent)
        let slix = try ISO15693Commands(channel: c2)
        _ = try slix.getSystemInfo()
        #expect(try slix.customCommand(0xB2, manufacturer: 0x04).count == 2)
    }
}
