// Readers of NFC Forum tag memories written from the specifications, independently of the
// library's parsers: the fault matrix and the hostile matrix judge what a tag holds by these, so
// the library never grades its own work.

/// What a reader sees on a Type 2 tag, decided here from the bytes alone — independently of
/// the library's parser, so the library cannot grade its own work. Follows T2T 1.0: CC at
/// page 3, TLVs from byte 16, lock and memory control TLVs reserving bytes, the first NDEF TLV.
public enum ReferenceType2 {
    public enum Reading: Equatable, CustomStringConvertible {
        case message([UInt8])
        case broken(String)
        public var description: String {
            switch self {
            case let .message(m): return "message of \(m.count) bytes"
            case let .broken(why): return "broken: \(why)"
            }
        }
    }

    /// The TLV walk: reserved bytes, where the NDEF TLV starts, and what a reader sees.
    public static func walk(_ m: [UInt8]) -> (reserved: Set<Int>, ndefStart: Int?, reading: Reading) {
        guard m.count >= 16, m[12] == 0xE1, m[13] >> 4 == 1 else { return ([], nil, .broken("no valid CC")) }
        return walkTLVs(m, from: 16, end: min(16 + Int(m[14]) * 8, m.count))
    }

    /// The TLVs of `m[from..<end]` (Types 2 and 1): lock and memory control TLVs reserving bytes
    /// on top of `reserved`, the first NDEF TLV.
    public static func walkTLVs(_ m: [UInt8], from: Int, end: Int, reserved initial: Set<Int> = []) -> (reserved: Set<Int>, ndefStart: Int?, reading: Reading) {
        var reserved = initial
        var p = from
        func next() -> UInt8? {
            while reserved.contains(p) { p += 1 }
            guard p < end else { return nil }
            defer { p += 1 }
            return m[p]
        }
        while true {
            while reserved.contains(p) { p += 1 }
            let start = p
            guard let tag = next() else { break }
            if tag == 0x00 { continue }
            if tag == 0xFE { break }
            guard var length = next().map(Int.init) else { return (reserved, nil, .broken("TLV cut off")) }
            if length == 0xFF {
                guard let h = next(), let l = next() else { return (reserved, nil, .broken("TLV length cut off")) }
                length = Int(h) << 8 | Int(l)
            }
            if tag == 0x01 || tag == 0x02 {
                guard length == 3, let a = next(), let b = next(), let c = next() else { return (reserved, nil, .broken("bad control TLV")) }
                let e = Int(c & 0x0F)
                let position = Int(a >> 4) << e + Int(a & 0x0F)
                let size = tag == 0x01 ? ((b == 0 ? 256 : Int(b)) + 7) / 8 : (b == 0 ? 256 : Int(b))
                reserved.formUnion(position..<(position + size))
                continue
            }
            var value: [UInt8] = []
            for _ in 0..<length {
                guard let b = next() else { return (reserved, tag == 0x03 ? start : nil, .broken("TLV \(tag) claims \(length) bytes past the data area")) }
                value.append(b)
            }
            if tag == 0x03 { return (reserved, start, .message(value)) }
        }
        return (reserved, nil, .broken("no NDEF TLV"))
    }

    public static func read(_ m: [UInt8]) -> Reading { walk(m).reading }

    /// Addresses a write may change: the data area from the NDEF TLV on, less reserved bytes.
    public static func writableBytes(_ m: [UInt8]) -> Set<Int> {
        let (reserved, start, _) = walk(m)
        guard let start else { return [] }
        return Set(start..<min(16 + Int(m[14]) * 8, m.count)).subtracting(reserved)
    }
}

