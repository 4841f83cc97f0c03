// A Type 2 tag behind a PC/SC reader: its state, detection and identity (GET_VERSION, PWD_AUTH,
// the reach of the reader path); reads, writes and locks live in the extensions beside it.
import ISO7816

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
    public internal(set) var header: [UInt8]          // pages 0-3
    public internal(set) var capabilityContainer: Type2CapabilityContainer
    /// Pages read so far, as a memory image (unknown bytes are 0).
    public internal(set) var image: [UInt8]
    public internal(set) var tlv: Type2TLVArea
    /// Why the TLV area could not be used (set only by a tolerant detection).
    public internal(set) var layoutError: TagError?

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
    public internal(set) var version: Type2Version?
    /// The PACK the tag answered to PWD_AUTH, when a password was given.
    public internal(set) var pack: [UInt8]?

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

    var identified: Type2ChipIdentity?

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

    var loaded: Set<Int> = []

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

    var lockState: Type2LockState?
}

extension Type2Tag: NDEFTagFamily {
    public static func recognizes(atr: [UInt8]) -> Bool { isType2(atr: atr) }
    public static var usesTagCommands: Bool { true }
    public static func detectNDEF(_ d: NDEFDetection) throws -> any NDEFTag {
        try detect(d.transport, atr: d.atr, tolerant: d.tolerant, commands: d.commands, password: d.password)
    }
}
