// The answer to reset parsed (ISO/IEC 7816-3 §8), with PC/SC Part 3 storage-card fields and
// names from pcsc-tools' list.

/// An answer to reset (ISO/IEC 7816-3 §8), parsed: TS, T0, the interface bytes, protocols,
/// historical bytes, TCK, and PC/SC Part 3 storage-card fields when present.
public struct ATR: Hashable, Sendable {
    public struct InterfaceBytes: Hashable, Sendable {
        /// 1-based group index i of TAi/TBi/TCi/TDi.
        public var index: Int
        public var ta: UInt8?, tb: UInt8?, tc: UInt8?, td: UInt8?
    }

    /// PC/SC Part 3 §3.1.3.2.3: a contactless storage card behind a PC/SC reader.
    public struct StorageCard: Hashable, Sendable {
        /// Standard byte SS (e.g. 03 ISO 14443 A part 3).
        public var standard: UInt8
        /// Card name NN NN (e.g. 00 03 MIFARE Ultralight).
        public var cardName: UInt16
        public var standardName: String? { ATR.standardNames[standard] }
        public var name: String? { ATR.cardNames[cardName] }
    }

    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        public var offset: Int
        public var reason: String
        public var description: String { "ATR byte \(offset): \(reason)" }
    }

    public var bytes: [UInt8]
    public var ts: UInt8
    public var t0: UInt8
    public var interfaceBytes: [InterfaceBytes]
    public var historicalBytes: [UInt8]
    public var tck: UInt8?
    /// Protocols offered (T=0 when no TD says otherwise).
    public var protocols: [Int]

    /// Whether TCK is present and the XOR of T0…TCK is 0 (TCK is mandatory unless only T=0).
    public var tckValid: Bool? {
        guard let tck else { return nil }
        return bytes.dropFirst().dropLast().reduce(0, ^) ^ tck == 0
    }

    public var convention: String { ts == 0x3B ? "direct" : ts == 0x3F ? "inverse" : "unknown" }

    public init(bytes: [UInt8]) throws(ParseError) {
        guard bytes.count >= 2 else { throw ParseError(offset: bytes.count, reason: "an ATR has at least TS and T0") }
        guard bytes.count <= 33 else { throw ParseError(offset: 33, reason: "an ATR has at most 33 bytes, this has \(bytes.count)") }
        self.bytes = bytes
        ts = bytes[0]
        guard ts == 0x3B || ts == 0x3F else { throw ParseError(offset: 0, reason: "TS must be 3B or 3F, got \(Hex.encode([ts]))") }
        t0 = bytes[1]
        var i = 2
        var y = t0 >> 4
        var groups: [InterfaceBytes] = []
        var protocols: [Int] = []
        var index = 1
        while true {
            var g = InterfaceBytes(index: index)
            func next(_ name: String) throws(ParseError) -> UInt8 {
                guard i < bytes.count else { throw ParseError(offset: i, reason: "\(name)\(index) announced but missing") }
                defer { i += 1 }
                return bytes[i]
            }
            if y & 1 != 0 { g.ta = try next("TA") }
            if y & 2 != 0 { g.tb = try next("TB") }
            if y & 4 != 0 { g.tc = try next("TC") }
            if y & 8 != 0 { g.td = try next("TD") }
            groups.append(g)
            guard let td = g.td else { break }
            let p = Int(td & 0x0F)
            if !protocols.contains(p) { protocols.append(p) }
            y = td >> 4
            index += 1
        }
        interfaceBytes = groups
        let k = Int(t0 & 0x0F)
        guard bytes.count - i >= k else { throw ParseError(offset: i, reason: "T0 announces \(k) historical bytes, only \(bytes.count - i) present") }
        historicalBytes = Array(bytes[i..<(i + k)])
        i += k
        if protocols.isEmpty { protocols = [0] }
        self.protocols = protocols
        let needsTCK = protocols.contains { $0 != 0 }
        if i < bytes.count {
            guard i == bytes.count - 1 else { throw ParseError(offset: i + 1, reason: "\(bytes.count - i - 1) unexpected bytes after TCK") }
            tck = bytes[i]
        } else if needsTCK {
            throw ParseError(offset: i, reason: "TCK missing (mandatory when T=1 or other protocols are offered)")
        } else {
            tck = nil
        }
    }

    public init(hex: some StringProtocol) throws(ParseError) {
        let b: [UInt8]
        do { b = try Hex.decode(hex) } catch { throw ParseError(offset: 0, reason: error.description) }
        try self.init(bytes: b)
    }

    /// PC/SC Part 3 storage-card fields: historical bytes `80 4F 0C A0 00 00 03 06 SS NN NN 00 00 00 00`.
    public var storageCard: StorageCard? {
        let h = historicalBytes
        guard h.count >= 12, h[0] == 0x80, h[1] == 0x4F, h[2] >= 0x0C,
              Array(h[3..<8]) == [0xA0, 0x00, 0x00, 0x03, 0x06] else { return nil }
        return StorageCard(standard: h[8], cardName: UInt16(h[9]) << 8 | UInt16(h[10]))
    }

    static let standardNames: [UInt8: String] = [
        0x01: "ISO 14443 A part 1", 0x02: "ISO 14443 A part 2", 0x03: "ISO 14443 A part 3",
        0x05: "ISO 14443 B part 1", 0x06: "ISO 14443 B part 2", 0x07: "ISO 14443 B part 3",
        0x09: "ISO 15693 part 1", 0x0A: "ISO 15693 part 2", 0x0B: "ISO 15693 part 3", 0x0C: "ISO 15693 part 4",
        0x0D: "contact (7816-10) I2C", 0x0E: "contact (7816-10) extended I2C", 0x0F: "contact (7816-10) 2WBP",
        0x10: "contact (7816-10) 3WBP", 0x11: "FeliCa",
    ]

    static let cardNames: [UInt16: String] = [
        0x0001: "MIFARE Classic 1K", 0x0002: "MIFARE Classic 4K", 0x0003: "MIFARE Ultralight",
        0x0026: "MIFARE Mini", 0x003A: "MIFARE Ultralight C", 0x0036: "MIFARE Plus SL1 2K",
        0x0037: "MIFARE Plus SL1 4K", 0x0038: "MIFARE Plus SL2 2K", 0x0039: "MIFARE Plus SL2 4K",
        0x002F: "Jewel", 0x0030: "Topaz", 0xF004: "Topaz (ACS)", 0x0031: "FeliCa", 0x0005: "SRI / ST", 0x0006: "SRIX4K",
        0x0007: "SRI512", 0x0008: "SRT512", 0x0009: "ICODE SLI", 0x0014: "Tag-it HF-I Plus",
        0xFF28: "JCOP 30", 0xFF88: "Infineon my-d move",
    ]

    /// Names from pcsc-tools' list (`/usr/share/pcsc/smartcard_list.txt` or another path),
    /// matching its regular-expression-like patterns (`..` any byte). Never a network lookup.
    public static func names(forHex atrHex: String, list: String) -> [String] {
        var names: [String] = []
        var matching = false
        let target = Array(atrHex.filter { !$0.isWhitespace }.uppercased().utf8)
        for line in list.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("\t") {
                if matching { names.append(line.trimmingPrefix("\t").description) }
                continue
            }
            matching = false
            let pattern = Array(line.filter { !$0.isWhitespace }.uppercased().utf8)
            if pattern.isEmpty || line.hasPrefix("#") { continue }
            matching = matches(pattern: pattern, target: target)
        }
        return names
    }

    /// pcsc-tools patterns: hex digits, `.` any digit, `[...]` a class; this covers `.` and
    /// literal digits, and treats other syntax as no match.
    static func matches(pattern: [UInt8], target: [UInt8]) -> Bool {
        guard pattern.count == target.count else { return false }
        for (p, t) in zip(pattern, target) where p != UInt8(ascii: ".") && p != t { return false }
        return true
    }
}
