// An emulated MIFARE Plus (S, X, EV1, EV2) in security level 0, 1 or 3: personalisation, the
// switch to SL3, AES authentication and EV0 secure messaging, written from NXP's data sheets and
// proxmark3's real-card traces, apart from the reader side in NFCTags.
import CardCrypto
import ISO7816

/// A MIFARE Plus card as a reader slot sees it.
///
/// - **SL0** (ISO 14443-4): WritePerso `A8` of data blocks, AES keys (4000 + 2·sector, +1 key B),
///   system keys 9000-9003 and configuration blocks B000-B003; CommitPerso `AA` (refused, `0B`,
///   until 9000, 9001 and 9003 are written) to SL1 (S and X; EV1/EV2 `AA 01`) or SL3 (EV1/EV2
///   `AA 03`). Everything else answers `0B`.
/// - **SL1**: a MIFARE Classic behind a storage reader (PC/SC Part 3 pseudo-APDUs, card name
///   0036/0037), plus the native AuthenticateFirst with key 9003, which switches it to SL3 for
///   good once the key is proved.
/// - **SL3**: AuthenticateFirst/NonFirst (`70`/`76`, `72`), reads `30`-`37` of up to 15 blocks
///   of one sector, writes `A0`-`A3` of up to 3 blocks, each command's MAC checked (`08`), the
///   read and write counters moved as the chip does, the IVs as NXP lays them out. The sector
///   trailer's access bits rule data blocks for key A and key B as on a Classic; key blocks
///   are written in their sector's session, system keys with 9000, configuration blocks with 9001.
///
/// EV1 and EV2 also answer GetVersion (three frames), Read_Sig `3C`, and the ISO 7816 wrapping
/// (`90 cmd 00 00 Lc data 00` → `data 90 00`, or `91 status`).
public final class MifarePlusModel: EmulatedCard, @unchecked Sendable {
    public enum Generation: String, Sendable, Hashable, CaseIterable {
        case s, x, ev1, ev2
        var hasVersion: Bool { self == .ev1 || self == .ev2 }
    }
    public enum Level: Int, Sendable, Hashable, CaseIterable { case sl0 = 0, sl1 = 1, sl3 = 3 }

    /// How the reader in front of the card carries frames.
    public enum ReaderForm: String, Sendable, Hashable, CaseIterable {
        /// Native frames and wrapped ones pass as they are.
        case native
        /// Only frames that parse as ISO 7816 short APDUs pass (a reader that checks Lc and Le, as
        /// CCID readers exchanging at APDU level may): anything else gets `67 00` from the reader.
        case isoOnly = "iso-only"
    }

    public let generation: Generation
    public let sectors: Int
    public let uid: [UInt8]
    public let signature: [UInt8]
    public let readerForm: ReaderForm
    /// The ATS's historical bytes the reader puts in the ATR (nil: X's, or S's on an S). EV1 and
    /// EV2 have no published ATS of their own, so one may carry bytes that name no MIFARE Plus.
    public let historicalBytes: [UInt8]?
    /// In SL1, the PC/SC card name the reader gives (nil: 0036/0037, MIFARE Plus). A reader that
    /// goes by the SAK alone calls an SL1 card a MIFARE Classic (0001 1K, 0002 4K).
    public let level1CardName: UInt16?
    /// How this card breaks its data sheet, if it does (the hostile matrix).
    public let hostile: Hostile?

