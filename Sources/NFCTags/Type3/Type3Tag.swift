// An NFC Forum Type 3 tag (FeliCa, NDEF system 12FC): the attribute block, reads, the
// WriteF-guarded write and restore, and the permanent lock.
import ISO7816

/// The Type 3 attribute information block, block 0 of the NDEF service (NFC Forum T3T 1.0 §7.1):
/// Ver, Nbr (blocks per read), Nbw (blocks per write), Nmaxb (blocks of NDEF data, 2 bytes),
/// 4 unused bytes, WriteF (byte 9: 00 done, 0F a write in progress), RWFlag (byte 10: 00
/// read-only, 01 read/write), Ln (bytes 11-13, the message length) and a checksum (bytes
/// 14-15: the sum of bytes 0-13).
public struct Type3AttributeInformation: Hashable, Sendable {
    public var bytes: [UInt8]
    public var version: UInt8 { bytes[0] }
    public var nbr: Int { Int(bytes[1]) }
    public var nbw: Int { Int(bytes[2]) }
    public var nmaxb: Int { Int(bytes[3]) << 8 | Int(bytes[4]) }
    public var writeF: UInt8 { bytes[9] }
    public var rwFlag: UInt8 { bytes[10] }
    public var ln: Int { Int(bytes[11]) << 16 | Int(bytes[12]) << 8 | Int(bytes[13]) }
    public var versionString: String { "\(version >> 4).\(version & 0x0F)" }
    /// A write was cut after it set WriteF and before it cleared it.
    public var writeInProgress: Bool { writeF == 0x0F }
    /// The largest message: Nmaxb blocks of 16 bytes.
    public var capacity: Int { nmaxb * 16 }

    public static func checksum(_ bytes: [UInt8]) -> Int { bytes.prefix(14).reduce(0) { $0 + Int($1) } }

    public init(bytes: [UInt8]) throws(TagError) {
        guard bytes.count == 16 else { throw TagError(.badCapabilityContainer, "the attribute information block must be 16 bytes, not \(bytes.count)") }
        self.bytes = bytes
        let sum = Int(bytes[14]) << 8 | Int(bytes[15])
        guard sum == Self.checksum(bytes) else {
            throw TagError(.badCapabilityContainer, "the attribute information block's checksum is \(Hex.encode([bytes[14], bytes[15]])), its bytes sum to \(String(Self.checksum(bytes), radix: 16, uppercase: true)) (block 0 \(bytes.hexString))")
        }
        guard version >> 4 == 1 else { throw TagError(.unsupportedVersion, "unsupported Type 3 mapping version \(versionString) (this tool reads 1.x)", mappingVersion: versionString) }
        guard nbr >= 1, nbw >= 1, nmaxb >= 1 else { throw TagError(.badCapabilityContainer, "the attribute block announces Nbr \(nbr), Nbw \(nbw), Nmaxb \(nmaxb)") }
        guard writeF == 0x00 || writeF == 0x0F, rwFlag == 0x00 || rwFlag == 0x01 else {
            throw TagError(.badCapabilityContainer, "the attribute block has WriteF \(Hex.encode([writeF])) and RWFlag \(Hex.encode([rwFlag])) (00/0F and 00/01 are defined)")
        }
        guard ln <= capacity else { throw TagError(.lengthLies, "the attribute block claims a \(ln)-byte message; its Nmaxb holds \(capacity)") }
    }

    /// The block with WriteF, RWFlag and Ln replaced and the checksum recomputed.
    public func with(writeF: UInt8? = nil, rwFlag: UInt8? = nil, ln: Int? = nil) -> [UInt8] {
        Self.block(bytes, writeF: writeF, rwFlag: rwFlag, ln: ln)
    }

    static func block(_ original: [UInt8], writeF: UInt8? = nil, rwFlag: UInt8? = nil, ln: Int? = nil) -> [UInt8] {
        var b = original
        if let writeF { b[9] = writeF }
        if let rwFlag { b[10] = rwFlag }
        if let ln { b[11] = UInt8(ln >> 16 & 0xFF); b[12] = UInt8(ln >> 8 & 0xFF); b[13] = UInt8(ln & 0xFF) }
        let sum = checksum(b)
        b[14] = UInt8(sum >> 8 & 0xFF)
        b[15] = UInt8(sum & 0xFF)
        return b
    }
}

