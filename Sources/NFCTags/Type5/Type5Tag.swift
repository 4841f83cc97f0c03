// An NFC Forum Type 5 tag (ISO 15693): its T5T area read by frames or READ BINARY, the
// commit-order write, restore and the permanent lock.
import ISO7816

/// An NFC Forum Type 5 tag (ISO 15693: ICODE SLIX, ST25DV, Tag-it) behind a PC/SC reader:
/// through ISO 15693 frames in a Part 3 transparent session, or through storage READ/UPDATE
/// BINARY with the block number in P1-P2 where a reader maps the memory that way.
///
/// The TLV area follows the CC, as on Type 2 (NDEF TLV 03, terminator FE, 1- or 3-byte lengths),
/// and every write, restore and lock keeps the same rule: the tag passes only through the old
/// message, an empty one, or the new one. The NDEF TLV's first length byte is set to 0 first,
/// every other changed block is written, and that byte's block is written last; then the
/// blocks are read back. Blocks whose bytes do not change are not written, and every block
/// that would change is checked against its lock before the first write.
public final class Type5Tag: PermanentlyLockable {
    /// Told of each step of a write or restore as it begins (see `NDEFTag.writeObserver`).
    public var writeObserver: ((WriteStep) -> Void)?
    public let transport: APDUTransport
    /// The ISO 15693 command path (nil: storage pseudo-APDUs only).
    public let commands: ISO15693Commands?
    public let systemInfo: ISO15693SystemInfo?
    /// E0 first, as people write it.
    public let uid: [UInt8]?
    public let blockSize: Int
    /// From GET SYSTEM INFO; nil on a storage path.
    public let blockCount: Int?
    public private(set) var capabilityContainer: Type5CapabilityContainer
    /// The T5T area as read so far (unknown bytes are 0).
    public private(set) var image: [UInt8]
    public private(set) var tlv: Type2TLVArea
    /// Why the TLV area could not be used (only by a tolerant detection).
    public private(set) var layoutError: TagError?
    private var loaded: Set<Int> = []
    private var lockState: Type5LockState?
    /// READ MULTIPLE BLOCKS is used: the CC announces it and the tag did not refuse it.
    private var readMultiple = true
    public var kind: String { "type5" }
    public var mappingVersion: String { capabilityContainer.versionString }

    /// The end of the T5T area: the CC, then MLEN × 8 bytes, cut at the chip's memory where
    /// GET SYSTEM INFO gave it (ICODE SLIX's CC E1 40 0E counts its 112 bytes from block 0).
    /// Without the memory size, MLEN × 8 from byte 0, the smaller reading.
    public var areaEnd: Int {
        if let blockCount { return min(capabilityContainer.size + capabilityContainer.dataAreaSize, blockCount * blockSize) }
        return capabilityContainer.dataAreaSize
    }
    var dataArea: Range<Int> { capabilityContainer.size..<areaEnd }
    var extended: Bool { capabilityContainer.needsExtendedCommands || (blockCount ?? 0) > 256 }
    public var capacity: Int { tlv.capacity }

    /// The chip in words: "NXP ICODE SLIX (IC reference 01)", or what is known.
    public var chipDescription: String {
        guard let info = systemInfo else { return "ISO 15693 tag (storage pseudo-APDUs: no GET SYSTEM INFO)" }
        return info.manufacturerName + (info.icReference.map { " IC reference \(Hex.encode([$0]))" } ?? "")
    }

    /// Whether the ATR is a PC/SC Part 3 storage card of ISO 15693 (SS 0B part 3, 0C part 4).
    public static func isType5(atr: [UInt8]) -> Bool {
        guard let s = (try? ATR(bytes: atr))?.storageCard else { return false }
        return s.standard == 0x0B || s.standard == 0x0C
    }

    init(transport: APDUTransport, commands: ISO15693Commands?, systemInfo: ISO15693SystemInfo?, uid: [UInt8]?, blockSize: Int, blockCount: Int?) {
        self.transport = transport
        self.commands = commands
        self.systemInfo = systemInfo
        self.uid = uid
        self.blockSize = blockSize
        self.blockCount = blockCount
        capabilityContainer = try! Type5CapabilityContainer(prefix: [0xE1, 0x40, 0x01, 0x00])
        image = []
        tlv = try! Type2TLVArea(memory: [UInt8](repeating: 0, count: 12), dataArea: 4..<12, controlTLVs: false)
    }

