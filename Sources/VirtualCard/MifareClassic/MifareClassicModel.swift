// An emulated MIFARE Classic card behind PC/SC Part 3 pseudo-APDUs: sector authentication and
// the datasheet's access rules, each behaviour switchable.
import ISO7816

/// A MIFARE Classic card (Mini, 1K, 4K) behind a PC/SC reader that speaks its Part 3
/// pseudo-APDUs: LOAD KEYS (`FF 82`, the reader's volatile key slots), GENERAL AUTHENTICATE
/// (`FF 86`), READ BINARY (`FF B0`), UPDATE BINARY (`FF D6`), the ACS value-block command
/// (`FF D7`) and GET DATA (`FF CA`). Put it behind `ContactlessReader(.storageOnly, …)`.
///
/// It behaves as the chip does (MF1S50yyX / MF1S70yyX datasheets), each behaviour switchable
/// (`realism`) so tests can show they depend on it:
/// - authentication is per sector, with key A or B; a wrong key answers 63 00 (as ACS and most
///   readers report it) and leaves the card unauthenticated; reading or writing another sector's
///   block needs a new authentication;
/// - the access bits rule every read, write, increment and decrement, exactly by the datasheet's
///   tables; key B is useless for access when the trailer makes it readable; access bits whose
///   inverted copy does not match block the sector for good;
/// - reading a trailer returns key A as zeros, and key B as zeros unless it is readable;
///   writing a trailer changes only the parts (key A, access bits with the GPB, key B) the
///   conditions let the authenticated key write;
/// - any refused command halts the chip: the authentication is gone (69 82 from the reader);
/// - block 0 (manufacturer data) is read-only;
/// - value blocks: increment and decrement check the value format (else refused).
///
/// The access tables here are written independently of `NFCTags`' decoder (by the datasheet's
/// bit positions and rules), so the library is not graded by its own reading of them.
public final class MifareClassicModel: NativeTagModel, @unchecked Sendable {
    public struct Realism: OptionSet, Sendable, Hashable, CaseIterable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// Reads and writes need the authenticated sector.
        public static let sectorAuthentication = Realism(rawValue: 1 << 0)
        /// The access bits' tables, key B's readability and invalid access bits enforced.
        public static let accessBits = Realism(rawValue: 1 << 1)
        /// Key A (always) and key B (unless readable) read as zeros.
        public static let keyConcealment = Realism(rawValue: 1 << 2)
        /// A refused command drops the authentication.
        public static let haltOnError = Realism(rawValue: 1 << 3)
        /// Block 0 cannot be written.
        public static let manufacturerBlock = Realism(rawValue: 1 << 4)
        public static let allCases: [Realism] = [.sectorAuthentication, .accessBits, .keyConcealment, .haltOnError, .manufacturerBlock]
        public static let all = Realism(allCases)
    }

    public enum Chip: String, Sendable, Hashable, CaseIterable {
        case mini, classic1K = "classic-1k", classic4K = "classic-4k", plus2K = "plus-2k", plus4K = "plus-4k"
        public var sectorCount: Int { self == .mini ? 5 : self == .classic1K ? 16 : self == .plus2K ? 32 : 40 }
        /// PC/SC Part 3 card name in the ATR.
        public var cardName: UInt16 { [.mini: 0x0026, .classic1K: 0x0001, .classic4K: 0x0002, .plus2K: 0x0036, .plus4K: 0x0037][self]! }
    }

    /// Sectors 0-31 have 4 blocks, 32-39 have 16.
    public struct Geometry: Sendable, Hashable {
        public let sectorCount: Int
        public var blockCount: Int { firstBlock(sectorCount) }
        public func firstBlock(_ sector: Int) -> Int { sector < 32 ? sector * 4 : 128 + (sector - 32) * 16 }
        public func sector(_ block: Int) -> Int { block < 128 ? block / 4 : 32 + (block - 128) / 16 }
        public func trailer(_ sector: Int) -> Int { firstBlock(sector + 1) - 1 }
        public func isTrailer(_ block: Int) -> Bool { trailer(sector(block)) == block }
        /// Access group: 0-2 data, 3 trailer (16-block sectors: 5 blocks per data group).
        public func group(_ block: Int) -> Int {
            let i = block - firstBlock(sector(block))
            return block < 128 ? i : min(3, i / 5)
        }
    }

    public let chip: Chip
    public let layout: Geometry
    public let realism: Realism
    public let uid: [UInt8]
    private struct State {
        var memory: [UInt8]
        var slots: [UInt8: [UInt8]] = [:]
        /// The authenticated sector and key type (60 A, 61 B).
        var auth: (sector: Int, key: UInt8)?
        var authentications = 0
        var failedAuthentications = 0
    }
    private let state: Locked<State>

    /// Data blocks whose WRITE the card acknowledges (`0A`) and drops: a hostile card (some
    /// clones do), against the data sheet's WRITE command (MF1S50yyX: the chip's ACK answers
    /// the 16 bytes it has written). Empty on an honest card.
    public let droppedWrites: Set<Int>

    public init(_ chip: Chip, uid: [UInt8] = [0xC1, 0xA5, 0x51, 0xC0], memory: [UInt8]? = nil, realism: Realism = .all, droppedWrites: Set<Int> = []) {
        self.chip = chip
        self.droppedWrites = droppedWrites
        layout = Geometry(sectorCount: chip.sectorCount)
        self.realism = realism
        self.uid = uid
        state = Locked(State(memory: memory ?? Self.factoryImage(chip, uid: uid)))
    }

    /// Key A FFFFFFFFFFFF, access bits FF 07 80 (transport configuration), GPB 69, key B FFFFFFFFFFFF.
    public static let transportTrailer: [UInt8] = [UInt8](repeating: 0xFF, count: 6) + [0xFF, 0x07, 0x80, 0x69] + [UInt8](repeating: 0xFF, count: 6)

    /// A new card: block 0 with the UID, BCC, SAK, ATQA; every data block zero; every trailer
    /// the transport configuration (key A and B FFFFFFFFFFFF, access bits FF 07 80, GPB 69).
    public static func factoryImage(_ chip: Chip, uid: [UInt8] = [0xC1, 0xA5, 0x51, 0xC0]) -> [UInt8] {
        let g = Geometry(sectorCount: chip.sectorCount)
        var m = [UInt8](repeating: 0, count: g.blockCount * 16)
        let bcc = uid.prefix(4).reduce(0, ^)
        let sak: UInt8 = chip.sectorCount > 16 ? 0x18 : chip == .mini ? 0x09 : 0x08
        let block0 = Array(uid.prefix(4)) + [bcc, sak, 0x04, 0x00] + [0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69]
        m.replaceSubrange(0..<16, with: block0)
        for s in 0..<chip.sectorCount {
            let t = g.trailer(s) * 16
            m.replaceSubrange(t..<(t + 16), with: transportTrailer)
        }
        return m
    }

    // MARK: The datasheet's access rules (MF1S50yyX §8.7)

    /// C1 C2 C3 of `group` as a 3-bit number (C1 high), from trailer bytes 6-8; nil when the
    /// inverted copy does not match. Byte 7 bit 4+g is C1, byte 8 bit g is C2, byte 8 bit 4+g is
    /// C3; byte 6 holds ~C1 (bit g) and ~C2 (bit 4+g), byte 7 ~C3 (bit g).
    static func condition(_ t: [UInt8], group g: Int) -> Int? {
        for i in 0..<4 {
            let c1 = t[7] >> (4 + i) & 1, c2 = t[8] >> i & 1, c3 = t[8] >> (4 + i) & 1
            guard t[6] >> i & 1 != c1, t[6] >> (4 + i) & 1 != c2, t[7] >> i & 1 != c3 else { return nil }
        }
        return Int(t[7] >> (4 + g) & 1) << 2 | Int(t[8] >> g & 1) << 1 | Int(t[8] >> (4 + g) & 1)
    }

    enum Who { case never, a, b, ab }
    static func permits(_ who: Who, _ key: UInt8) -> Bool {
        switch who {
        case .never: return false
        case .ab: return true
        case .a: return key == 0x60
        case .b: return key == 0x61
        }
    }

    /// Data block rights (read, write, increment, decrement) by condition, the datasheet's table.
    static let dataTable: [Int: [Who]] = [
        0b000: [.ab, .ab, .ab, .ab], 0b010: [.ab, .never, .never, .never], 0b100: [.ab, .b, .never, .never],
        0b110: [.ab, .b, .b, .ab], 0b001: [.ab, .never, .never, .ab], 0b011: [.b, .b, .never, .never],
        0b101: [.b, .never, .never, .never], 0b111: [.never, .never, .never, .never],
    ]
    /// Trailer rights (write key A, read access bits, write access bits, read key B, write key B).
    static let trailerTable: [Int: [Who]] = [
        0b000: [.a, .a, .never, .a, .a], 0b010: [.never, .a, .never, .a, .never], 0b100: [.b, .ab, .never, .never, .b],
        0b110: [.never, .ab, .never, .never, .never], 0b001: [.a, .a, .a, .a, .a], 0b011: [.b, .ab, .b, .never, .b],
        0b101: [.never, .ab, .b, .never, .never], 0b111: [.never, .ab, .never, .never, .never],
    ]

    enum Operation: Int { case read = 0, write, increment, decrement }

    public var contents: [UInt8] { state.current.memory }
    /// GENERAL AUTHENTICATEs received, and those refused.
    public var authentications: Int { state.current.authentications }
    public var failedAuthentications: Int { state.current.failedAuthentications }

    public var atr: [UInt8] {
        let name = chip.cardName
        var a: [UInt8] = [0x3B, 0x8F, 0x80, 0x01, 0x80, 0x4F, 0x0C, 0xA0, 0x00, 0x00, 0x03, 0x06, 0x03,
                          UInt8(name >> 8), UInt8(name & 0xFF), 0x00, 0x00, 0x00, 0x00]
        a.append(a.dropFirst().reduce(0, ^))
        return a
    }

    /// A new activation: the authentication is gone; the reader's key slots stay.
    public func reset() { state.withLock { $0.auth = nil } }

    /// The chip speaks Crypto-1 on air, which no transparent exchange here carries.
    public func transceive(_ frame: [UInt8]) -> NativeAnswer { .silence }

    static let ok: [UInt8] = [0x90, 0x00]
    static let authFailed: [UInt8] = [0x63, 0x00]
    static let denied: [UInt8] = [0x69, 0x82]
    static let noBlock: [UInt8] = [0x6A, 0x82]

    public func process(_ apdu: [UInt8]) -> [UInt8] {
        guard apdu.count >= 4, apdu[0] == 0xFF else { return [0x6E, 0x00] }
        return state.withLock { s in
            let block = Int(apdu[2]) << 8 | Int(apdu[3])
            switch apdu[1] {
            case 0xCA:
                guard apdu[2] == 0x00, apdu[3] == 0x00 else { return [0x6A, 0x81] }
                return uid + Self.ok
            case 0x82:
                guard apdu.count == 11, apdu[4] == 6, apdu[2] & 0x80 == 0 else { return [0x69, 0x86] }
                s.slots[apdu[3]] = Array(apdu[5..<11])
                return Self.ok
            case 0x86:
                // Data: version 01, block MSB and LSB, key type 60/61, key slot.
                guard apdu.count == 10, apdu[4] == 5, apdu[5] == 0x01 else { return [0x67, 0x00] }
                return authenticate(&s, block: Int(apdu[6]) << 8 | Int(apdu[7]), type: apdu[8], slot: apdu[9])
            case 0xB0:
                guard apdu.count == 5, apdu[4] == 0x10 || apdu[4] == 0x00 else { return [0x67, 0x00] }
                guard let bytes = read(&s, block) else { return refuse(&s, block) }
                return bytes + Self.ok
            case 0xD6:
                guard apdu.count == 21, apdu[4] == 0x10 else { return [0x67, 0x00] }
                return write(&s, block, Array(apdu[5..<21])) ? Self.ok : refuse(&s, block)
            case 0xD7:
                guard apdu.count == 10, apdu[4] == 5, [0, 1, 2].contains(apdu[5]) else { return [0x67, 0x00] }
                let amount = Int64(UInt32(apdu[6]) << 24 | UInt32(apdu[7]) << 16 | UInt32(apdu[8]) << 8 | UInt32(apdu[9]))
                return value(&s, block, op: apdu[5], amount: amount) ? Self.ok : refuse(&s, block)
            default:
                return [0x6D, 0x00]
            }
        }
    }

    private func refuse(_ s: inout State, _ block: Int) -> [UInt8] {
        if realism.contains(.haltOnError) { s.auth = nil }
        return block < layout.blockCount ? Self.denied : Self.noBlock
    }

    private func trailer(_ s: State, sector: Int) -> [UInt8] {
        let t = layout.trailer(sector) * 16
        return Array(s.memory[t..<(t + 16)])
    }

    /// The trailer's condition; nil when the access bits are invalid (the sector is blocked).
    private func trailerCondition(_ s: State, sector: Int) -> Int? { Self.condition(trailer(s, sector: sector), group: 3) }

    private func authenticate(_ s: inout State, block: Int, type: UInt8, slot: UInt8) -> [UInt8] {
        s.authentications += 1
        s.auth = nil
        guard block < layout.blockCount, type == 0x60 || type == 0x61, let key = s.slots[slot] else {
            s.failedAuthentications += 1
            return Self.authFailed
        }
        let sector = layout.sector(block)
        let t = trailer(s, sector: sector)
        let stored = type == 0x60 ? Array(t[0..<6]) : Array(t[10..<16])
        guard key == stored else {
            s.failedAuthentications += 1
            return Self.authFailed
        }
        s.auth = (sector, type)
        return Self.ok
    }

    /// Whether the current authentication may do `operation` to data block `block`.
    private func allowed(_ s: State, _ block: Int, _ operation: Operation) -> Bool {
        let sector = layout.sector(block)
        guard let auth = s.auth else { return !realism.contains(.sectorAuthentication) }
        guard auth.sector == sector || !realism.contains(.sectorAuthentication) else { return false }
        guard realism.contains(.accessBits) else { return true }
        let t = trailer(s, sector: sector)
        guard let tc = Self.condition(t, group: 3), let c = Self.condition(t, group: layout.group(block)) else { return false }
        // Key B readable (trailer 000, 010, 001): after authenticating with key B nothing is allowed.
        if auth.key == 0x61 && Self.permits(Self.trailerTable[tc]![3], 0x60) { return false }
        if layout.isTrailer(block) { return operation == .read && Self.permits(Self.trailerTable[tc]![1], auth.key) }
        return Self.permits(Self.dataTable[c]![operation.rawValue], auth.key)
    }

    private func read(_ s: inout State, _ block: Int) -> [UInt8]? {
        guard block < layout.blockCount, allowed(s, block, .read) else { return nil }
        var bytes = Array(s.memory[(block * 16)..<(block * 16 + 16)])
        if layout.isTrailer(block), realism.contains(.keyConcealment) {
            bytes.replaceSubrange(0..<6, with: [UInt8](repeating: 0, count: 6))
            let readable = trailerCondition(s, sector: layout.sector(block)).map { Self.permits(Self.trailerTable[$0]![3], s.auth?.key ?? 0x60) } ?? false
            if !readable { bytes.replaceSubrange(10..<16, with: [UInt8](repeating: 0, count: 6)) }
        }
        return bytes
    }

    private func write(_ s: inout State, _ block: Int, _ data: [UInt8]) -> Bool {
        guard block < layout.blockCount else { return false }
        if block == 0 && realism.contains(.manufacturerBlock) { return false }
        guard layout.isTrailer(block) else {
            guard allowed(s, block, .write) else { return false }
            if !droppedWrites.contains(block) { s.memory.replaceSubrange((block * 16)..<(block * 16 + 16), with: data) }
            return true
        }
        // A trailer: each part as the conditions let the authenticated key write it.
        let sector = layout.sector(block)
        guard let auth = s.auth, auth.sector == sector || !realism.contains(.sectorAuthentication) else {
            if realism.contains(.sectorAuthentication) { return false }
            s.memory.replaceSubrange((block * 16)..<(block * 16 + 16), with: data)
            return true
        }
        guard realism.contains(.accessBits) else {
            s.memory.replaceSubrange((block * 16)..<(block * 16 + 16), with: data)
            return true
        }
        guard let tc = trailerCondition(s, sector: sector) else { return false }
        let rights = Self.trailerTable[tc]!
        if auth.key == 0x61 && Self.permits(rights[3], 0x60) { return false }
        let canA = Self.permits(rights[0], auth.key), canBits = Self.permits(rights[2], auth.key), canB = Self.permits(rights[4], auth.key)
        guard canA || canBits || canB else { return false }
        var t = trailer(s, sector: sector)
        if canA { t.replaceSubrange(0..<6, with: data[0..<6]) }
        if canBits { t.replaceSubrange(6..<10, with: data[6..<10]) }
        if canB { t.replaceSubrange(10..<16, with: data[10..<16]) }
        s.memory.replaceSubrange((block * 16)..<(block * 16 + 16), with: t)
        return true
    }

    /// ACS value-block command: 00 store (a write), 01 increment, 02 decrement (then transfer).
    private func value(_ s: inout State, _ block: Int, op: UInt8, amount: Int64) -> Bool {
        guard block < layout.blockCount, !layout.isTrailer(block) else { return false }
        let operation: Operation = op == 0 ? .write : op == 1 ? .increment : .decrement
        guard allowed(s, block, operation) else { return false }
        let b = Array(s.memory[(block * 16)..<(block * 16 + 16)])
        var value: Int64
        if op == 0 {
            value = amount > Int64(Int32.max) ? amount - (1 << 32) : amount
        } else {
            // The value format: value, ~value, value (little endian), address ×4 alternating.
            let v = Array(b[0..<4])
            guard v == Array(b[8..<12]), zip(v, b[4..<8]).allSatisfy({ $0 == ~$1 }), b[12] == ~b[13], b[12] == b[14], b[13] == b[15] else { return false }
            let current = Int64(Int32(bitPattern: UInt32(v[0]) | UInt32(v[1]) << 8 | UInt32(v[2]) << 16 | UInt32(v[3]) << 24))
            value = current + (op == 1 ? amount : -amount)
            guard value >= Int64(Int32.min), value <= Int64(Int32.max) else { return false }
        }
        let u = UInt32(bitPattern: Int32(value))
        let v = (0..<4).map { UInt8(truncatingIfNeeded: u >> (8 * $0)) }
        let address = op == 0 ? UInt8(block & 0xFF) : b[12]
        s.memory.replaceSubrange((block * 16)..<(block * 16 + 16), with: v + v.map { ~$0 } + v + [address, ~address, address, ~address])
        return true
    }
}
