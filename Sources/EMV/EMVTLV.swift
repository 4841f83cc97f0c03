// BER-TLV as EMV uses it, decoded without copying: every data object of a card's answer, nested
// ones included, as a tag and the range of its value in the input.
import ISO7816

/// One data object found by `EMVTLV.objects(in:)`: its tag (up to 4 bytes, big-endian in a
/// UInt32), whether it is constructed, its nesting depth, and where its value is.
public struct EMVDataObject: Sendable, Hashable {
    public var tag: UInt32
    public var constructed: Bool
    public var depth: Int
    public var value: Range<Int>

    /// The tag's bytes, as people write them (9F36).
    public var tagBytes: [UInt8] {
        let count = tag > 0xFF_FFFF ? 4 : tag > 0xFFFF ? 3 : tag > 0xFF ? 2 : 1
        return (0..<count).reversed().map { UInt8(truncatingIfNeeded: tag >> (8 * UInt32($0))) }
    }
}

/// The zero-copy decoder behind the payment-card reader's data: one pass, no allocation but the
/// result's, constructed objects entered in place.
public enum EMVTLV {
    /// Every object of `bytes`, depth first, constructed ones followed by their contents (up to
    /// `maxDepth` levels; contents that do not parse are left as the object's value, as
    /// `BERTLV.decode` leaves them). 00 and FF between objects are padding (EMV Book 3 Annex B).
    /// - Throws: `EMVFormatError` naming the offset for a top-level tag, length or value past the end.
    public static func objects(in bytes: [UInt8], maxDepth: Int = 16) throws(EMVFormatError) -> [EMVDataObject] {
        var out: [EMVDataObject] = []
        out.reserveCapacity(bytes.count / 4)
        try bytes.withUnsafeBufferPointer { (b: UnsafeBufferPointer<UInt8>) throws(EMVFormatError) in
            try scan(b, 0..<b.count, depth: 0, maxDepth: maxDepth, into: &out)
        }
        return out
    }

    static func scan(_ b: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, depth: Int, maxDepth: Int, into out: inout [EMVDataObject]) throws(EMVFormatError) {
        var i = range.lowerBound
        let end = range.upperBound
        while i < end {
            let first = b[i]
            if first == 0x00 || first == 0xFF { i += 1; continue }
            var tag = UInt32(first)
            i += 1
            if first & 0x1F == 0x1F {
                var count = 0
                repeat {
                    guard i < end, count < 3 else { throw EMVFormatError("a tag runs past the end or past 4 bytes at offset \(i)") }
                    tag = tag << 8 | UInt32(b[i])
                    count += 1
                    i += 1
                } while b[i - 1] & 0x80 != 0
            }
            guard i < end else { throw EMVFormatError("the length of tag \(String(tag, radix: 16, uppercase: true)) is missing at offset \(i)") }
            var length = Int(b[i])
            i += 1
            if length > 0x80 {
                let n = length & 0x7F
                guard n <= 3, i + n <= end else { throw EMVFormatError("a length of \(n) bytes at offset \(i - 1)") }
                length = 0
                for _ in 0..<n { length = length << 8 | Int(b[i]); i += 1 }
            } else if length == 0x80 {
                throw EMVFormatError("an indefinite length at offset \(i - 1)")
            }
            guard length <= end - i else { throw EMVFormatError("tag \(String(tag, radix: 16, uppercase: true)) claims \(length) bytes at offset \(i), \(end - i) remain") }
            let constructed = first & 0x20 != 0
            out.append(EMVDataObject(tag: tag, constructed: constructed, depth: depth, value: i..<(i + length)))
            if constructed && depth < maxDepth {
                // As BERTLV does: a constructed object whose contents do not parse keeps its value
                // and gets no children.
                let mark = out.count
                do { try scan(b, i..<(i + length), depth: depth + 1, maxDepth: maxDepth, into: &out) } catch { out.removeSubrange(mark...) }
            }
            i += length
        }
    }
}
