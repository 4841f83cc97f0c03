// The mutations of the hostile matrix (issue 49): what a man in the middle, a reader or a
// hostile card can put in place of one answer. Each is applied to one exchange of a run.
import ISO7816

/// One replacement of one answer (data + SW1 SW2), or of one line of a session log.
public enum HostileMutation: Hashable, Sendable, CustomStringConvertible, CaseIterable {
    /// A bare status word in place of the answer (the reader-style `63 00`, `6F 00`, `64 01` among them).
    case statusWord(UInt16)
    /// A one-byte answer.
    case oneByte(UInt8)
    /// No bytes at all.
    case empty
    /// The data one byte short, the status word kept.
    case cutOneByte
    /// The data cut to its first half, the status word kept.
    case cutHalf
    /// One bit flipped in the middle of the data.
    case flipData
    /// One bit flipped a quarter into the data (in a CBC cryptogram, clear of its last block,
    /// where the padding would give the change away).
    case flipDataEarly
    /// One bit flipped in the last byte of the data (where a MAC trails: secure messaging's
    /// `8E`, EV2's CMACt, SCP03's R-MAC).
    case flipMAC
    /// One bit flipped inside the largest value of 64 bytes or more (an RSA or ECDSA signature,
    /// a certificate), or the data's last 64 bytes when no TLV holds one.
    case flipSignature
    /// The first primitive TLV with a value made empty (its parents' lengths kept right).
    case tlvEmpty
    /// The first primitive TLV with a value given twice.
    case tlvDuplicate
    /// The first primitive TLV with a value given a length one past the data's end.
    case tlvLengthPastEnd
    /// An earlier answer to the same command: this run's, else the clean run's (another session).
    case replay
    /// The reader's transmit fails (`SCARD_E_NOT_TRANSACTED`, a card pulled and put back).
    case transmitError
    /// The command never reaches the card, and the middle answers `90 00` for it: a write, a
    /// DELETE, a CommitPerso the card never saw, reported done (the review of issue 48).
    case withheld
    /// The value of the first primitive TLV with this tag XORed with `mask` (from its first
    /// byte): a chosen field changed on the way, the EMV AIP's DDA bit or the CA key index (8F).
    /// Not among `allCases`: a family lists the fields that matter to it.
    case tlvXor(tag: [UInt8], mask: [UInt8])

    /// Every mutation of the issue, in a fixed order.
    public static let allCases: [HostileMutation] =
        [0x6A82, 0x6982, 0x6985, 0x6700, 0x6D00, 0x6F00, 0x6283, 0x6300, 0x9000, 0x6401].map { .statusWord($0) }
        + [0x00, 0x0B, 0x90, 0xAF].map { .oneByte($0) }
        + [.empty, .cutOneByte, .cutHalf, .flipData, .flipDataEarly, .flipMAC, .flipSignature, .tlvEmpty, .tlvDuplicate, .tlvLengthPastEnd, .replay, .transmitError, .withheld]

    public var description: String {
        switch self {
        case .statusWord(let sw): "sw-\(Hex.encode([UInt8(sw >> 8), UInt8(sw & 0xFF)]))"
        case .oneByte(let b): "one-byte-\(Hex.encode([b]))"
        case .empty: "empty"
        case .cutOneByte: "cut-one-byte"
        case .cutHalf: "cut-half"
        case .flipData: "flip-data"
        case .flipDataEarly: "flip-data-early"
        case .flipMAC: "flip-mac"
        case .flipSignature: "flip-signature"
        case .tlvEmpty: "tlv-empty"
        case .tlvDuplicate: "tlv-duplicate"
        case .tlvLengthPastEnd: "tlv-length-past-end"
        case .replay: "replay"
        case .transmitError: "transmit-error"
        case .withheld: "withheld-9000"
        case .tlvXor(let tag, let mask): "tlv-\(Hex.encode(tag))-xor-\(Hex.encode(mask))"
        }
    }

