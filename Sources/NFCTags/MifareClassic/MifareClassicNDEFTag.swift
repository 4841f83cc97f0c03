// NDEF on MIFARE Classic (NXP AN1304): the MAD's NDEF sectors read, written in commit order,
// restored and locked read-only.
import ISO7816

/// The NDEF lock state of a MIFARE Classic card: each NDEF sector's general-purpose byte and
/// access bits (read-only for good: GPB 43 with access bits 07 8F 0F).
public struct MifareClassicLockState: TagLockState {
    /// NDEF sector → whether it is read-only for good.
    public var readOnlySectors: [Int: Bool]
    public var isFullyLocked: Bool { !readOnlySectors.isEmpty && readOnlySectors.values.allSatisfy { $0 } }
    public var isPartlyLocked: Bool { !isFullyLocked && readOnlySectors.values.contains(true) }
}

/// NDEF on a MIFARE Classic card formatted by the NFC Forum mapping (NXP AN1304): a MAD whose
/// sectors with AID 03E1 hold, in their data blocks and in order, the same TLVs as a Type 2
/// tag (NULL, NDEF, proprietary, terminator). Trailers are skipped: the TLV area is the data
/// blocks alone, so a TLV crosses sector boundaries freely.
///
/// Reads authenticate each NDEF sector with the public key A (D3F7D3F7D3F7, then the keys
/// given), once per sector. Writes follow the Type 2 order: the block holding the NDEF
/// length's first byte is written with that byte 0 first, then every other changed block, then
/// the length's block, then everything is read back; a block write is atomic on the chip, so
/// the card holds the old message, an empty one, or the new one. Every sector a write would
/// change is checked (general-purpose byte, access bits, a key allowed to write) before the
/// first write.
public final class MifareClassicNDEFTag: PermanentlyLockable {
    /// Told of each step of a write or restore as it begins (see `NDEFTag.writeObserver`).
    public var writeObserver: ((WriteStep) -> Void)?
    public let card: MifareClassicCard
    public var transport: APDUTransport { card.transport }
    public let uid: [UInt8]?
    public var layout: MifareClassicLayout { card.layout }
    public let directory: MifareApplicationDirectory
    /// The NDEF sectors, in the order their data blocks make the TLV area.
    public let sectors: [Int]
    /// MAD1 (and MAD2) as read: what a backup belongs to.
    public let directoryBytes: [UInt8]
    /// Keys tried after the public ones (for sectors formatted with other keys, and key B to lock).
    public let keys: [MifareClassicKeyCandidate]

    /// The physical block of each 16-byte block of the TLV area.
    let areaBlocks: [Int]
    var image: [UInt8]
    var loaded: Set<Int> = []
    /// Per sector, from its trailer: general-purpose byte and access bits.
    var trailers: [Int: (gpb: UInt8, access: MifareClassicAccessBits)] = [:]
    /// Per sector, the key that opened it as key A (a lock writes it back unchanged).
    var keyA: [Int: MifareClassicKeyCandidate] = [:]
    public private(set) var tlv: Type2TLVArea
    /// Why the TLV area cannot be used (only by a tolerant detection).
    public private(set) var layoutError: TagError?
    private var lockState: MifareClassicLockState?

    public var kind: String { "classic" }
    public var mappingVersion: String { sectors.first.flatMap { trailers[$0] }.map { MifareClassicNDEFAccess(gpb: $0.gpb).version } ?? "1.0" }
    public var capacity: Int { tlv.capacity }

    /// Whether the ATR is a PC/SC Part 3 storage card of the MIFARE Classic family.
    public static func isClassic(atr: [UInt8]) -> Bool { MifareClassicLayout(atr: atr) != nil }

    init(card: MifareClassicCard, uid: [UInt8]?, directory: MifareApplicationDirectory, directoryBytes: [UInt8], keys: [MifareClassicKeyCandidate]) throws {
        self.card = card
        self.uid = uid
        self.directory = directory
        self.directoryBytes = directoryBytes
        self.keys = keys
        sectors = directory.ndefSectors(of: card.layout)
        areaBlocks = sectors.flatMap { Array(card.layout.dataBlocks(inSector: $0)) }
        image = [UInt8](repeating: 0, count: areaBlocks.count * 16)
        tlv = try! Type2TLVArea(memory: [0, 0, 0], dataArea: 0..<3, controlTLVs: false)
        guard !sectors.isEmpty else { throw TagError(.notNDEF, "the MAD lists no NDEF sector (application 03E1)") }
    }

