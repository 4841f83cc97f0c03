import ISO7816

/// The Type 2 capability container, page 3 (T2T 1.0 §6.1).
public struct Type2CapabilityContainer: Hashable, Sendable {
    public var bytes: [UInt8]
    public var version: UInt8
    /// The data area's size in bytes (CC byte 2 × 8).
    public var dataAreaSize: Int
    /// Read access nibble (0: granted) and write access nibble (0: granted, F: none).
    public var readAccess: UInt8
    public var writeAccess: UInt8

    public var versionString: String { "\(version >> 4).\(version & 0x0F)" }

    public init(bytes: [UInt8]) throws(TagError) {
        guard bytes.count == 4 else { throw TagError(.badCapabilityContainer, "the capability container must be 4 bytes") }
        guard bytes[0] == 0xE1 else {
            throw TagError(.notNDEF, "not NDEF-formatted: the capability container starts \(Hex.encode([bytes[0]])), not E1 (CC \(bytes.hexString))")
        }
        self.bytes = bytes
        version = bytes[1]
        guard version >> 4 == 1 else {
            throw TagError(.unsupportedVersion, "unsupported Type 2 mapping version \(version >> 4).\(version & 0x0F) (this tool reads 1.x)",
                           mappingVersion: "\(version >> 4).\(version & 0x0F)")
        }
        dataAreaSize = Int(bytes[2]) * 8
        guard dataAreaSize >= 8 else { throw TagError(.badCapabilityContainer, "the capability container announces no data area (CC \(bytes.hexString))") }
        readAccess = bytes[3] >> 4
        writeAccess = bytes[3] & 0x0F
    }
}

/// The TLV area of a Type 2 tag's data area (T2T §4.4 – §4.5): where the NDEF message is and
/// which bytes lock and memory control TLVs reserve.
public struct Type2TLVArea: Hashable, Sendable {
    public struct LockArea: Hashable, Sendable {
        /// Absolute byte address of the first lock byte.
        public var position: Int
        public var bits: Int
        public var bytesLockedPerBit: Int
        public var byteCount: Int { (bits + 7) / 8 }
    }

    /// Absolute address of the NDEF TLV's tag byte.
    public var ndefTLVPosition: Int?
    /// 1 or 3.
    public var ndefLengthFieldSize = 1
    public var ndefLength = 0
    /// Byte ranges (absolute) reserved by lock and memory control TLVs.
    public var reserved: [Range<Int>] = []
    public var lockAreas: [LockArea] = []
    public var dataArea: Range<Int>
    /// What the walk skipped without understanding (a control TLV of the wrong length): a read
    /// may go on past it, a write or lock may not, as the bytes it reserves are unknown.
    public var uncertainty: [String] = []

    /// Parses the TLVs in `memory[dataArea]`. Every length is checked against the data area.
    /// `controlTLVs`: lock and memory control TLVs (01, 02) reserve bytes, as on Type 2; Type 5
    /// defines none, so there they are skipped like any unknown TLV.
    public init(memory: [UInt8], dataArea: Range<Int>, controlTLVs: Bool = true) throws(TagError) {
        self.dataArea = dataArea
        guard dataArea.upperBound <= memory.count else {
            throw TagError(.lengthLies, "the capability container claims \(dataArea.count) data bytes, the tag has \(max(0, memory.count - dataArea.lowerBound))")
        }
        var p = dataArea.lowerBound
        func skipReserved(_ q: Int) -> Int {
            var q = q
            while let r = reserved.first(where: { $0.contains(q) }) { q = r.upperBound }
            return q
        }
        func byte(_ q: inout Int) throws(TagError) -> UInt8 {
            q = skipReserved(q)
            guard q < dataArea.upperBound else { throw TagError(.lengthLies, "a TLV runs past the end of the data area (byte \(q))") }
            defer { q += 1 }
            return memory[q]
        }
        while true {
            p = skipReserved(p)
            guard p < dataArea.upperBound else { break }
            let tagPosition = p
            let tag = try byte(&p)
            if tag == 0x00 { continue }
            if tag == 0xFE { break }
            var length = Int(try byte(&p))
            var lengthSize = 1
            if length == 0xFF {
                length = Int(try byte(&p)) << 8 | Int(try byte(&p))
                lengthSize = 3
            }
            if tag == 0x03 {
                ndefTLVPosition = tagPosition
                ndefLengthFieldSize = lengthSize
                ndefLength = length
                guard length <= availableBytes(from: p) else {
                    throw TagError(.lengthLies, "the NDEF TLV claims \(length) bytes, but only \(availableBytes(from: p)) remain in the data area")
                }
                break
            }
            var value: [UInt8] = []
            if controlTLVs && (tag == 0x01 || tag == 0x02) && length != 3 {
                // Skipped by its length, as nfcpy does: a read can go on to the NDEF TLV. What it
                // meant to reserve is unknown, so writes and locks refuse (`uncertainty`).
                uncertainty.append("a \(tag == 1 ? "lock" : "memory") control TLV at byte \(tagPosition) has length \(length), 3 expected: the bytes it reserves are unknown")
            } else if controlTLVs && (tag == 0x01 || tag == 0x02) {
                for _ in 0..<3 { value.append(try byte(&p)) }
                let e = Int(value[2] & 0x0F)
                let position = Int(value[0] >> 4) << e + Int(value[0] & 0x0F)
                if tag == 0x01 {
                    let bits = value[1] == 0 ? 256 : Int(value[1])
                    let area = LockArea(position: position, bits: bits, bytesLockedPerBit: 1 << Int(value[2] >> 4))
                    lockAreas.append(area)
                    reserved.append(position..<(position + area.byteCount))
                } else {
                    let size = value[1] == 0 ? 256 : Int(value[1])
                    reserved.append(position..<(position + size))
                }
                continue
            }
            // Proprietary (FD) and unknown TLVs: skip their value.
            guard length <= availableBytes(from: p) else {
                throw TagError(.lengthLies, "TLV \(Hex.encode([tag])) at byte \(tagPosition) claims \(length) bytes beyond the data area")
            }
            for _ in 0..<length { _ = try byte(&p) }
        }
    }

