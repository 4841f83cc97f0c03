// How a Type 2 tag is written and restored: the checks before the first write, then the
// commit-order write that passes only through the old, an empty or the new message.
import ISO7816

extension Type2Tag {
    public func writeNDEF(_ message: [UInt8]) throws {
        try write(message)
    }

    public func replaceNDEF(with message: [UInt8], keepingOld keep: (TagBackup) throws -> Void) throws {
        try checkWritable(message)
        try keep(try backup())
        try write(message)
    }

    func checkWritable(_ message: [UInt8]) throws {
        if let layoutError { throw layoutError }
        if let doubt = tlv.uncertainty.first { throw TagError(.unsafe, "\(doubt); nothing was written") }
        guard capabilityContainer.writeAccess == 0 else { throw TagError(.readOnly, "the tag is read-only (CC write access \(capabilityContainer.writeAccess))") }
        guard message.count <= capacity else {
            throw TagError(.tooLarge, "the message is \(message.count) bytes; the tag holds \(capacity) (\(message.count - capacity) bytes over)")
        }
        guard message.count <= reachableCapacity else {
            throw TagError(.beyondReach, "the message is \(message.count) bytes; this reader path reaches \(reachableCapacity) of the tag's \(capacity) (the rest is \(reachNote)); nothing was written")
        }
    }

    /// Writes the message power-loss-safe (see the type's comment), then reads back the blocks
    /// it changed.
    func write(_ message: [UInt8]) throws {
        try checkWritable(message)
        guard let start = tlv.ndefTLVPosition else { throw TagError(.notNDEF, "no NDEF TLV") }
        let lengthSize = message.count >= 0xFF ? 3 : 1
        let headerCount = 1 + lengthSize
        // A terminator TLV after the message where there is room (and within reach: readers stop at
        // the NDEF TLV anyway, so a message that ends at page 255's end needs none).
        let terminator = tlv.availableBytes(from: start) - tlv.availableBytes(from: reachableBytes) > headerCount + message.count ? 1 : 0
        let positions = tlv.positions(from: start, count: headerCount + message.count + terminator)
        try ensureRead((positions.first! / 4 * 4)..<((positions.last! / 4 + 1) * 4))
        var target = image
        let tlvHeader: [UInt8] = lengthSize == 1 ? [0x03, UInt8(message.count)] : [0x03, 0xFF, UInt8(message.count >> 8), UInt8(message.count & 0xFF)]
        for (i, b) in (tlvHeader + message).enumerated() { target[positions[i]] = b }
        if terminator == 1 { target[positions.last!] = 0xFE }
        try apply(target, commitPosition: positions[1], range: positions.first!..<(positions.last! + 1))
        // Every page is written and read back: from here on the tag holds the new message.
        try confirmWritten(message) {
            tlv = try Type2TLVArea(memory: Array(image.prefix(dataArea.upperBound)) + [UInt8](repeating: 0, count: max(0, dataArea.upperBound - image.count)), dataArea: dataArea)
            return try readNDEF()
        }
    }

    /// Puts a backup back, byte for byte, without parsing what the tag holds now (a cut write
    /// may have left a length that lies). Refuses a backup of another tag (by UID) unless
    /// `allowingOtherTag`, and one made for another layout (CC) always.
    public func restore(_ backup: TagBackup, allowingOtherTag: Bool = false) throws {
        try checkBackupIdentity(backup, uid: uid, allowingOtherTag: allowingOtherTag)
        guard backup.capabilityContainer == capabilityContainer.bytes else {
            throw TagError(.differentTag, "the backup was made with CC \(backup.capabilityContainer.hexString), the tag now has \(capabilityContainer.bytes.hexString); nothing was written")
        }
        let range = backup.start..<(backup.start + backup.bytes.count)
        guard backup.start >= 16, backup.start % 4 == 0, range.upperBound <= dataArea.upperBound else {
            throw TagError(.differentTag, "the backup's bytes \(range.lowerBound)…\(range.upperBound - 1) are not inside the tag's data area; nothing was written")
        }
        guard capabilityContainer.writeAccess == 0 else { throw TagError(.readOnly, "the tag is read-only (CC write access \(capabilityContainer.writeAccess)); nothing was written") }
        try ensureRead(range)
        var target = image
        for (i, b) in backup.bytes.enumerated() { target[range.lowerBound + i] = b }
        // The layout comes from the backup, never from the tag as it is now.
        let layout = try Type2TLVArea(memory: Array(target.prefix(range.upperBound)), dataArea: 16..<range.upperBound)
        guard let start = layout.ndefTLVPosition, case let p = layout.positions(from: start, count: 2), p.count == 2 else {
            throw TagError(.lengthLies, "the backup holds no complete NDEF TLV; nothing was written")
        }
        if let doubt = layout.uncertainty.first { throw TagError(.unsafe, "the backup's layout: \(doubt); nothing was written") }
        for r in layout.reserved { for a in r where range.contains(a) { target[a] = image[a] } }
        try apply(target, commitPosition: p[1], range: range)
        loaded = [0]
        do { try load() } catch { throw WriteInterrupted(state: .new, underlying: error, step: "read the tag again") }
    }