    struct Memory {
        var level: Level
        /// Every block by number: data blocks, keys, configuration.
        var blocks: [UInt16: [UInt8]]
        var personalized: Set<UInt16> = []
    }
    struct Session {
        var ti: [UInt8]
        var kenc: [UInt8]
        var kmac: [UInt8]
        var readCounter: UInt16 = 0
        var writeCounter: UInt16 = 0
        var keyNumber: UInt16
    }
    struct PendingAuthentication {
        var keyNumber: UInt16
        var key: [UInt8]
        var rndB: [UInt8]
        var first: Bool
    }
    struct Volatile {
        var session: Session?
        var pending: PendingAuthentication?
        var versionPart = 0
    }
    struct Log {
        var frames: [[UInt8]] = []
        var tamperAnswerMAC = false
        var tamperWritesOnly = false
    }
    let memory: Locked<Memory>
    let volatile = Locked(Volatile())
    let log = Locked(Log())
    /// The SL1 face: a Classic behind a storage reader over the same data blocks.
    private let classic: Locked<(model: MifareClassicModel, reader: ContactlessReader)?>
    /// Told of every change to memory (the CLI saves an image).
    public var onChange: (@Sendable (MifarePlusModel) -> Void)?
    /// Where RndB and TI come from.
    var random: @Sendable (Int) -> [UInt8] = { secureRandomBytes($0) }

    public init(_ generation: Generation, level: Level, sectors: Int = 32, uid: [UInt8] = [0x04, 0x50, 0x5D, 0x1A, 0xB7, 0x68, 0x80],
                signature: [UInt8]? = nil, readerForm: ReaderForm = .native, blocks: [UInt16: [UInt8]]? = nil,
                historicalBytes: [UInt8]? = nil, level1CardName: UInt16? = nil, hostile: Hostile? = nil) {
        precondition(sectors == 32 || sectors == 40)
        self.hostile = hostile
        self.historicalBytes = historicalBytes
        self.level1CardName = level1CardName
        self.generation = generation
        self.sectors = sectors
        self.uid = uid
        self.signature = signature ?? [UInt8](repeating: 0, count: 56)
        self.readerForm = readerForm
        memory = Locked(Memory(level: level, blocks: blocks ?? Self.factoryBlocks(sectors: sectors, uid: uid)))
        classic = Locked(nil)
        if level == .sl1 { enterLevel1() }
    }

    public static func blockCount(sectors: Int) -> Int { sectors <= 32 ? sectors * 4 : 128 + (sectors - 32) * 16 }
    static func firstBlock(_ sector: Int) -> Int { sector < 32 ? sector * 4 : 128 + (sector - 32) * 16 }
    static func sector(ofBlock b: Int) -> Int { b < 128 ? b / 4 : 32 + (b - 128) / 16 }
    static func trailer(_ sector: Int) -> Int { firstBlock(sector + 1) - 1 }

    /// A card as shipped: block 0 the manufacturer block, data blocks zero, trailers in the
    /// transport configuration, every AES key and system key FF…FF, configuration blocks zero.
    public static func factoryBlocks(sectors: Int, uid: [UInt8]) -> [UInt16: [UInt8]] {
        var blocks: [UInt16: [UInt8]] = [:]
        for b in 0..<blockCount(sectors: sectors) { blocks[UInt16(b)] = [UInt8](repeating: 0, count: 16) }
        blocks[0] = Array((uid + [UInt8](repeating: 0, count: 16)).prefix(7)) + [0x08, 0x44, 0x00, 0x02, 0x01, 0x11, 0x00, 0x02, 0x20]
        for s in 0..<sectors {
            blocks[UInt16(trailer(s))] = MifareClassicModel.transportTrailer
            blocks[UInt16(0x4000 + 2 * s)] = [UInt8](repeating: 0xFF, count: 16)
            blocks[UInt16(0x4000 + 2 * s + 1)] = [UInt8](repeating: 0xFF, count: 16)
        }
        for n in UInt16(0x9000)...0x9003 { blocks[n] = [UInt8](repeating: 0xFF, count: 16) }
        for n in UInt16(0xB000)...0xB003 { blocks[n] = [UInt8](repeating: 0, count: 16) }
        return blocks
    }

    // MARK: - What tests and the CLI read