    /// Finds the tag's memory and reads the CC and the TLV area up to the NDEF TLV.
    ///
    /// With `commands` (a raw path): GET SYSTEM INFO (block size and count, IC reference; the
    /// extended form where the standard one leaves the memory size out, as ST25DV64K does),
    /// then addressed reads. Without: the UID from GET DATA and blocks by READ BINARY.
    /// - Parameters:
    ///   - transport: the channel to the reader.
    ///   - atr: the card's ATR.
    ///   - tolerant: a TLV area that does not parse is kept in `layoutError` (to restore it).
    ///   - commands: the reader's tag-command channel; nil or storage-only: READ BINARY.
    /// - Throws: `TagError`, `TagCommandError`, `ISO15693Error`, or the channel's errors.
    public static func detect(_ transport: APDUTransport, atr: [UInt8] = [], tolerant: Bool = false, commands: TagCommandChannel? = nil) throws -> Type5Tag {
        let tag: Type5Tag
        if let channel = commands, channel.dialect != .storageOnly {
            let iso = try ISO15693Commands(channel: channel)
            let info = try iso.systemInfoWithMemorySize()
            var size = info.blockSize
            if size == nil { size = try iso.request(0x20, parameters: [0]).count }
            guard let blockSize = size, (1...32).contains(blockSize) else {
                throw TagCommandError(.malformed, "the tag reports no usable block size")
            }
            tag = Type5Tag(transport: transport, commands: iso, systemInfo: info, uid: info.displayUID, blockSize: blockSize, blockCount: info.blockCount)
        } else {
            let r = try transport.send(.getUID)
            let raw = r.statusWord == .success && r.data.count == 8 ? r.data : nil
            // Readers differ in the order: show it E0 first either way.
            let uid = raw.map { $0.last == 0xE0 ? Array($0.reversed()) : $0 }
            let first = try transport.storageReadBinary(block: 0, size: nil)
            guard first.statusWord == .success, (1...32).contains(first.data.count) else {
                throw TagError(.readFailed, "READ BINARY of block 0 failed: \(first.statusWord) (\(first.statusWord.meaning.text))")
            }
            tag = Type5Tag(transport: transport, commands: nil, systemInfo: nil, uid: uid, blockSize: first.data.count, blockCount: nil)
            tag.image = first.data
            tag.loaded = [0]
        }
        try tag.load(tolerant: tolerant)
        return tag
    }

    func load(tolerant: Bool = false) throws {
        lockState = nil
        if let commands, loaded.isEmpty {
            // One frame for the CC and as much of the TLV area as the reader carries: most
            // messages need no second one. A tag without READ MULTIPLE BLOCKS says so; then
            // single blocks.
            let count = min(max(1, (commands.channel.maxAnswerBytes - 1) / blockSize), blockCount ?? 1)
            if count > 1 {
                do {
                    let bytes = try commands.readMultipleBlocks(0, count: count, blockSize: blockSize, extended: extended)
                    image = bytes
                    loaded = Set(0..<count)
                } catch let e as ISO15693Error where e.code <= 0x03 {
                    readMultiple = false
                }
            }
        }
        try ensureRead(0..<min(8, (blockCount ?? 2) * blockSize))
        capabilityContainer = try Type5CapabilityContainer(prefix: Array(image.prefix(8)))
        if !capabilityContainer.supportsReadMultiple { readMultiple = false }
        let end = areaEnd
        guard end > capabilityContainer.size else {
            throw TagError(.lengthLies, "the capability container's data area (\(capabilityContainer.dataAreaSize) bytes) does not fit the tag's \(blockCount.map { "\($0 * blockSize)" } ?? "?") bytes")
        }
        let size = areaBlocks.upperBound * blockSize
        if image.count < size { image += [UInt8](repeating: 0, count: size - image.count) }
        do {
            try walkTLVs()
            layoutError = nil
        } catch let error as TagError where tolerant {
            layoutError = error
        }
    }

