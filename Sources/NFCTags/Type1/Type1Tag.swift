// An NFC Forum Type 1 tag (Topaz 96, Topaz 512) behind a PC/SC reader: detection by RID, the
// memory read in as few frames as the reader's form allows, and the TLV walk.
import ISO7816

/// An NFC Forum Type 1 tag (Innovision/Broadcom Topaz) behind a PC/SC reader, through whichever
/// form the reader offers (`Type1ReaderForm`).
///
/// Memory (T1TOP §2): block 0 holds the UID; the CC is bytes 08-0B; the data area runs from 0C
/// to the end of memory, less block D (reserved) and block E (LOCK0, LOCK1, OTP), and on a
/// dynamic tag less what its lock and memory control TLVs reserve (block F on a Topaz 512:
/// reserved 78-79, dynamic lock bytes 7A-7F). No byte outside the data area is ever written but
/// the CC's access byte and the lock bytes, by a lock.
///
/// Writes follow the Type 1 Tag Operation order: the NDEF magic number (byte 08) to 00, the
/// NDEF TLV and message, the magic number back to E1, a read-back. A tag pulled at any exchange
/// holds the old message, an invalid (empty) one, or the new one.
public final class Type1Tag: PermanentlyLockable {
    public var writeObserver: ((WriteStep) -> Void)?
    public let link: Type1Link
    public var header: Type1HeaderROM { link.header }
    /// The chip HR0/HR1 prove; nil for another T1T.
    public var chip: Type1Chip? { header.chip }
    /// UID0-6 from block 0 (UID0 first).
    public internal(set) var uid: [UInt8]?
    public internal(set) var capabilityContainer: Type1CapabilityContainer
    /// The memory read so far (unknown bytes 0).
    public internal(set) var image: [UInt8]
    var loaded: Set<Int> = []
    public internal(set) var tlv: Type2TLVArea
    /// Why the TLV area could not be used (set only by a tolerant detection).
    public internal(set) var layoutError: TagError?
    var lockState: Type1LockState?

    public var kind: String { "type1" }
    public var mappingVersion: String { capabilityContainer.versionString }
    public var capacity: Int { tlv.capacity }

    /// The tag's memory as the CC declares it ((TMS + 1) × 8; a CC that claims more than the
    /// chip HR0/HR1 prove, or more than 120 bytes on a static tag, is refused at detection).
    public internal(set) var memorySize = 120

    /// The chip's own memory, where the lock bytes are whatever the CC claims: 120 bytes on static
    /// memory, the chip's where HR0/HR1 prove it, else at least blocks 0-F.
    var physicalSize: Int { chip?.memorySize ?? (header.staticMemory ? 120 : max(memorySize, 128)) }

    /// Bytes this reader's form reaches: addresses 00-7F only where it has no RSEG past segment 0 and no READ8 (ACS).
    public var reachableEnd: Int { link.form.carries(.readSegment(0x10)) ? memorySize : min(memorySize, 0x80) }

    /// The data area (T1TOP §2.3): from byte 0C to the end of memory.
    var dataArea: Range<Int> { 0x0C..<memorySize }

    /// What every T1T reserves inside it: blocks D and E; on a dynamic tag block F too (its
    /// reserved bytes and dynamic lock bytes, 78-7F on a Topaz 512, which its control TLVs name).
    var typeReserved: [Range<Int>] {
        guard memorySize > 0x68 else { return [] }
        return [0x68..<min(header.staticMemory ? 0x78 : 0x80, memorySize)]
    }

    /// The largest message within the reader's reach.
    public var reachableCapacity: Int {
        guard let start = tlv.ndefTLVPosition else { return 0 }
        guard reachableEnd < memorySize else { return capacity }
        return Type2TLVArea.messageCapacity(available: tlv.availableBytes(from: start) - tlv.availableBytes(from: reachableEnd))
    }

    init(link: Type1Link) {
        self.link = link
        capabilityContainer = try! Type1CapabilityContainer(bytes: [0xE1, 0x10, 0x0E, 0x00])
        image = []
        tlv = try! Type2TLVArea(memory: [UInt8](repeating: 0, count: 16), dataArea: 12..<16)
    }

    /// Whether the ATR names a Type 1 tag (see `Type1Link.isType1(atr:)`).
    public static func isType1(atr: [UInt8]) -> Bool { Type1Link.isType1(atr: atr) }