/// What a reader sees on a Type 5 tag, from the bytes alone (T5T 1.0: CC of 4 or 8 bytes, the
/// TLV area after it up to CC + MLEN × 8 within the memory, the first NDEF TLV).
public enum ReferenceType5 {
    public static func areaEnd(_ m: [UInt8]) -> (cc: Int, end: Int)? {
        guard m.count >= 8, m[0] == 0xE1 || m[0] == 0xE2, m[1] >> 6 == 1 else { return nil }
        let cc = m[2] == 0 ? 8 : 4
        let mlen = m[2] == 0 ? Int(m[6]) << 8 | Int(m[7]) : Int(m[2])
        return (cc, min(cc + mlen * 8, m.count))
    }

    public static func walk(_ m: [UInt8]) -> (ndefStart: Int?, reading: ReferenceType2.Reading) {
        guard let (cc, end) = areaEnd(m) else { return (nil, .broken("no valid CC")) }
        var p = cc
        while p < end {
            let start = p
            let tag = m[p]; p += 1
            if tag == 0x00 { continue }
            if tag == 0xFE { break }
            guard p < end else { return (nil, .broken("TLV cut off")) }
            var length = Int(m[p]); p += 1
            if length == 0xFF {
                guard p + 1 < end else { return (nil, .broken("length cut off")) }
                length = Int(m[p]) << 8 | Int(m[p + 1]); p += 2
            }
            guard p + length <= end else { return (tag == 0x03 ? start : nil, .broken("TLV \(tag) claims \(length) bytes past the area")) }
            if tag == 0x03 { return (start, .message(Array(m[p..<(p + length)]))) }
            p += length
        }
        return (nil, .broken("no NDEF TLV"))
    }

    public static func read(_ m: [UInt8]) -> ReferenceType2.Reading { walk(m).reading }
    public static func writableBytes(_ m: [UInt8]) -> Set<Int> {
        guard let start = walk(m).ndefStart, let (_, end) = areaEnd(m) else { return [] }
        return Set(start..<end)
    }
}

/// What a reader sees on a Type 3 tag (T3T 1.0 §7): the attribute block's checksum and fields,
/// Ln bytes from block 1. WriteF 0F with Ln 0 reads as empty (a write cut before its data).
public enum ReferenceType3 {
    public static func read(_ blocks: [Int: [UInt8]]) -> ReferenceType2.Reading {
        guard let a = blocks[0], a.count == 16 else { return .broken("no attribute block") }
        guard a.prefix(14).reduce(0, { $0 + Int($1) }) == Int(a[14]) << 8 | Int(a[15]) else { return .broken("bad checksum") }
        guard a[0] >> 4 == 1 else { return .broken("version") }
        let ln = Int(a[11]) << 16 | Int(a[12]) << 8 | Int(a[13])
        let nmaxb = Int(a[3]) << 8 | Int(a[4])
        if a[9] == 0x0F { return ln == 0 ? .message([]) : .broken("WriteF 0F with Ln \(ln): a half-written message") }
        guard a[9] == 0, ln <= nmaxb * 16 else { return .broken("WriteF \(a[9]) / Ln \(ln)") }
        let data = (1...max(1, nmaxb)).flatMap { blocks[$0] ?? [] }
        return .message(Array(data.prefix(ln)))
    }
}

/// What a reader sees on a Type 1 tag, decided from the bytes alone (T1TOP: CC at 08, the
/// TLVs from 0C, blocks D-E reserved (and F on dynamic memory), control TLVs reserving more, the
/// first NDEF TLV), so the library cannot grade its own work. A magic number of 00 with the rest
/// of the CC sound is the invalid message a cut write leaves: it reads as empty.
public enum ReferenceType1 {
    public static func walk(_ m: [UInt8], staticMemory: Bool) -> (reserved: Set<Int>, ndefStart: Int?, reading: ReferenceType2.Reading) {
        guard m.count >= 16, m[9] >> 4 == 1 else { return ([], nil, .broken("no valid CC")) }
        if m[8] == 0x00 { return ([], nil, .message([])) }
        guard m[8] == 0xE1 else { return ([], nil, .broken("NMN \(m[8])")) }
        return ReferenceType2.walkTLVs(m, from: 12, end: min((Int(m[10]) + 1) * 8, m.count), reserved: Set(0x68..<(staticMemory ? 0x78 : 0x80)))
    }