    public var level: Level { memory.current.level }
    public func block(_ n: UInt16) -> [UInt8]? {
        if memory.current.level == .sl1, n < 0x4000, let c = classic.current {
            let m = c.model.contents
            return Int(n) * 16 + 16 <= m.count ? Array(m[(Int(n) * 16)..<(Int(n) * 16 + 16)]) : nil
        }
        return memory.current.blocks[n]
    }
    public var blocks: [UInt16: [UInt8]] {
        var b = memory.current.blocks
        if memory.current.level == .sl1, let c = classic.current {
            let m = c.model.contents
            for i in 0..<(m.count / 16) { b[UInt16(i)] = Array(m[(i * 16)..<(i * 16 + 16)]) }
        }
        return b
    }
    public var personalized: Set<UInt16> { memory.current.personalized }
    /// Every frame received, in order (wrapped frames unwrapped).
    public var frames: [[UInt8]] { log.current.frames }
    /// The read and write counters of the open session.
    public var counters: (read: UInt16, write: UInt16)? { volatile.current.session.map { ($0.readCounter, $0.writeCounter) } }
    /// Answers with a wrong MAC from now on (to show that the reader checks them): every answer,
    /// or with `writesOnly` the writes' alone.
    public func tamperAnswerMACs(_ on: Bool = true, writesOnly: Bool = false) {
        log.withLock {
            $0.tamperAnswerMAC = on
            $0.tamperWritesOnly = writesOnly
        }
    }

    // MARK: - EmulatedCard

    public var atr: [UInt8] {
        if memory.current.level == .sl1, let c = classic.current {
            var atr = c.reader.atr
            guard let name = level1CardName, atr.count == 20 else { return atr }
            // PC/SC Part 3: the card name is bytes 13-14 of the storage-card ATR, TCK last.
            atr[13] = UInt8(name >> 8)
            atr[14] = UInt8(name & 0xFF)
            atr[19] = atr[1..<19].reduce(0, ^)
            return atr
        }
        let historical: [UInt8] = historicalBytes ?? (generation == .s ? [0xC1, 0x05, 0x2F, 0x2F, 0x00, 0x35, 0xC7] : [0xC1, 0x05, 0x2F, 0x2F, 0x01, 0xBC, 0xD6])
        var atr: [UInt8] = [0x3B, 0x80 | UInt8(historical.count), 0x80, 0x01] + historical
        atr.append(atr.dropFirst().reduce(0, ^))
        return atr
    }

    public func reset() {
        volatile.withLock { $0 = Volatile() }
        classic.current?.reader.reset()
    }

    public func process(_ apdu: [UInt8]) -> [UInt8] {
        guard let code = apdu.first else { return [0x67, 0x00] }
        if memory.current.level == .sl1, code == 0xFF, let c = classic.current {
            defer { onChange?(self) }
            return c.reader.process(apdu)
        }
        // The reader's own GET DATA for the UID (PC/SC Part 3), as every contactless reader answers it.
        if code == 0xFF, apdu.count == 5, apdu[1] == 0xCA, apdu[2] == 0 { return uid + [0x90, 0x00] }
        if generation.hasVersion, code == 0x90, let wrapped = try? CommandAPDU(bytes: apdu), wrapped.p1 == 0, wrapped.p2 == 0 {
            let answer = native([wrapped.ins] + wrapped.data)
            let status = answer.first ?? 0x6F
            return Array(answer.dropFirst()) + (status == 0x90 ? [0x90, 0x00] : [0x91, status])
        }
        if readerForm == .isoOnly && !Self.isShortAPDU(apdu) { return [0x67, 0x00] }
        return native(apdu)
    }

    /// Whether `b` parses as a short APDU: a header alone, with Le, with Lc and data, or both.
    static func isShortAPDU(_ b: [UInt8]) -> Bool {
        if b.count == 4 || b.count == 5 { return true }
        guard b.count > 5, b[4] != 0 else { return false }
        return b.count == 5 + Int(b[4]) || b.count == 6 + Int(b[4])
    }