/// A Type 3 tag's locks: the attribute block's RWFlag and, on FeliCa Lite / Lite-S, the
/// memory configuration block (88h): bytes 0-1 one read/write bit per user block 0-13
/// (0: read-only) and byte 2, FF while the system blocks and MC itself may change, 00 for good.
public struct Type3LockState: TagLockState {
    public var rwFlag: UInt8
    /// The MC block, on Lite / Lite-S (nil: the chip has none).
    public var memoryConfiguration: [UInt8]?
    /// User blocks 0-13 the MC makes read-only.
    public var readOnlyBlocks: [Int] {
        guard let mc = memoryConfiguration else { return [] }
        let bits = Int(mc[0]) | Int(mc[1]) << 8
        return (0..<14).filter { bits & (1 << $0) == 0 }
    }
    public var mcFrozen: Bool { memoryConfiguration.map { $0[2] == 0x00 } ?? false }
    /// Every lock the chip has is set: RWFlag 00, and on Lite-S every user block read-only
    /// with the MC frozen. A chip without an MC has no permanent lock.
    public var isFullyLocked: Bool { rwFlag == 0 && memoryConfiguration != nil && readOnlyBlocks.count == 14 && mcFrozen }
    public var isPartlyLocked: Bool { !isFullyLocked && (rwFlag == 0 || !readOnlyBlocks.isEmpty || mcFrozen) }
}

/// An NFC Forum Type 3 tag (FeliCa Lite-S, or any FeliCa card with the NDEF system 12FC) through
/// a reader's raw path: a Part 3 transparent session switched to FeliCa, or the ACR122U.
///
/// A write sets WriteF 0F with Ln 0 first (the message reads as empty, and the tag as a write
/// in progress), writes the data blocks Nbw at a time, and then the attribute block with the
/// new Ln and WriteF 00: each block write is atomic on FeliCa, so the tag holds the old
/// message, an empty one, or the new one. A tag found with WriteF 0F is reported interrupted.
public final class Type3Tag: PermanentlyLockable {
    /// Told of each step of a write or restore as it begins (see `NDEFTag.writeObserver`).
    public var writeObserver: ((WriteStep) -> Void)?
    public let transport: APDUTransport
    public let commands: FeliCaCommands
    public let polling: FeliCaPolling
    public var uid: [UInt8]? { polling.idm }
    /// Block 0 as read.
    public private(set) var attributeBlock: [UInt8]
    public private(set) var attribute: Type3AttributeInformation?
    /// Why the attribute block cannot be used (only by a tolerant detection).
    public private(set) var layoutError: TagError?
    private var lockState: Type3LockState?
    public var kind: String { "type3" }
    public var mappingVersion: String { attribute?.versionString ?? "?" }
    public var capacity: Int { attribute?.capacity ?? 0 }

    /// Whether the ATR is a PC/SC Part 3 storage card of FeliCa (SS 11).
    public static func isType3(atr: [UInt8]) -> Bool { (try? ATR(bytes: atr))?.storageCard?.standard == 0x11 }

    init(transport: APDUTransport, commands: FeliCaCommands, polling: FeliCaPolling) {
        self.transport = transport
        self.commands = commands
        self.polling = polling
        attributeBlock = []
    }

    /// Polls for the NDEF system (12FC) and reads the attribute block.
    /// - Parameters:
    ///   - transport: the channel to the reader.
    ///   - commands: the reader's tag-command channel; FeliCa frames need a raw path.
    ///   - tolerant: an attribute block that does not parse is kept in `layoutError`.
    /// - Throws: `TagCommandError` `.noRawPath` on a storage-only reader; `TagError` `.notNDEF`
    ///   when no NDEF system answers; the card's and channel's errors.
    public static func detect(_ transport: APDUTransport, commands: TagCommandChannel, tolerant: Bool = false) throws -> Type3Tag {
        guard commands.dialect != .storageOnly else {
            throw TagCommandError(.noRawPath, "\(commands.readerName) offers no raw tag-command path (storage pseudo-APDUs only), and FeliCa's NDEF needs Read/Write Without Encryption: use a reader with a PC/SC Part 3 transparent exchange or an ACR122U")
        }
        let felica = try FeliCaCommands(channel: commands)
        guard let found = try felica.polling(systemCode: 0x12FC) else {
            throw TagError(.notNDEF, "the FeliCa card has no NDEF system: Polling for system code 12FC got no answer")
        }
        let tag = Type3Tag(transport: transport, commands: felica, polling: found)
        try tag.load(tolerant: tolerant)
        return tag
    }

