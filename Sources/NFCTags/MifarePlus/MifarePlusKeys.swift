// MIFARE Plus keys and key numbers: AES sector keys at 4000 + 2·sector (+1 for key B), the system
// keys 9000-9003, the configuration blocks B000-B003; key files for personalisation.
import ISO7816

/// A 16-byte AES key of a MIFARE Plus. Its `description` never shows the bytes.
public struct MifarePlusKey: Hashable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]
    public init?(_ bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        self.bytes = bytes
    }
    public var description: String { "a 16-byte AES key" }

    /// The factory key of an SL0 card's key blocks.
    public static let factory = MifarePlusKey([UInt8](repeating: 0xFF, count: 16))!
    /// Key A of the MAD sectors in SL3 (NXP AN10787): A0 … A7 twice.
    public static let mad = MifarePlusKey([0xA0, 0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6, 0xA7, 0xA0, 0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6, 0xA7])!
    /// Key A of NFC Forum sectors in SL3 (NXP AN10787): D3 F7 eight times.
    public static let ndef = MifarePlusKey([UInt8](repeating: 0, count: 16).enumerated().map { $0.offset % 2 == 0 ? 0xD3 : 0xF7 })!
}

/// Which of a sector's two keys.
public enum MifarePlusKeyType: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case a = "A", b = "B"
    public var description: String { rawValue }
}

/// Block numbers (BNr, 16 bits, sent LSB first) with a meaning of their own.
public enum MifarePlusBlockNumber {
    /// The AES key of a sector: 4000 + 2·sector for key A, one more for key B.
    public static func sectorKey(_ sector: Int, _ type: MifarePlusKeyType) -> UInt16 {
        UInt16(0x4000 + 2 * sector + (type == .b ? 1 : 0))
    }
    /// The sector and key type of a sector key block (4000-404F); nil for any other block.
    public static func sectorKeyOf(_ n: UInt16) -> (sector: Int, type: MifarePlusKeyType)? {
        guard (0x4000...0x404F).contains(n) else { return nil }
        return ((Int(n) - 0x4000) / 2, n & 1 == 0 ? .a : .b)
    }
    /// The card master key.
    public static let cardMasterKey: UInt16 = 0x9000
    /// The card configuration key.
    public static let cardConfigurationKey: UInt16 = 0x9001
    /// The key that switches to security level 2.
    public static let level2SwitchKey: UInt16 = 0x9002
    /// The key that switches to security level 3 (AuthenticateFirst with it, in SL1 or SL2).
    public static let level3SwitchKey: UInt16 = 0x9003
    /// The keys CommitPerso needs written first.
    public static let commitPersoNeeds: [UInt16] = [cardMasterKey, cardConfigurationKey, level3SwitchKey]
    /// Configuration blocks: B000 MFP configuration, B001 installation identifier, B002 ATS,
    /// B003 field configuration (writing it can make the card unusable).
    public static let configuration: ClosedRange<UInt16> = 0xB000...0xB003
    public static let fieldConfiguration: UInt16 = 0xB003

    /// "4002 (sector 1 key A)", "9003 (SL3 switch key)", "0004 (block 4)".
    public static func words(_ n: UInt16) -> String {
        let hex = Hex.encode([UInt8(n >> 8), UInt8(n & 0xFF)])
        if let (sector, type) = sectorKeyOf(n) { return "\(hex) (sector \(sector) key \(type))" }
        switch n {
        case 0x8000...0x8003: return "\(hex) (originality key)"
        case cardMasterKey: return "\(hex) (card master key)"
        case cardConfigurationKey: return "\(hex) (card configuration key)"
        case level2SwitchKey: return "\(hex) (SL2 switch key)"
        case level3SwitchKey: return "\(hex) (SL3 switch key)"
        case 0xA000...0xA0FF: return "\(hex) (virtual card key)"
        case 0xB000: return "\(hex) (MFP configuration block)"
        case 0xB001: return "\(hex) (installation identifier)"
        case 0xB002: return "\(hex) (ATS information)"
        case 0xB003: return "\(hex) (field configuration block)"
        case 0...0xFF: return "\(hex) (block \(n))"
        default: return hex
        }
    }