    /// Data-area bytes from `q` on that no control TLV reserves.
    public func availableBytes(from q: Int) -> Int {
        guard q < dataArea.upperBound else { return 0 }
        // Reserved areas may overlap (two control TLVs naming the same bytes): count each byte once.
        var covered = 0, upTo = q
        for r in reserved.map({ $0.clamped(to: q..<dataArea.upperBound) }).sorted(by: { $0.lowerBound < $1.lowerBound }) {
            let start = max(r.lowerBound, upTo)
            if r.upperBound > start { covered += r.upperBound - start; upTo = r.upperBound }
        }
        return (q..<dataArea.upperBound).count - covered
    }

    /// The absolute addresses of `count` usable bytes starting at `q`, reserved bytes skipped.
    public func positions(from q: Int, count: Int) -> [Int] {
        if reserved.isEmpty { return Array(q..<max(q, min(q + count, dataArea.upperBound))) }
        var out: [Int] = []
        out.reserveCapacity(count)
        var a = q
        while out.count < count && a < dataArea.upperBound {
            if let r = reserved.first(where: { $0.contains(a) }) { a = r.upperBound; continue }
            out.append(a)
            a += 1
        }
        return out
    }

    /// The largest message: usable bytes from the NDEF TLV on, minus its header (2, or 4 with a
    /// 3-byte length), as the NFC Forum counts it (46 for the 48-byte static layout).
    public var capacity: Int {
        guard let start = ndefTLVPosition else { return 0 }
        return Self.messageCapacity(available: availableBytes(from: start))
    }

    /// The largest message in `available` bytes from the NDEF TLV's tag on: less its header,
    /// 2 bytes, or 4 once the message needs a 3-byte length (255 bytes and more).
    public static func messageCapacity(available: Int) -> Int {
        available - 2 >= 0xFF ? available - 4 : max(0, available - 2)
    }
}

/// The lock state of a Type 2 tag, worked out from the CC, the static lock bits (page 2), the
/// dynamic lock bits and, where the chip has them, AUTH0/PROT.
public struct Type2LockState: TagLockState {
    /// Where a dynamic lock area's position came from.
    public enum Source: Sendable, Hashable, CustomStringConvertible {
        case lockControlTLV
        /// A chip GET_VERSION proved.
        case chip(String)
        public var description: String {
            switch self {
            case .lockControlTLV: return "lock control TLV"
            case let .chip(name): return "\(name) datasheet"
            }
        }
    }

    public struct DynamicArea: Sendable, Hashable {
        /// Absolute address of the first lock byte.
        public var position: Int
        public var bits: Int
        /// Bytes each bit locks, from the data area's byte 48 (page 16) on.
        public var bytesLockedPerBit: Int
        public var source: Source
        /// The lock bytes as read (nil: not readable here).
        public var bytes: [UInt8]?
        public var byteCount: Int { (bits + 7) / 8 }
        /// The bytes with every lock bit set (other bits as they are).
        public var lockedBytes: [UInt8]? {
            bytes.map { b in (0..<byteCount).map { i in b[i] | UInt8(truncatingIfNeeded: (1 << min(8, bits - i * 8)) - 1) } }
        }
        public var isFullyLocked: Bool { bytes != nil && bytes == lockedBytes }
    }

    public enum Password: Sendable, Hashable, CustomStringConvertible {
        /// The chip has no password feature (or it is unknown to have one).
        case none
        case disabled
        /// Pages from `fromPage` need PWD_AUTH to be written (and read, with `reads`).
        case protects(fromPage: Int, reads: Bool)
        /// The configuration could not be read (it may itself be protected).
        case unknown(String)
        public var description: String {
            switch self {
            case .none: return "not supported by the chip"
            case .disabled: return "disabled"
            case let .protects(page, reads): return "\(reads ? "reads and writes" : "writes") of pages \(page) on need the password"
            case let .unknown(why): return "unknown (\(why))"
            }
        }
    }

    public var ccWriteAccess: UInt8
    public var staticLockBytes: [UInt8]
    public var dynamicAreas: [DynamicArea]
    /// Why the tag's dynamic lock bytes cannot be placed (no lock control TLV and no proven
    /// chip, on a data area past 48 bytes): nil when they are known or the tag has none.
    public var unknownDynamicLocks: String?
    public var password: Password
    /// Pages no write can change (lock bits), sorted.
    public var lockedPages: [Int]
    /// PWD_AUTH succeeded in this session: the password no longer blocks writes.
    public var authenticated = false

    /// Whether every lock the tag has is set: CC read-only, static and dynamic lock bits.
    public var isFullyLocked: Bool {
        ccWriteAccess == 0x0F && staticLockBytes == [0xFF, 0xFF] && unknownDynamicLocks == nil && dynamicAreas.allSatisfy(\.isFullyLocked)
    }
    /// Some but not all of the locks are set (an interrupted lock, or a partly locked tag).
    public var isPartlyLocked: Bool {
        !isFullyLocked && (ccWriteAccess != 0 || staticLockBytes != [0, 0] || dynamicAreas.contains { ($0.bytes ?? []).contains { $0 != 0 } })
    }

    public func isWritable(page: Int) -> Bool {
        if lockedPages.contains(page) { return false }
        if case let .protects(from, _) = password, page >= from, !authenticated { return false }
        return true
    }

    /// The pages the lock bits cover, as ranges for people.
    public var lockedRanges: [ClosedRange<Int>] {
        var out: [ClosedRange<Int>] = []
        for p in lockedPages {
            if let last = out.last, last.upperBound + 1 == p { out[out.count - 1] = last.lowerBound...p } else { out.append(p...p) }
        }
        return out
    }
}