    func load(tolerant: Bool = false) throws {
        lockState = nil
        attributeBlock = try readBlocks([0])
        do {
            attribute = try Type3AttributeInformation(bytes: attributeBlock)
            layoutError = nil
        } catch where tolerant {
            attribute = nil
            layoutError = error
        }
    }

    /// Blocks per Read: Nbr, and what one reader answer carries (13 bytes of header, 16 per block).
    var blocksPerRead: Int { max(1, min(attribute?.nbr ?? 1, (commands.channel.maxAnswerBytes - 13) / 16)) }
    var blocksPerWrite: Int { max(1, min(attribute?.nbw ?? 1, 12)) }

    func readBlocks(_ blocks: [Int]) throws -> [UInt8] {
        do { return try commands.read(blocks: blocks) } catch let e as FeliCaStatusError {
            throw TagError(.readFailed, "reading block\(blocks.count > 1 ? "s" : "") \(blocks.map(String.init).joined(separator: ",")): \(e)")
        }
    }

    func writeBlocks(_ first: Int, _ data: [UInt8]) throws {
        let blocks = Array(first..<(first + data.count / 16))
        do { try commands.write(blocks: blocks, data: data) } catch let e as FeliCaStatusError {
            throw TagError(.writeFailed, "the card refused the write of block\(blocks.count > 1 ? "s" : "") \(blocks.map(String.init).joined(separator: ",")): \(e)")
        }
        lockState = nil
    }

    func readData(_ count: Int) throws -> [UInt8] {
        let blocks = Array(1..<(1 + (count + 15) / 16))
        var out: [UInt8] = []
        var i = 0
        while i < blocks.count {
            let chunk = Array(blocks[i..<min(blocks.count, i + blocksPerRead)])
            out += try readBlocks(chunk)
            i += chunk.count
        }
        return out
    }

    public var status: NDEFStatus {
        guard let attribute else { return .readWrite }
        if attribute.rwFlag == 0 { return .readOnly }
        if let locks = try? readLockState(), !locks.readOnlyBlocks.isEmpty, locks.readOnlyBlocks.contains(0) || locks.readOnlyBlocks.contains(1) { return .readOnly }
        return .readWrite
    }

    /// RWFlag, and on FeliCa Lite / Lite-S the memory configuration block (read once).
    public func readLockState() throws -> Type3LockState {
        if let lockState { return lockState }
        let mc = polling.isLite ? try readBlocks([0x88]) : nil
        let state = Type3LockState(rwFlag: attribute?.rwFlag ?? attributeBlock[10], memoryConfiguration: mc)
        lockState = state
        return state
    }

    func interrupted(_ a: Type3AttributeInformation) -> TagError {
        TagError(.interrupted, "the tag's last write was interrupted (WriteF 0F, Ln \(a.ln)): its message may be incomplete")
    }

    public func readNDEF() throws -> [UInt8] {
        if let layoutError { throw layoutError }
        guard let a = attribute else { throw TagError(.notNDEF, "no attribute block") }
        if a.writeInProgress { throw interrupted(a) }
        guard a.ln > 0 else { return [] }
        return Array(try readData(a.ln).prefix(a.ln))
    }

    /// The attribute block and the data blocks of the current message.
    public func backup(reader: String? = nil) throws -> TagBackup {
        guard let a = attribute else { throw layoutError ?? TagError(.notNDEF, "no attribute block") }
        // A write cut by this tool leaves Ln 0 behind WriteF: nothing to lose.
        let message = a.writeInProgress && a.ln == 0 ? [] : try readNDEF()
        let bytes = message.isEmpty ? [] : try readData(message.count)
        return TagBackup(kind: kind, uid: uid, capabilityContainer: a.with(writeF: 0, ln: message.count), start: 16, bytes: bytes, message: message, reader: reader)
    }

    public func writeNDEF(_ message: [UInt8]) throws { try write(message, blocks: message + [UInt8](repeating: 0, count: (16 - message.count % 16) % 16), final: nil) }

