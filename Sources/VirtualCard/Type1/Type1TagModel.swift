// An emulated NFC Forum Type 1 tag (Broadcom Topaz 96 / Topaz 512), written from T1TOP and the
// BCM20203 data sheets: its commands, WRITE-E / WRITE-NE semantics and the locks as the chip
// enforces them.
import ISO7816

/// A Topaz tag: 120 bytes of static memory (Topaz 96) or 512 of dynamic memory (Topaz 512).
///
/// As the BCM20203T512 data sheet has it (pp. 13-15, 30-35):
/// - every command but RID carries UID0-3; another UID gets no answer;
/// - READ, WRITE-E and WRITE-NE address blocks 0-E; RSEG, READ8 and the 8-byte writes exist on
///   the Topaz 512 only (a Topaz 96 does not answer them); their block numbers past 3F wrap (no
///   error past the memory of a dynamic tag);
/// - WRITE-E is barred from blocks 0, D and E (and F) and from locked blocks; WRITE-NE (the bits
///   ORed in) from blocks 0 and D and locked data blocks, not from E and F, where it sets lock and
///   OTP bits; a barred write is skipped and gets no answer;
/// - LOCK0/LOCK1 (bytes 70-71) lock blocks 0-F, a bit a block; LOCK2-LOCK7 (7A-7F) blocks 10-3F;
///   a lock bit never clears. Blocks 0, D, E (and F) are locked from the factory.
public final class Type1TagModel: @unchecked Sendable {
    public struct Chip: Sendable, Hashable {
        public var name: String
        public var hr0: UInt8
        public var hr1: UInt8
        public var memorySize: Int
        public var dynamic: Bool { memorySize > 120 }

        public init(name: String, hr0: UInt8, hr1: UInt8, memorySize: Int) {
            self.name = name
            self.hr0 = hr0
            self.hr1 = hr1
            self.memorySize = memorySize
        }

        public static let topaz96 = Chip(name: "Topaz 96", hr0: 0x11, hr1: 0x48, memorySize: 120)
        public static let topaz512 = Chip(name: "Topaz 512", hr0: 0x12, hr1: 0x4C, memorySize: 512)
        /// nfcpy's generic tags: a T1T with HR1 00 (no Broadcom chip), static or dynamic.
        public static let genericStatic = Chip(name: "T1T, static memory", hr0: 0x11, hr1: 0x00, memorySize: 120)
        public static let genericDynamic = Chip(name: "T1T, dynamic memory", hr0: 0x12, hr1: 0x00, memorySize: 512)
        public static let all: [String: Chip] = ["topaz96": topaz96, "topaz512": topaz512]
    }

    public let chip: Chip
    /// false: a hostile chip whose LOCK2-LOCK7 bits set and read back but bar nothing (a lock
    /// is proven only by a block it locks refusing a write).
    public let honoursDynamicLocks: Bool
    /// UID0-6, as in block 0.
    public let uid: [UInt8]
    private let memory: Locked<[UInt8]>
    /// Called with the whole memory after each change (`apdu emulate … --memory`).
    public var onChange: (@Sendable ([UInt8]) -> Void)?
    /// Commands answered and refused, in order (what the benchmarks count).
    public var commands: [UInt8] { received.current }
    private let received = Locked<[UInt8]>([])

    public var contents: [UInt8] { memory.current }
    public var hr: [UInt8] { [chip.hr0, chip.hr1] }

    public init(chip: Chip, uid: [UInt8] = [0xB2, 0x56, 0x54, 0x00, 0x1A, 0x2B, 0x25], memory image: [UInt8]? = nil,
                honoursDynamicLocks: Bool = true) {
        self.chip = chip
        self.honoursDynamicLocks = honoursDynamicLocks
        self.uid = Array((uid + [UInt8](repeating: 0, count: 7)).prefix(7))
        var m = image ?? Self.factoryImage(chip: chip, uid: self.uid)
        m = Array((m + [UInt8](repeating: 0, count: max(0, chip.memorySize - m.count))).prefix(chip.memorySize))
        memory = Locked(m)
    }