/// An NFC Forum Type 2 tag behind a PC/SC reader, through Part 3 storage-card pseudo-APDUs.
///
/// Every write, restore and lock follows one rule: the tag passes only through states a reader
/// sees as the old message, an empty one, or the new one. Writes change one "commit byte" — the
/// first byte of the NDEF TLV's length — to 0 first, write every other changed page, and write
/// the commit byte's page last; a 3-byte length split over two pages is therefore never half
/// written. Pages whose bytes do not change are not written, so locked but unchanged pages are
/// no obstacle, and every page that would change is checked against the lock bits and AUTH0
/// before the first write.
public final class Type2Tag: PermanentlyLockable {
    /// Told of each step of a write or restore as it begins (see `NDEFTag.writeObserver`).
    public var writeObserver: ((WriteStep) -> Void)?
    public let transport: APDUTransport
    public let uid: [UInt8]?
    /// The PC/SC Part 3 card name from the ATR, when known.
    public let cardName: UInt16?
    public private(set) var header: [UInt8]          // pages 0-3
    public private(set) var capabilityContainer: Type2CapabilityContainer
    /// Pages read so far, as a memory image (unknown bytes are 0).
    public private(set) var image: [UInt8]
    public private(set) var tlv: Type2TLVArea
    /// Why the TLV area could not be used (set only by a tolerant detection).
    public private(set) var layoutError: TagError?
    /// Most bytes one READ BINARY returns (4 pages on every PC/SC reader).
    public static let readLimit = 16
    /// Storage pseudo-APDUs carry the page in P2 alone: pages 0-255 (bytes 0-1023). Past that a
    /// tag needs SECTOR_SELECT, which needs a raw tag-command path.
    public static let addressablePages = 256
    static let addressableBytes = addressablePages * 4
    /// Pages a native path reaches with SECTOR_SELECT: four sectors of 256 (NTAG I2C has up to 4).
    public static let nativeReachablePages = 1024

    /// The native command path through this reader (nil: storage pseudo-APDUs only). With it,
    /// pages are read with FAST_READ (READ where refused), written with WRITE, and pages past
    /// 255 reached with SECTOR_SELECT.
    public let commands: TagCommandChannel?
    /// GET_VERSION's answer, when a native path asked for it and the tag knows the command.
    public private(set) var version: Type2Version?
    /// The PACK the tag answered to PWD_AUTH, when a password was given.
    public private(set) var pack: [UInt8]?

    /// Pages this path can address: 256 through storage pseudo-APDUs, more with SECTOR_SELECT.
    public var reachablePages: Int { commands == nil ? Self.addressablePages : Self.nativeReachablePages }
    var reachableBytes: Int { reachablePages * 4 }
    /// "past page 255 …" for messages: why bytes are out of reach on this path.
    var reachNote: String {
        commands == nil ? "past page 255, the last storage READ/UPDATE BINARY can address (they carry the page in one byte; larger tags need SECTOR_SELECT through a reader with a raw tag-command path)"
            : "past page \(reachablePages - 1), the last this tool reaches with SECTOR_SELECT"
    }

    public var kind: String { "type2" }
    public var mappingVersion: String { capabilityContainer.versionString }
    /// The largest message as the CC declares it (NFC Forum counting).
    public var capacity: Int { tlv.capacity }
    var dataArea: Range<Int> { 16..<(16 + capabilityContainer.dataAreaSize) }

    /// The largest message this reader can reach: the capacity, less what lies out of reach.
    public var reachableCapacity: Int {
        guard let start = tlv.ndefTLVPosition else { return 0 }
        guard dataArea.upperBound > reachableBytes else { return capacity }
        return Type2TLVArea.messageCapacity(available: tlv.availableBytes(from: start) - tlv.availableBytes(from: reachableBytes))
    }

    /// The largest message the chip's real user memory would hold with a CC that covered it
    /// all (NTAG215/216 ship CCs that leave 8 / 16 bytes out), when the chip is known.
    public var chipCapacity: Int? {
        guard let chip = chip.chip, chip.userMemoryEnd > dataArea.upperBound, let start = tlv.ndefTLVPosition else { return nil }
        return Type2TLVArea.messageCapacity(available: tlv.availableBytes(from: start) + chip.userMemoryEnd - dataArea.upperBound)
    }

    /// The chip, and the evidence for it (see `Type2ChipIdentity`).
    public var chip: Type2ChipIdentity {
        if let identified { return identified }
        let found = Type2ChipIdentity(version: version, cardName: cardName, ccSize: capabilityContainer.bytes[2], lockAreas: tlv.lockAreas, nativePath: commands != nil)
        identified = found
        return found
    }
    private var identified: Type2ChipIdentity?

    /// Whether the ATR says "storage card of the MIFARE Ultralight family" (PC/SC Part 3):
    /// Ultralight and NTAG21x (0003), Ultralight C (003A), Ultralight EV1 (003D).
    public static func isType2(atr: [UInt8]) -> Bool {
        guard let s = (try? ATR(bytes: atr))?.storageCard else { return false }
        return [0x0003, 0x003A, 0x003D].contains(s.cardName)
    }

    /// Reads the UID, pages 0-3 and the TLV area up to the NDEF TLV. `tolerant`: a TLV area that
    /// does not parse (a lying length) is kept in `layoutError` instead of thrown, so a restore
    /// can still put a backup back; the CC must still be valid.
    ///
    /// With `commands` (a reader with a raw tag-command path) the chip is asked GET_VERSION, and
    /// with `password` PWD_AUTH is sent before anything else, its PACK checked when given.
    public static func detect(_ transport: APDUTransport, atr: [UInt8] = [], tolerant: Bool = false,
                              commands: TagCommandChannel? = nil, password: Type2Password? = nil) throws -> Type2Tag {
        let uidResponse = try transport.send(.getUID)
        let uid = uidResponse.statusWord == .success && (4...10).contains(uidResponse.data.count) ? uidResponse.data : nil
        let cardName = (try? ATR(bytes: atr))?.storageCard?.cardName
        let tag = Type2Tag(transport: transport, uid: uid, cardName: cardName, commands: try nativePath(commands, password: password), password: password)
        try tag.start()
        try tag.load(tolerant: tolerant)
        return tag
    }