    /// Finds the reader's form (RID), checks HR0, reads the CC and the TLV area up to the NDEF
    /// TLV. `tolerant`: an NMN of 00 or a TLV area that does not parse is kept in `layoutError`
    /// (to restore a backup); HR0 and the CC's version and size must still be sound.
    /// - Throws: `TagError`, `TagCommandError`, or the channel's errors.
    public static func detect(_ transport: APDUTransport, atr: [UInt8] = [], readerName: String = "the reader", tolerant: Bool = false,
                              commands: TagCommandChannel? = nil, form: Type1ReaderForm? = nil) throws -> Type1Tag {
        let link = try Type1Link.open(transport: transport, atr: atr, readerName: commands?.readerName ?? readerName, commands: commands, override: form)
        guard link.header.ndefCapable else {
            throw TagError(.notNDEF, "HR0 is \(Hex.encode([link.header.hr0])): this Type 1 tag is not NDEF-capable (T1TOP wants HR0's high nibble 1)")
        }
        let tag = Type1Tag(link: link)
        try tag.load(tolerant: tolerant)
        return tag
    }

    func load(tolerant: Bool = false) throws {
        lockState = nil
        // Until the CC is read: the chip's memory, or what RALL / the first segment covers.
        if loaded.isEmpty { memorySize = chip?.memorySize ?? (header.staticMemory ? 120 : 128) }
        try ensureRead(0..<16)
        guard Array(image[0..<4]) == header.uid4 else {
            throw TagError(.readFailed, "block 0 reads UID \(Array(image[0..<4]).hexString), RID said \(header.uid4.hexString): another tag answered")
        }
        uid = Array(image[0..<7])
        capabilityContainer = try Type1CapabilityContainer(bytes: Array(image[8..<12]), tolerateInvalid: tolerant)
        let claimed = capabilityContainer.memorySize
        if let chip, claimed > chip.memorySize {
            throw TagError(.lengthLies, "the capability container claims \(claimed) bytes of memory (TMS \(Hex.encode([capabilityContainer.bytes[2]]))), a \(chip.name) has \(chip.memorySize)")
        }
        if header.staticMemory, claimed > 120 {
            throw TagError(.lengthLies, "the capability container claims \(claimed) bytes of memory (TMS \(Hex.encode([capabilityContainer.bytes[2]]))), a static-memory tag (HR0 \(Hex.encode([header.hr0]))) has 120")
        }
        guard claimed > 0x0C else { throw TagError(.badCapabilityContainer, "the capability container announces no data area (CC \(capabilityContainer.bytes.hexString))") }
        memorySize = claimed
        do {
            // A cut write's tag (magic number 00) keeps its TLVs: walked all the same, so a
            // restore knows the capacity; reading it says the message is invalid.
            try walkTLVs()
            layoutError = capabilityContainer.valid ? nil : capabilityContainerInvalid
        } catch let error as TagError where tolerant {
            layoutError = error
        }
    }

    var capabilityContainerInvalid: TagError { TagError(.notNDEF, Type1CapabilityContainer.invalidMessage) }

    /// Reads as far as the walk needs: the first segment or RALL, more only when the TLVs
    /// run past it.
    func walkTLVs() throws {
        var readTo = min(memorySize, reachableEnd, link.form.carries(.readSegment(0)) && !header.staticMemory ? 0x80 : 0x78)
        while true {
            let walk = Result { () throws(TagError) in
                try Type2TLVArea(memory: Array(image.prefix(readTo)), dataArea: dataArea.lowerBound..<readTo, reserved: typeReserved)
            }
            if case let .success(area) = walk, area.ndefTLVPosition != nil { break }
            if case let .failure(error) = walk, error.kind != .lengthLies { throw error }
            if readTo >= min(memorySize, reachableEnd) { break }
            readTo = min(memorySize, reachableEnd, readTo + 128)
            try ensureRead(0..<readTo)
        }
        let memory = image + [UInt8](repeating: 0, count: max(0, memorySize - image.count))
        let walked = Result { () throws(TagError) in try Type2TLVArea(memory: memory, dataArea: dataArea, reserved: typeReserved) }
        if case let .failure(error) = walked, reachableEnd < memorySize {
            throw TagError(.beyondReach, "\(error.message), or runs into bytes \(reachableEnd)-\(memorySize - 1), which \(link.readerName) cannot read: \(link.form.refusal(.read8(block: 0x10)))")
        }
        let area = try walked.get()
        guard area.ndefTLVPosition != nil else {
            throw TagError(.notNDEF, "the tag is formatted (CC \(capabilityContainer.bytes.hexString)) but has no NDEF TLV")
        }
        tlv = area
    }