    /// Reads progressively until the walk meets the NDEF TLV (one frame on most tags).
    func walkTLVs() throws {
        let end = areaEnd
        // What detection brought already (one frame of blocks from 0), else a first piece.
        var prefix = 0
        while loaded.contains(prefix) { prefix += 1 }
        var readTo = min(end, max(capabilityContainer.size + 16, prefix * blockSize))
        while true {
            try ensureRead(dataArea.lowerBound..<readTo)
            let walk = Result { () throws(TagError) in
                try Type2TLVArea(memory: Array(image.prefix(readTo)), dataArea: dataArea.lowerBound..<readTo, controlTLVs: false)
            }
            if case let .success(area) = walk, area.ndefTLVPosition != nil { break }
            if case let .failure(error) = walk, error.kind != .lengthLies || readTo == end { throw error }
            if readTo == end { break }
            readTo = min(end, readTo + max(16, maxBlocksPerRead * blockSize))
        }
        let area = try Type2TLVArea(memory: Array(image.prefix(end)), dataArea: dataArea, controlTLVs: false)
        guard area.ndefTLVPosition != nil else {
            throw TagError(.notNDEF, "the tag is formatted (CC \(capabilityContainer.bytes.hexString)) but has no NDEF TLV")
        }
        tlv = area
    }

    /// Blocks per READ MULTIPLE BLOCKS: what one answer of the reader carries (less the
    /// response flags), 1 where the CC says the tag has no READ MULTIPLE.
    var maxBlocksPerRead: Int {
        guard let commands, readMultiple else { return 1 }
        return max(1, min(256, (commands.channel.maxAnswerBytes - 1) / blockSize))
    }

    /// Fills `image` for `range`: whole blocks, nothing read twice, contiguous runs in as few
    /// READ MULTIPLE BLOCKS as the reader's frame allows.
    func ensureRead(_ range: Range<Int>) throws {
        guard !range.isEmpty else { return }
        if image.count < range.upperBound { image += [UInt8](repeating: 0, count: (range.upperBound + blockSize - 1) / blockSize * blockSize - image.count) }
        var block = range.lowerBound / blockSize
        let last = (range.upperBound - 1) / blockSize
        while block <= last {
            if loaded.contains(block) { block += 1; continue }
            var count = 1
            while count < maxBlocksPerRead, block + count <= last, !loaded.contains(block + count) { count += 1 }
            let bytes = try readBlocks(block, count: count)
            if image.count < (block + count) * blockSize { image += [UInt8](repeating: 0, count: (block + count) * blockSize - image.count) }
            image.replaceSubrange((block * blockSize)..<((block + count) * blockSize), with: bytes)
            for b in block..<(block + count) { loaded.insert(b) }
            block += count
        }
    }

    func readBlocks(_ first: Int, count: Int) throws -> [UInt8] {
        if let commands {
            do {
                return count == 1 ? try commands.readSingleBlock(first, blockSize: blockSize, extended: extended)
                    : try commands.readMultipleBlocks(first, count: count, blockSize: blockSize, extended: extended)
            } catch let e as ISO15693Error {
                throw TagError(.readFailed, "reading block \(first)\(count > 1 ? "-\(first + count - 1)" : ""): \(e)")
            }
        }
        var out: [UInt8] = []
        for b in first..<(first + count) {
            let r = try transport.storageReadBinary(block: b, size: blockSize)
            guard r.statusWord == .success, r.data.count == blockSize else {
                throw TagError(.readFailed, "READ BINARY of block \(b) failed: \(r.statusWord) (\(r.statusWord.meaning.text)), \(r.data.count) bytes")
            }
            out += r.data
        }
        return out
    }

    func writeBlock(_ block: Int, _ data: [UInt8]) throws {
        precondition(data.count == blockSize)
        if let commands {
            do { try commands.writeSingleBlock(block, data: data, extended: extended) } catch let e as ISO15693Error {
                throw TagError(.writeFailed, "the tag refused the write of block \(block): \(e)")
            }
        } else {
            let r = try transport.send(CommandAPDU(cla: 0xFF, ins: 0xD6, p1: UInt8(block >> 8), p2: UInt8(block & 0xFF), data: data))
            guard r.statusWord == .success else {
                throw TagError(.writeFailed, "the tag refused the write of block \(block): \(r.statusWord) (\(r.statusWord.meaning.text))")
            }
        }
        image.replaceSubrange((block * blockSize)..<((block + 1) * blockSize), with: data)
        lockState = nil
    }

