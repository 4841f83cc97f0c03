// libFuzzer target: the tag parsers that read what a tag says about itself — the Type 4
// capability container and the Type 2 capability container and TLV area — and whole Type 4 / Type 2
// reads against emulated tags whose memory is the fuzz input (lying CCs, NLENs, TLV lengths).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    switch data[0] % 7 {
    case 0:
        _ = try? Type4CapabilityContainer(bytes: bytes)
    case 1:
        var image = [UInt8](repeating: 0, count: 16) + bytes
        if image.count < 64 { image += [UInt8](repeating: 0, count: 64 - image.count) }
        _ = try? Type2TLVArea(memory: image, dataArea: 16..<min(image.count, 16 + 2040))
    case 2:
        // A whole Type 2 read of a fuzzed memory image (CC in bytes 12-15).
        let model = Type2TagModel(chip: .ntag216, memory: bytes)
        if let tag = try? Type2Tag.detect(APDUTransport(channel: EmulatedChannel(card: model)), atr: model.atr) {
            _ = tag.status
            _ = try? tag.readNDEF()
        }
    case 4:
        // Write, lock and restore on a fuzzed memory image of a chip the first byte picks: the
        // procedures that change tags must end in an error, never a trap, whatever the tag says.
        let chips = Type2TagModel.Chip.all.values.sorted { $0.name < $1.name }
        guard let first = bytes.first else { return 0 }
        let model = Type2TagModel(chip: chips[Int(first) % chips.count], memory: Array(bytes.dropFirst()))
        let transport = APDUTransport(channel: EmulatedChannel(card: model))
        if let tag = try? Type2Tag.detect(transport, atr: model.atr, tolerant: true) {
            _ = tag.status
            _ = try? tag.readLockState()
            var backup: TagBackup?
            try? tag.replaceNDEF(with: Array(bytes.prefix(Int(first))), keepingOld: { backup = $0 })
            if let backup, let again = try? Type2Tag.detect(transport, atr: model.atr, tolerant: true) { try? again.restore(backup) }
            _ = try? Type2Tag.detect(transport, atr: model.atr).makeReadOnly()
            _ = try? tag.dump(pages: 0...min(255, Int(first)))
        }
    case 5:
        _ = try? TagBackup(parsing: String(decoding: bytes, as: UTF8.self))
    case 6:
        // Any range through the page map, the dump and the block reads, on a chip and a reader
        // model the input picks: a result or an error, never a trap (issue 25).
        guard bytes.count >= 6 else { return 0 }
        let readers = ContactlessReader.Model.generated()
        let reader = readers[Int(bytes[0]) % readers.count]
        let a = Int(Int16(bitPattern: UInt16(bytes[1]) << 8 | UInt16(bytes[2])))
        let b = a + Int(bytes[3]) * Int(bytes[4] % 8 + 1)
        let chips = Type2TagModel.Chip.all.values.sorted { $0.name < $1.name }
        let model = Type2TagModel(chip: chips[Int(bytes[5]) % chips.count], memory: Array(bytes.dropFirst(6)))
        let transport = APDUTransport(channel: EmulatedChannel(card: ContactlessReader(model: reader, tag: model)))
        if let commands = try? TagCommandChannel.open(transport: transport, readerName: "fuzz") {
            _ = try? Type2Tag.pageMap(transport, atr: model.atr, pages: a...b, commands: commands)
            if let tag = try? Type2Tag.detect(transport, atr: model.atr, commands: commands.dialect == .storageOnly ? nil : commands) {
                _ = try? tag.dump(pages: a...b)
            }
        }
        if reader.dialect == .transparent {
            let five = ISO15693TagModel(chip: .eightByteBlocks, memory: Array(bytes.dropFirst(6)))
            let t5 = APDUTransport(channel: EmulatedChannel(card: ContactlessReader(model: reader, tag: five)))
            if let iso = try? ISO15693Commands(channel: TagCommandChannel(transport: t5, dialect: .transparent)) {
                _ = try? iso.readMultipleBlocks(a, count: b - a, blockSize: 8, extended: bytes[4] & 1 == 1)
                _ = try? iso.securityStatus(a, count: b - a, extended: bytes[4] & 2 == 2)
            }
        }
    default:
        // A whole Type 4 read of a fuzzed NDEF file behind a fixed, valid CC.
        var c = Type4TagModel.Configuration()
        c.fileSize = 1024
        c.mle = 64
        let model = Type4TagModel(configuration: c, fileContents: bytes)
        if let tag = try? Type4Tag.detect(APDUTransport(channel: EmulatedChannel(card: ApplicationHost(applications: [model])))) {
            _ = try? tag.readNDEF()
        }
    }
    return 0
}
