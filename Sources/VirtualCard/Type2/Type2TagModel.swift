// An emulated Type 2 tag (Ultralight, NTAG21x) behind PC/SC Part 3 storage pseudo-APDUs: real
// page counts, roll-over, lock bits, passwords and reader addressing, each switchable.
import ISO7816

/// An NFC Forum Type 2 tag (MIFARE Ultralight family, NTAG21x) behind a contactless PC/SC reader
/// that speaks the PC/SC Part 3 storage-card pseudo-APDUs, as an ACR122U or ACR1252U does:
/// GET DATA `FF CA 00 00` (UID), READ BINARY `FF B0 P1 P2 Le` (at most 16 bytes) and UPDATE
/// BINARY `FF D6 P1 P2 04 data` (one page).
///
/// It behaves the way the real chips do, because a test layout that no chip has proves nothing:
/// - the chip's real page count: READ or WRITE past the last page is NAKed (the reader answers
///   `63 00`, as readers report a tag's NAK or silence);
/// - READ rolls over to page 0 at the end of memory (of sector 0 on a two-sector tag);
/// - the static lock bits of page 2 (with their block-locking bits) and the chip's dynamic lock
///   bits, enforced: a write to a locked page is NAKed;
/// - one-time-programmable bits: the CC page, the lock bytes and page 2 only ever OR;
/// - NTAG21x / Ultralight EV1 / Ultralight C password protection: pages from AUTH0 on refuse
///   writes (and reads with PROT), PWD and PACK read as zeros, CFGLCK freezes the configuration;
/// - the reader's addressing: a storage pseudo-APDU carries a page in P2 only (P1 is ignored,
///   as cheap readers do), so pages past 255 of a two-sector tag cannot be reached without
///   SECTOR_SELECT, and a host that puts the page's high byte in P1 reaches the wrong page.
///
/// Each behaviour can be switched off (`realism`), so tests can show they depend on it.
public final class Type2TagModel: EmulatedCard, @unchecked Sendable {
    /// The chip behaviours above, each of which tests must depend on.
    public struct Realism: OptionSet, Sendable, Hashable, CaseIterable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// NAK past the chip's last page.
        public static let pageCount = Realism(rawValue: 1 << 0)
        /// READ wraps to page 0 at the end of memory.
        public static let readRollover = Realism(rawValue: 1 << 1)
        /// Static lock bits (page 2) and block-locking bits enforced.
        public static let staticLocks = Realism(rawValue: 1 << 2)
        /// Dynamic lock bits enforced.
        public static let dynamicLocks = Realism(rawValue: 1 << 3)
        /// CC, lock bytes and page 2 can only gain bits.
        public static let oneTimeProgrammable = Realism(rawValue: 1 << 4)
        /// AUTH0/PROT/CFGLCK, PWD and PACK unreadable.
        public static let passwords = Realism(rawValue: 1 << 5)
        /// The reader sends only P2 as the page (P1 ignored): 256 addressable pages.
        public static let readerAddressing = Realism(rawValue: 1 << 6)

        public static let allCases: [Realism] = [.pageCount, .readRollover, .staticLocks, .dynamicLocks, .oneTimeProgrammable, .passwords, .readerAddressing]
        public static let all = Realism(allCases)