    public static func read(_ m: [UInt8], staticMemory: Bool) -> ReferenceType2.Reading { walk(m, staticMemory: staticMemory).reading }

    /// Addresses a write may change: the magic number and the data area from the NDEF TLV on,
    /// less reserved bytes.
    public static func writableBytes(_ m: [UInt8], staticMemory: Bool) -> Set<Int> {
        let (reserved, start, _) = walk(m, staticMemory: staticMemory)
        guard let start else { return [8] }
        return Set(start..<min((Int(m[10]) + 1) * 8, m.count)).subtracting(reserved).union([8])
    }
}

/// What a reader sees on a MIFARE Classic NDEF card, from the memory alone (NXP AN10787 /
/// AN1304, read independently of the library): sector 0's GPB with the DA bit, MAD1 (and MAD2)
/// with their CRC, the first run of sectors with AID 03 E1, their data blocks in order, the
/// first NDEF TLV.
public enum ReferenceClassic {
    public static func sectors(_ m: [UInt8]) -> Int { m.count == 320 ? 5 : m.count == 1024 ? 16 : m.count == 2048 ? 32 : 40 }
    public static func first(_ s: Int) -> Int { s < 32 ? s * 4 : 128 + (s - 32) * 16 }
    public static func dataBlocks(_ s: Int) -> Range<Int> { first(s)..<(first(s + 1) - 1) }

    public static func crc(_ bytes: ArraySlice<UInt8>) -> UInt8 {
        var c: UInt8 = 0xC7
        for b in bytes { c ^= b; for _ in 0..<8 { c = c & 0x80 != 0 ? (c << 1) ^ 0x1D : c << 1 } }
        return c
    }

    /// The physical byte addresses of the NDEF area, in order; nil when there is no valid MAD.
    public static func area(_ m: [UInt8]) -> [Int]? {
        let gpb = m[57]
        guard gpb & 0x80 != 0, crc(m[17..<48]) == m[16] else { return nil }
        var aids: [Int: [UInt8]] = [:]
        for s in 1...15 { aids[s] = [m[16 + 2 * s], m[17 + 2 * s]] }
        if gpb & 0x03 == 2, m.count > 1024 {
            guard crc(m[1025..<1072]) == m[1024] else { return nil }
            for s in 17...39 { aids[s] = [m[1024 + 2 * (s - 16)], m[1025 + 2 * (s - 16)]] }
        }
        var run: [Int] = []
        for s in 1..<sectors(m) where s != 16 {
            if aids[s] == [0x03, 0xE1] { run.append(s) } else if !run.isEmpty { break }
        }
        return run.flatMap { s in dataBlocks(s).flatMap { b in (b * 16)..<(b * 16 + 16) } }
    }

    public static func read(_ m: [UInt8]) -> ReferenceType2.Reading {
        guard let area = area(m) else { return .broken("no valid MAD") }
        let bytes = area.map { m[$0] }
        var p = 0
        while p < bytes.count {
            let tag = bytes[p]; p += 1
            if tag == 0x00 { continue }
            if tag == 0xFE { break }
            guard p < bytes.count else { return .broken("TLV cut off") }
            var length = Int(bytes[p]); p += 1
            if length == 0xFF {
                guard p + 1 < bytes.count else { return .broken("length cut off") }
                length = Int(bytes[p]) << 8 | Int(bytes[p + 1]); p += 2
            }
            guard p + length <= bytes.count else { return .broken("TLV \(tag) claims \(length) bytes past the area") }
            if tag == 0x03 { return .message(Array(bytes[p..<(p + length)])) }
            p += length
        }
        return .broken("no NDEF TLV")
    }

    /// The addresses a write may change: the NDEF area's data bytes.
    public static func writable(_ m: [UInt8]) -> Set<Int> { Set(area(m) ?? []) }
}