    /// Fills `image` for `range`, in as few frames as the form allows: RSEG per 128-byte segment
    /// on a dynamic tag, else RALL for blocks 0-E, READ8 per block, READ per byte.
    func ensureRead(_ range: Range<Int>) throws {
        guard !range.isEmpty else { return }
        if image.count < physicalSize { image += [UInt8](repeating: 0, count: physicalSize - image.count) }
        guard range.upperBound <= physicalSize else {
            throw TagError(.lengthLies, "byte \(range.upperBound - 1) is past the tag's \(physicalSize) bytes")
        }
        guard range.upperBound <= (link.form.carries(.readSegment(0x10)) ? physicalSize : min(physicalSize, 0x80)) else {
            throw TagError(.beyondReach, "bytes \(max(range.lowerBound, reachableEnd))-\(range.upperBound - 1) are out of reach: \(link.form.refusal(.read8(block: 0x10))); nothing there can be read or written through \(link.readerName)")
        }
        for block in (range.lowerBound / 8)...((range.upperBound - 1) / 8) where !loaded.contains(block) {
            if !header.staticMemory, link.form.carries(.readSegment(UInt8(block / 16) << 4)) {
                let seg = block / 16
                let answer = try link.send(.readSegment(UInt8(seg << 4)))
                put(Array(answer[1...]), at: seg * 128)
            } else if block <= 14 {
                let answer = try link.send(.rall)
                put(Array(answer[2...]), at: 0)
            } else if !header.staticMemory, link.form.carries(.read8(block: UInt8(block))) {
                put(Array(try link.send(.read8(block: UInt8(block)))[1...]), at: block * 8)
            } else {
                for a in (block * 8)..<(block * 8 + 8) { image[a] = try link.send(.read(address: UInt8(a)))[1] }
                loaded.insert(block)
            }
        }
    }

    private func put(_ bytes: [UInt8], at start: Int) {
        let end = min(start + bytes.count, physicalSize)
        guard end > start else { return }
        image.replaceSubrange(start..<end, with: bytes.prefix(end - start))
        for b in (start / 8)..<((end + 7) / 8) { loaded.insert(b) }
    }

    public var status: NDEFStatus {
        if !capabilityContainer.valid || capabilityContainer.readAccess != 0 || layoutError?.kind == .notNDEF { return .notSupported }
        if capabilityContainer.writeAccess != 0 { return .readOnly }
        guard let start = tlv.ndefTLVPosition, let state = try? readLockState() else { return .readWrite }
        let locked = state.lockedBlocks
        return locked.contains(1) || locked.contains(start / 8) ? .readOnly : .readWrite
    }

    public func readNDEF() throws -> [UInt8] {
        if let layoutError { throw layoutError }
        guard capabilityContainer.valid else { throw capabilityContainerInvalid }
        guard capabilityContainer.readAccess == 0 else {
            throw TagError(.readOnly, "the tag does not allow reading (CC read access \(capabilityContainer.readAccess))")
        }
        guard let start = tlv.ndefTLVPosition else { throw TagError(.notNDEF, "no NDEF TLV") }
        let positions = tlv.positions(from: start, count: 1 + tlv.ndefLengthFieldSize + tlv.ndefLength)
        guard let last = positions.last else { return [] }
        try ensureRead(start..<(last + 1))
        return positions.dropFirst(1 + tlv.ndefLengthFieldSize).map { image[$0] }
    }
}

extension Type1Tag: NDEFTagFamily {
    public static func recognizes(atr: [UInt8]) -> Bool { isType1(atr: atr) }
    public static var usesTagCommands: Bool { true }
    public static func detectNDEF(_ d: NDEFDetection) throws -> any NDEFTag {
        try detect(d.transport, atr: d.atr, tolerant: d.tolerant, commands: d.commands)
    }
}