    public func replaceNDEF(with message: [UInt8], keepingOld keep: (TagBackup) throws -> Void) throws {
        try checkWritable(message.count)
        try keep(try backup())
        try writeNDEF(message)
    }

    func checkWritable(_ count: Int) throws {
        if let layoutError { throw layoutError }
        guard let a = attribute else { throw TagError(.notNDEF, "no attribute block") }
        guard a.rwFlag == 0x01 else { throw TagError(.readOnly, "the tag is read-only (RWFlag 00)") }
        guard count <= a.capacity else {
            throw TagError(.tooLarge, "the message is \(count) bytes; the tag holds \(a.capacity) (\(count - a.capacity) bytes over)")
        }
    }

    /// WriteF 0F with Ln 0, the data blocks, then `final` (default: this attribute block with
    /// WriteF 00 and Ln = the message's length); then reads everything back.
    func write(_ message: [UInt8], blocks data: [UInt8], final: [UInt8]?) throws {
        try checkWritable(message.count)
        let a = attribute!
        let opening = a.with(writeF: 0x0F, ln: 0)
        let opens = attributeBlock != opening
        // The data blocks (after block 0), `blocksPerWrite` to a command.
        let dataBlocks = data.count / 16
        let chunks = stride(from: 1, through: dataBlocks, by: blocksPerWrite).map { ($0, min(blocksPerWrite, dataBlocks + 1 - $0)) }
        var progress = WriteProgress(steps: (opens ? 1 : 0) + chunks.count + (chunks.isEmpty ? 0 : 1) + 2, observer: writeObserver)
        if a.ln == 0 { progress.phase = .emptied }
        // A refused block 0 is checked on the tag: as before, as after (for the commit, with the
        // data blocks read back too), or neither.
        let before = attributeBlock
        func blockZeroReads(before: [UInt8], after: [UInt8], data: [UInt8]? = nil) throws -> WriteProgress.Reading {
            try load()
            if attributeBlock == before { return .notDone }
            guard attributeBlock == after else { return .neither }
            guard let data else { return .done }
            return Array(try readData(data.count)) == data ? .done : .neither
        }
        if opens {
            try progress.step("set WriteF 0F and Ln 0 (block 0)", empties: true, check: { try blockZeroReads(before: before, after: opening) }) {
                try writeBlocks(0, opening)
            }
        }
        for (first, n) in chunks {
            let chunk = Array(data[((first - 1) * 16)..<((first - 1 + n) * 16)])
            try progress.step("write block\(n > 1 ? "s" : "") \(first)\(n > 1 ? "-\(first + n - 1)" : "")") { try writeBlocks(first, chunk) }
        }
        // The data blocks as the tag holds them, before Ln makes them the message (issue 49: a
        // write the tag never got, answered as done, would otherwise leave a mix); a chunk that
        // differs is written again.
        if !chunks.isEmpty {
            let back = try progress.step("read the data blocks back before Ln") { Array(try readData(data.count)) }
            let differing = chunks.filter { first, n in back[((first - 1) * 16)..<((first - 1 + n) * 16)] != data[((first - 1) * 16)..<((first - 1 + n) * 16)] }
            for (first, n) in differing {
                try progress.step("write block\(n > 1 ? "s" : "") \(first)\(n > 1 ? "-\(first + n - 1)" : "") again") {
                    try writeBlocks(first, Array(data[((first - 1) * 16)..<((first - 1 + n) * 16)]))
                }
            }
            if !differing.isEmpty {
                try progress.step("read the blocks written again back") {
                    guard Array(try readData(data.count)) == data else {
                        throw TagError(.verifyFailed, "the data blocks read back differently after they were written twice; Ln was not written")
                    }
                }
            }
        }
        let closing = final ?? a.with(writeF: 0x00, ln: message.count)
        try progress.step("write Ln \(message.count) and WriteF 00 (block 0)", commits: true,
                          check: { try blockZeroReads(before: opens ? opening : before, after: closing, data: data) }) { try writeBlocks(0, closing) }
        try progress.step("read block 0 back") {
            try load()
            guard attributeBlock == closing else {
                throw TagError(.verifyFailed, "block 0 reads back \(attributeBlock.hexString), \(closing.hexString) was written")
            }
            // The data blocks were read back before Ln; read here only when there were none to write.
            if chunks.isEmpty, Array(try readData(data.count)) != data {
                throw TagError(.verifyFailed, "the data blocks read back differently from what was written")
            }
        }
    }