    /// Key numbers as runs with the sectors they belong to: "4040-404F (sectors 32-39)".
    public static func span(_ numbers: [UInt16]) -> String {
        var runs: [ClosedRange<UInt16>] = []
        for n in numbers.sorted() {
            if let last = runs.last, last.upperBound &+ 1 == n { runs[runs.count - 1] = last.lowerBound...n } else { runs.append(n...n) }
        }
        return runs.map { r in
            let hex = r.count == 1 ? Hex.encode([UInt8(r.lowerBound >> 8), UInt8(r.lowerBound & 0xFF)])
                : Hex.encode([UInt8(r.lowerBound >> 8), UInt8(r.lowerBound & 0xFF)]) + "-" + Hex.encode([UInt8(r.upperBound >> 8), UInt8(r.upperBound & 0xFF)])
            guard (0x4000...0x404F).contains(r.lowerBound), (0x4000...0x404F).contains(r.upperBound) else { return hex }
            let first = (Int(r.lowerBound) - 0x4000) / 2, last = (Int(r.upperBound) - 0x4000) / 2
            return hex + (first == last ? " (sector \(first))" : " (sectors \(first)-\(last))")
        }.joined(separator: ", ")
    }

    /// Whether WritePerso takes `n`: a data block, a sector key, a system key or a configuration block.
    public static func isPersonalizable(_ n: UInt16, sectors: Int) -> Bool {
        n < UInt16(sectors < 32 ? sectors * 4 : 128 + (sectors - 32) * 16)
            || (0x4000..<UInt16(0x4000 + 2 * sectors)).contains(n)
            || (0x9000...0x9003).contains(n) || configuration.contains(n)
    }
}

/// Keys for WritePerso, from a key file: a line `KEYNO HEX` (KEYNO in 4 hex digits, the key in 32;
/// spaces, ':' or '-' between bytes allowed), '#' comments, blank lines, CRLF and a byte-order mark.
public struct MifarePlusKeyFile: Sendable, Hashable {
    /// A key and the block number it goes to.
    public struct Entry: Sendable, Hashable {
        public var number: UInt16
        public var key: MifarePlusKey
    }
    /// The keys, in the order they are written.
    public var keys: [Entry]

    public init(_ keys: [(UInt16, MifarePlusKey)]) { self.keys = keys.map { Entry(number: $0.0, key: $0.1) } }
    init(entries: [Entry]) { keys = entries }

    /// Errors name the line, never its text (it holds a key).
    public static func parse(_ text: String, source: String) throws(MifarePlusError) -> MifarePlusKeyFile {
        var entries: [Entry] = []
        for (index, raw) in TextInput.normalized(text).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let content = String(raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
            let fields = content.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if fields.isEmpty { continue }
            let line = "\(source) line \(index + 1)"
            guard fields.count >= 2, fields[0].count == 4, let number = UInt16(fields[0], radix: 16) else {
                throw MifarePlusError(.refused, "\(line): a line is KEYNO HEX, KEYNO 4 hex digits (the line is not shown)")
            }
            let digits = fields.dropFirst().joined().filter { !":-,".contains($0) }
            guard let bytes = try? Hex.decode(digits), let key = MifarePlusKey(bytes) else {
                throw MifarePlusError(.refused, "\(line): the key of \(MifarePlusBlockNumber.words(number)) is not 32 hex digits (the line is not shown)")
            }
            if entries.contains(where: { $0.number == number }) {
                throw MifarePlusError(.refused, "\(line): \(MifarePlusBlockNumber.words(number)) is given twice")
            }
            entries.append(Entry(number: number, key: key))
        }
        return MifarePlusKeyFile(entries: entries)
    }

    /// proxmark3 `hf mfp initp`'s plan: one key for every sector key (A and B) of `sectors`
    /// sectors, and for the system keys 9000-9003.
    public static func everyKey(_ key: MifarePlusKey, sectors: Int) -> MifarePlusKeyFile {
        var entries: [Entry] = []
        for s in 0..<sectors { for t in MifarePlusKeyType.allCases { entries.append(Entry(number: MifarePlusBlockNumber.sectorKey(s, t), key: key)) } }
        for n in UInt16(0x9000)...0x9003 { entries.append(Entry(number: n, key: key)) }
        return MifarePlusKeyFile(entries: entries)
    }
}