    /// Reads the MAD (sector 0, and sector 16 for MAD2) with the public MAD key and finds the
    /// NDEF TLV in the NDEF sectors.
    /// - Parameters:
    ///   - transport: the channel to the reader.
    ///   - atr: the card's ATR, for its layout.
    ///   - knownUID: the card's UID (nil: asked with GET DATA).
    ///   - keys: keys to try after the public ones, as key A or B.
    ///   - tolerant: a TLV area that does not parse is kept in `layoutError` (to restore it).
    ///   - keySlot: the reader key slot LOAD KEYS fills.
    /// - Throws: `TagError` `.notNDEF` for a card with no MAD (not formatted) or no NDEF sector;
    ///   `.badCapabilityContainer` for a MAD whose CRC is wrong; `.authenticationFailed` when no
    ///   key opens a sector; the channel's errors.
    public static func detect(_ transport: APDUTransport, atr: [UInt8], uid knownUID: [UInt8]? = nil, keys: [MifareClassicKeyCandidate] = [], tolerant: Bool = false, keySlot: UInt8 = 0) throws -> MifareClassicNDEFTag {
        guard let layout = MifareClassicLayout(atr: atr) else { throw TagError(.notNDEF, "not a MIFARE Classic card") }
        return try detect(transport, layout: layout, uid: knownUID, keys: keys, tolerant: tolerant, keySlot: keySlot)
    }

    /// The same, for a card whose layout is known.
    /// - Parameters:
    ///   - transport: the channel to the reader.
    ///   - layout: the card's memory layout.
    ///   - knownUID: the card's UID (nil: asked with GET DATA).
    ///   - keys: keys to try after the public ones, as key A or B.
    ///   - tolerant: a TLV area that does not parse is kept in `layoutError` (to restore it).
    ///   - keySlot: the reader key slot LOAD KEYS fills.
    public static func detect(_ transport: APDUTransport, layout: MifareClassicLayout, uid knownUID: [UInt8]? = nil, keys: [MifareClassicKeyCandidate] = [], tolerant: Bool = false, keySlot: UInt8 = 0) throws -> MifareClassicNDEFTag {
        var uid = knownUID
        if uid == nil, let r = try? transport.send(.getUID), r.statusWord == .success, (4...10).contains(r.data.count) { uid = r.data }
        let card = MifareClassicCard(transport: transport, layout: layout, keySlot: keySlot)
        let madKeys = [MifareClassicKeyCandidate.publicKeys[1]] + keys
        guard try card.open(sector: 0, with: madKeys) != nil else {
            if try card.open(sector: 0, with: [MifareClassicKeyCandidate.publicKeys[0]], as: [.a]) != nil {
                throw TagError(.notNDEF, "the \(layout) is not NFC Forum formatted (sector 0 opens with the factory key, not the MAD key): 'apdu ndef-format' formats a factory-fresh card")
            }
            throw TagError(.notNDEF, "no MIFARE Application Directory: neither the MAD key nor the \(keys.count) key\(keys.count == 1 ? "" : "s") given open sector 0")
        }
        let gpb = try card.read(block: 3)[9]
        let mad1 = try card.read(block: 1) + card.read(block: 2)
        var mad2: [UInt8]?
        if gpb & 0x03 == 2, layout.sectorCount > 16 {
            guard try card.open(sector: 16, with: madKeys) != nil else {
                throw TagError(.authenticationFailed, "the MAD2 sector (16) does not open with the MAD key or the keys given")
            }
            mad2 = try card.read(block: 64) + card.read(block: 65) + card.read(block: 66)
        }
        let directory = try MifareApplicationDirectory(gpb: gpb, mad1: mad1, mad2: mad2)
        let tag = try MifareClassicNDEFTag(card: card, uid: uid, directory: directory, directoryBytes: mad1 + (mad2 ?? []),
                                           keys: [MifareClassicKeyCandidate.publicKeys[2]] + keys + [MifareClassicKeyCandidate.publicKeys[0]])
        do {
            try tag.walkTLVs()
        } catch let error as TagError where tolerant && error.kind != .authenticationFailed {
            tag.layoutError = error
        }
        return tag
    }

    // MARK: Sectors and blocks

    func sector(ofAreaBlock i: Int) -> Int { layout.sector(ofBlock: areaBlocks[i]) }

