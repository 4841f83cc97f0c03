// An emulated ISO 15693 tag (Type 5) answering frames and storage pseudo-APDUs, with chip
// limits, permanent locks and addressing, each behaviour switchable.
import ISO7816

/// An ISO 15693 tag (NFC Forum Type 5) behind a contactless reader: it answers ISO 15693-3
/// frames carried by a transparent session (`ContactlessReader`), and the storage
/// pseudo-APDUs some readers map onto its blocks (READ BINARY / UPDATE BINARY with the block
/// number in P1-P2, GET DATA for the UID).
///
/// It behaves as the chips do, each behaviour switchable (`realism`) so tests can show they
/// depend on it:
/// - the chip's block count and size: blocks past the end answer error 10 (block not available);
/// - LOCK BLOCK is permanent: a locked block answers writes with error 12 and a second lock
///   with error 11; GET MULTIPLE BLOCK SECURITY STATUS reports it (where the chip has the command);
/// - addressing: an addressed request for another UID gets no answer; a standard (1-byte)
///   block number reaches blocks 0-255 only, the extended commands (30-3C) the rest, on chips
///   that have them;
/// - TI Tag-it answers write-alike commands only with the option flag (else error 0F, nothing
///   written); ST25DV64K's standard GET SYSTEM INFO leaves the memory size out (the extended
///   one has it).
public final class ISO15693TagModel: NativeTagModel, @unchecked Sendable {
    public struct Realism: OptionSet, Sendable, Hashable, CaseIterable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// Error 10 past the last block.
        public static let blockCount = Realism(rawValue: 1 << 0)
        /// LOCK BLOCK enforced.
        public static let locks = Realism(rawValue: 1 << 1)
        /// TI's option flag required on write and lock.
        public static let optionFlag = Realism(rawValue: 1 << 2)
        public static let allCases: [Realism] = [.blockCount, .locks, .optionFlag]
        public static let all = Realism(allCases)
    }

    public struct Chip: Sendable, Hashable {
        public var name: String
        public var blocks: Int
        public var blockSize: Int
        /// IC manufacturer code (UID byte 6 on air): 04 NXP, 02 ST, 07 TI.
        public var manufacturer: UInt8
        public var icReference: UInt8
        /// PC/SC Part 3 card name in the ATR.
        public var cardName: UInt16
        /// The CC as shipped, NDEF-formatted (followed by an empty NDEF TLV and a terminator).
        public var factoryCC: [UInt8]
        /// Standard GET SYSTEM INFO reports the memory size.
        public var memorySizeInSystemInfo: Bool
        /// 30-3C with 2-byte block numbers.
        public var extendedCommands: Bool
        public var readMultiple: Bool
        /// GET MULTIPLE BLOCK SECURITY STATUS (2C/3C).
        public var securityStatus: Bool
        public var needsOptionFlag: Bool

        // NXP ICODE SLIX (SL2S2002) datasheet: 28 blocks of 4 bytes (112 bytes of user memory),
        // IC reference 01, CC E1 40 0E 01 as NXP formats it.
        public static let icodeSlix = Chip(name: "NXP ICODE SLIX", blocks: 28, blockSize: 4, manufacturer: 0x04, icReference: 0x01, cardName: 0x0014,
                                           factoryCC: [0xE1, 0x40, 0x0E, 0x01], memorySizeInSystemInfo: true, extendedCommands: false,
                                           readMultiple: true, securityStatus: true, needsOptionFlag: false)
        // ST25DV64K-like: 2048 blocks of 4 bytes (8 KB), 8-byte CC E2 40 00 01 00 00 03 FF (ST's
        // factory CC; MLEN 03FF), the memory size only in Extended Get System Info (3B).
        public static let st25dv64k = Chip(name: "ST25DV64K-like", blocks: 2048, blockSize: 4, manufacturer: 0x02, icReference: 0x26, cardName: 0x0000,
                                           factoryCC: [0xE2, 0x40, 0x00, 0x01, 0x00, 0x00, 0x03, 0xFF], memorySizeInSystemInfo: false, extendedCommands: true,
                                           readMultiple: true, securityStatus: true, needsOptionFlag: false)
        // TI Tag-it HF-I Plus: 64 blocks of 4 bytes, the option flag on writes and locks, no
        // GET MULTIPLE BLOCK SECURITY STATUS (Android's rw_i93 reads the lock per block).
        public static let tagIt = Chip(name: "TI Tag-it HF-I Plus", blocks: 64, blockSize: 4, manufacturer: 0x07, icReference: 0x00, cardName: 0x0012,
                                       factoryCC: [0xE1, 0x40, 0x20, 0x01], memorySizeInSystemInfo: true, extendedCommands: false,
                                       readMultiple: true, securityStatus: false, needsOptionFlag: true)

        // A tag of 8-byte blocks (ISO 15693 lets a block be 1 to 32 bytes; Fujitsu's FRAM tags use
        // 8): 256 blocks, 2 KB, CC E1 40 FF 01. What a reader that wants the exact Le is asked.
        public static let eightByteBlocks = Chip(name: "ISO 15693 tag with 8-byte blocks", blocks: 256, blockSize: 8, manufacturer: 0x08, icReference: 0x00, cardName: 0x0000,
                                                 factoryCC: [0xE1, 0x40, 0xFF, 0x01], memorySizeInSystemInfo: true, extendedCommands: false,
                                                 readMultiple: true, securityStatus: true, needsOptionFlag: false)

        public static let all: [String: Chip] = ["icode-slix": icodeSlix, "st25dv64k": st25dv64k, "tagit": tagIt, "8-byte-blocks": eightByteBlocks]
    }

    public let chip: Chip
    public let realism: Realism
    /// On air, LSB first: six serial bytes, the manufacturer code, E0.
    public let wireUID: [UInt8]
    public var uid: [UInt8] { wireUID }
    public var air: AirInterface { .iso15693 }
    public var storageBlockSize: Int { chip.blockSize }
    private struct State {
        var memory: [UInt8]
        var locked: Set<Int>
    }
    private let state: Locked<State>

    public init(chip: Chip, serial: [UInt8] = [0x5A, 0x4B, 0x3C, 0x2D, 0x1E, 0x0F], memory: [UInt8]? = nil, locked: Set<Int> = [], realism: Realism = .all) {
        self.chip = chip
        self.realism = realism
        wireUID = Array(serial.prefix(6)) + [chip.manufacturer, 0xE0]
        var m = [UInt8](repeating: 0, count: chip.blocks * chip.blockSize)
        if let memory { m.replaceSubrange(0..<min(memory.count, m.count), with: memory.prefix(m.count)) } else { m = Self.factoryImage(chip: chip) }
        state = Locked(State(memory: m, locked: locked))
    }

    /// The memory as shipped: the CC, an empty NDEF TLV, a terminator.
    public static func factoryImage(chip: Chip) -> [UInt8] {
        var m = [UInt8](repeating: 0, count: chip.blocks * chip.blockSize)
        for (i, b) in (chip.factoryCC + [0x03, 0x00, 0xFE]).enumerated() { m[i] = b }
        return m
    }

    public var contents: [UInt8] { state.current.memory }
    public var lockedBlocks: Set<Int> { state.current.locked }

    public var atr: [UInt8] {
        var a: [UInt8] = [0x3B, 0x8F, 0x80, 0x01, 0x80, 0x4F, 0x0C, 0xA0, 0x00, 0x00, 0x03, 0x06, 0x0B,
                          UInt8(chip.cardName >> 8), UInt8(chip.cardName & 0xFF), 0x00, 0x00, 0x00, 0x00]
        a.append(a.dropFirst().reduce(0, ^))
        return a
    }

    public func reset() {}

    // MARK: storage pseudo-APDUs

    public func process(_ apdu: [UInt8]) -> [UInt8] {
        guard apdu.count >= 4, apdu[0] == 0xFF else { return [0x6E, 0x00] }
        let block = Int(apdu[2]) << 8 | Int(apdu[3])
        switch apdu[1] {
        case 0xCA:
            guard apdu[2] == 0x00, apdu[3] == 0x00 else { return [0x6A, 0x81] }
            return wireUID + [0x90, 0x00]
        case 0xB0:
            guard apdu.count == 5 else { return [0x67, 0x00] }
            let le = apdu[4] == 0 ? chip.blockSize : Int(apdu[4])
            guard le % chip.blockSize == 0 else { return [0x6C, UInt8(chip.blockSize)] }
            guard let bytes = read(block, count: le / chip.blockSize) else { return [0x6A, 0x82] }
            return bytes + [0x90, 0x00]
        case 0xD6:
            guard apdu.count == 5 + chip.blockSize, Int(apdu[4]) == chip.blockSize else { return [0x67, 0x00] }
            return write(block, Array(apdu[5...])) == nil ? [0x90, 0x00] : [0x63, 0x00]
        default:
            return [0x6D, 0x00]
        }
    }

    func read(_ first: Int, count: Int) -> [UInt8]? {
        guard first >= 0, count >= 1, !realism.contains(.blockCount) || first + count <= chip.blocks else { return nil }
        let m = state.current.memory
        let bs = chip.blockSize
        return (first..<(first + count)).flatMap { b in b < chip.blocks ? Array(m[(b * bs)..<((b + 1) * bs)]) : [UInt8](repeating: 0, count: bs) }
    }

    /// nil on success, else the ISO 15693 error code.
    func write(_ block: Int, _ data: [UInt8]) -> UInt8? {
        guard block >= 0, block < chip.blocks else { return 0x10 }
        guard data.count == chip.blockSize else { return 0x0F }
        return state.withLock { s in
            if realism.contains(.locks), s.locked.contains(block) { return 0x12 }
            s.memory.replaceSubrange((block * chip.blockSize)..<((block + 1) * chip.blockSize), with: data)
            return nil
        }
    }

    // MARK: ISO 15693-3 frames

    public func transceive(_ frame: [UInt8]) -> NativeAnswer {
        guard frame.count >= 2 else { return .silence }
        let flags = frame[0], command = frame[1]
        var p = 2
        if command >= 0xA0 {
            guard frame.count > p, frame[p] == chip.manufacturer else { return .silence }
            p += 1
        }
        if flags & 0x20 != 0 {
            guard frame.count >= p + 8, Array(frame[p..<(p + 8)]) == wireUID else { return .silence }
            p += 8
        }
        let params = Array(frame[p...])
        let option = flags & 0x40 != 0
        func ok(_ data: [UInt8] = []) -> NativeAnswer { .data([0x00] + data) }
        func error(_ code: UInt8) -> NativeAnswer { .data([0x01, code]) }
        let ext = command >= 0x30 && command <= 0x3C
        if ext && !chip.extendedCommands { return error(0x01) }
        let width = ext ? 2 : 1
        func number(_ at: Int) -> Int? {
            guard params.count >= at + width else { return nil }
            return ext ? Int(params[at]) | Int(params[at + 1]) << 8 : Int(params[at])
        }
        let writeAlike = [0x21, 0x22, 0x24, 0x31, 0x32, 0x34].contains(command)
        if writeAlike && chip.needsOptionFlag && realism.contains(.optionFlag) && !option { return error(0x0F) }
        switch command {
        case 0x2B, 0x3B:
            var info: UInt8 = 0x0B
            var body: [UInt8] = []
            if command == 0x2B && chip.memorySizeInSystemInfo || command == 0x3B {
                info |= 0x04
            }
            if command == 0x3B, let request = params.first { info &= request & 0x0F }
            body = [info] + wireUID
            if info & 0x01 != 0 { body.append(0x00) }        // DSFID
            if info & 0x02 != 0 { body.append(0x00) }        // AFI
            if info & 0x04 != 0 {
                body += command == 0x3B ? [UInt8((chip.blocks - 1) & 0xFF), UInt8((chip.blocks - 1) >> 8), UInt8(chip.blockSize - 1)]
                    : [UInt8(min(chip.blocks, 256) - 1), UInt8(chip.blockSize - 1)]
            }
            if info & 0x08 != 0 { body.append(chip.icReference) }
            return ok(body)
        case 0x20, 0x30:
            guard let b = number(0) else { return error(0x0F) }
            guard let bytes = read(b, count: 1) else { return error(0x10) }
            let status: [UInt8] = option ? [state.current.locked.contains(b) ? 0x01 : 0x00] : []
            return ok(status + bytes)
        case 0x23, 0x33:
            guard chip.readMultiple else { return error(0x01) }
            guard let b = number(0), let n = number(width) else { return error(0x0F) }
            guard let bytes = read(b, count: n + 1) else { return error(0x10) }
            guard option else { return ok(bytes) }
            let locked = state.current.locked
            var out: [UInt8] = []
            for i in 0...n {
                let status: UInt8 = locked.contains(b + i) ? 0x01 : 0x00
                out.append(status)
                out += bytes[(i * chip.blockSize)..<((i + 1) * chip.blockSize)]
            }
            return ok(out)
        case 0x21, 0x31:
            guard let b = number(0) else { return error(0x0F) }
            if let code = write(b, Array(params.dropFirst(width))) { return error(code) }
            return ok()
        case 0x22, 0x32:
            guard let b = number(0) else { return error(0x0F) }
            guard b < chip.blocks else { return error(0x10) }
            let already = state.withLock { s in !s.locked.insert(b).inserted }
            return already && realism.contains(.locks) ? error(0x11) : ok()
        case 0x2C, 0x3C:
            guard chip.securityStatus else { return error(0x01) }
            guard let b = number(0), let n = number(width) else { return error(0x0F) }
            guard b + n < chip.blocks else { return error(0x10) }
            let locked = state.current.locked
            return ok((b...(b + n)).map { (locked.contains($0) ? 0x01 : 0x00) as UInt8 })
        case 0xB2 where chip.manufacturer == 0x04:
            // NXP GET RANDOM NUMBER: two bytes.
            return ok([0x3C, 0xA5])
        default:
            return error(0x01)
        }
    }
}
