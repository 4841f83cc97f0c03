// The memory map of a Type 2 data area: the TLVs, where the NDEF message is, and the bytes
// lock and memory control TLVs reserve.
import ISO7816

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
    /// defines none, so there they are skipped like any unknown TLV. `reserved`: areas the tag
    /// type reserves whatever the TLVs say (Type 1's blocks D and E, its chip's block F).
    public init(memory: [UInt8], dataArea: Range<Int>, controlTLVs: Bool = true, reserved seed: [Range<Int>] = []) throws(TagError) {
        self.dataArea = dataArea
        reserved = seed
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