    public init(transport: APDUTransport, uid: [UInt8]?, cardName: UInt16? = nil, commands: TagCommandChannel? = nil, password: Type2Password? = nil) {
        self.transport = transport
        self.uid = uid
        self.cardName = cardName
        self.commands = commands
        self.password = password
        header = []
        capabilityContainer = try! Type2CapabilityContainer(bytes: [0xE1, 0x10, 0x01, 0x00])
        image = []
        tlv = try! Type2TLVArea(memory: [UInt8](repeating: 0, count: 24), dataArea: 16..<24)
    }

    /// Reads 16 bytes (4 pages) at `page` (0-255).
    func readPages(_ page: Int) throws -> [UInt8] {
        guard let bytes = try readPagesIfAllowed(page) else {
            throw TagError(.readFailed, "READ BINARY of page \(page) failed: the tag refused it (a password, or past its last page)")
        }
        return bytes
    }

    let password: Type2Password?

    /// The channel when it has a raw path (nil for a storage-only reader); a password without
    /// one cannot be sent.
    static func nativePath(_ commands: TagCommandChannel?, password: Type2Password?) throws -> TagCommandChannel? {
        let native = commands.flatMap { $0.dialect == .storageOnly ? nil : $0 }
        if password != nil && native == nil {
            throw TagCommandError(.noRawPath, "\(commands?.readerName ?? "this reader") offers no raw tag-command path, so PWD_AUTH cannot be sent (a reader with a PC/SC Part 3 transparent exchange or an ACR122U can)")
        }
        return native
    }

    /// Native path: GET_VERSION (not on Ultralight C, which has none), then PWD_AUTH.
    func start() throws {
        guard let commands else { return }
        if cardName != 0x003A {
            version = try commands.getVersion()
            if version == nil { try recover() }
        }
        try authenticate()
    }

    func authenticate() throws {
        guard let commands, let password else { return }
        let answer = try commands.authenticate(password: password.password)
        if let expected = password.pack, expected != answer {
            throw TagError(.authenticationFailed, "the tag answered PACK \(answer.hexString) to the password, \(expected.hexString) was expected: it may not be the tag the password is for; nothing was written")
        }
        pack = answer
    }

    /// After a NAK or silence an NTAG / Ultralight falls back to IDLE or HALT and ignores
    /// everything until it is woken again: reactivate it, and redo what its state held
    /// (sector 0 again, and the authentication).
    func recover() throws {
        guard let commands else { return }
        try commands.reactivate()
        try authenticate()
    }

    /// The channel knows the tag's sector: every Type2Tag on it (a dump and a detection share
    /// one) sees the same.
    func select(sectorOf page: Int) throws {
        guard let commands, page / 256 != commands.sector else { return }
        try commands.selectSector(UInt8(page / 256))
    }

    /// FAST_READ of the blocks of `range` not read yet, in as few frames as the reader's frame
    /// size allows, stopping at sector ends and the chip's last page. Only on chips that answered
    /// GET_VERSION (all of which have FAST_READ; an Ultralight would NAK and halt). A refused
    /// FAST_READ (a read-protected page inside) leaves the rest to READ.
    func fastRead(_ range: Range<Int>) throws {
        guard let commands, version != nil else { return }
        // Whole 16-byte blocks (what `loaded` counts), cut at the chip's last page.
        let lastPage = min((range.upperBound - 1) / 16 * 4 + 3, (chip.chip?.pages ?? reachablePages) - 1, reachablePages - 1)
        var block = range.lowerBound / 16
        let perFrame = max(4, commands.maxAnswerBytes / 16 * 4)
        while block * 4 <= lastPage {
            if loaded.contains(block) { block += 1; continue }
            let first = block * 4
            var end = first + perFrame - 1
            end = min(end, lastPage, (first / 256) * 256 + 255)
            // Stop before a block already read.
            if let next = loaded.filter({ $0 > block && $0 * 4 <= end }).min() { end = next * 4 - 1 }
            try select(sectorOf: first)
            guard let bytes = try commands.fastRead(UInt8(first % 256)...UInt8(end % 256)) else {
                try recover()
                return
            }
            cover((end + 1) * 4)
            image.replaceSubrange((first * 4)..<((end + 1) * 4), with: bytes)
            for b in block...(end / 4) { loaded.insert(b) }
            block = end / 4 + 1
        }
    }

    /// 16 bytes at `page`, or nil when the tag refuses (NAK); a malformed answer is an error.
    func readPagesIfAllowed(_ page: Int) throws -> [UInt8]? {
        guard (0..<reachablePages).contains(page) else {
            throw TagError(.beyondReach, "page \(page) is \(reachNote)")
        }
        if let commands {
            try select(sectorOf: page)
            guard let bytes = try commands.readPages(at: UInt8(page % 256)) else {
                try recover()
                return nil
            }
            return bytes
        }
        let r = try transport.storageReadBinary(block: page, size: Self.readLimit)
        guard r.statusWord == .success else { return nil }
        guard r.data.count == Self.readLimit else {
            throw TagError(.readFailed, "READ BINARY of page \(page) answered \(r.data.count) bytes, 16 expected")
        }
        return r.data
    }