    /// Authenticates `sector` for `operation` on the data blocks of access group `group`: the
    /// current authentication when it may, else a key type the access bits allow, with the keys
    /// known. The sector's trailer is read at its first authentication.
    func open(_ sector: Int, for operation: MifareClassicOperation, group: Int = 0) throws {
        if trailers[sector] == nil {
            guard let opened = try card.open(sector: sector, with: keys) else {
                throw TagError(.authenticationFailed, "sector \(sector): no key opens it (the NDEF key, the factory key and \(keys.count - 2) given, as key A and B)")
            }
            if opened.keyType == .a { keyA[sector] = opened.key }
            try readTrailer(sector)
        }
        let access = trailers[sector]!.access
        if let current = card.current, current.sector == sector, access.allows(operation, group: group, with: current.keyType) { return }
        let types = MifareClassicKeyType.allCases.filter { access.allows(operation, group: group, with: $0) }
        guard !types.isEmpty else {
            throw TagError(operation == .read ? .readFailed : .readOnly, "sector \(sector): its access bits \(access) let no key \(operation.rawValue) its data blocks")
        }
        guard let opened = try card.open(sector: sector, with: keys, as: types) else {
            throw TagError(.authenticationFailed, "sector \(sector): \(operation.rawValue) needs key \(types.map(\.description).joined(separator: " or ")), and no key given opens it so (--key, --key-file)")
        }
        if opened.keyType == .a { keyA[sector] = opened.key }
    }

    func readTrailer(_ sector: Int) throws {
        let bytes = try card.read(block: layout.trailerBlock(ofSector: sector))
        guard let access = MifareClassicAccessBits(bytes: Array(bytes[6..<9])) else {
            throw TagError(.badCapabilityContainer, "sector \(sector)'s access bits \(Array(bytes[6..<9]).hexString) are not valid (the inverted copy does not match)")
        }
        trailers[sector] = (bytes[9], access)
    }

    /// Fills `image` for the area bytes in `range`: one authentication per sector, each block once.
    func ensureRead(_ range: Range<Int>) throws {
        guard !range.isEmpty else { return }
        for i in (range.lowerBound / 16)...((min(range.upperBound, image.count) - 1) / 16) where !loaded.contains(i) {
            let s = sector(ofAreaBlock: i)
            try open(s, for: .read, group: layout.accessGroup(ofBlock: areaBlocks[i]))
            if let t = trailers[s], !MifareClassicNDEFAccess(gpb: t.gpb).readable {
                throw TagError(.readFailed, "sector \(s)'s general-purpose byte \(Hex.encode([t.gpb])) denies reading")
            }
            image.replaceSubrange((i * 16)..<(i * 16 + 16), with: try card.read(block: areaBlocks[i]))
            loaded.insert(i)
        }
    }

    func walkTLVs() throws {
        var readTo = min(image.count, 48)
        while true {
            try ensureRead(0..<readTo)
            let walk = Result { () throws(TagError) in try Type2TLVArea(memory: Array(image.prefix(readTo)), dataArea: 0..<readTo, controlTLVs: false) }
            if case let .success(area) = walk, area.ndefTLVPosition != nil { break }
            if case let .failure(error) = walk, error.kind != .lengthLies || readTo == image.count { throw error }
            if readTo == image.count { break }
            readTo = min(image.count, readTo + 48)
        }
        let area = try Type2TLVArea(memory: image, dataArea: 0..<image.count, controlTLVs: false)
        guard area.ndefTLVPosition != nil else { throw TagError(.notNDEF, "the NDEF sectors hold no NDEF TLV") }
        tlv = area
    }

    func writeAreaBlock(_ i: Int, _ data: [UInt8]) throws {
        try open(sector(ofAreaBlock: i), for: .write, group: layout.accessGroup(ofBlock: areaBlocks[i]))
        try card.write(block: areaBlocks[i], data: data)
        image.replaceSubrange((i * 16)..<(i * 16 + 16), with: data)
        lockState = nil
    }

    // MARK: NDEF

    public var status: NDEFStatus {
        guard let position = tlv.ndefTLVPosition, let t = trailers[sector(ofAreaBlock: position / 16)] else { return .readWrite }
        let gpb = MifareClassicNDEFAccess(gpb: t.gpb)
        if !gpb.readable { return .notSupported }
        return gpb.writable && (t.access.allows(.write, group: 0, with: .a) || t.access.allows(.write, group: 0, with: .b)) ? .readWrite : .readOnly
    }

    public func readNDEF() throws -> [UInt8] {
        if let layoutError { throw layoutError }
        guard let start = tlv.ndefTLVPosition else { throw TagError(.notNDEF, "no NDEF TLV") }
        let body = start + 1 + tlv.ndefLengthFieldSize
        try ensureRead(start..<(body + tlv.ndefLength))
        return Array(image[body..<(body + tlv.ndefLength)])
    }

