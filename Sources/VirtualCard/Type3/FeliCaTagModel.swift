// An emulated FeliCa card (Type 3) answering FeliCa frames, with Lite-S's memory configuration
// block enforced.
import ISO7816

/// A FeliCa card (NFC Forum Type 3) behind a contactless reader: it answers FeliCa frames
/// (length byte first) carried by a transparent session or an ACR122U (`ContactlessReader`).
///
/// - Polling answers for its system codes (12FC NDEF, FFFF any) with IDm and PMm (IC code in
///   PMm byte 1); Request Service knows 000B and 0009; Request System Code lists 12FC.
/// - Read and Write Without Encryption check the IDm, the service (writes need 0009), the
///   block count against the chip's limits (Lite-S: 4 per read, 1 per write) and each block;
///   a block write is all or nothing.
/// - FeliCa Lite-S's memory configuration block (88h) is enforced: a user block whose
///   MC_SP_REG_ALL_RW bit is 0 refuses writes, and once MC byte 2 is 00 the system blocks and
///   the MC itself are read-only for good. CK (87h) reads as zeros.
public final class FeliCaTagModel: NativeTagModel, @unchecked Sendable {
    public struct Realism: OptionSet, Sendable, Hashable, CaseIterable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// The MC block's read-only bits and freeze.
        public static let memoryConfiguration = Realism(rawValue: 1 << 0)
        /// At most Nbr blocks per read and Nbw per write.
        public static let blockLimits = Realism(rawValue: 1 << 1)
        public static let allCases: [Realism] = [.memoryConfiguration, .blockLimits]
        public static let all = Realism(allCases)
    }

    public struct Chip: Sendable, Hashable {
        public var name: String
        /// PMm byte 1.
        public var icCode: UInt8
        /// User blocks, the attribute block included.
        public var userBlocks: Int
        public var maxRead: Int
        public var maxWrite: Int
        /// Lite / Lite-S system blocks (80h-88h) with the memory configuration.
        public var lite: Bool

        // FeliCa Lite-S (RC-S966) user's manual: S_PAD0-13 (blocks 0-13), REG (0Eh), system
        // blocks 80h-88h, 4 blocks per read and 1 per write; nfcpy formats it Nbr 4, Nbw 1, Nmaxb 13.
        public static let liteS = Chip(name: "FeliCa Lite-S", icCode: 0xF1, userBlocks: 14, maxRead: 4, maxWrite: 1, lite: true)
        // A FeliCa Standard card with an NDEF system (nfcpy's table: RC-S962, Nbr 12, Nbw 10),
        // 80 data blocks: 1,280 bytes of message.
        public static let standard = Chip(name: "FeliCa Standard (NDEF, 1.3 KB)", icCode: 0x20, userBlocks: 81, maxRead: 12, maxWrite: 10, lite: false)
        public static let all: [String: Chip] = ["felica-lite-s": liteS, "felica-standard": standard]
    }

    public let chip: Chip
    public let realism: Realism
    public let idm: [UInt8]
    public let pmm: [UInt8]
    public var uid: [UInt8] { idm }
    public var air: AirInterface { .felica }
    private let blocks: Locked<[Int: [UInt8]]>

    public init(chip: Chip, idm: [UInt8] = [0x01, 0x2E, 0x4C, 0x3A, 0x5B, 0x6D, 0x7E, 0x8F], blocks image: [Int: [UInt8]]? = nil, realism: Realism = .all) {
        self.chip = chip
        self.realism = realism
        self.idm = idm
        pmm = [0x00, chip.icCode, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00]
        var m = Self.factoryBlocks(chip: chip, idm: idm)
        for (k, v) in image ?? [:] { m[k] = v }
        blocks = Locked(m)
    }

    /// The attribute block for an empty message on this chip.
    public static func attributeBlock(chip: Chip, ln: Int = 0, writeF: UInt8 = 0, rwFlag: UInt8 = 1) -> [UInt8] {
        var a: [UInt8] = [0x10, UInt8(chip.maxRead), UInt8(chip.maxWrite), 0x00, UInt8(chip.userBlocks - 1), 0, 0, 0, 0, writeF, rwFlag,
                          UInt8(ln >> 16 & 0xFF), UInt8(ln >> 8 & 0xFF), UInt8(ln & 0xFF)]
        let sum = a.reduce(0) { $0 + Int($1) }
        a += [UInt8(sum >> 8 & 0xFF), UInt8(sum & 0xFF)]
        return a
    }

    /// As shipped, NDEF-formatted: the attribute block, zeros, and on Lite-S the system blocks
    /// (MC: every user block writable, byte 2 FF, NDEF enabled in byte 3).
    public static func factoryBlocks(chip: Chip, idm: [UInt8]) -> [Int: [UInt8]] {
        var m: [Int: [UInt8]] = [:]
        for b in 0..<chip.userBlocks { m[b] = [UInt8](repeating: 0, count: 16) }
        m[0] = attributeBlock(chip: chip)
        if chip.lite {
            m[0x0E] = [UInt8](repeating: 0, count: 16)
            for b in [0x80, 0x81, 0x83, 0x84, 0x86, 0x87, 0x90, 0x91, 0x92] { m[b] = [UInt8](repeating: 0, count: 16) }
            m[0x82] = idm + [UInt8](repeating: 0, count: 8)
            m[0x85] = [0x88, 0xB4] + [UInt8](repeating: 0, count: 14)
            m[0x88] = [0xFF, 0xFF, 0xFF, 0x01] + [UInt8](repeating: 0, count: 12)
        }
        return m
    }

    public var contents: [Int: [UInt8]] { blocks.current }

    public var atr: [UInt8] {
        var a: [UInt8] = [0x3B, 0x8F, 0x80, 0x01, 0x80, 0x4F, 0x0C, 0xA0, 0x00, 0x00, 0x03, 0x06, 0x11, 0x00, 0x3B, 0x00, 0x00, 0x00, 0x00]
        a.append(a.dropFirst().reduce(0, ^))
        return a
    }

    public func reset() {}

    /// GET DATA gives the IDm; no other storage pseudo-APDU reaches a FeliCa card here.
    public func process(_ apdu: [UInt8]) -> [UInt8] {
        guard apdu.count >= 4, apdu[0] == 0xFF else { return [0x6E, 0x00] }
        if apdu[1] == 0xCA && apdu[2] == 0 && apdu[3] == 0 { return idm + [0x90, 0x00] }
        return [0x6A, 0x81]
    }

    /// Whether a block may be written now (the MC's bits and freeze on Lite-S).
    func writable(_ block: Int, _ m: [Int: [UInt8]]) -> Bool {
        guard m[block] != nil else { return false }
        guard chip.lite, realism.contains(.memoryConfiguration), let mc = m[0x88] else { return true }
        let frozen = mc[2] != 0xFF
        switch block {
        case 0..<14: return (Int(mc[0]) | Int(mc[1]) << 8) & (1 << block) != 0
        case 0x0E: return (Int(mc[0]) | Int(mc[1]) << 8) & (1 << 14) != 0
        case 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88: return !frozen
        default: return true
        }
    }

    public func transceive(_ frame: [UInt8]) -> NativeAnswer {
        guard frame.count >= 2, Int(frame[0]) == frame.count else { return .silence }
        let command = frame[1]
        func answer(_ body: [UInt8]) -> NativeAnswer { .data([UInt8(body.count + 2), command + 1] + body) }
        if command == 0x00 {
            guard frame.count == 6 else { return .silence }
            let code = UInt16(frame[2]) << 8 | UInt16(frame[3])
            let systems: [UInt16] = chip.lite ? [0x12FC, 0x88B4] : [0x12FC]
            guard code == 0xFFFF || systems.contains(code) else { return .silence }
            return answer(idm + pmm + (frame[4] == 0x01 ? [0x12, 0xFC] : []))
        }
        guard frame.count >= 10, Array(frame[2..<10]) == idm else { return .silence }
        let body = Array(frame[10...])
        switch command {
        case 0x02:
            guard let n = body.first, body.count == 1 + Int(n) * 2 else { return .silence }
            let versions: [UInt8] = (0..<Int(n)).flatMap { i -> [UInt8] in
                let code = UInt16(body[1 + i * 2]) | UInt16(body[2 + i * 2]) << 8
                return [0x000B, 0x0009, 0x0000].contains(code) ? [0x00, 0x00] : [0xFF, 0xFF]
            }
            return answer(idm + [n] + versions)
        case 0x0C:
            return answer(idm + [0x01, 0x12, 0xFC])
        case 0x06, 0x08:
            guard body.count >= 4, body[0] == 1 else { return answer(idm + [0xFF, 0xA1]) }
            let service = UInt16(body[1]) | UInt16(body[2]) << 8
            guard service == 0x000B || service == 0x0009 else { return answer(idm + [0xFF, 0xA6]) }
            let count = Int(body[3])
            var p = 4
            var list: [Int] = []
            for _ in 0..<count {
                guard p < body.count else { return answer(idm + [0xFF, 0xA2]) }
                if body[p] & 0x80 != 0 {
                    guard p + 1 < body.count else { return answer(idm + [0xFF, 0xA2]) }
                    list.append(Int(body[p + 1])); p += 2
                } else {
                    guard p + 2 < body.count else { return answer(idm + [0xFF, 0xA2]) }
                    list.append(Int(body[p + 1]) | Int(body[p + 2]) << 8); p += 3
                }
            }
            let limit = command == 0x06 ? chip.maxRead : chip.maxWrite
            if count == 0 || realism.contains(.blockLimits) && count > limit { return answer(idm + [0xFF, 0xA2]) }
            if command == 0x06 {
                let m = blocks.current
                var data: [UInt8] = []
                for (i, b) in list.enumerated() {
                    guard let bytes = m[b] else { return answer(idm + [UInt8(i + 1), 0xA8]) }
                    data += b == 0x87 ? [UInt8](repeating: 0, count: 16) : bytes
                }
                return answer(idm + [0x00, 0x00, UInt8(count)] + data)
            }
            guard service == 0x0009 else { return answer(idm + [0xFF, 0xA6]) }
            guard body.count == p + count * 16 else { return answer(idm + [0xFF, 0xA2]) }
            return blocks.withLock { m in
                for (i, b) in list.enumerated() where !writable(b, m) { return answer(idm + [UInt8(i + 1), 0xA8]) }
                for (i, b) in list.enumerated() { m[b] = Array(body[(p + i * 16)..<(p + i * 16 + 16)]) }
                return answer(idm + [0x00, 0x00])
            }
        default:
            return .silence
        }
    }
}