    /// Fills `image` for bytes `range` (whole 16-byte reads, nothing read twice).
    ///
    /// A READ that runs into a read-protected area rolls over to page 0 there (NTAG21x), so
    /// 16 bytes can end in copies of pages 0-3: such pages are read again on their own, and a
    /// refusal then means the password protects them. Nothing rolled over is ever used.
    func ensureRead(_ range: Range<Int>) throws {
        guard !range.isEmpty else { return }
        guard range.upperBound <= reachableBytes else {
            throw TagError(.beyondReach, "the tag's data reaches byte \(range.upperBound - 1) (page \((range.upperBound - 1) / 4)), \(reachNote)")
        }
        cover(range.upperBound)
        try fastRead(range)
        var a = range.lowerBound - range.lowerBound % 16
        while a < range.upperBound {
            if !loaded.contains(a / 16) {
                var bytes = try readPages(a / 4)
                if a > 0, header.count == 16 {
                    for k in 1..<4 where bytes[(k * 4)...].elementsEqual(header[0..<(16 - k * 4)]) {
                        if let fresh = try readPagesIfAllowed(a / 4 + k) {
                            bytes.replaceSubrange((k * 4)..., with: fresh.prefix(16 - k * 4))
                        } else if range.upperBound > a + k * 4 {
                            // Rolled over at a page the tag refuses: the end of its memory or of
                            // what its password lets us read. Those bytes were asked for.
                            throw TagError(.readFailed, "READ BINARY of page \(a / 4 + k) failed: the tag refused it (a password, or past its last page)")
                        } else {
                            // Past what was asked for (the end of memory after the last page read).
                            bytes.replaceSubrange((k * 4)..., with: [UInt8](repeating: 0, count: 16 - k * 4))
                        }
                        break
                    }
                }
                let n = min(16, image.count - a)
                image.replaceSubrange(a..<(a + n), with: bytes[0..<n])
                loaded.insert(a / 16)
            }
            a += 16
        }
    }
    private var loaded: Set<Int> = []

    /// Grows the memory image to whole 16-byte blocks up to `end` (exclusive), never past what
    /// this path reaches: reads write whole blocks into it.
    func cover(_ end: Int) {
        let blocks = min((end + 15) / 16 * 16, reachableBytes)
        if blocks > image.count { image += [UInt8](repeating: 0, count: blocks - image.count) }
    }

    func load(tolerant: Bool = false) throws {
        // With FAST_READ, the first frame brings the header and as much of the data area as the
        // reader carries: most messages need no second one.
        var prefetched: [UInt8] = []
        if let commands, version != nil {
            let last = min(commands.maxAnswerBytes / 4, chip.chip?.pages ?? 16) - 1
            try select(sectorOf: 0)
            if let bytes = try commands.fastRead(0...UInt8(last)) { prefetched = bytes } else { try recover() }
        }
        header = prefetched.count >= 16 ? Array(prefetched[0..<16]) : try readPages(0)
        capabilityContainer = try Type2CapabilityContainer(bytes: Array(header[12..<16]))
        // The image covers all this path can reach, whatever the CC says: lock and configuration
        // pages of a proven chip lie past a shrunk CC's data area (an NTAG215 with a 144-byte CC
        // keeps its dynamic lock bytes at page 82h), and every address is checked against the
        // reach before it is used (at most 4 KiB).
        image = [UInt8](repeating: 0, count: reachableBytes)
        loaded = [0]
        lockState = nil
        for (i, b) in header.enumerated() { image[i] = b }
        let usable = min(prefetched.count, image.count) / 16
        for block in 1..<max(1, usable) {
            image.replaceSubrange((block * 16)..<(block * 16 + 16), with: prefetched[(block * 16)..<(block * 16 + 16)])
            loaded.insert(block)
        }
        do {
            try walkTLVs()
            layoutError = nil
        } catch let error as TagError where tolerant && error.kind != .beyondReach {
            layoutError = error
        }
        identified = nil
    }

    /// Reads the data area progressively until the TLV walk finds the NDEF TLV: most tags need one read.
    func walkTLVs() throws {
        let end = min(dataArea.upperBound, reachableBytes)
        var readTo = min(end, 32)
        while true {
            try ensureRead(16..<readTo)
            let walk = Result { () throws(TagError) in try Type2TLVArea(memory: Array(image.prefix(readTo)), dataArea: 16..<readTo) }
            switch walk {
            case let .success(area):
                if area.ndefTLVPosition != nil || readTo == end { tlv = area }
            case let .failure(error):
                // A walk that ran past what was read reads on; anything else is the tag's fault.
                if error.kind != .lengthLies || readTo == end {
                    if readTo == end && end < dataArea.upperBound { break }
                    throw error
                }
            }
            if (try? walk.get())?.ndefTLVPosition != nil || readTo == end { break }
            // Storage READs bring 16 bytes; FAST_READ frames bring the rest of the area in a few.
            readTo = commands != nil && version != nil ? end : min(end, readTo + 16)
        }
        // The whole data area's TLV structure, with bytes past page 255 unknown (zeros): the walk
        // stops at the NDEF TLV, which must itself be reachable.
        var memory = Array(image.prefix(end))
        memory += [UInt8](repeating: 0, count: max(0, dataArea.upperBound - memory.count))
        let area = try Type2TLVArea(memory: memory, dataArea: dataArea)
        guard let position = area.ndefTLVPosition else {
            throw TagError(.notNDEF, "the tag is formatted (CC \(capabilityContainer.bytes.hexString)) but has no NDEF TLV")
        }
        guard position + 1 + area.ndefLengthFieldSize <= reachableBytes else {
            throw TagError(.beyondReach, "the NDEF TLV is at byte \(position), \(reachNote)")
        }
        tlv = area
    }

    public var status: NDEFStatus {
        if capabilityContainer.readAccess != 0 { return .notSupported }
        if capabilityContainer.writeAccess != 0 { return .readOnly }
        guard let commit = commitPosition, let state = try? readLockState() else { return .readWrite }
        return state.isWritable(page: commit / 4) ? .readWrite : .readOnly
    }

    /// The end (exclusive byte address) of the memory this reader can reach on this chip: the
    /// chip's last page where it is known, and never past what the path reaches.
    var memoryEnd: Int { min(chip.chip.map { $0.pages * 4 } ?? reachableBytes, reachableBytes) }

    /// The NDEF TLV's first length byte: the one byte whose change makes a write take effect.
    var commitPosition: Int? {
        guard let start = tlv.ndefTLVPosition else { return nil }
        let p = tlv.positions(from: start, count: 2)
        return p.count == 2 ? p[1] : nil
    }

    private var lockState: Type2LockState?