    /// The answer in place of `response`, or nil when this mutation does not apply to it (no
    /// data to cut, no TLV, nothing earlier to replay) or would leave it as it is.
    /// `earlier`: answers to the same command seen before, newest last.
    func apply(to response: [UInt8], earlier: [[UInt8]]) -> [UInt8]? {
        let data = Array(response.dropLast(min(2, response.count)))
        let sw = Array(response.suffix(min(2, response.count)))
        let out: [UInt8]?
        switch self {
        case .statusWord(let w): out = [UInt8(w >> 8), UInt8(w & 0xFF)]
        case .oneByte(let b): out = [b]
        case .empty: out = []
        case .cutOneByte: out = data.isEmpty ? nil : data.dropLast() + sw
        case .cutHalf: out = data.count < 2 ? nil : Array(data.prefix(data.count / 2)) + sw
        case .flipData: out = data.isEmpty ? nil : Self.flip(data, at: data.count / 2) + sw
        case .flipDataEarly: out = data.count < 4 ? nil : Self.flip(data, at: data.count / 4) + sw
        case .flipMAC: out = data.isEmpty ? nil : Self.flip(data, at: data.count - 1) + sw
        case .flipSignature:
            if let value = HostileTLV.largestValue(data, atLeast: 64) {
                out = Self.flip(data, at: value.lowerBound + value.count / 2) + sw
            } else {
                out = data.count < 64 ? nil : Self.flip(data, at: data.count - 32) + sw
            }
        case .tlvEmpty: out = HostileTLV.emptyFirstLeaf(data).map { $0 + sw }
        case .tlvDuplicate: out = HostileTLV.duplicateFirstLeaf(data).map { $0 + sw }
        case .tlvLengthPastEnd: out = HostileTLV.firstLeafPastEnd(data).map { $0 + sw }
        case .replay: out = earlier.last { $0 != response }
        case .transmitError: out = nil
        case .withheld: out = [0x90, 0x00]
        case .tlvXor(let tag, let mask): out = HostileTLV.xorFirst(data, tag: tag, mask: mask).map { $0 + sw }
        }
        return out == response ? nil : out
    }

    static func flip(_ bytes: [UInt8], at index: Int) -> [UInt8] {
        var b = bytes
        b[index] ^= 0x01
        return b
    }
}

/// A thrown transmit, as a reader's failure reaches the library.
public struct HostileTransmitError: Error, CustomStringConvertible, Sendable {
    public var description: String { "the reader's transmit failed (SCARD_E_NOT_TRANSACTED)" }
}

/// Minimal BER-TLV walking for the TLV mutations: only data that is wholly a sequence of TLVs
/// (the library's own parser is what is under test, so this one is the harness's).
enum HostileTLV {
    struct Node {
        var header: Range<Int>
        var value: Range<Int>
        var constructed: Bool
        var children: [Node]
        var tag: [UInt8]
    }

    static func parse(_ b: [UInt8], _ range: Range<Int>) -> [Node]? {
        var i = range.lowerBound, out: [Node] = []
        while i < range.upperBound {
            let start = i
            // Padding between TLVs (ISO 7816-4 §5.2.2: 00 and FF).
            if b[i] == 0x00 || b[i] == 0xFF { return nil }
            let constructed = b[i] & 0x20 != 0
            var tagEnd = i + 1
            if b[i] & 0x1F == 0x1F {
                while tagEnd < range.upperBound, b[tagEnd] & 0x80 != 0 { tagEnd += 1 }
                tagEnd += 1
            }
            guard tagEnd < range.upperBound else { return nil }
            i = tagEnd
            var length = Int(b[i]); i += 1
            if length > 0x80 {
                let n = length - 0x80
                guard n <= 3, i + n <= range.upperBound else { return nil }
                length = b[i..<(i + n)].reduce(0) { $0 << 8 | Int($1) }
                i += n
            } else if length == 0x80 { return nil }
            guard i + length <= range.upperBound else { return nil }
            let value = i..<(i + length)
            let children = constructed ? parse(b, value) : []
            guard let children else { return nil }
            out.append(Node(header: start..<i, value: value, constructed: constructed, children: children, tag: Array(b[start..<tagEnd])))
            i += length
        }
        return out
    }