    /// One native frame in, the native answer (status byte first) out.
    func native(_ frame: [UInt8]) -> [UInt8] {
        log.withLock { $0.frames.append(frame) }
        let code = frame[0]
        let level = memory.current.level
        if code != 0xAF { volatile.withLock { $0.versionPart = 0 } }
        switch code {
        case 0x60, 0xAF: return generation.hasVersion ? version(code) : [0x0B]
        case 0x3C: return generation.hasVersion && frame.count == 2 ? [0x90] + signature : [0x0B]
        case 0xA8: return level == .sl0 ? writePerso(frame) : [0x0B]
        case 0xAA: return level == .sl0 ? commitPerso(frame) : [0x0B]
        case 0x70, 0x76: return authenticateStart(frame)
        case 0x72: return authenticateFinish(frame)
        case 0x30...0x37: return level == .sl3 ? read(frame) : [0x0B]
        case 0xA0...0xA3: return level == .sl3 ? write(frame) : [0x0B]
        default: return [0x0B]
        }
    }

    // MARK: - Keyless

    func version(_ code: UInt8) -> [UInt8] {
        let part = volatile.withLock { v -> Int in
            v.versionPart = code == 0x60 ? 1 : v.versionPart + 1
            return v.versionPart
        }
        let storage: UInt8 = sectors == 32 ? 0x16 : 0x18
        let major: UInt8 = generation == .ev1 ? 0x11 : 0x22
        switch part {
        case 1: return [0xAF, 0x04, 0x02, 0x01, major, 0x00, storage, 0x04]
        case 2: return [0xAF, 0x04, 0x02, 0x01, 0x01, 0x01, storage, 0x04]
        case 3:
            volatile.withLock { $0.versionPart = 0 }
            // A 4-byte UID goes as `00 04 UID`, batch, week and year one place later (proxmark3's
            // reading), a last byte 00.
            let uidPart = uid.count == 4 ? [0x00, 0x04] + uid : Array((uid + [UInt8](repeating: 0, count: 7)).prefix(7))
            return [0x90] + uidPart + [0xCF, 0x8D, 0x15, 0x61, 0x51, 0x21, 0x23] + (uid.count == 4 ? [0x00] : [])
        default: return [0x0B]
        }
    }

    func writePerso(_ frame: [UInt8]) -> [UInt8] {
        guard frame.count == 19 else { return [0x0C] }
        let n = UInt16(frame[1]) | UInt16(frame[2]) << 8
        let exists = Int(n) < Self.blockCount(sectors: sectors) || (0x4000..<UInt16(0x4000 + 2 * sectors)).contains(n)
            || (0x9000...0x9003).contains(n) || (0xB000...0xB003).contains(n)
        guard exists else { return [0x09] }
        if dropsPerso(n) { return [0x90] }
        memory.withLock {
            $0.blocks[n] = Array(frame[3..<19])
            $0.personalized.insert(n)
        }
        onChange?(self)
        return [0x90]
    }

    func commitPerso(_ frame: [UInt8]) -> [UInt8] {
        let written = memory.current.personalized
        guard [UInt16(0x9000), 0x9001, 0x9003].allSatisfy(written.contains) else { return [0x0B] }
        let target: Level
        switch (generation.hasVersion, frame.count > 1 ? frame[1] : nil) {
        case (_, nil), (true, 0x01?): target = .sl1
        case (true, 0x03?): target = .sl3
        default: return [0x0C]
        }
        let now = committedLevel(target)
        memory.withLock { $0.level = now }
        if now == .sl1 { enterLevel1() }
        onChange?(self)
        return [0x90]
    }

    /// The SL1 face over the data blocks as they are now.
    func enterLevel1() {
        let count = Self.blockCount(sectors: sectors)
        let blocks = memory.current.blocks
        let image = (0..<count).flatMap { blocks[UInt16($0)] ?? [UInt8](repeating: 0, count: 16) }
        let model = MifareClassicModel(sectors == 32 ? .plus2K : .plus4K, uid: uid, memory: image)
        classic.withLock { $0 = (model, ContactlessReader(.storageOnly, tag: model)) }
    }

    /// SL1 → SL3: the data blocks the Classic face holds become the SL3 card's.
    func leaveLevel1() {
        guard let c = classic.current else { return }
        let m = c.model.contents
        memory.withLock { mem in
            for i in 0..<(m.count / 16) { mem.blocks[UInt16(i)] = Array(m[(i * 16)..<(i * 16 + 16)]) }
            mem.level = .sl3
        }
        classic.withLock { $0 = nil }
    }
}
