import ISO7816
import NFCTags
import Testing
import VirtualCard

/// Type 5 tags through the reader models: detection, the ISO 15693 command set, NDEF
/// read/write/restore/lock, and the chip behaviours the procedures depend on.
@Suite("Type 5 (ISO 15693) tags")
struct Type5Tests {
    @Test("Type 5: every chip on both paths detects, writes and reads back messages at its boundaries",
          arguments: ISO15693TagModel.Chip.all.keys.sorted(), [NativePaths.Path.transparent, .storage])
    func type5RoundTrip(chipName: String, path: NativePaths.Path) throws {
        let chip = ISO15693TagModel.Chip.all[chipName]!
        let model = ISO15693TagModel(chip: chip)
        let (tag, _, _) = try NativePaths.type5(model, path)
        #expect(Type5Tag.isType5(atr: model.atr))
        #expect(tag.blockSize == chip.blockSize)
        #expect(tag.uid?.first == 0xE0)
        if path == .transparent { #expect(tag.blockCount == chip.blocks) }
        #expect(try tag.readNDEF() == [])
        #expect(tag.status == .readWrite)
        for size in [1, 254, 255, tag.capacity] where size <= tag.capacity {
            let message = (0..<size).map { UInt8(truncatingIfNeeded: $0 * 7 + 3) }
            try tag.writeNDEF(message)
            let again = try NativePaths.type5(model, path).0
            #expect(try again.readNDEF() == message, "\(chipName) \(path) size \(size)")
        }
    }

    @Test("Type 5: capacities as the CC and memory give them")
    func type5Capacity() throws {
        // ICODE SLIX: 112 bytes, CC 4: 108 bytes of TLV area, 106 of message.
        #expect(try NativePaths.type5(ISO15693TagModel(chip: .icodeSlix)).0.capacity == 106)
        // ST25DV64K: 8 KB, CC 8: 8184 bytes, 3-byte length: 8180.
        let st = try NativePaths.type5(ISO15693TagModel(chip: .st25dv64k)).0
        #expect(st.capacity == 8180)
        #expect(st.capabilityContainer.size == 8)
    }

    @Test("Type 5: a 1 KB message is read in as few READ MULTIPLE BLOCKS as the frame allows")
    func type5Frames() throws {
        let model = ISO15693TagModel(chip: .st25dv64k)
        try NativePaths.type5(model).0.writeNDEF([UInt8](repeating: 0x41, count: 1024))
        let (tag, commands, reader) = try NativePaths.type5(model)
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
        try NativePaths.type5(model).0.writeNDEF([0xD0, 0x00, 0x00])
        let report = try NativePaths.type5(model).0.makeReadOnly()
        #expect(report.refusesWrites)
        #expect(report.state.isFullyLocked)
        #expect(model.lockedBlocks == Set(0..<(chip.blocks)))
        let after = try NativePaths.type5(model).0
        #expect(after.status == .readOnly)
        #expect(try after.readNDEF() == [0xD0, 0x00, 0x00])
        #expect(throws: TagError.self) { try after.writeNDEF([0xD0, 0x00, 0x00, 0x01]) }
    }

    @Test("the ISO 15693 model's lock enforcement is what refuses the write (removed, the write goes through)")
    func type5LockEnforcement() throws {
        for realism in [ISO15693TagModel.Realism.all, []] {
            let model = ISO15693TagModel(chip: .icodeSlix, locked: [5], realism: realism)
            let (_, commands, _) = NativePaths.channel(model, .transparent)
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
        #expect(throws: TagCommandError.self) { try NativePaths.type5(model, .storage).0.makeReadOnly() }
        #expect(model.contents == before && model.lockedBlocks.isEmpty)
    }

    @Test("Type 5: TI Tag-it writes carry the option flag (without it the chip refuses)")
    func tagItOptionFlag() throws {
        let model = ISO15693TagModel(chip: .tagIt)
        let (tag, _, reader) = try NativePaths.type5(model)
        try tag.writeNDEF([0xD0, 0x00, 0x00])
        let writes = reader.frames.filter { $0.count > 1 && $0[1] == 0x21 }
        #expect(!writes.isEmpty && writes.allSatisfy { $0[0] & 0x40 != 0 })
        let (_, commands, _) = NativePaths.channel(model, .transparent)
        let iso = try ISO15693Commands(channel: commands)
        _ = try iso.getSystemInfo()
        iso.optionFlagOnWrites = false
        #expect(throws: ISO15693Error.self) { try iso.writeSingleBlock(5, data: [1, 2, 3, 4]) }
    }

    @Test("Type 5: the ACR122U has no ISO 15693")
    func type5ACR122U() throws {
        let (transport, commands, _) = NativePaths.channel(ISO15693TagModel(chip: .icodeSlix), .acr122u)
        #expect(throws: TagCommandError.self) { try Type5Tag.detect(transport, commands: commands) }
    }

    @Test("ISO 15693 commands: system info (standard and extended), security status, custom command")
    func iso15693Commands() throws {
        let (_, commands, _) = NativePaths.channel(ISO15693TagModel(chip: .st25dv64k), .transparent)
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
        let (_, c2, _) = NativePaths.channel(ISO15693TagModel(chip: .icodeSlix), .transparent)
        let slix = try ISO15693Commands(channel: c2)
        _ = try slix.getSystemInfo()
        #expect(try slix.customCommand(0xB2, manufacturer: 0x04).count == 2)
    }
}