    /// Puts a backup back: the same procedure, with the backup's data blocks and attribute block.
    public func restore(_ backup: TagBackup, allowingOtherTag: Bool = false) throws {
        try checkBackupIdentity(backup, uid: uid, allowingOtherTag: allowingOtherTag, noun: "card")
        let saved = try Type3AttributeInformation(bytes: backup.capabilityContainer)
        // The layout (Ver, Nbr, Nbw, Nmaxb) must be the tag's own; WriteF, RWFlag, Ln may differ.
        guard attributeBlock.count == 16, Array(attributeBlock[0..<9]) == Array(saved.bytes[0..<9]) else {
            throw TagError(.differentTag, "the backup was made with attribute block \(saved.bytes.hexString), the tag has \(attributeBlock.hexString); nothing was written")
        }
        guard backup.start == 16, backup.bytes.count % 16 == 0, backup.bytes.count >= saved.ln, saved.ln == backup.message.count else {
            throw TagError(.lengthLies, "the backup's data blocks do not hold its \(saved.ln)-byte message; nothing was written")
        }
        if attribute == nil {
            // A checksum that a foreign tool broke: start again from the backup's own block.
            attribute = try Type3AttributeInformation(bytes: saved.with(writeF: 0x0F, ln: 0))
            layoutError = nil
        }
        try write(backup.message, blocks: backup.bytes, final: saved.with(writeF: 0x00, rwFlag: attribute!.rwFlag))
    }

    /// What `makeReadOnly` did.
    public typealias LockReport = NFCTags.LockReport<Type3LockState>
    public static let locksDescription = "RWFlag 00, memory configuration read-only"

    /// RWFlag 00 (with the checksum), then on FeliCa Lite / Lite-S the MC block: every user
    /// block read-only and byte 2 00, which freezes the MC itself. Then checks both read back
    /// and a write of block 1's own bytes is refused. A card without an MC has no permanent
    /// lock: refused before anything is written.
    public func makeReadOnly() throws -> LockReport {
        guard let a = attribute else { throw layoutError ?? TagError(.notNDEF, "no attribute block") }
        guard polling.isLite else {
            throw TagError(.unsafe, "\(polling.productName) has no permanent write lock this tool can set (the Type 3 RWFlag alone is a flag other writers may ignore); nothing was written")
        }
        let before = try readLockState()
        guard let mc = before.memoryConfiguration else { throw TagError(.readFailed, "the memory configuration block cannot be read; nothing was written") }
        var done: [String] = [], already: [String] = []
        var steps: [(String, Int, [UInt8])] = []
        if a.rwFlag != 0 { steps.append(("set RWFlag 00 (block 0)", 0, a.with(rwFlag: 0))) } else { already.append("RWFlag 00") }
        var locked = mc
        locked[0] = 0
        locked[1] &= 0xC0
        locked[2] = 0
        if locked != mc { steps.append(("make blocks 0-13 and the MC read-only (block 88h)", 0x88, locked)) } else { already.append("MC read-only") }
        for (what, block, data) in steps {
            do { try writeBlocks(block, data) } catch { throw LockInterrupted(done: done, underlying: error, step: what) }
            done.append(what)
        }
        do {
            lockState = nil
            try load()
            let after = try readLockState()
            let probe = try readBlocks([1])
            var refused = false
            do { try commands.write(blocks: [1], data: probe) } catch is FeliCaStatusError { refused = true }
            return LockReport(done: done, alreadyDone: already, state: after, refusesWrites: refused && after.isFullyLocked)
        } catch {
            throw LockInterrupted(done: done, underlying: error, step: "check the lock")
        }
    }
}

extension Type3Tag: NDEFTagFamily {
    public static func recognizes(atr: [UInt8]) -> Bool { isType3(atr: atr) }
    public static var usesTagCommands: Bool { true }
    public static func detectNDEF(_ d: NDEFDetection) throws -> any NDEFTag {
        // Without a raw path the channel says why FeliCa frames cannot be sent.
        try detect(d.transport, commands: d.commands ?? TagCommandChannel(transport: d.transport, dialect: .storageOnly), tolerant: d.tolerant)
    }
}