    /// The lock state (reads the dynamic lock bytes and configuration pages once: one READ on
    /// NTAG21x, whose CFG pages follow the lock page).
    public func readLockState() throws -> Type2LockState {
        if let lockState { return lockState }
        let ccByte = capabilityContainer.bytes[3] & 0x0F
        let staticBytes = Array(header[10...11])
        var areas: [Type2LockState.DynamicArea] = []
        var unknownDynamic: String?
        let known = chip.chip
        if !tlv.lockAreas.isEmpty {
            areas = tlv.lockAreas.map { .init(position: $0.position, bits: $0.bits, bytesLockedPerBit: $0.bytesLockedPerBit, source: .lockControlTLV) }
        } else if let d = known?.dynamicLock {
            areas = [.init(position: d.page * 4, bits: d.bits, bytesLockedPerBit: d.pagesPerBit * 4, source: .chip(known!.name))]
        } else if known == nil, capabilityContainer.dataAreaSize > 48 {
            // No lock control TLV and no proven chip: the NFC Forum default (right after the data
            // area, T2T §4.6.2.2) is user memory on an NTAG215/216 whose CC was shrunk, and the
            // PACK page on an NTAG212 with a 144-byte CC. Unknown, then: never read as lock bits.
            unknownDynamic = "no lock control TLV, and the chip is not proven (\(chip.evidence)): where its dynamic lock bytes are is unknown"
        }
        for i in areas.indices {
            let a = areas[i]
            guard a.position >= 16, a.position + a.byteCount <= memoryEnd else { continue }
            // A tag that refuses the read leaves the bytes unknown; a card that goes away is an error.
            do {
                try ensureRead(a.position..<(a.position + a.byteCount))
                areas[i].bytes = Array(image[a.position..<(a.position + a.byteCount)])
            } catch let e as TagError where e.kind == .readFailed {}

        }
        var password = Type2LockState.Password.none
        if known == nil {
            // Whether it has AUTH0, and where, only a proven chip says: the tag's own answers
            // (a NAK, 63 00) decide what it lets us write.
            password = .unknown("the chip is not proven, so no page is read as its configuration")
        }
        if let p = known?.passwords {
            do {
                try ensureRead((p.auth0Page * 4)..<(p.accessPage * 4 + 4))
                let auth0 = Int(image[p.auth0Page * 4 + p.auth0Byte])
                let bitSet = image[p.accessPage * 4 + p.accessByte] & p.protectionBit != 0
                password = auth0 >= p.disabledFrom ? .disabled : .protects(fromPage: auth0, reads: bitSet == p.readsProtectedWhenBitSet)
            } catch let e as TagError where e.kind == .readFailed {
                password = .unknown("the configuration pages cannot be read; they may be password-protected")
            }
        }
        var locked = Set<Int>()
        for page in 3...15 {
            let bit = page < 8 ? staticBytes[0] & (1 << page) : staticBytes[1] & (1 << (page - 8))
            if bit != 0 { locked.insert(page) }
        }
        for a in areas {
            // Lock bytes that cannot be read lock nothing we know of: a write that meets a locked
            // page is refused by the tag mid-way, which the commit procedure makes safe (the
            // pages it changed until then were writable, so the backup can put them back).
            guard let bytes = a.bytes else { continue }
            for bit in 0..<a.bits where bytes[bit / 8] & (1 << (bit % 8)) != 0 {
                let first = 64 + bit * a.bytesLockedPerBit
                locked.formUnion((first / 4)..<((first + a.bytesLockedPerBit + 3) / 4))
            }
        }
        let state = Type2LockState(ccWriteAccess: ccByte, staticLockBytes: staticBytes, dynamicAreas: areas, unknownDynamicLocks: unknownDynamic,
                                   password: password, lockedPages: locked.sorted(), authenticated: pack != nil)
        lockState = state
        return state
    }

    public func readNDEF() throws -> [UInt8] {
        if let layoutError { throw layoutError }
        guard capabilityContainer.readAccess == 0 else {
            throw TagError(.readOnly, "the tag does not allow reading (CC read access \(capabilityContainer.readAccess))")
        }
        guard let start = tlv.ndefTLVPosition else { throw TagError(.notNDEF, "no NDEF TLV") }
        let positions = tlv.positions(from: start, count: 1 + tlv.ndefLengthFieldSize + tlv.ndefLength)
        guard positions.count == 1 + tlv.ndefLengthFieldSize + tlv.ndefLength else {
            throw TagError(.lengthLies, "the NDEF TLV runs past the data area")
        }
        if let last = positions.last { try ensureRead(start..<(last + 1)) }
        return positions.dropFirst(1 + tlv.ndefLengthFieldSize).map { image[$0] }
    }