    /// The memory as Broadcom ships it NDEF-formatted: the UID, CC `E1 10 TMS 00`, on a Topaz 512
    /// the lock and memory control TLVs (as Android and nfcpy format it), an empty NDEF TLV and a
    /// terminator; block D `55 55 AA AA …` as nfcpy's images show it; the factory lock bits
    /// (blocks 0, D, E, and F on a Topaz 512).
    public static func factoryImage(chip: Chip, uid: [UInt8]) -> [UInt8] {
        var m = [UInt8](repeating: 0, count: chip.memorySize)
        m.replaceSubrange(0..<7, with: uid.prefix(7))
        let tlvs: [UInt8] = chip.dynamic ? [0x01, 0x03, 0xF2, 0x30, 0x33, 0x02, 0x03, 0xF0, 0x02, 0x03, 0x03, 0x00, 0xFE] : [0x03, 0x00, 0xFE]
        let head: [UInt8] = [0xE1, 0x10, UInt8(chip.memorySize / 8 - 1), 0x00] + tlvs
        m.replaceSubrange(8..<(8 + head.count), with: head)
        m.replaceSubrange(0x68..<0x6C, with: [0x55, 0x55, 0xAA, 0xAA])
        m[0x70] = 0x01
        m[0x71] = chip.dynamic ? 0xE0 : 0x60
        return m
    }

    /// Whether `block` is locked by its lock bit.
    public func isLocked(block: Int) -> Bool { Self.isLocked(block: block, in: memory.current, chip: chip) }

    /// Whether the chip bars writes to `block` by its lock bit (the hostile chip: not past F).
    func lockBars(_ block: Int, _ m: [UInt8]) -> Bool {
        block >= 16 && !honoursDynamicLocks ? false : Self.isLocked(block: block, in: m, chip: chip)
    }

    static func isLocked(block: Int, in m: [UInt8], chip: Chip) -> Bool {
        if block < 16 { return m[0x70 + block / 8] & (1 << (block % 8)) != 0 }
        guard chip.dynamic, block < 64 else { return false }
        let bit = block - 16
        return m[0x7A + bit / 8] & (1 << (bit % 8)) != 0
    }

    /// Answers one command (T1TOP's frame without CRC); nil: no answer (a wrong UID, a barred
    /// write, a command this chip does not have).
    public func answer(_ frame: [UInt8]) -> [UInt8]? {
        guard let code = frame.first else { return nil }
        let long: Set<UInt8> = [0x10, 0x02, 0x54, 0x1B]
        guard frame.count == (long.contains(code) ? 14 : 7) else { return nil }
        if code != 0x78, Array(frame.suffix(4)) != Array(uid.prefix(4)) { return nil }
        return execute(code: code, address: frame[1], data: long.contains(code) ? Array(frame[2..<10]) : [frame[2]])
    }

    /// Carries out a command from its parts (the reader forms supply the UID themselves).
    public func execute(code: UInt8, address: UInt8, data: [UInt8]) -> [UInt8]? {
        received.withLock { $0.append(code) }
        let hr = self.hr
        return memory.withLock { m -> [UInt8]? in
            let block = Int(address >> 3), byte = Int(address & 0x07)
            switch code {
            case 0x78: return hr + Array(uid.prefix(4))
            case 0x00: return hr + Array(m[0..<0x78])
            case 0x01:
                guard address < 0x78 else { return nil }
                return [address, m[Int(address)]]
            case 0x53, 0x1A:
                guard address < 0x78, let d = data.first else { return nil }
                let barred: Set<Int> = code == 0x53 ? [0, 0x0D, 0x0E] : [0, 0x0D]
                if barred.contains(block) || (block != 0x0E && self.lockBars(block, m)) { return nil }
                let a = block * 8 + byte
                m[a] = code == 0x53 ? d : m[a] | d
                changed(m)
                return [address, m[a]]
            case 0x10:
                guard chip.dynamic else { return nil }
                let seg = Int(address >> 4) & 0x03
                return [address] + Array(m[(seg * 128)..<(seg * 128 + 128)])
            case 0x02:
                guard chip.dynamic else { return nil }
                let b = Int(address) & 0x3F
                return [address] + Array(m[(b * 8)..<(b * 8 + 8)])
            case 0x54, 0x1B:
                guard chip.dynamic, data.count == 8 else { return nil }
                let b = Int(address) & 0x3F
                let barred: Set<Int> = code == 0x54 ? [0, 0x0D, 0x0E, 0x0F] : [0, 0x0D]
                if barred.contains(b) || (b != 0x0E && b != 0x0F && self.lockBars(b, m)) { return nil }
                for i in 0..<8 { m[b * 8 + i] = code == 0x54 ? data[i] : m[b * 8 + i] | data[i] }
                changed(m)
                return [address] + Array(m[(b * 8)..<(b * 8 + 8)])
            default:
                return nil
            }
        }
    }

    private func changed(_ m: [UInt8]) {
        onChange?(m)
    }
}