    /// Brings the tag from `image` to `target` within `range`: every page that changes is
    /// checked against the locks and the password the tag is known to have, then written in
    /// commit order (`writeInCommitOrder`: the commit byte's page with that byte 0, every other
    /// changed page, the commit page as in `target` last, a read-back). A page whose lock state
    /// is unknown (an unproven chip's dynamic lock bytes) and that the tag refuses makes the
    /// write put back what it changed: the tag is left unchanged (issue 32).
    func apply(_ target: [UInt8], commitPosition: Int, range: Range<Int>) throws {
        let pages = (range.lowerBound / 4)...((range.upperBound - 1) / 4)
        let changed = pages.filter { p in (0..<4).contains { target[p * 4 + $0] != image[p * 4 + $0] } }
        guard !changed.isEmpty else { return }
        guard changed.allSatisfy({ $0 >= 4 && $0 < reachablePages }) else {
            throw TagError(.beyondReach, "the write would touch page \(changed.last!), outside pages 4-\(reachablePages - 1) that this reader path can write; nothing was written")
        }
        // An unreadable password configuration means read protection (PROT): the pages to change
        // were all just read, and a protected one would have failed that read.
        let state = try readLockState()
        let commitPage = commitPosition / 4
        // The commit page is written (its length byte to 0 and back) whenever anything changes.
        if let blocked = (changed + [commitPage]).first(where: { !state.isWritable(page: $0) }) {
            let why = state.lockedPages.contains(blocked) ? "locked by its lock bits" : "password-protected (\(state.password))"
            throw TagError(.readOnly, "page \(blocked) would change but is \(why); nothing was written")
        }
        try writeInCommitOrder(image: image, target: target, changed: changed, span: Array(pages), commitPosition: commitPosition, blockSize: 4, unit: "page",
                               number: { $0 }, observer: writeObserver, write: { try writePage($0, $1) }, readBack: { written in
            // The 16-byte blocks holding the pages, read again from the tag.
            let blocks = Set(written.map { $0 / 4 })
            loaded.subtract(blocks)
            for block in blocks.sorted() { try ensureRead((block * 16)..<(block * 16 + 16)) }
            return image
        })
    }

    /// Records bytes written outside `writePage` in the memory image.
    func noteWritten(_ page: Int, _ data: [UInt8]) {
        for i in 0..<4 { image[page * 4 + i] = data[i] }
        lockState = nil
    }

    func writePage(_ page: Int, _ data: [UInt8]) throws {
        precondition(page < reachablePages && data.count == 4)
        if let commands {
            try select(sectorOf: page)
            let answer = try commands.writePage(UInt8(page % 256), data)
            guard answer == .ack else {
                try? recover()
                let why = if case let .nak(code) = answer { TagAnswer.nakMeaning(code) } else { "\(answer)" }
                throw TagError(.writeFailed, "the tag refused the write of page \(page): \(answer) (\(why))")
            }
        } else {
            let r = try transport.send(CommandAPDU(cla: 0xFF, ins: 0xD6, p1: 0, p2: UInt8(page), data: data))
            guard r.statusWord == .success else {
                throw TagError(.writeFailed, "the tag refused the write of page \(page): \(r.statusWord) (\(r.statusWord.meaning.text))")
            }
        }
        for i in 0..<4 { image[page * 4 + i] = data[i] }
    }
}
