// How a Type 1 tag is written and restored: the checks before the first write, then the
// Type 1 Tag Operation order (NMN 00, the TLV and message, NMN E1) with a read-back.
import ISO7816

extension Type1Tag {
    public func writeNDEF(_ message: [UInt8]) throws { try write(message) }

    public func replaceNDEF(with message: [UInt8], keepingOld keep: (TagBackup) throws -> Void) throws {
        try checkWritable(message)
        try keep(try backup())
        try write(message)
    }

    /// The NDEF magic number: the commit byte of every write on this type.
    static let magicNumberAddress = 8

    /// Where the lock bytes are is known: static memory (T1TOP lays it out for every chip), a chip
    /// HR0/HR1 prove, or a lock control TLV the tag carries.
    var layoutProven: Bool { header.staticMemory || chip != nil || !tlv.lockAreas.isEmpty }

    /// Writes may proceed: the layout is known and the TLV area sound.
    func checkLayoutKnown() throws {
        if let layoutError { throw layoutError }
        if let doubt = tlv.uncertainty.first { throw TagError(.unsafe, "\(doubt); nothing was written") }
        guard layoutProven else {
            throw TagError(.unsafe, "HR0 HR1 \(header.bytes.hexString) name no Type 1 chip this tool knows, the tag has dynamic memory and no lock control TLV: where its dynamic lock bytes are is unproven; nothing was written")
        }
    }

    func checkWritable(_ message: [UInt8]) throws {
        try checkLayoutKnown()
        guard capabilityContainer.writeAccess == 0 else { throw TagError(.readOnly, "the tag is read-only (CC write access \(capabilityContainer.writeAccess))") }
        guard message.count <= capacity else {
            throw TagError(.tooLarge, "the message is \(message.count) bytes; the tag holds \(capacity) (\(message.count - capacity) bytes over)")
        }
        guard message.count <= reachableCapacity else {
            throw TagError(.beyondReach, "the message is \(message.count) bytes; \(link.readerName) reaches \(reachableCapacity) of the tag's \(capacity) (\(link.form.refusal(.read8(block: 0x10)))); nothing was written")
        }
    }

    /// The bytes from the data area's start to the end of the NDEF TLV and its terminator.
    public func backup(reader: String? = nil) throws -> TagBackup {
        let message = try readNDEF()
        let start = tlv.ndefTLVPosition!
        var positions = tlv.positions(from: start, count: 1 + tlv.ndefLengthFieldSize + message.count + 1)
        // The terminator after it, where this reader reaches it.
        if positions.count == 1 + tlv.ndefLengthFieldSize + message.count + 1, positions.last! < reachableEnd {
            try ensureRead(positions.last!..<(positions.last! + 1))
            if image[positions.last!] != 0xFE { positions.removeLast() }
        } else if positions.count == 1 + tlv.ndefLengthFieldSize + message.count + 1 {
            positions.removeLast()
        }
        let end = (positions.last ?? start) + 1
        try ensureRead(dataArea.lowerBound..<end)
        return TagBackup(kind: kind, uid: uid, capabilityContainer: capabilityContainer.bytes, start: dataArea.lowerBound,
                         bytes: Array(image[dataArea.lowerBound..<end]), message: message, reader: reader)
    }

    func write(_ message: [UInt8]) throws {
        try checkWritable(message)
        guard let start = tlv.ndefTLVPosition else { throw TagError(.notNDEF, "no NDEF TLV") }
        let header: [UInt8] = message.count < 0xFF ? [0x03, UInt8(message.count)] : [0x03, 0xFF, UInt8(message.count >> 8), UInt8(message.count & 0xFF)]
        // A terminator where there is room within reach.
        let room = tlv.availableBytes(from: start) - tlv.availableBytes(from: reachableEnd)
        let positions = tlv.positions(from: start, count: header.count + message.count + (room > header.count + message.count ? 1 : 0))
        try ensureRead(positions.first!..<(positions.last! + 1))
        var target = image
        for (i, b) in (header + message).enumerated() { target[positions[i]] = b }
        if positions.count > header.count + message.count { target[positions.last!] = 0xFE }
        target[Self.magicNumberAddress] = 0xE1
        try apply(target, through: positions.last! + 1)
        try confirmWritten(message) {
            tlv = try Type2TLVArea(memory: image, dataArea: dataArea, reserved: typeReserved)
            return try readNDEF()
        }
    }

