// A small DER/BER writer for building test data (data groups, EF.SOD, master lists) field by
// field, so each test can break exactly one thing.
import ISO7816

/// Hex to bytes for test vectors; an unreadable vector is a broken test, so it traps.
func bytes(_ hex: String) -> [UInt8] {
    do { return try Hex.decode(hex) } catch { fatalError("test vector is not hex: \(error)") }
}

enum TestDER {
    static func length(_ n: Int) -> [UInt8] { BERTLV.encodeLength(n) }

    static func tlv(_ tag: [UInt8], _ content: [UInt8]) -> [UInt8] { tag + length(content.count) + content }
    static func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] { tlv([tag], content) }
    /// BER's indefinite form: `80` as the length, end-of-contents `00 00` after the content.
    static func indefinite(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] { [tag, 0x80] + content + [0, 0] }

    static func sequence(_ parts: [UInt8]...) -> [UInt8] { tlv(0x30, parts.flatMap { $0 }) }
    static func sequence(_ parts: [[UInt8]]) -> [UInt8] { tlv(0x30, parts.flatMap { $0 }) }
    static func set(_ parts: [UInt8]...) -> [UInt8] { tlv(0x31, parts.flatMap { $0 }) }
    static func set(_ parts: [[UInt8]]) -> [UInt8] { tlv(0x31, parts.flatMap { $0 }) }
    static func octetString(_ content: [UInt8]) -> [UInt8] { tlv(0x04, content) }
    static func null() -> [UInt8] { [0x05, 0x00] }
    static func printable(_ s: String) -> [UInt8] { tlv(0x13, Array(s.utf8)) }
    static func utf8(_ s: String) -> [UInt8] { tlv(0x0C, Array(s.utf8)) }
    /// `[n]` constructed (explicit tagging, or an implicit SEQUENCE/SET).
    static func context(_ n: UInt8, _ content: [UInt8]) -> [UInt8] { tlv(0xA0 | n, content) }
    /// `[n]` primitive (implicit tagging of a primitive).
    static func contextPrimitive(_ n: UInt8, _ content: [UInt8]) -> [UInt8] { tlv(0x80 | n, content) }

    static func integer(_ value: Int) -> [UInt8] {
        var content: [UInt8] = []
        var v = value
        repeat {
            content.insert(UInt8(truncatingIfNeeded: v), at: 0)
            v >>= 8
        } while v != 0 && v != -1
        if value >= 0, let first = content.first, first & 0x80 != 0 { content.insert(0, at: 0) }
        return tlv(0x02, content)
    }

    static func oid(_ dotted: String) -> [UInt8] {
        let arcs = dotted.split(separator: ".").map { UInt64($0)! }
        var content: [UInt8] = []
        func base128(_ v: UInt64) -> [UInt8] {
            var out: [UInt8] = [UInt8(v & 0x7F)]
            var rest = v >> 7
            while rest > 0 {
                out.insert(UInt8(rest & 0x7F) | 0x80, at: 0)
                rest >>= 7
            }
            return out
        }
        content += base128(arcs[0] * 40 + arcs[1])
        for arc in arcs.dropFirst(2) { content += base128(arc) }
        return tlv(0x06, content)
    }

    static func algorithm(_ oid: String, parameters: [UInt8]? = nil) -> [UInt8] {
        sequence(TestDER.oid(oid), parameters ?? [])
    }

    /// `YYMMDDhhmmssZ`.
    static func utcTime(_ text: String) -> [UInt8] { tlv(0x17, Array(text.utf8)) }
}