    public var status: NDEFStatus {
        if capabilityContainer.readAccess != 0 { return .notSupported }
        if capabilityContainer.writeAccess != 0 { return .readOnly }
        guard let commit = commitPosition else { return .readWrite }
        // The CC's block and the length's block decide it: one frame, not the whole area's status
        // (the whole area's where it was read already, or where the chip lacks the command, TI).
        let commitBlock = commit / blockSize
        var locked = lockState?.lockedBlocks.map { [$0.contains(0), $0.contains(commitBlock)] }
        if locked == nil, let flags = try? commands?.securityStatus(0, count: commitBlock + 1, extended: extended) {
            locked = [flags.first == true, flags.last == true]
        }
        if locked == nil, commands != nil, let all = (try? readLockState())?.lockedBlocks {
            locked = [all.contains(0), all.contains(commitBlock)]
        }
        return locked?.contains(true) == true ? .readOnly : .readWrite
    }

    var commitPosition: Int? {
        guard let start = tlv.ndefTLVPosition else { return nil }
        return start + 1 < areaEnd ? start + 1 : nil
    }

    var areaBlocks: Range<Int> { 0..<((areaEnd + blockSize - 1) / blockSize) }

    /// The CC's write access and the lock of every block of the T5T area (asked once).
    public func readLockState() throws -> Type5LockState {
        if let lockState { return lockState }
        var state = Type5LockState(ccWriteAccess: capabilityContainer.writeAccess, areaBlocks: areaBlocks, lockedBlocks: nil)
        if let commands {
            var locked: [Int] = []
            var first = 0
            let perFrame = max(1, min(256, commands.channel.maxAnswerBytes - 1))
            do {
                while first < areaBlocks.upperBound {
                    let count = min(perFrame, areaBlocks.upperBound - first)
                    let flags = try commands.securityStatus(first, count: count, extended: extended)
                    locked += flags.enumerated().filter(\.element).map { first + $0.offset }
                    first += count
                }
                state.lockedBlocks = locked
            } catch let e as ISO15693Error where e.code == 0x01 || e.code == 0x02 {
                // No GET MULTIPLE BLOCK SECURITY STATUS (TI Tag-it HF-I): READ SINGLE BLOCK
                // with the option flag brings each block's security status before its data.
                locked = []
                for b in areaBlocks {
                    let body = try commands.request(extended ? 0x30 : 0x20, parameters: extended ? [UInt8(b & 0xFF), UInt8(b >> 8)] : [UInt8(b)], flags: .option)
                    if body.first.map({ $0 & 0x01 != 0 }) == true { locked.append(b) }
                }
                state.lockedBlocks = locked
            }
        }
        lockState = state
        return state
    }

    public func readNDEF() throws -> [UInt8] {
        if let layoutError { throw layoutError }
        guard capabilityContainer.readAccess == 0 else {
            throw TagError(.readOnly, "the tag does not allow reading (CC read access \(capabilityContainer.readAccess))")
        }
        guard let start = tlv.ndefTLVPosition else { throw TagError(.notNDEF, "no NDEF TLV") }
        let body = start + 1 + tlv.ndefLengthFieldSize
        try ensureRead(start..<(body + tlv.ndefLength))
        return Array(image[body..<(body + tlv.ndefLength)])
    }

    /// The bytes a backup needs: from the data area's start to the end of the NDEF TLV and its
    /// terminator.
    public func backup(reader: String? = nil) throws -> TagBackup {
        let message = try readNDEF()
        let start = tlv.ndefTLVPosition!
        var end = start + 1 + tlv.ndefLengthFieldSize + message.count
        if end < areaEnd {
            try ensureRead(end..<(end + 1))
            if image[end] == 0xFE { end += 1 }
        }
        try ensureRead(dataArea.lowerBound..<end)
        return TagBackup(kind: kind, uid: uid, capabilityContainer: capabilityContainer.bytes, start: dataArea.lowerBound,
                         bytes: Array(image[dataArea.lowerBound..<end]), message: message, reader: reader)
    }

    public func writeNDEF(_ message: [UInt8]) throws { try write(message) }