    /// Puts a backup back byte for byte, without trusting the TLVs the tag holds now (a cut
    /// write leaves the magic number 00); reserved bytes inside the backup's range are never
    /// written.
    public func restore(_ backup: TagBackup, allowingOtherTag: Bool = false) throws {
        try checkBackupIdentity(backup, uid: uid, allowingOtherTag: allowingOtherTag)
        guard backup.capabilityContainer.count == 4, backup.capabilityContainer.dropFirst() == capabilityContainer.bytes.dropFirst() else {
            throw TagError(.differentTag, "the backup was made with CC \(backup.capabilityContainer.hexString), the tag now has \(capabilityContainer.bytes.hexString); nothing was written")
        }
        let range = backup.start..<(backup.start + backup.bytes.count)
        guard backup.start == dataArea.lowerBound, range.upperBound <= min(memorySize, reachableEnd) else {
            throw TagError(.differentTag, "the backup's bytes \(range.lowerBound)…\(range.upperBound - 1) are not within the tag's data area this reader reaches (\(dataArea.lowerBound)…\(min(memorySize, reachableEnd) - 1)); nothing was written")
        }
        guard layoutProven else { try checkLayoutKnown(); return }
        guard capabilityContainer.writeAccess == 0 else { throw TagError(.readOnly, "the tag is read-only (CC write access \(capabilityContainer.writeAccess)); nothing was written") }
        try ensureRead(range)
        var target = image
        for (i, b) in backup.bytes.enumerated() { target[range.lowerBound + i] = b }
        let layout = try Type2TLVArea(memory: target, dataArea: dataArea.lowerBound..<range.upperBound, reserved: typeReserved)
        guard layout.ndefTLVPosition != nil else { throw TagError(.lengthLies, "the backup holds no complete NDEF TLV; nothing was written") }
        if let doubt = layout.uncertainty.first { throw TagError(.unsafe, "the backup's layout: \(doubt); nothing was written") }
        for r in layout.reserved + typeReserved { for a in r where range.contains(a) { target[a] = image[a] } }
        target[Self.magicNumberAddress] = 0xE1
        try apply(target, through: range.upperBound)
        loaded = []
        layoutError = nil
        do { try load() } catch { throw WriteInterrupted(state: .new, underlying: error, step: "read the tag again") }
    }

    /// Whether a write unit is an 8-byte block (WRITE-E8: dynamic memory and a form that carries it).
    var writesBlocks: Bool { !header.staticMemory && link.form.carries(.writeErase8(block: 0x10, bytes: [])) }

    /// Whether every byte of `block` is a data-area byte nothing reserves (WRITE-E8 may write it whole).
    func wholeDataBlock(_ block: Int) -> Bool {
        (block * 8..<(block * 8 + 8)).allSatisfy { a in dataArea.contains(a) && !(tlv.reserved + typeReserved).contains { $0.contains(a) } }
    }

    /// Brings the tag from `image` to `target` (which differ only in the data area below `end`
    /// and the magic number): every byte that changes is checked against the locks first; then
    /// `writeInCommitOrder` with the magic number as the commit byte.
    func apply(_ target: [UInt8], through end: Int) throws {
        let unit = writesBlocks ? 8 : 1
        let bytes = (0..<end).filter { target[$0] != image[$0] }
        guard !bytes.isEmpty else { return }
        let reserved = tlv.reserved + typeReserved
        if let stray = bytes.first(where: { a in a != Self.magicNumberAddress && (!dataArea.contains(a) || reserved.contains { $0.contains(a) }) }) {
            throw TagError(.unsafe, "the write would change byte \(Hex.encode([UInt8(stray & 0xFF)])) (\(stray)), outside the data area or reserved; nothing was written")
        }
        // WRITE-E addresses blocks 0-E: past them only WRITE-E8 writes.
        guard bytes.last! < (unit == 8 ? reachableEnd : min(reachableEnd, 0x78)) else {
            throw TagError(.beyondReach, "the write would touch byte \(bytes.last!), out of \(link.readerName)'s reach; nothing was written")
        }
        let locked = try readLockState().lockedBlocks
        if let blocked = (bytes + [Self.magicNumberAddress]).first(where: { locked.contains($0 / 8) }) {
            throw TagError(.readOnly, "block \(Hex.encode([UInt8(blocked / 8)])) would change but is locked by its lock bits; nothing was written")
        }
        let changed = Array(Set(bytes.map { $0 / unit })).sorted()
        if unit == 8, let mixed = changed.first(where: { $0 >= 16 && !wholeDataBlock($0) }) {
            throw TagError(.unsafe, "block \(Hex.encode([UInt8(mixed)])) holds reserved bytes beside message bytes, and past byte 7F only WRITE-E8 (the whole block) reaches it; nothing was written")
        }
        try writeInCommitOrder(image: image, target: target, changed: changed, commitPosition: Self.magicNumberAddress, blockSize: unit,
                               unit: unit == 8 ? "block" : "byte", number: { $0 }, observer: writeObserver,
                               write: { try writeUnit($0, $1, unit: unit) }, readBack: { written in
            for block in Set(written.map { $0 * unit / 8 }) { loaded.remove(block) }
            try ensureRead((written.first! * unit)..<((written.last! + 1) * unit))
            return image
        })
    }

    /// Writes one unit: a byte by WRITE-E; a block by WRITE-E8 where all of it is data, else its
    /// changed bytes by WRITE-E, the magic number last.
    func writeUnit(_ index: Int, _ data: [UInt8], unit: Int) throws {
        lockState = nil
        if unit == 8 && wholeDataBlock(index) {
            let answer = try link.send(.writeErase8(block: UInt8(index), bytes: data))
            guard Array(answer[1...]) == data else {
                throw TagError(.writeFailed, "block \(Hex.encode([UInt8(index)])) answered \(Array(answer[1...]).hexString) to WRITE-E8 of \(data.hexString)")
            }
            image.replaceSubrange((index * 8)..<(index * 8 + 8), with: data)
            return
        }
        let addresses = (0..<unit).map { index * unit + $0 }.filter { image[$0] != data[$0 - index * unit] }
        for a in addresses.filter({ $0 != Self.magicNumberAddress }) + addresses.filter({ $0 == Self.magicNumberAddress }) {
            let byte = data[a - index * unit]
            let answer = try link.send(.writeErase(address: UInt8(a), byte: byte))
            guard answer[1] == byte else {
                throw TagError(.writeFailed, "byte \(Hex.encode([UInt8(a)])) answered \(Hex.encode([answer[1]])) to WRITE-E of \(Hex.encode([byte]))")
            }
            image[a] = byte
        }
    }
}
