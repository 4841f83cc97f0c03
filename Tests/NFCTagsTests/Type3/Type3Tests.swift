import ISO7816
import NFCTags
import Testing
import VirtualCard

/// Type 3 tags through the reader models: detection, the FeliCa command set, NDEF
/// read/write/restore/lock, and the chip behaviours the procedures depend on.
@Suite("Type 3 (FeliCa) tags")
struct Type3Tests {
    @Test("Type 3: both chips through both raw dialects: detect, write, read back")
    func type3RoundTrip() throws {
        for chip in [FeliCaTagModel.Chip.liteS, .standard] {
            for path in [NativePaths.Path.transparent, .acr122u] {
                let model = FeliCaTagModel(chip: chip)
                let (tag, _, _) = try NativePaths.type3(model, path)
                #expect(Type3Tag.isType3(atr: model.atr))
                #expect(tag.capacity == (chip.userBlocks - 1) * 16)
                #expect(try tag.readNDEF() == [])
                for size in [1, 16, 17, tag.capacity] {
                    let message = (0..<size).map { UInt8(truncatingIfNeeded: $0 * 5 + 1) }
                    try tag.writeNDEF(message)
                    #expect(try NativePaths.type3(model, path).0.readNDEF() == message, "\(chip.name) \(path) \(size)")
                }
            }
        }
    }

    @Test("Type 3: storage-only readers are refused with the reason")
    func type3Storage() throws {
        #expect(throws: TagCommandError.self) { try NativePaths.type3(FeliCaTagModel(chip: .liteS), .storage) }
    }

    @Test("Type 3: a tag found with WriteF 0F is reported interrupted; a restore clears it")
    func type3Interrupted() throws {
        let model = FeliCaTagModel(chip: .liteS)
        let (tag, _, _) = try NativePaths.type3(model)
        var backup: TagBackup?
        try tag.replaceNDEF(with: [0xD0, 0x00, 0x00]) { backup = $0 }
        try tag.replaceNDEF(with: [0xD1, 0x01, 0x00, 0x54]) { backup = $0 }
        let attribute = FeliCaTagModel.attributeBlock(chip: .liteS, ln: 4, writeF: 0x0F)
        let broken = FeliCaTagModel(chip: .liteS, blocks: model.contents.merging([0: attribute]) { $1 })
        let found = try NativePaths.type3(broken, tolerant: true).0
        #expect { try found.readNDEF() } throws: { ($0 as? TagError)?.kind == .interrupted }
        try found.restore(try #require(backup))
        #expect(try NativePaths.type3(broken).0.readNDEF() == [0xD0, 0x00, 0x00])
    }

    @Test("Type 3: the Lite-S lock sets RWFlag 00 and freezes the MC; a Standard card is refused")
    func type3Lock() throws {
        let model = FeliCaTagModel(chip: .liteS)
        try NativePaths.type3(model).0.writeNDEF([0xD0, 0x00, 0x00])
        let report = try NativePaths.type3(model).0.makeReadOnly()
        #expect(report.refusesWrites && report.state.isFullyLocked)
        #expect(model.contents[0x88]![2] == 0x00)
        let after = try NativePaths.type3(model).0
        #expect(after.status == .readOnly)
        #expect(try after.readNDEF() == [0xD0, 0x00, 0x00])
        let standard = FeliCaTagModel(chip: .standard)
        #expect { try NativePaths.type3(standard).0.makeReadOnly() } throws: { ($0 as? TagError)?.kind == .unsafe }
    }

    @Test("Type 3: a frozen MC refuses its own rewrite (the emulator's lock enforcement)")
    func type3MCFrozen() throws {
        let model = FeliCaTagModel(chip: .liteS)
        _ = try NativePaths.type3(model).0.makeReadOnly()
        let (_, commands, _) = NativePaths.channel(model, .transparent)
        let felica = try FeliCaCommands(channel: commands)
        _ = try felica.polling(systemCode: 0x12FC)
        #expect(throws: FeliCaStatusError.self) { try felica.write(blocks: [0x88], data: [0xFF, 0xFF, 0xFF, 0x01] + [UInt8](repeating: 0, count: 12)) }
        #expect(throws: FeliCaStatusError.self) { try felica.write(blocks: [1], data: [UInt8](repeating: 0, count: 16)) }
        let unenforced = FeliCaTagModel(chip: .liteS, blocks: model.contents, realism: [])
        let (_, c2, _) = NativePaths.channel(unenforced, .transparent)
        let f2 = try FeliCaCommands(channel: c2)
        _ = try f2.polling()
        try f2.write(blocks: [1], data: [UInt8](repeating: 0, count: 16))
    }

    @Test("FeliCa commands: Request Service, Request System Code, multi-block reads within Nbr")
    func feliCaCommands() throws {
        let (_, commands, _) = NativePaths.channel(FeliCaTagModel(chip: .liteS), .transparent)
        let felica = try FeliCaCommands(channel: commands)
        let polled = try #require(try felica.polling())
        #expect(polled.icCode == 0xF1 && polled.isLite)
        #expect(try felica.requestService([.ndefRead, .ndefReadWrite, FeliCaServiceCode(0x1234)]) == [0, 0, 0xFFFF])
        #expect(try felica.requestSystemCode() == [0x12FC])
        #expect(try felica.read(blocks: [0, 1, 2, 3]).count == 64)
        #expect(throws: FeliCaStatusError.self) { try felica.read(blocks: [0, 1, 2, 3, 4]) }
        #expect(try felica.polling(systemCode: 0x0003) == nil)
    }
}