    public func replaceNDEF(with message: [UInt8], keepingOld keep: (TagBackup) throws -> Void) throws {
        try checkWritable(message)
        try keep(try backup())
        try write(message)
    }

    func checkWritable(_ message: [UInt8]) throws {
        if let layoutError { throw layoutError }
        guard capabilityContainer.writeAccess == 0 else { throw TagError(.readOnly, "the tag is read-only (CC write access \(capabilityContainer.writeAccess))") }
        guard message.count <= capacity else {
            throw TagError(.tooLarge, "the message is \(message.count) bytes; the tag holds \(capacity) (\(message.count - capacity) bytes over)")
        }
    }

    func write(_ message: [UInt8]) throws {
        try checkWritable(message)
        guard let start = tlv.ndefTLVPosition else { throw TagError(.notNDEF, "no NDEF TLV") }
        let header: [UInt8] = message.count < 0xFF ? [0x03, UInt8(message.count)] : [0x03, 0xFF, UInt8(message.count >> 8), UInt8(message.count & 0xFF)]
        var bytes = header + message
        if start + bytes.count < areaEnd { bytes.append(0xFE) }
        let range = start..<(start + bytes.count)
        try ensureRead((range.lowerBound / blockSize * blockSize)..<((range.upperBound + blockSize - 1) / blockSize * blockSize))
        var target = image
        target.replaceSubrange(range, with: bytes)
        try apply(target, commitPosition: start + 1, range: range)
        try confirmWritten(message) {
            tlv = try Type2TLVArea(memory: Array(image.prefix(areaEnd)), dataArea: dataArea, controlTLVs: false)
            return try readNDEF()
        }
    }

    /// Brings the tag from `image` to `target` within `range`: every block that changes is
    /// checked against its lock first; then the commit byte's block with that byte 0, every
    /// other changed block, the commit block as in `target` last, and a read-back.
    func apply(_ target: [UInt8], commitPosition: Int, range: Range<Int>) throws {
        let blocks = (range.lowerBound / blockSize)...((range.upperBound - 1) / blockSize)
        func bytes(_ m: [UInt8], _ b: Int) -> [UInt8] { Array(m[(b * blockSize)..<((b + 1) * blockSize)]) }
        let changed = blocks.filter { bytes(target, $0) != bytes(image, $0) }
        guard !changed.isEmpty else { return }
        let commitBlock = commitPosition / blockSize
        guard (changed + [commitBlock]).allSatisfy({ $0 >= dataArea.lowerBound / blockSize && $0 < areaBlocks.upperBound }) else {
            throw TagError(.beyondReach, "the write would touch block \(changed.last!), outside the T5T area; nothing was written")
        }
        if let locked = try readLockState().lockedBlocks, let blocked = (changed + [commitBlock]).first(where: locked.contains) {
            throw TagError(.readOnly, "block \(blocked) would change but is locked; nothing was written")
        }
        try writeInCommitOrder(image: image, target: target, changed: changed, span: Array(blocks), commitPosition: commitPosition, blockSize: blockSize,
                               number: { $0 }, observer: writeObserver, write: writeBlock) { blocks in
            loaded.subtract(blocks)
            for block in blocks { try ensureRead((block * blockSize)..<((block + 1) * blockSize)) }
            return image
        }
    }

    /// Puts a backup back byte for byte, without trusting the TLVs the tag holds now.
    public func restore(_ backup: TagBackup, allowingOtherTag: Bool = false) throws {
        try checkBackupIdentity(backup, uid: uid, allowingOtherTag: allowingOtherTag)
        guard backup.capabilityContainer == capabilityContainer.bytes else {
            throw TagError(.differentTag, "the backup was made with CC \(backup.capabilityContainer.hexString), the tag now has \(capabilityContainer.bytes.hexString); nothing was written")
        }
        let range = backup.start..<(backup.start + backup.bytes.count)
        guard backup.start == dataArea.lowerBound, range.upperBound <= areaEnd else {
            throw TagError(.differentTag, "the backup's bytes \(range.lowerBound)…\(range.upperBound - 1) are not the tag's data area (\(dataArea.lowerBound)…\(areaEnd - 1)); nothing was written")
        }
        guard capabilityContainer.writeAccess == 0 else { throw TagError(.readOnly, "the tag is read-only (CC write access \(capabilityContainer.writeAccess)); nothing was written") }
        let layout = try Type2TLVArea(memory: [UInt8](repeating: 0, count: range.lowerBound) + backup.bytes, dataArea: range, controlTLVs: false)
        guard let start = layout.ndefTLVPosition, start + 1 < range.upperBound else {
            throw TagError(.lengthLies, "the backup holds no complete NDEF TLV; nothing was written")
        }
        try ensureRead((range.lowerBound / blockSize * blockSize)..<((range.upperBound + blockSize - 1) / blockSize * blockSize))
        var target = image
        target.replaceSubrange(range, with: backup.bytes)
        try apply(target, commitPosition: start + 1, range: range)
        loaded = []
        do { try load() } catch { throw WriteInterrupted(state: .new, underlying: error, step: "read the tag again") }
    }