    /// The area bytes from the first NDEF sector's first block to the end of the NDEF TLV and
    /// its terminator, with the MAD they belong to.
    public func backup(reader: String? = nil) throws -> TagBackup {
        let message = try readNDEF()
        let start = tlv.ndefTLVPosition!
        var end = start + 1 + tlv.ndefLengthFieldSize + message.count
        if end < image.count {
            try ensureRead(end..<(end + 1))
            if image[end] == 0xFE { end += 1 }
        }
        try ensureRead(0..<end)
        return TagBackup(kind: kind, uid: uid, capabilityContainer: directoryBytes, start: 0, bytes: Array(image[0..<end]), message: message, reader: reader)
    }

    public func writeNDEF(_ message: [UInt8]) throws { try write(message) }

    public func replaceNDEF(with message: [UInt8], keepingOld keep: (TagBackup) throws -> Void) throws {
        try checkWritable(message)
        try keep(try backup())
        try write(message)
    }

    func checkWritable(_ message: [UInt8]) throws {
        if let layoutError { throw layoutError }
        guard status == .readWrite else { throw TagError(.readOnly, "the card's NDEF sectors are read-only; nothing was written") }
        guard message.count <= capacity else {
            throw TagError(.tooLarge, "the message is \(message.count) bytes; the card holds \(capacity) (\(message.count - capacity) bytes over)")
        }
    }

    func write(_ message: [UInt8]) throws {
        try checkWritable(message)
        guard let start = tlv.ndefTLVPosition else { throw TagError(.notNDEF, "no NDEF TLV") }
        let header: [UInt8] = message.count < 0xFF ? [0x03, UInt8(message.count)] : [0x03, 0xFF, UInt8(message.count >> 8), UInt8(message.count & 0xFF)]
        var bytes = header + message
        if start + bytes.count < image.count { bytes.append(0xFE) }
        let range = start..<(start + bytes.count)
        try ensureRead((range.lowerBound / 16 * 16)..<((range.upperBound + 15) / 16 * 16))
        var target = image
        target.replaceSubrange(range, with: bytes)
        try apply(target, commitPosition: start + 1, range: range)
        try confirmWritten(message, on: "card") {
            tlv = try Type2TLVArea(memory: image, dataArea: 0..<image.count, controlTLVs: false)
            return try readNDEF()
        }
    }

    /// Brings the card from `image` to `target` within `range` (area bytes): every sector that
    /// changes is checked first; then the commit byte's block with that byte 0, every other
    /// changed block, the commit block as in `target`, and a read-back of them all.
    func apply(_ target: [UInt8], commitPosition: Int, range: Range<Int>) throws {
        func bytes(_ m: [UInt8], _ b: Int) -> [UInt8] { Array(m[(b * 16)..<(b * 16 + 16)]) }
        let blocks = (range.lowerBound / 16)...((range.upperBound - 1) / 16)
        let changed = blocks.filter { bytes(target, $0) != bytes(image, $0) }
        guard !changed.isEmpty else { return }
        let commitBlock = commitPosition / 16
        for s in Set((changed + [commitBlock]).map(sector(ofAreaBlock:))).sorted() {
            if let t = trailers[s], !MifareClassicNDEFAccess(gpb: t.gpb).writable {
                throw TagError(.readOnly, "sector \(s) is read-only (general-purpose byte \(Hex.encode([t.gpb]))); nothing was written")
            }
        }
        // Then each changed block's access group, with a key that may write it.
        for block in Set(changed + [commitBlock]).sorted() {
            try open(sector(ofAreaBlock: block), for: .write, group: layout.accessGroup(ofBlock: areaBlocks[block]))
        }
        try writeInCommitOrder(image: image, target: target, changed: changed, span: Array(blocks), commitPosition: commitPosition, blockSize: 16,
                               number: { self.areaBlocks[$0] }, observer: writeObserver, write: writeAreaBlock) { blocks in
            loaded.subtract(blocks)
            for block in blocks { try ensureRead((block * 16)..<(block * 16 + 16)) }
            return image
        }
    }

