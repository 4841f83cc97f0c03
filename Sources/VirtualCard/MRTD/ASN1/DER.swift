// The emulated chip's small DER writer, and the element reader with its error, for the
// structures the specimen and the chip build and parse.
import ISO7816

/// A small DER writer for the structures the specimen and the chip build (SecurityInfos,
/// LDSSecurityObject, X.509, CMS): each function returns one encoded element.
enum DER {
    static func element(_ tag: [UInt8], _ content: [UInt8]) -> [UInt8] { tag + BERTLV.encodeLength(content.count) + content }
    static func element(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] { element([tag], content) }

    static func sequence(_ parts: [UInt8]...) -> [UInt8] { element(0x30, parts.flatMap { $0 }) }
    static func sequence(of parts: [[UInt8]]) -> [UInt8] { element(0x30, parts.flatMap { $0 }) }
    /// SET OF in DER: the elements sorted by their encodings (X.690 §11.6).
    static func set(of parts: [[UInt8]]) -> [UInt8] { element(0x31, parts.sorted { $0.lexicographicallyPrecedes($1) }.flatMap { $0 }) }

    /// An INTEGER from an unsigned big-endian magnitude.
    static func integer(unsigned bytes: [UInt8]) -> [UInt8] {
        var b = Array(bytes.drop { $0 == 0 })
        if b.isEmpty { b = [0] }
        if b[0] & 0x80 != 0 { b.insert(0, at: 0) }
        return element(0x02, b)
    }

    static func integer(_ value: Int) -> [UInt8] {
        precondition(value >= 0, "DER.integer takes non-negative values")
        var b: [UInt8] = []
        var v = value
        repeat { b.insert(UInt8(v & 0xFF), at: 0); v >>= 8 } while v > 0
        return integer(unsigned: b)
    }

    static func boolean(_ value: Bool) -> [UInt8] { [0x01, 0x01, value ? 0xFF : 0x00] }
    static let null: [UInt8] = [0x05, 0x00]
    static func octetString(_ bytes: [UInt8]) -> [UInt8] { element(0x04, bytes) }
    /// A BIT STRING of whole bytes (no unused bits).
    static func bitString(_ bytes: [UInt8]) -> [UInt8] { element(0x03, [0] + bytes) }
    static func printableString(_ text: String) -> [UInt8] { element(0x13, Array(text.utf8)) }
    static func utf8String(_ text: String) -> [UInt8] { element(0x0C, Array(text.utf8)) }
    /// [n] EXPLICIT or a constructed IMPLICIT tag around `content`.
    static func contextConstructed(_ n: UInt8, _ content: [UInt8]) -> [UInt8] { element(0xA0 | n, content) }
    static func contextPrimitive(_ n: UInt8, _ content: [UInt8]) -> [UInt8] { element(0x80 | n, content) }

    /// UTCTime before 2050, GeneralizedTime from then on (RFC 5280 §4.1.2.5); `date` is
    /// "YYYYMMDDHHMMSS".
    static func time(_ date: String) -> [UInt8] {
        let year = Int(date.prefix(4)) ?? 2000
        if year < 2050 { return element(0x17, Array((String(date.dropFirst(2)) + "Z").utf8)) }
        return element(0x18, Array((date + "Z").utf8))
    }

    /// An OBJECT IDENTIFIER from dotted text ("2.23.136.1.1.1").
    static func oid(_ dotted: String) -> [UInt8] { element(0x06, oidContent(dotted)) }

    static func oidContent(_ dotted: String) -> [UInt8] {
        let arcs = dotted.split(separator: ".").map { UInt64($0) ?? 0 }
        guard arcs.count >= 2 else { return [] }
        var out = base128(arcs[0] * 40 + arcs[1])
        for arc in arcs.dropFirst(2) { out += base128(arc) }
        return out
    }

    private static func base128(_ value: UInt64) -> [UInt8] {
        var out = [UInt8(value & 0x7F)]
        var v = value >> 7
        while v > 0 {
            out.insert(UInt8(v & 0x7F) | 0x80, at: 0)
            v >>= 7
        }
        return out
    }

    /// Dotted text from an OBJECT IDENTIFIER's content; nil when malformed.
    static func dotted(_ content: [UInt8]) -> String? {
        guard let first = content.first, content.last.map({ $0 & 0x80 == 0 }) == true else { return nil }
        var arcs: [UInt64] = []
        var value: UInt64 = 0
        for b in content {
            guard value >> 56 == 0 else { return nil }
            value = value << 7 | UInt64(b & 0x7F)
            if b & 0x80 == 0 { arcs.append(value); value = 0 }
        }
        _ = first
        guard let head = arcs.first else { return nil }
        let prefix: [UInt64] = head < 40 ? [0, head] : head < 80 ? [1, head - 40] : [2, head - 80]
        return (prefix + arcs.dropFirst()).map(String.init).joined(separator: ".")
    }
}

/// A definite-length DER/BER element read from bytes: tag, value and the whole encoding.
struct DERElement: Sendable, Hashable {
    var tag: [UInt8]
    var value: [UInt8]
    var encoded: [UInt8]

    var isConstructed: Bool { (tag.first ?? 0) & 0x20 != 0 }

    /// The elements inside a constructed element's value.
    func children() throws(DERError) -> [DERElement] { try DERElement.sequence(value) }

    /// Every element in `bytes`, which must hold nothing else.
    static func sequence(_ bytes: [UInt8]) throws(DERError) -> [DERElement] {
        var out: [DERElement] = []
        var i = 0
        while i < bytes.count {
            let (e, next) = try read(bytes, at: i)
            out.append(e)
            i = next
        }
        return out
    }

    /// The one element at the start of `bytes`, and where the next begins.
    static func read(_ bytes: [UInt8], at start: Int) throws(DERError) -> (DERElement, Int) {
        var i = start
        guard i < bytes.count else { throw DERError("ends where an element should start") }
        var tag = [bytes[i]]
        i += 1
        if tag[0] & 0x1F == 0x1F {
            repeat {
                guard i < bytes.count, tag.count < 4 else { throw DERError("tag runs past the end") }
                tag.append(bytes[i])
                i += 1
            } while tag.last.map({ $0 & 0x80 != 0 }) == true
        }
        guard i < bytes.count else { throw DERError("length missing") }
        let first = bytes[i]
        i += 1
        var length = 0
        if first < 0x80 {
            length = Int(first)
        } else {
            let n = Int(first & 0x7F)
            guard n >= 1, n <= 3, bytes.count - i >= n else { throw DERError("unsupported or truncated length") }
            for _ in 0..<n { length = length << 8 | Int(bytes[i]); i += 1 }
        }
        guard bytes.count - i >= length else { throw DERError("element claims \(length) bytes, \(bytes.count - i) remain") }
        let value = Array(bytes[i..<(i + length)])
        return (DERElement(tag: tag, value: value, encoded: Array(bytes[start..<(i + length)])), i + length)
    }

    /// The value as a non-negative INTEGER, when it is one that fits an Int.
    var integer: Int? {
        guard tag == [0x02], !value.isEmpty, value.count <= 8, value[0] & 0x80 == 0 else { return nil }
        return value.reduce(0) { $0 << 8 | Int($1) }
    }

    var objectIdentifier: String? { tag == [0x06] ? DER.dotted(value) : nil }
}

/// Bytes that are not the DER the chip expected.
struct DERError: Error, Hashable, Sendable, CustomStringConvertible {
    var message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}