    /// The bytes a backup needs to put the current message back exactly: from the first TLV to
    /// the end of the NDEF TLV (and its terminator), in whole pages.
    public func backup(reader: String? = nil) throws -> TagBackup {
        let message = try readNDEF()
        let start = tlv.ndefTLVPosition!
        var positions = tlv.positions(from: start, count: 1 + tlv.ndefLengthFieldSize + message.count + 1)
        if positions.count > 1 + tlv.ndefLengthFieldSize + message.count, positions.last! < reachableBytes {
            try ensureRead(positions.last!..<(positions.last! + 1))
            if image[positions.last!] != 0xFE { positions.removeLast() }
        } else if positions.count > 1 + tlv.ndefLengthFieldSize + message.count {
            positions.removeLast()
        }
        let end = ((positions.last ?? start) / 4 + 1) * 4
        try ensureRead(16..<end)
        return TagBackup(kind: kind, uid: uid, capabilityContainer: capabilityContainer.bytes, start: 16, bytes: Array(image[16..<end]), message: message, reader: reader)
    }

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
        try writeInCommitOrder(image: image, target: target, changed: changed, commitPosition: commitPosition, blockSize: 4, unit: "page",
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

    /// What `makeReadOnly` did.
    public typealias LockReport = NFCTags.LockReport<Type2LockState>
    public static let locksDescription = "CC read-only, static and dynamic lock bits set"

    /// CC write access 0F, then every dynamic lock bit, then the static lock bytes (FF FF, which
    /// also locks the CC page) — skipping what an earlier, interrupted lock already did — and
    /// then checks: the lock bytes read back set, and a write to the first data page is refused.
    /// Every address is checked against the tag's memory before the first write.
    public func makeReadOnly() throws -> LockReport {
        let before = try readLockState()
        for area in before.dynamicAreas {
            guard area.position >= 16, area.position + area.byteCount <= memoryEnd else {
                throw TagError(.badCapabilityContainer, "the dynamic lock bytes (\(area.source)) would be at bytes \(area.position)…\(area.position + area.byteCount - 1), outside the tag's memory (0…\(memoryEnd - 1)); nothing was written")
            }
            guard area.bytes != nil else {
                throw TagError(.readFailed, "the dynamic lock bytes at byte \(area.position) cannot be read; nothing was written")
            }
        }
        if let why = before.unknownDynamicLocks {
            throw TagError(.unsafe, "\(why); a guess could set bits in user memory, so nothing was written. Lock it through a reader with a raw tag-command path (GET_VERSION proves the chip), or give the tag a lock control TLV")
        }
        if let doubt = tlv.uncertainty.first {
            throw TagError(.unsafe, "\(doubt); nothing was written")
        }
        var done: [String] = [], already: [String] = []
        var steps: [(String, Int, [UInt8])] = []
        let ccPage = Array(header[12..<16])
        if before.ccWriteAccess != 0x0F {
            var cc = ccPage
            cc[3] = cc[3] & 0xF0 | 0x0F
            steps.append(("set the CC write access to 0F", 3, cc))
        } else { already.append("CC write access 0F") }
        for area in before.dynamicAreas {
            guard let locked = area.lockedBytes, locked != area.bytes else { already.append("dynamic lock bits at byte \(area.position)"); continue }
            var bytes = image
            for (i, b) in locked.enumerated() { bytes[area.position + i] = b }
            for page in Set((area.position..<(area.position + area.byteCount)).map { $0 / 4 }).sorted() {
                steps.append(("set the dynamic lock bits (page \(page))", page, Array(bytes[(page * 4)..<(page * 4 + 4)])))
            }
        }
        if before.staticLockBytes != [0xFF, 0xFF] {
            steps.append(("set the static lock bytes", 2, Array(header[8..<10]) + [0xFF, 0xFF]))
        } else { already.append("static lock bytes FF FF") }
        for (what, page, data) in steps {
            do { try writePage(page, data) } catch {
                throw LockInterrupted(done: done, underlying: error, step: what)
            }
            done.append(what)
        }
        // Check what the tag says now, not what was sent.
        do {
            loaded = [0]
            lockState = nil
            header = try readPages(0)
            capabilityContainer = try Type2CapabilityContainer(bytes: Array(header[12..<16]))
            for (i, b) in header.enumerated() { image[i] = b }
            let after = try readLockState()
            try ensureRead(16..<20)
            let refused: Bool
            if let commands {
                // The same bytes again: a tag that took them changes nothing.
                refused = try commands.writePage(4, Array(image[16..<20])) != .ack
                if refused { try recover() }
            } else {
                refused = try transport.send(CommandAPDU(cla: 0xFF, ins: 0xD6, p1: 0, p2: 4, data: Array(image[16..<20]))).statusWord != .success
            }
            return LockReport(done: done, alreadyDone: already, state: after, refusesWrites: refused && after.isFullyLocked)
        } catch {
            throw LockInterrupted(done: done, underlying: error, step: "check the lock")
        }
    }

    /// Pages for a dump, each with its bytes or nil where the tag refused (a password, or past
    /// the end). Pages past 255 are not addressable here. A READ that rolls over (to page 0, at
    /// the end of memory or at a read-protected page) is caught: the pages past the roll-over are
    /// read on their own, and shown refused when the tag refuses them — never as copies of 0-3.
    public func dump(pages: ClosedRange<Int>) throws -> [(page: Int, bytes: [UInt8]?)] {
        guard pages.lowerBound >= 0 else { throw TagError(.beyondReach, "page \(pages.lowerBound) does not exist: pages start at 0") }
        guard pages.upperBound < reachablePages else {
            throw TagError(.beyondReach, "page \(pages.upperBound) is \(reachNote)")
        }
        var out: [(Int, [UInt8]?)] = []
        var page = pages.lowerBound
        // FAST_READ where the chip has it (`fastRead`, the reads' own chunking), up to the chip's
        // last page (past it, nothing). A refusal leaves the rest to READ.
        if commands != nil, version != nil, let chipPages = chip.chip?.pages {
            let last = min(pages.upperBound, chipPages - 1)
            if page <= last {
                cover((last + 1) * 4)
                try fastRead((page * 4)..<((last + 1) * 4))
                while page <= last, loaded.contains(page / 4) { out.append((page, Array(image[(page * 4)..<(page * 4 + 4)]))); page += 1 }
            }
            if page >= chipPages {
                while page <= pages.upperBound { out.append((page, nil)); page += 1 }
            }
        }
        // Pages 0-3, to recognise a READ that rolled over: read only when a READ needs them.
        var head: [UInt8]? = header.count == 16 ? header : loaded.contains(0) && image.count >= 16 ? Array(image[0..<16]) : nil
        while page <= pages.upperBound {
            // A READ never leaves the selected sector: at page 254 its last 8 bytes are not 256-257.
            let count = min(4, pages.upperBound - page + 1, 256 - page % 256)
            if page > 0, head == nil { head = try readPagesIfAllowed(0) }
            let read = try readPagesIfAllowed(page)
            if page == 0 { head = read }
            var rows: [[UInt8]?] = read.map { b in (0..<4).map { Array(b[($0 * 4)..<($0 * 4 + 4)]) } } ?? [nil, nil, nil, nil]
            if page > 0, let head, rows[0] != nil,
               let k = (1..<4).first(where: { k in rows[k...].compactMap { $0 }.flatMap { $0 }.elementsEqual(head[0..<(16 - k * 4)]) }), k < count {
                let fresh = try readPagesIfAllowed(page + k)
                for i in k..<4 { rows[i] = fresh.map { Array($0[((i - k) * 4)..<((i - k) * 4 + 4)]) } }
            }
            for i in 0..<count { out.append((page + i, rows[i])) }
            page += count
        }
        return out
    }
}

/// The pages of a Type 2 tag with what each one is for (`ul-read`).
public struct Type2PageMap: Sendable {
    public struct Row: Sendable, Hashable {
        public var page: Int
        /// nil: the tag refused the page (protected by a password, or past its memory).
        public var bytes: [UInt8]?
        /// "UID", "CC", "data", "dynamic lock", "config", …
        public var role: String
    }
    public var rows: [Row]
    /// Pages of the chip past 255 that were not read: storage READ BINARY cannot address them.
    public var unreachable: ClosedRange<Int>?