    static func encodeLength(_ n: Int) -> [UInt8] {
        if n < 0x80 { return [UInt8(n)] }
        if n <= 0xFF { return [0x81, UInt8(n)] }
        if n <= 0xFFFF { return [0x82, UInt8(n >> 8), UInt8(n & 0xFF)] }
        return [0x83, UInt8(n >> 16), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)]
    }

    /// Re-encodes `nodes`, `change` deciding each primitive's bytes (nil: as it was).
    static func encode(_ b: [UInt8], _ nodes: [Node], _ change: (Node) -> [UInt8]?) -> [UInt8] {
        var out: [UInt8] = []
        for n in nodes {
            if n.constructed {
                let inner = encode(b, n.children, change)
                out += n.tag + encodeLength(inner.count) + inner
            } else if let changed = change(n) {
                out += changed
            } else {
                out += b[n.header] + b[n.value]
            }
        }
        return out
    }

    static func firstLeaf(_ nodes: [Node]) -> Node? {
        for n in nodes {
            if n.constructed { if let leaf = firstLeaf(n.children) { return leaf } } else if !n.value.isEmpty { return n }
        }
        return nil
    }

    static func first(_ nodes: [Node], tag: [UInt8]) -> Node? {
        for n in nodes {
            if !n.constructed, n.tag == tag, !n.value.isEmpty { return n }
            if n.constructed, let found = first(n.children, tag: tag) { return found }
        }
        return nil
    }

    static func xorFirst(_ b: [UInt8], tag: [UInt8], mask: [UInt8]) -> [UInt8]? {
        guard !b.isEmpty, let nodes = parse(b, 0..<b.count), let leaf = first(nodes, tag: tag), leaf.value.count >= mask.count else { return nil }
        var value = Array(b[leaf.value])
        for (i, m) in mask.enumerated() { value[i] ^= m }
        return encode(b, nodes) { $0.header == leaf.header ? Array(b[leaf.header]) + value : nil }
    }

    static func emptyFirstLeaf(_ b: [UInt8]) -> [UInt8]? {
        guard !b.isEmpty, let nodes = parse(b, 0..<b.count), let leaf = firstLeaf(nodes) else { return nil }
        return encode(b, nodes) { $0.header == leaf.header ? leaf.tag + [0x00] : nil }
    }

    static func duplicateFirstLeaf(_ b: [UInt8]) -> [UInt8]? {
        guard !b.isEmpty, let nodes = parse(b, 0..<b.count), let leaf = firstLeaf(nodes) else { return nil }
        let whole = Array(b[leaf.header]) + b[leaf.value]
        return encode(b, nodes) { $0.header == leaf.header ? whole + whole : nil }
    }

    static func firstLeafPastEnd(_ b: [UInt8]) -> [UInt8]? {
        guard !b.isEmpty, let nodes = parse(b, 0..<b.count), let leaf = firstLeaf(nodes) else { return nil }
        // The parents' lengths stay as they were; the leaf claims every byte after it and one more.
        let tagEnd = leaf.header.lowerBound + leaf.tag.count
        var rest = b.count - leaf.header.upperBound + 1
        var header = leaf.tag + encodeLength(rest)
        // A longer length field moves the value: claim one past the end again.
        rest = b.count - (leaf.header.lowerBound + header.count) + 1
        header = leaf.tag + encodeLength(max(rest, 1))
        _ = tagEnd
        return Array(b[..<leaf.header.lowerBound]) + header + b[leaf.value.lowerBound...]
    }

    static func largestValue(_ b: [UInt8], atLeast minimum: Int) -> Range<Int>? {
        guard !b.isEmpty, let nodes = parse(b, 0..<b.count) else { return nil }
        var best: Range<Int>?
        func walk(_ ns: [Node]) {
            for n in ns {
                if n.constructed { walk(n.children) } else if n.value.count >= minimum, n.value.count > (best?.count ?? 0) { best = n.value }
            }
        }
        walk(nodes)
        return best
    }
}