        public var name: String {
            switch self {
            case .pageCount: return "page count"
            case .readRollover: return "READ rollover"
            case .staticLocks: return "static lock bits"
            case .dynamicLocks: return "dynamic lock bits"
            case .oneTimeProgrammable: return "one-time-programmable bits"
            case .passwords: return "AUTH0/PROT password protection"
            case .readerAddressing: return "reader page addressing (P2 only)"
            default: return "several"
            }
        }
    }

    /// Where a chip's password configuration lives.
    public struct PasswordConfiguration: Sendable, Hashable {
        /// Page and byte of AUTH0 (the first protected page).
        public var auth0: (page: Int, byte: Int)
        /// Page and byte of the access byte, and the bit that selects read-and-write protection.
        public var access: (page: Int, byte: Int)
        /// NTAG21x / Ultralight EV1: PROT (bit 7) set means reads are protected too. Ultralight C
        /// (AUTH1 bit 0): set means only writes are protected.
        public var readProtectionWhenBitSet: Bool
        public var protectionBit: UInt8
        /// CFGLCK (bit 6 of ACCESS), when the chip has it.
        public var configLockBit: UInt8?
        /// Pages that read as zeros (PWD, PACK, keys).
        public var secretPages: ClosedRange<Int>
        /// First configuration page (what CFGLCK freezes, up to the secret pages).
        public var firstConfigPage: Int

        public static func == (a: Self, b: Self) -> Bool {
            a.auth0 == b.auth0 && a.access == b.access && a.readProtectionWhenBitSet == b.readProtectionWhenBitSet
                && a.protectionBit == b.protectionBit && a.configLockBit == b.configLockBit && a.secretPages == b.secretPages
        }
        public func hash(into h: inout Hasher) { h.combine(auth0.page); h.combine(access.page); h.combine(secretPages) }

        /// NTAG21x and Ultralight EV1: CFG0 (AUTH0 in byte 3), CFG1 (ACCESS in byte 0), PWD, PACK.
        static func ntag(cfg0: Int) -> Self {
            Self(auth0: (cfg0, 3), access: (cfg0 + 1, 0), readProtectionWhenBitSet: true, protectionBit: 0x80,
                 configLockBit: 0x40, secretPages: (cfg0 + 2)...(cfg0 + 3), firstConfigPage: cfg0)
        }
    }

    public struct Chip: Sendable, Hashable {
        public var name: String
        /// Every page of the chip (both sectors of a two-sector tag).
        public var pages: Int
        /// Factory CC size byte: data area bytes / 8.
        public var ccSize: UInt8
        /// The page holding the dynamic lock bytes (nil: none), how many lock bits there are and
        /// how many pages (from page 16 on) each one locks.
        public var dynamicLockPage: Int?
        public var lockBits: Int
        public var pagesPerLockBit: Int
        /// The dynamic lock bytes inside the data area (a generic NFC Forum T2T) rather than after it.
        public var lockBytesInDataArea: Bool
        /// GET_VERSION answer (for identification through a transparent exchange), when the chip has one.
        public var version: [UInt8]?
        /// PC/SC Part 3 card name.
        public var cardName: UInt16
        public var passwords: PasswordConfiguration?
        /// The TLVs at page 4 as the chip ships.
        public var factoryTLVs: [UInt8]
        /// Bytes of the dynamic lock page and the configuration pages as shipped (page → bytes).
        public var factoryPages: [Int: [UInt8]]

        public var dataAreaBytes: Int { Int(ccSize) * 8 }

        // Page counts: proxmark3's MAX_*_BLOCKS; layouts: the NXP datasheets (MF0ICU1, MF0ICU2,
        // MF0ULx1, NTAG210/212, NTAG213/215/216). Factory contents: NTAG213 ships
        // 01 03 A0 0C 34 03 00 FE (lock control TLV), NTAG215/216 03 00 FE; the dynamic lock
        // page reads 00 00 00 BD, CFG0 04 00 00 FF, CFG1 00 05 00 00.
        public static let ultralight = Chip(name: "MIFARE Ultralight", pages: 16, ccSize: 0x06, dynamicLockPage: nil, lockBits: 0, pagesPerLockBit: 0,
                                            lockBytesInDataArea: false, version: nil, cardName: 0x0003, passwords: nil, factoryTLVs: [0x03, 0x00, 0xFE], factoryPages: [:])
        /// Ultralight C: lock bytes 2-3 at page 28h; AUTH0 at 2Ah, AUTH1 at 2Bh, the 3DES key in
        /// 2Ch-2Fh (unreadable). Lock bits per 4 pages (UNCONFIRMED granularity).
        public static let ultralightC = Chip(name: "MIFARE Ultralight C", pages: 48, ccSize: 0x12, dynamicLockPage: 0x28, lockBits: 6, pagesPerLockBit: 4,
                                             lockBytesInDataArea: false, version: nil, cardName: 0x003A,
                                             passwords: PasswordConfiguration(auth0: (0x2A, 0), access: (0x2B, 0), readProtectionWhenBitSet: false, protectionBit: 0x01,
                                                                              configLockBit: nil, secretPages: 0x2C...0x2F, firstConfigPage: 0x2A),
                                             factoryTLVs: [0x03, 0x00, 0xFE], factoryPages: [0x2A: [0x30, 0, 0, 0]])
        /// Ultralight EV1 MF0UL11: 20 pages, no dynamic lock bytes, CFG0 at 10h.
        public static let ultralightEV1 = Chip(name: "MIFARE Ultralight EV1 (MF0UL11)", pages: 20, ccSize: 0x06, dynamicLockPage: nil, lockBits: 0, pagesPerLockBit: 0,
                                               lockBytesInDataArea: false, version: [0x00, 0x04, 0x03, 0x01, 0x01, 0x00, 0x0B, 0x03], cardName: 0x003D,
                                               passwords: .ntag(cfg0: 0x10), factoryTLVs: [0x03, 0x00, 0xFE],
                                               factoryPages: [0x10: [0, 0, 0, 0xFF], 0x11: [0, 0x05, 0, 0]])
        /// Ultralight EV1 MF0UL21: 41 pages, dynamic lock at 24h (lock bits per 4 pages,
        /// UNCONFIRMED granularity), CFG0 at 25h.
        public static let ultralightEV1b = Chip(name: "MIFARE Ultralight EV1 (MF0UL21)", pages: 41, ccSize: 0x10, dynamicLockPage: 0x24, lockBits: 5, pagesPerLockBit: 4,
                                                lockBytesInDataArea: false, version: [0x00, 0x04, 0x03, 0x01, 0x01, 0x00, 0x0E, 0x03], cardName: 0x003D,
                                                passwords: .ntag(cfg0: 0x25), factoryTLVs: [0x03, 0x00, 0xFE],
                                                factoryPages: [0x24: [0, 0, 0, 0xBD], 0x25: [0, 0, 0, 0xFF], 0x26: [0, 0x05, 0, 0]])
        /// NTAG210: 20 pages, CFG0 at 10h.
        public static let ntag210 = Chip(name: "NTAG210", pages: 20, ccSize: 0x06, dynamicLockPage: nil, lockBits: 0, pagesPerLockBit: 0,
                                         lockBytesInDataArea: false, version: [0x00, 0x04, 0x04, 0x01, 0x01, 0x00, 0x0B, 0x03], cardName: 0x0003,
                                         passwords: .ntag(cfg0: 0x10), factoryTLVs: [0x03, 0x00, 0xFE],
                                         factoryPages: [0x10: [0, 0, 0, 0xFF], 0x11: [0, 0x05, 0, 0]])
        /// NTAG212: 41 pages, dynamic lock at 24h (lock bits per 2 pages, UNCONFIRMED), CFG0 at 25h.
        public static let ntag212 = Chip(name: "NTAG212", pages: 41, ccSize: 0x10, dynamicLockPage: 0x24, lockBits: 10, pagesPerLockBit: 2,
                                         lockBytesInDataArea: false, version: [0x00, 0x04, 0x04, 0x01, 0x01, 0x00, 0x0E, 0x03], cardName: 0x0003,
                                         passwords: .ntag(cfg0: 0x25), factoryTLVs: [0x03, 0x00, 0xFE],
                                         factoryPages: [0x24: [0, 0, 0, 0xBD], 0x25: [0x04, 0, 0, 0xFF], 0x26: [0, 0x05, 0, 0]])
        public static let ntag213 = Chip(name: "NTAG213", pages: 45, ccSize: 0x12, dynamicLockPage: 0x28, lockBits: 12, pagesPerLockBit: 2,
                                         lockBytesInDataArea: false, version: [0x00, 0x04, 0x04, 0x02, 0x01, 0x00, 0x0F, 0x03], cardName: 0x0003,
                                         passwords: .ntag(cfg0: 0x29), factoryTLVs: [0x01, 0x03, 0xA0, 0x0C, 0x34, 0x03, 0x00, 0xFE],
                                         factoryPages: [0x28: [0, 0, 0, 0xBD], 0x29: [0x04, 0, 0, 0xFF], 0x2A: [0, 0x05, 0, 0]])
        public static let ntag215 = Chip(name: "NTAG215", pages: 135, ccSize: 0x3E, dynamicLockPage: 0x82, lockBits: 8, pagesPerLockBit: 16,
                                         lockBytesInDataArea: false, version: [0x00, 0x04, 0x04, 0x02, 0x01, 0x00, 0x11, 0x03], cardName: 0x0003,
                                         passwords: .ntag(cfg0: 0x83), factoryTLVs: [0x03, 0x00, 0xFE],
                                         factoryPages: [0x82: [0, 0, 0, 0xBD], 0x83: [0x04, 0, 0, 0xFF], 0x84: [0, 0x05, 0, 0]])
        public static let ntag216 = Chip(name: "NTAG216", pages: 231, ccSize: 0x6D, dynamicLockPage: 0xE2, lockBits: 14, pagesPerLockBit: 16,
                                         lockBytesInDataArea: false, version: [0x00, 0x04, 0x04, 0x02, 0x01, 0x00, 0x13, 0x03], cardName: 0x0003,
                                         passwords: .ntag(cfg0: 0xE3), factoryTLVs: [0x03, 0x00, 0xFE],
                                         factoryPages: [0xE2: [0, 0, 0, 0xBD], 0xE3: [0x04, 0, 0, 0xFF], 0xE4: [0, 0x05, 0, 0]])
        /// A generic NFC Forum Type 2 tag of 128 pages whose dynamic lock bytes sit inside its data
        /// area (address 480, named by a lock control TLV: 14 bits of 8 pages each) and with 4 bytes
        /// at address 256 reserved by a memory control TLV. No configuration pages.
        public static let genericT2T = Chip(name: "NFC Forum Type 2 tag (generic)", pages: 128, ccSize: 0x3E, dynamicLockPage: 120, lockBits: 14, pagesPerLockBit: 8,
                                            lockBytesInDataArea: true, version: nil, cardName: 0x0003, passwords: nil,
                                            factoryTLVs: [0x01, 0x03, 0xF0, 0x0E, 0x55, 0x02, 0x03, 0x80, 0x04, 0x05, 0x03, 0x00, 0xFE], factoryPages: [:])
        /// A two-sector Type 2 tag (2 KiB, NTAG I2C-like): the data area runs to page 511, past what a
        /// storage pseudo-APDU can address; dynamic lock bytes inside the data area at address 960
        /// (16 bits of 32 pages each).
        public static let twoSectorT2T = Chip(name: "Type 2 tag with two sectors (2 KiB)", pages: 512, ccSize: 0xFE, dynamicLockPage: 240, lockBits: 16, pagesPerLockBit: 32,
                                              lockBytesInDataArea: true, version: nil, cardName: 0x0003, passwords: nil,
                                              factoryTLVs: [0x01, 0x03, 0xF0, 0x10, 0x76, 0x03, 0x00, 0xFE], factoryPages: [:])

        public static let all: [String: Chip] = [
            "ultralight": .ultralight, "ultralight-c": .ultralightC, "ultralight-ev1": .ultralightEV1, "ultralight-ev1-21": .ultralightEV1b,
            "ntag210": .ntag210, "ntag212": .ntag212, "ntag213": .ntag213, "ntag215": .ntag215, "ntag216": .ntag216,
            "generic-t2t": .genericT2T, "two-sector-t2t": .twoSectorT2T,
        ]
    }

    public let chip: Chip
    public let uid: [UInt8]
    public let realism: Realism
    /// The originality signature READ_SIG returns (32 bytes; zeros: an unsigned chip).
    public let signature: [UInt8]
    let memory: Locked<[UInt8]>
    /// What the chip keeps while powered: PWD_AUTH, the selected sector, IDLE/HALT after a NAK.
    struct Volatile {
        var authenticated = false
        var sector = 0
        var halted = false
        var sectorSelectPending = false
        var counted = false
        var failedAuthentications = 0
    }
    let volatile = Locked(Volatile())
    /// The NFC counter (NTAG21x: counts the first READ / FAST_READ after each power-up once
    /// NFC_CNT_EN is set).
    public let counter = Locked(0)
    /// Called with the whole memory after every successful write.
    public var onChange: (@Sendable ([UInt8]) -> Void)?

    public var atr: [UInt8] {
        // PC/SC Part 3: 3B 8F 80 01 80 4F 0C A0 00 00 03 06 SS NN NN 00 00 00 00 TCK (SS 03: ISO 14443 A part 3).
        var a: [UInt8] = [0x3B, 0x8F, 0x80, 0x01, 0x80, 0x4F, 0x0C, 0xA0, 0x00, 0x00, 0x03, 0x06, 0x03,
                          UInt8(chip.cardName >> 8), UInt8(chip.cardName & 0xFF), 0x00, 0x00, 0x00, 0x00]
        a.append(a.dropFirst().reduce(0, ^))
        return a
    }

    /// A factory-fresh tag (NDEF-formatted as the chip ships) or the given memory image.
    public init(chip: Chip, uid: [UInt8] = [0x04, 0xA1, 0xB2, 0xC3, 0xD4, 0xE5, 0x80], memory image: [UInt8]? = nil, realism: Realism = .all,
                signature: [UInt8] = [UInt8](repeating: 0, count: 32)) {
        self.chip = chip
        self.uid = uid
        self.realism = realism
        self.signature = signature
        memory = Locked(image.map { Self.sized($0, chip: chip) } ?? Self.factoryImage(chip: chip, uid: uid))
    }

    /// The memory as the chip ships it: UID and check bytes, CC, the factory TLVs, lock and
    /// configuration pages.
    public static func factoryImage(chip: Chip, uid: [UInt8] = [0x04, 0xA1, 0xB2, 0xC3, 0xD4, 0xE5, 0x80]) -> [UInt8] {
        var m = [UInt8](repeating: 0, count: chip.pages * 4)
        // Page 0-1: UID and check bytes; page 2: BCC1, internal, static lock bytes; page 3: CC.
        m[0] = uid[0]; m[1] = uid[1]; m[2] = uid[2]; m[3] = 0x88 ^ uid[0] ^ uid[1] ^ uid[2]
        m[4] = uid[3]; m[5] = uid[4]; m[6] = uid[5]; m[7] = uid[6]
        m[8] = uid[3] ^ uid[4] ^ uid[5] ^ uid[6]; m[9] = 0x48
        m[12] = 0xE1; m[13] = 0x10; m[14] = chip.ccSize; m[15] = 0x00
        for (i, b) in chip.factoryTLVs.enumerated() { m[16 + i] = b }
        for (page, bytes) in chip.factoryPages { for (i, b) in bytes.enumerated() { m[page * 4 + i] = b } }
        return m
    }

    static func sized(_ image: [UInt8], chip: Chip) -> [UInt8] {
        var m = [UInt8](repeating: 0, count: chip.pages * 4)
        let n = min(image.count, m.count)
        m.replaceSubrange(0..<n, with: image[0..<n])
        return m
    }

    public var contents: [UInt8] { memory.current }

    /// Replaces the memory (a test setting up a state the chip could be in).
    public func setContents(_ image: [UInt8]) { memory.withLock { $0 = Self.sized(image, chip: chip) } }

    /// Power-up or a new activation: the authentication, the sector and HALT are gone.
    public func reset() { volatile.withLock { $0 = Volatile(counted: false, failedAuthentications: $0.failedAuthentications) } }

    static let nak: [UInt8] = [0x63, 0x00]

    public func process(_ apdu: [UInt8]) -> [UInt8] {
        guard apdu.count >= 4, apdu[0] == 0xFF else { return [0x6E, 0x00] }
        switch apdu[1] {
        case 0xCA:
            guard apdu[2] == 0x00, apdu[3] == 0x00 else { return [0x6A, 0x81] }
            let le = apdu.count >= 5 ? Int(apdu[4]) : 0
            if le != 0 && le != uid.count { return [0x6C, UInt8(uid.count)] }
            return uid + [0x90, 0x00]
        case 0xB0:
            guard apdu.count == 5 else { return [0x67, 0x00] }
            let le = apdu[4] == 0 ? 256 : Int(apdu[4])
            guard le <= 16 else { return [0x67, 0x00] }     // the reader's real limit: one READ
            let bytes = memory.withLock { m in read(page: page(apdu), m) }
            guard let bytes else { return Self.nak }
            return Array(bytes.prefix(le)) + [0x90, 0x00]
        case 0xD6:
            guard apdu.count == 9, apdu[4] == 0x04 else { return [0x67, 0x00] }
            let data = Array(apdu[5..<9])
            let target = page(apdu)
            let image: [UInt8]? = memory.withLock { m in write(page: target, data, &m) ? m : nil }
            guard let image else { return Self.nak }
            onChange?(image)
            return [0x90, 0x00]
        default:
            return [0x6D, 0x00]
        }
    }

    /// The page a pseudo-APDU reaches: P2 alone through a real reader (P1 is dropped).
    func page(_ apdu: [UInt8]) -> Int {
        realism.contains(.readerAddressing) ? volatile.current.sector * 256 + Int(apdu[3]) : Int(apdu[2]) << 8 | Int(apdu[3])
    }

    /// READ: 4 pages from `page`, rolling over at the end of the accessible area; nil for a NAK.
    /// With read protection on (PROT, not authenticated) the accessible area ends at AUTH0 and
    /// the roll-over happens there (NTAG21x datasheet, READ: "special conditions … if at least
    /// part of the addressed pages is within a password protected area").
    /// The pages a READ or FAST_READ of `page` can see: its sector (256 pages; the whole chip when
    /// addressing is unrealistic), ending at AUTH0 while read protection is on.
    func readableWindow(_ page: Int, _ m: [UInt8], sectored: Bool) -> (base: Int, limit: Int) {
        let base = sectored ? page / 256 * 256 : 0
        var limit = sectored ? min(chip.pages, base + 256) : chip.pages
        if realism.contains(.passwords), readProtectionActive(m), let auth0 = auth0(m) { limit = min(limit, max(auth0, 1)) }
        return (base, limit)
    }

    func read(page: Int, _ m: [UInt8]) -> [UInt8]? {
        let (base, limit) = readableWindow(page, m, sectored: realism.contains(.readerAddressing))
        if limit <= base || (realism.contains(.pageCount) && page >= limit) { return nil }
        countRead(m)
        var out: [UInt8] = []
        for i in 0..<4 {
            var p = page + i
            if p >= limit {
                // NTAG21x roll over to page 0 at the end of memory; a READ that runs past its
                // sector's end on a chip of several sectors reports 00h there (NTAG I2C plus
                // datasheet §10.8): either way, not the next sector's pages.
                let sectorEnd = chip.pages > 256 && limit == base + 256
                if realism.contains(.readRollover) && !sectorEnd { p = base + (p - base) % (limit - base) } else { out += [0, 0, 0, 0]; continue }
            }
            if p >= chip.pages || (realism.contains(.passwords) && chip.passwords?.secretPages.contains(p) == true) {
                out += [0, 0, 0, 0]
                continue
            }
            out += m[(p * 4)..<(p * 4 + 4)]
        }
        return out
    }

    /// WRITE of one page: false for a NAK.
    func write(page: Int, _ data: [UInt8], _ m: inout [UInt8]) -> Bool {
        if page < 2 { return false }                      // UID pages are read-only
        if page >= chip.pages { return false }
        if isLocked(page: page, m) { return false }
        if realism.contains(.passwords), writeProtected(page: page, m) { return false }
        let otp = realism.contains(.oneTimeProgrammable)
        // Block-locking bits freeze lock bits as they were before this write.
        let frozen = frozenStaticBits(m)
        for i in 0..<4 {
            let at = page * 4 + i
            if page == 2 {
                // Page 2: only the lock bytes (2, 3) change, and block-locked bits stay as they are.
                guard i >= 2 else { continue }
                let frozen = i == 2 ? frozen.0 : frozen.1
                let allowed = data[i] & ~frozen
                m[at] = otp ? m[at] | allowed : (m[at] & frozen) | allowed
            } else if page == 3 || (page == chip.dynamicLockPage && isDynamicLockByte(i)) {
                m[at] = otp ? m[at] | data[i] : data[i]    // OTP bits and lock bits: set-only
            } else if page == chip.dynamicLockPage && !chip.lockBytesInDataArea {
                continue                                    // RFUI byte of the lock page
            } else {
                m[at] = data[i]
            }
        }
        return true
    }

    /// Bytes of the dynamic lock page that are lock bits: bytes 0-2 (lock and block-locking bits;
    /// byte 3 is RFUI) after the data area, or just the lock bytes the TLV names inside it.
    func isDynamicLockByte(_ index: Int) -> Bool { index < (chip.lockBytesInDataArea ? (chip.lockBits + 7) / 8 : 3) }

    /// The static lock bits the block-locking bits freeze (MF0ICU1 / NTAG21x): BL-CC (bit 0)
    /// freezes L-CC, BL9-4 (bit 1) freezes L4-L9, BL15-10 (bit 2) freezes L10-L15.
    func frozenStaticBits(_ m: [UInt8]) -> (UInt8, UInt8) {
        guard realism.contains(.staticLocks) else { return (0, 0) }
        let bl = m[10]
        let byte0: UInt8 = (bl & 0x01 != 0 ? 0x08 : 0) | (bl & 0x02 != 0 ? 0xF0 : 0)
        let byte1: UInt8 = (bl & 0x02 != 0 ? 0x03 : 0) | (bl & 0x04 != 0 ? 0xFC : 0)
        return (byte0, byte1)
    }

    /// Whether the static or dynamic lock bits (or CFGLCK) protect `page`.
    public func isLocked(page: Int, _ m: [UInt8]) -> Bool {
        if realism.contains(.staticLocks) {
            let lock0 = m[10], lock1 = m[11]
            if (3...7).contains(page) && lock0 & (1 << page) != 0 { return true }
            if (8...15).contains(page) && lock1 & (1 << (page - 8)) != 0 { return true }
        }
        if realism.contains(.dynamicLocks), page >= 16, let lockPage = chip.dynamicLockPage, chip.pagesPerLockBit > 0 {
            let bit = (page - 16) / chip.pagesPerLockBit
            let lastLockable = chip.lockBytesInDataArea ? 4 + chip.dataAreaBytes / 4 : lockPage
            if bit < chip.lockBits && page < lastLockable && m[lockPage * 4 + bit / 8] & (1 << (bit % 8)) != 0 { return true }
        }
        if realism.contains(.passwords), let p = chip.passwords, let bit = p.configLockBit,
           page >= p.firstConfigPage && page < p.secretPages.lowerBound, m[p.access.page * 4 + p.access.byte] & bit != 0 {
            return true
        }
        return false
    }

    func auth0(_ m: [UInt8]) -> Int? {
        guard let p = chip.passwords else { return nil }
        return Int(m[p.auth0.page * 4 + p.auth0.byte])
    }

    func readProtectionActive(_ m: [UInt8]) -> Bool {
        guard let p = chip.passwords, auth0(m) != nil, !volatile.current.authenticated else { return false }
        let bitSet = m[p.access.page * 4 + p.access.byte] & p.protectionBit != 0
        return bitSet == p.readProtectionWhenBitSet
    }

    func writeProtected(page: Int, _ m: [UInt8]) -> Bool {
        guard let auth0 = auth0(m), !volatile.current.authenticated else { return false }
        return page >= auth0
    }
}