    /// Pages 0-3 (UID, lock bytes, CC) could not be read: the reader or tag answers wrongly.
    public struct HeaderUnreadable: Error, CustomStringConvertible {
        public var reason: TagError
        public var description: String { "cannot read pages 0-3: \(reason.message)" }
    }
}

extension Type2Tag {
    /// Reads `pages` (nil: the whole tag, as its chip or else its CC describes it) with their
    /// roles. Where the evidence names the chip, its datasheet says where the lock and
    /// configuration pages really are (NTAG215/216 keep user pages past the CC's data area).
    /// Run it inside one transaction, so the pages come from one moment of the tag.
    /// - Throws: `TagError` `.notNDEF` for a card not of the Ultralight family, `.readFailed`;
    ///   `Type2PageMap.HeaderUnreadable` when pages 0-3 cannot be read.
    /// With `commands` (a native path) pages come with FAST_READ and past 255 with SECTOR_SELECT;
    /// with `password`, PWD_AUTH opens read-protected pages first.
    public static func pageMap(_ transport: APDUTransport, atr: [UInt8], pages: ClosedRange<Int>?,
                               commands: TagCommandChannel? = nil, password: Type2Password? = nil) throws -> Type2PageMap {
        guard isType2(atr: atr) else {
            throw TagError(.notNDEF, "not a MIFARE Ultralight / NTAG tag (the ATR is not a PC/SC Part 3 Ultralight-family storage card)")
        }
        let raw = Type2Tag(transport: transport, uid: nil, cardName: (try? ATR(bytes: atr))?.storageCard?.cardName,
                           commands: try nativePath(commands, password: password), password: password)
        try raw.start()
        // Only GET_VERSION names the chip (its pages, lock and configuration); without it the CC
        // says how far the data area goes, and nothing past it is given a chip's meaning.
        let proven = raw.version?.chip
        // Pages 0-3 first where the CC decides the extent or the range leaves them out; else
        // they come in the same frames as the rest (a whole-tag map: ⌈bytes / frame⌉ reads).
        if proven == nil || !(pages.map { $0.lowerBound == 0 && $0.upperBound >= 3 } ?? true) { try raw.readHeader() }
        let reach = raw.reachablePages
        let total = proven?.pages ?? defaultExtent(dataPages: dataPages(raw.header))
        let wanted = pages ?? 0...(total - 1)
        guard wanted.lowerBound < reach else {
            throw TagError(.beyondReach, "pages \(wanted.lowerBound)-\(wanted.upperBound) are \(raw.reachNote)")
        }
        let unreachable = wanted.upperBound >= reach ? reach...wanted.upperBound : nil
        let readable = wanted.lowerBound...min(wanted.upperBound, reach - 1)
        let dumped = try raw.dump(pages: readable)
        if raw.header.count != 16 { try raw.readHeader(from: dumped) }
        let data = dataPages(raw.header)
        let rows = dumped.map { page, bytes in
            Type2PageMap.Row(page: page, bytes: bytes, role: proven?.role(ofPage: page, dataAreaEnd: 16 + data * 4) ?? defaultRole(page, dataPages: data))
        }
        guard rows.contains(where: { $0.bytes != nil }) else {
            throw TagError(.readFailed, "the tag refused every page of \(readable.lowerBound)-\(readable.upperBound)")
        }
        return Type2PageMap(rows: rows, unreachable: unreachable)
    }

    /// Pages 0-3, from rows already dumped when they are there, else read.
    func readHeader(from rows: [(page: Int, bytes: [UInt8]?)] = []) throws {
        var head = rows.filter { $0.page < 4 }.compactMap(\.bytes).flatMap { $0 }
        if head.count != 16 {
            do { head = try dump(pages: 0...3).compactMap(\.bytes).flatMap { $0 } } catch let e as TagError {
                throw Type2PageMap.HeaderUnreadable(reason: e)
            }
        }
        guard head.count == 16 else { throw Type2PageMap.HeaderUnreadable(reason: TagError(.readFailed, "the tag refused")) }
        header = head
    }

    /// Data-area pages by the CC (12, a 48-byte area, where there is no NDEF CC).
    static func dataPages(_ header: [UInt8]) -> Int { header.count == 16 && header[12] == 0xE1 ? Int(header[14]) * 2 : 12 }

    /// How many pages a map of a chip that is not proven shows: the header, the data area, and
    /// past a 48-byte area five more (where NTAG21x keep lock and configuration pages; shown
    /// without a chip's meaning).
    static func defaultExtent(dataPages: Int) -> Int { 4 + dataPages + (dataPages > 12 ? 5 : 0) }

    /// Roles for a chip the evidence does not prove: the header and the CC's data area; past
    /// it, no chip's meaning (lock bytes on one chip are user memory on another).
    static func defaultRole(_ page: Int, dataPages: Int) -> String {
        switch page {
        case 0, 1: return "UID"
        case 2: return "UID/internal/static lock"
        case 3: return "CC"
        case 4..<(4 + dataPages): return "data"
        default: return "past the data area (chip not proven: role unknown)"
        }
    }
}
