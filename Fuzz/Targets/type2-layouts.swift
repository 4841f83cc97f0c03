// libFuzzer target: a Type 2 chip with any CC data-area size behind any reader model, through
// status, the lock state, a read, a write with a backup and its restore, and a lock (issue 32:
// a proven NTAG215 with a 144-byte CC trapped on its dynamic lock page). Bytes: chip, CC size,
// reader, message length, then the rest of the memory image past the CC.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 4 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let chips = Type2TagModel.Chip.all.values.sorted { $0.name < $1.name }
    let chip = chips[Int(bytes[0]) % chips.count]
    let readers = ContactlessReader.Dialect.allCases.map { ContactlessReader.Model($0) } + ContactlessReader.Model.generated()
    let reader = readers[Int(bytes[2]) % readers.count]
    var image = Type2TagModel.factoryImage(chip: chip)
    image[14] = bytes[1]
    // The fuzz input overwrites the data area from byte 16 on (TLVs, lock and configuration pages).
    for (i, b) in bytes.dropFirst(4).enumerated() where 16 + i < image.count { image[16 + i] = b }
    let model = Type2TagModel(chip: chip, memory: image)
    let transport = APDUTransport(channel: EmulatedChannel(card: ContactlessReader(model: reader, tag: model)))
    let commands = try? TagCommandChannel.open(transport: transport, readerName: "fuzz")
    defer { commands?.endSession() }
    let native = commands.flatMap { $0.dialect == .storageOnly ? nil : $0 }
    guard let tag = try? Type2Tag.detect(transport, atr: model.atr, tolerant: true, commands: native) else { return 0 }
    _ = tag.status
    _ = try? tag.readLockState()
    _ = try? tag.readNDEF()
    var backup: TagBackup?
    try? tag.replaceNDEF(with: [UInt8](repeating: 0x41, count: Int(bytes[3]) * 3), keepingOld: { backup = $0 })
    if let backup, let again = try? Type2Tag.detect(transport, atr: model.atr, tolerant: true, commands: native) { try? again.restore(backup) }
    if let again = try? Type2Tag.detect(transport, atr: model.atr, commands: native) { _ = try? again.makeReadOnly() }
    return 0
}