    /// What `makeReadOnly` did.
    public typealias LockReport = NFCTags.LockReport<Type5LockState>
    public static let locksDescription = "CC write access 11, every block locked"

    /// CC write access 11, then LOCK BLOCK on every block of the T5T area that is not locked
    /// yet (the CC's own blocks last), then checks: the security status reads every block
    /// locked, and a write of the first data block's own bytes is refused. Needs the ISO 15693
    /// path: storage pseudo-APDUs have no LOCK BLOCK.
    public func makeReadOnly() throws -> LockReport {
        guard let commands else {
            throw TagCommandError(.noRawPath, "locking a Type 5 tag needs LOCK BLOCK, an ISO 15693 command this reader path (storage pseudo-APDUs) cannot send; nothing was written")
        }
        let before = try readLockState()
        guard let alreadyLocked = before.lockedBlocks else {
            throw TagError(.unsafe, "the tag does not report which blocks are locked; nothing was written")
        }
        var done: [String] = [], already: [String] = []
        var steps: [(String, () throws -> Void)] = []
        if before.ccWriteAccess != 0x03 {
            var block0 = Array(image[0..<blockSize])
            block0[1] |= 0x03
            steps.append(("set the CC write access to 11 (block 0)", { try self.writeBlock(0, block0) }))
        } else { already.append("CC write access 11") }
        let ccBlocks = Set(0..<((capabilityContainer.size + blockSize - 1) / blockSize))
        let order = areaBlocks.filter { !ccBlocks.contains($0) } + ccBlocks.sorted()
        let toLock = order.filter { !alreadyLocked.contains($0) }
        if toLock.count < order.count { already.append("\(order.count - toLock.count) blocks locked") }
        for block in toLock {
            steps.append(("lock block \(block)", {
                do { try commands.lockBlock(block, extended: self.extended) } catch let e as ISO15693Error {
                    throw TagError(.lockFailed, "the tag refused LOCK BLOCK \(block): \(e)")
                }
            }))
        }
        var lockedNow = 0
        func doneSoFar() -> [String] { done + (lockedNow > 0 ? ["LOCK BLOCK on \(lockedNow) of \(toLock.count) blocks"] : []) }
        for (what, step) in steps {
            do { try step() } catch { throw LockInterrupted(done: doneSoFar(), underlying: error, step: what) }
            if what.hasPrefix("lock block") { lockedNow += 1 } else { done.append(what) }
        }
        done = doneSoFar()
        do {
            loaded = []
            lockState = nil
            try load()
            let after = try readLockState()
            let first = dataArea.lowerBound / blockSize
            try ensureRead((first * blockSize)..<((first + 1) * blockSize))
            let same = Array(image[(first * blockSize)..<((first + 1) * blockSize)])
            var refused = false
            do { try commands.writeSingleBlock(first, data: same, extended: extended) } catch is ISO15693Error { refused = true }
            return LockReport(done: done, alreadyDone: already, state: after, refusesWrites: refused && after.isFullyLocked)
        } catch {
            throw LockInterrupted(done: done, underlying: error, step: "check the lock")
        }
    }
}

extension Type5Tag: NDEFTagFamily {
    public static func recognizes(atr: [UInt8]) -> Bool { isType5(atr: atr) }
    public static var usesTagCommands: Bool { true }
    public static func detectNDEF(_ d: NDEFDetection) throws -> any NDEFTag {
        try detect(d.transport, atr: d.atr, tolerant: d.tolerant, commands: d.commands)
    }
}