    /// Puts a backup back byte for byte, without trusting the TLVs the card holds now.
    public func restore(_ backup: TagBackup, allowingOtherTag: Bool = false) throws {
        try checkBackupIdentity(backup, uid: uid, allowingOtherTag: allowingOtherTag, noun: "card")
        guard backup.capabilityContainer == directoryBytes else {
            throw TagError(.differentTag, "the backup was made with another MIFARE Application Directory (\(backup.capabilityContainer.prefix(8).hexString)…), the card has \(directoryBytes.prefix(8).hexString)…; nothing was written")
        }
        let range = 0..<backup.bytes.count
        guard backup.start == 0, range.upperBound <= image.count else {
            throw TagError(.differentTag, "the backup's bytes do not fit the card's \(image.count)-byte NDEF area; nothing was written")
        }
        let layout = try Type2TLVArea(memory: backup.bytes, dataArea: range, controlTLVs: false)
        guard let start = layout.ndefTLVPosition, start + 1 < range.upperBound else {
            throw TagError(.lengthLies, "the backup holds no complete NDEF TLV; nothing was written")
        }
        try ensureRead(0..<((range.upperBound + 15) / 16 * 16))
        var target = image
        target.replaceSubrange(range, with: backup.bytes)
        try apply(target, commitPosition: start + 1, range: range)
        loaded = []
        do {
            try walkTLVs()
            layoutError = nil
        } catch {
            throw WriteInterrupted(state: .new, underlying: error, step: "read the card again")
        }
    }

    // MARK: Lock

    public typealias LockReport = NFCTags.LockReport<MifareClassicLockState>
    public static let locksDescription = "every NDEF sector read-only: access bits 07 8F 0F, general-purpose byte 43"

    /// Each NDEF sector's trailer (one authentication each).
    public func readLockState() throws -> MifareClassicLockState {
        if let lockState { return lockState }
        var state = MifareClassicLockState(readOnlySectors: [:])
        for s in sectors {
            try open(s, for: .read)
            let t = trailers[s]!
            state.readOnlySectors[s] = t.gpb == MifareClassicNDEFAccess.readOnly && t.access == .ndefReadOnly
        }
        lockState = state
        return state
    }

    /// Writes every NDEF sector's trailer read-only (key A kept, access bits 07 8F 0F, GPB 43,
    /// key B kept), the last sector first, with key B; then reads each trailer back and checks
    /// that a write of the first NDEF block's own bytes is refused. Needs each sector's key B
    /// (the factory key is tried; give others with the keys). Resumable: sectors already
    /// read-only are left alone.
    public func makeReadOnly() throws -> LockReport {
        let before = try readLockState()
        var done: [String] = [], already: [String] = []
        var plans: [(Int, MifareClassicKeyCandidate)] = []
        // Everything checked before the first trailer is written: key A known, key B opens.
        for s in sectors.reversed() {
            if before.readOnlySectors[s] == true { already.append("sector \(s)"); continue }
            if keyA[s] == nil, let opened = try card.open(sector: s, with: keys, as: [.a]) { keyA[s] = opened.key }
            guard let a = keyA[s] else { throw TagError(.authenticationFailed, "sector \(s): its key A is unknown, and a lock must write it back unchanged; nothing was written") }
            guard try card.open(sector: s, with: keys, as: [.b]) != nil else {
                throw TagError(.authenticationFailed, "sector \(s): no key given opens it as key B, which writes its trailer; give key B with --key or --key-file; nothing was written")
            }
            plans.append((s, a))
        }
        for (s, a) in plans {
            let what = "make sector \(s) read-only (trailer block \(layout.trailerBlock(ofSector: s)))"
            do {
                guard let b = try card.open(sector: s, with: keys, as: [.b]) else {
                    throw TagError(.authenticationFailed, "sector \(s) no longer opens with key B")
                }
                let trailer = MifareClassicTrailer(keyA: a.key, access: .ndefReadOnly, gpb: MifareClassicNDEFAccess.readOnly, keyB: b.key.key)
                try card.write(block: layout.trailerBlock(ofSector: s), data: trailer.bytes)
            } catch {
                throw LockInterrupted(done: done, underlying: error, step: what)
            }
            done.append("sector \(s)")
        }
        do {
            trailers = [:]
            lockState = nil
            card.forgetAuthentication()
            let after = try readLockState()
            let first = sectors[0]
            try open(first, for: .read)
            let block = layout.firstBlock(ofSector: first)
            let own = try card.read(block: block)
            var refused = false
            do { try card.write(block: block, data: own) } catch let e as TagError where e.kind == .writeFailed { refused = true }
            card.forgetAuthentication()
            return LockReport(done: done, alreadyDone: already, state: after, refusesWrites: refused)
        } catch {
            throw LockInterrupted(done: done, underlying: error, step: "check the lock")
        }
    }
}

extension MifareClassicNDEFTag: NDEFTagFamily {
    public static func recognizes(atr: [UInt8]) -> Bool { isClassic(atr: atr) }
    public static func detectNDEF(_ d: NDEFDetection) throws -> any NDEFTag {
        try detect(d.transport, atr: d.atr, keys: d.classicKeys, tolerant: d.tolerant)
    }
}
