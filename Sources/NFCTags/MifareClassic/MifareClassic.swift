// A MIFARE Classic card through PC/SC Part 3 pseudo-APDUs, with its memory layout, keys, access
// bits and value blocks.
import ISO7816

/// The memory of a MIFARE Classic (or MIFARE Plus in security level 1) card: sectors of 4
/// blocks of 16 bytes, and on 4K cards sectors 32-39 of 16 blocks (block 128 on). The last
/// block of every sector is its trailer: key A, the access bits, the general-purpose byte, key B.
public struct MifareClassicLayout: Hashable, Sendable, CustomStringConvertible {
    public enum Chip: String, Sendable, Hashable, CaseIterable {
        case mini, classic1K, classic4K, plus2K, plus4K
    }
    public let chip: Chip
    public init(_ chip: Chip) { self.chip = chip }

    /// From the PC/SC Part 3 card name of the ATR: 0001 1K, 0002 4K, 0026 Mini, 0036 / 0037
    /// MIFARE Plus 2K / 4K in security level 1 (Classic-compatible). Level 2 (0038, 0039) is not.
    public init?(cardName: UInt16) {
        switch cardName {
        case 0x0001: chip = .classic1K
        case 0x0002: chip = .classic4K
        case 0x0026: chip = .mini
        case 0x0036: chip = .plus2K
        case 0x0037: chip = .plus4K
        default: return nil
        }
    }

    /// The layout of a storage-card ATR of the Classic family (SS 03, ISO 14443 A part 3).
    public init?(atr: [UInt8]) {
        guard let card = (try? ATR(bytes: atr))?.storageCard, card.standard == 0x03 else { return nil }
        self.init(cardName: card.cardName)
    }

    public var description: String {
        switch chip {
        case .mini: return "MIFARE Mini"
        case .classic1K: return "MIFARE Classic 1K"
        case .classic4K: return "MIFARE Classic 4K"
        case .plus2K: return "MIFARE Plus 2K (SL1)"
        case .plus4K: return "MIFARE Plus 4K (SL1)"
        }
    }

    public var sectorCount: Int {
        switch chip {
        case .mini: return 5
        case .classic1K: return 16
        case .plus2K: return 32
        case .classic4K, .plus4K: return 40
        }
    }
    public var sectors: Range<Int> { 0..<sectorCount }
    public var blockCount: Int { firstBlock(ofSector: sectorCount) }
    public var byteCount: Int { blockCount * 16 }

    public func blockCount(inSector sector: Int) -> Int { sector < 32 ? 4 : 16 }
    public func firstBlock(ofSector sector: Int) -> Int { sector < 32 ? sector * 4 : 128 + (sector - 32) * 16 }
    public func trailerBlock(ofSector sector: Int) -> Int { firstBlock(ofSector: sector) + blockCount(inSector: sector) - 1 }
    public func blocks(inSector sector: Int) -> Range<Int> { firstBlock(ofSector: sector)..<(trailerBlock(ofSector: sector) + 1) }
    /// The data blocks of a sector (all but the trailer; sector 0's block 0 is the manufacturer block).
    public func dataBlocks(inSector sector: Int) -> Range<Int> { firstBlock(ofSector: sector)..<trailerBlock(ofSector: sector) }
    public func sector(ofBlock block: Int) -> Int { block < 128 ? block / 4 : 32 + (block - 128) / 16 }
    public func isTrailer(_ block: Int) -> Bool { trailerBlock(ofSector: sector(ofBlock: block)) == block }
    /// Which of the access bits' four groups rules a block: 0-2 data (on a 16-block sector,
    /// blocks 0-4, 5-9, 10-14), 3 the trailer.
    public func accessGroup(ofBlock block: Int) -> Int {
        let s = sector(ofBlock: block)
        let i = block - firstBlock(ofSector: s)
        return blockCount(inSector: s) == 4 ? i : min(3, i / 5)
    }
}

/// Key A or key B, with the code GENERAL AUTHENTICATE carries (60, 61).
public enum MifareClassicKeyType: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case a = 0x60, b = 0x61
    public var description: String { self == .a ? "A" : "B" }
}

/// A 6-byte MIFARE Classic key. Its `description` never shows the bytes.
public struct MifareClassicKey: Hashable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]
    public init?(_ bytes: [UInt8]) {
        guard bytes.count == 6 else { return nil }
        self.bytes = bytes
    }
    public var description: String { "a 6-byte key" }

    /// The factory key of every new card.
    public static let factory = MifareClassicKey([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])!
    /// The public key A of the MAD sectors (NXP AN10787).
    public static let mad = MifareClassicKey([0xA0, 0xA1, 0xA2, 0xA3, 0xA4, 0xA5])!
    /// The public key A of NFC Forum NDEF sectors (NXP AN1304).
    public static let ndef = MifareClassicKey([0xD3, 0xF7, 0xD3, 0xF7, 0xD3, 0xF7])!
}

/// A key to try, with where it came from ("factory", "--key 2", "keys.txt line 4"): reports
/// name keys by their label, never by their bytes.
public struct MifareClassicKeyCandidate: Hashable, Sendable, CustomStringConvertible {
    public var key: MifareClassicKey
    public var label: String
    public init(_ key: MifareClassicKey, label: String) {
        self.key = key
        self.label = label
    }
    public var description: String { label }

    /// The well-known public keys: factory FFFFFFFFFFFF, MAD A0A1A2A3A4A5, NDEF D3F7D3F7D3F7.
    public static let publicKeys = [
        MifareClassicKeyCandidate(.factory, label: "factory key"),
        MifareClassicKeyCandidate(.mad, label: "MAD key"),
        MifareClassicKeyCandidate(.ndef, label: "NDEF key"),
    ]

    /// Keys from text: one per line, 12 hex digits (spaces, ':' or '-' between bytes allowed),
    /// '#' comments, blank lines, CRLF and a byte-order mark. Errors name the line, never its text.
    /// - Parameters:
    ///   - text: the keys.
    ///   - source: how labels and errors name the text ("keys.txt", "$APDU_MIFARE_KEYS").
    public static func parse(_ text: String, source: String) throws(TagError) -> [MifareClassicKeyCandidate] {
        var out: [MifareClassicKeyCandidate] = []
        for (index, raw) in TextInput.normalized(text).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let content = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let digits = content.filter { !" \t:-,".contains($0) }
            if digits.isEmpty { continue }
            guard let bytes = try? Hex.decode(String(digits)), let key = MifareClassicKey(bytes) else {
                throw TagError(.badCapabilityContainer, "\(source) line \(index + 1): a key is 12 hex digits (the line is not shown)")
            }
            out.append(MifareClassicKeyCandidate(key, label: "\(source) line \(index + 1)"))
        }
        return out
    }
}

/// Who may do something to a block: the access conditions' answer.
public enum MifareClassicPermission: String, Sendable, Hashable, CustomStringConvertible {
    case never, keyA = "key A", keyB = "key B", both = "key A or B"
    public var description: String { rawValue }
    public func allows(_ key: MifareClassicKeyType) -> Bool {
        switch self {
        case .never: return false
        case .both: return true
        case .keyA: return key == .a
        case .keyB: return key == .b
        }
    }
}

/// The access bits of a sector trailer (bytes 6-8): for each of the four groups (three data
/// groups and the trailer) the three bits C1 C2 C3, stored once plain and once inverted.
/// Tables from the MIFARE Classic datasheet (MF1S50yyX §8.7); the byte order from the same
/// section: byte 6 = ~C2 ~C1, byte 7 = C1 ~C3, byte 8 = C3 C2 (high nibble first, bit n = group n).
public struct MifareClassicAccessBits: Hashable, Sendable, CustomStringConvertible {
    /// C1C2C3 of groups 0-3 as 3-bit numbers (C1 the high bit): 001 is `1`, 110 is `6`.
    public var conditions: [UInt8]

    public init(conditions: [UInt8]) {
        precondition(conditions.count == 4 && conditions.allSatisfy { $0 < 8 })
        self.conditions = conditions
    }

    /// Decodes bytes 6-8; nil when the inverted copy does not match (a chip blocks such a sector
    /// for good).
    public init?(bytes: [UInt8]) {
        guard bytes.count >= 3 else { return nil }
        let c1 = bytes[1] >> 4, c2 = bytes[2] & 0x0F, c3 = bytes[2] >> 4
        guard ~bytes[0] & 0x0F == c1, (~bytes[0] >> 4) & 0x0F == c2, ~bytes[1] & 0x0F == c3 else { return nil }
        conditions = (0..<4).map { g in (c1 >> g & 1) << 2 | (c2 >> g & 1) << 1 | (c3 >> g & 1) }
    }

    public var bytes: [UInt8] {
        var c1: UInt8 = 0, c2: UInt8 = 0, c3: UInt8 = 0
        for (g, c) in conditions.enumerated() {
            c1 |= (c >> 2 & 1) << g
            c2 |= (c >> 1 & 1) << g
            c3 |= (c & 1) << g
        }
        return [(~c2 & 0x0F) << 4 | (~c1 & 0x0F), c1 << 4 | (~c3 & 0x0F), c3 << 4 | c2]
    }

    public var description: String { bytes.hexString }

    /// FF 07 80: every data block open to key A or B, key A writes the trailer (factory state).
    public static let transport = MifareClassicAccessBits(conditions: [0, 0, 0, 1])
    /// 78 77 88: MAD sector, data read with A or B and written with B; trailer 011 (NXP AN10787).
    public static let mad = MifareClassicAccessBits(conditions: [4, 4, 4, 3])
    /// 7F 07 88: NDEF sector, read/write with key A or B; trailer 011 (NXP AN1304).
    public static let ndefReadWrite = MifareClassicAccessBits(conditions: [0, 0, 0, 3])
    /// 07 8F 0F: NDEF sector made read-only, for good (data 010, trailer 110; NXP AN1304).
    public static let ndefReadOnly = MifareClassicAccessBits(conditions: [2, 2, 2, 6])

    /// Data blocks: read, write, increment, decrement / transfer / restore.
    public struct DataRights: Hashable, Sendable {
        public var read, write, increment, decrement: MifareClassicPermission
    }
    /// The trailer: key A is never readable.
    public struct TrailerRights: Hashable, Sendable {
        public var writeKeyA, readAccessBits, writeAccessBits, readKeyB, writeKeyB: MifareClassicPermission
    }

    public static func dataRights(_ c: UInt8) -> DataRights {
        switch c {
        case 0: return DataRights(read: .both, write: .both, increment: .both, decrement: .both)
        case 2: return DataRights(read: .both, write: .never, increment: .never, decrement: .never)
        case 4: return DataRights(read: .both, write: .keyB, increment: .never, decrement: .never)
        case 6: return DataRights(read: .both, write: .keyB, increment: .keyB, decrement: .both)
        case 1: return DataRights(read: .both, write: .never, increment: .never, decrement: .both)
        case 3: return DataRights(read: .keyB, write: .keyB, increment: .never, decrement: .never)
        case 5: return DataRights(read: .keyB, write: .never, increment: .never, decrement: .never)
        default: return DataRights(read: .never, write: .never, increment: .never, decrement: .never)
        }
    }

    public static func trailerRights(_ c: UInt8) -> TrailerRights {
        switch c {
        case 0: return TrailerRights(writeKeyA: .keyA, readAccessBits: .keyA, writeAccessBits: .never, readKeyB: .keyA, writeKeyB: .keyA)
        case 2: return TrailerRights(writeKeyA: .never, readAccessBits: .keyA, writeAccessBits: .never, readKeyB: .keyA, writeKeyB: .never)
        case 4: return TrailerRights(writeKeyA: .keyB, readAccessBits: .both, writeAccessBits: .never, readKeyB: .never, writeKeyB: .keyB)
        case 6: return TrailerRights(writeKeyA: .never, readAccessBits: .both, writeAccessBits: .never, readKeyB: .never, writeKeyB: .never)
        case 1: return TrailerRights(writeKeyA: .keyA, readAccessBits: .keyA, writeAccessBits: .keyA, readKeyB: .keyA, writeKeyB: .keyA)
        case 3: return TrailerRights(writeKeyA: .keyB, readAccessBits: .both, writeAccessBits: .keyB, readKeyB: .never, writeKeyB: .keyB)
        case 5: return TrailerRights(writeKeyA: .never, readAccessBits: .both, writeAccessBits: .keyB, readKeyB: .never, writeKeyB: .never)
        default: return TrailerRights(writeKeyA: .never, readAccessBits: .both, writeAccessBits: .never, readKeyB: .never, writeKeyB: .never)
        }
    }

    public var trailer: TrailerRights { Self.trailerRights(conditions[3]) }
    public func data(group: Int) -> DataRights { Self.dataRights(conditions[group]) }

    /// Key B is readable (trailer 000, 010, 001): the chip then refuses every access after an
    /// authentication with key B.
    public var keyBReadable: Bool { [0, 2, 1].contains(conditions[3]) }
    /// No key can ever change the access bits again.
    public var freezesAccessBits: Bool { trailer.writeAccessBits == .never }
    /// No key can write any part of the trailer again: keys and access bits are final.
    public var locksOutTrailer: Bool { trailer.writeKeyA == .never && trailer.writeAccessBits == .never && trailer.writeKeyB == .never }

    /// Whether `key` may do `operation` to a block of `group`, with key B's readability applied.
    public func allows(_ operation: MifareClassicOperation, group: Int, with key: MifareClassicKeyType) -> Bool {
        if key == .b && keyBReadable { return false }
        let permission: MifareClassicPermission
        if group == 3 {
            let t = trailer
            switch operation {
            case .read: permission = t.readAccessBits
            case .write: permission = t.writeAccessBits
            case .increment, .decrement: permission = .never
            }
        } else {
            let d = data(group: group)
            switch operation {
            case .read: permission = d.read
            case .write: permission = d.write
            case .increment: permission = d.increment
            case .decrement: permission = d.decrement
            }
        }
        return permission.allows(key)
    }

    /// The access of a data group in plain words.
    public static func words(data c: UInt8) -> String {
        let d = dataRights(c)
        switch c {
        case 7: return "no access"
        case 0: return "read, write, increment, decrement: key A or B (transport)"
        default:
            var parts = ["read: \(d.read)", "write: \(d.write)"]
            if d.increment != .never || d.decrement != .never { parts += ["increment: \(d.increment)", "decrement/transfer/restore: \(d.decrement)"] }
            return parts.joined(separator: ", ")
        }
    }

    /// The trailer's access in plain words.
    public static func words(trailer c: UInt8) -> String {
        let t = trailerRights(c)
        return "key A write: \(t.writeKeyA), access bits read: \(t.readAccessBits), write: \(t.writeAccessBits), key B read: \(t.readKeyB), write: \(t.writeKeyB)"
    }
}

public enum MifareClassicOperation: String, Sendable, Hashable {
    case read, write, increment, decrement
}

/// A value block: a signed 32-bit value stored three times (plain, inverted, plain, little
/// endian) and a one-byte address four times (plain, inverted, plain, inverted).
public struct MifareClassicValueBlock: Hashable, Sendable {
    public var value: Int32
    public var address: UInt8
    public init(value: Int32, address: UInt8) {
        self.value = value
        self.address = address
    }

    /// Recognises the format; nil for any other block.
    public init?(bytes b: [UInt8]) {
        guard b.count == 16 else { return nil }
        let v = Array(b[0..<4]), inv = Array(b[4..<8]), v2 = Array(b[8..<12])
        guard v == v2, zip(v, inv).allSatisfy({ $0 == ~$1 }), b[12] == b[14], b[13] == b[15], b[12] == ~b[13] else { return nil }
        value = Int32(bitPattern: UInt32(v[0]) | UInt32(v[1]) << 8 | UInt32(v[2]) << 16 | UInt32(v[3]) << 24)
        address = b[12]
    }

    public var bytes: [UInt8] {
        let u = UInt32(bitPattern: value)
        let v = (0..<4).map { UInt8(truncatingIfNeeded: u >> (8 * $0)) }
        return v + v.map { ~$0 } + v + [address, ~address, address, ~address]
    }
}

/// A MIFARE Classic card through a PC/SC reader's Part 3 pseudo-APDUs: LOAD KEYS into a reader
/// key slot, GENERAL AUTHENTICATE a block with key A or B, READ BINARY and UPDATE BINARY of one
/// 16-byte block (P2 the block number). Every PC/SC contactless reader has these; no raw path
/// is needed.
///
/// The chip keeps one authentication: a sector, with one key. This tracks it, so a run over a
/// card authenticates once per sector; after any refusal the chip drops it (a NAK halts it),
/// and so does this. Keys are loaded only when the slot holds another one, and are marked as
/// secrets for the transport's observer (traces show `**`).
public final class MifareClassicCard {
    public let transport: APDUTransport
    public let layout: MifareClassicLayout
    /// The reader key slot LOAD KEYS fills (00 on most readers; volatile memory, P1 00).
    public var keySlot: UInt8

    /// What the chip is authenticated for now.
    public struct Authentication: Hashable, Sendable {
        public var sector: Int
        public var keyType: MifareClassicKeyType
        public var key: MifareClassicKeyCandidate
    }
    public private(set) var current: Authentication?
    private var slotHolds: MifareClassicKey?
    /// GENERAL AUTHENTICATEs sent so far (the dump's measure).
    public private(set) var authentications = 0

    public init(transport: APDUTransport, layout: MifareClassicLayout, keySlot: UInt8 = 0) {
        self.transport = transport
        self.layout = layout
        self.keySlot = keySlot
    }

    /// Loads `key` into the reader's key slot (LOAD KEYS `FF 82 00 slot 06 key`).
    public func loadKey(_ key: MifareClassicKey) throws {
        if slotHolds == key { return }
        let command = CommandAPDU(cla: 0xFF, ins: 0x82, p1: 0x00, p2: keySlot, data: key.bytes)
        let r = try transport.send(command, secret: 5..<11)
        guard r.statusWord == .success else {
            slotHolds = nil
            throw TagError(.authenticationFailed, "the reader refused LOAD KEYS into key slot \(keySlot): \(r.statusWord) (\(r.statusWord.meaning.text)); without it no MIFARE Classic sector can be authenticated (--key-slot picks another slot)")
        }
        slotHolds = key
    }

    /// Authenticates `sector` (through its trailer block) with `key` as key A or B. Returns false
    /// when the card does not accept the key (most readers answer 63 00).
    @discardableResult
    public func authenticate(sector: Int, keyType: MifareClassicKeyType, key: MifareClassicKeyCandidate) throws -> Bool {
        guard layout.sectors.contains(sector) else {
            throw TagError(.beyondReach, "sector \(sector) does not exist on a \(layout) (sectors 0-\(layout.sectorCount - 1))")
        }
        if let current, current.sector == sector, current.keyType == keyType, current.key.key == key.key { return true }
        try loadKey(key.key)
        current = nil
        let block = layout.trailerBlock(ofSector: sector)
        let command = CommandAPDU(cla: 0xFF, ins: 0x86, p1: 0x00, p2: 0x00,
                                  data: [0x01, UInt8(block >> 8), UInt8(block & 0xFF), keyType.rawValue, keySlot])
        authentications += 1
        let r = try transport.send(command)
        // 6A 81 / 6D 00 / 6E 00: the reader has no GENERAL AUTHENTICATE; no key would do.
        if [0x6A81, 0x6D00, 0x6E00].contains(r.statusWord.rawValue) {
            throw TagError(.authenticationFailed, "the reader does not support GENERAL AUTHENTICATE (\(r.statusWord): \(r.statusWord.meaning.text))")
        }
        guard r.statusWord == .success else { return false }
        current = Authentication(sector: sector, keyType: keyType, key: key)
        return true
    }

    /// Authenticates with the first of `candidates` that opens `sector` (key type by key type,
    /// in the order given); nil when none does.
    public func open(sector: Int, with candidates: [MifareClassicKeyCandidate], as types: [MifareClassicKeyType] = [.a, .b]) throws -> Authentication? {
        if let current, current.sector == sector, types.contains(current.keyType) { return current }
        for type in types {
            for candidate in candidates where try authenticate(sector: sector, keyType: type, key: candidate) {
                return current
            }
        }
        return nil
    }

    func checkAuthenticated(_ block: Int, _ what: String) throws {
        guard (0..<layout.blockCount).contains(block) else {
            throw TagError(.beyondReach, "block \(block) does not exist on a \(layout) (blocks 0-\(layout.blockCount - 1))")
        }
        guard let current, current.sector == layout.sector(ofBlock: block) else {
            throw TagError(.authenticationFailed, "\(what) block \(block) needs an authentication of sector \(layout.sector(ofBlock: block)) first")
        }
    }

    /// READ BINARY of one block, in the sector authenticated now.
    public func read(block: Int) throws -> [UInt8] {
        try checkAuthenticated(block, "reading")
        let r = try transport.storageReadBinary(block: block, size: 16)
        guard r.statusWord == .success, r.data.count == 16 else {
            current = nil
            throw TagError(.readFailed, "the card refused to read block \(block) with key \(keyName): \(r.statusWord) (\(r.statusWord.meaning.text))")
        }
        return r.data
    }

    /// UPDATE BINARY of one block, in the sector authenticated now. A trailer's keys are marked
    /// as secrets for the observer.
    public func write(block: Int, data: [UInt8]) throws {
        precondition(data.count == 16)
        try checkAuthenticated(block, "writing")
        let command = CommandAPDU(cla: 0xFF, ins: 0xD6, p1: UInt8(block >> 8), p2: UInt8(block & 0xFF), data: data)
        let r = layout.isTrailer(block) ? try transport.send(command, secret: 5..<21) : try transport.send(command)
        guard r.statusWord == .success else {
            current = nil
            throw TagError(.writeFailed, "the card refused to write block \(block) with key \(keyName): \(r.statusWord) (\(r.statusWord.meaning.text))")
        }
    }

    /// A value-block operation through the ACS / Identiv value-block command (`FF D7 00 block 05
    /// op value`, op 00 store, 01 increment, 02 decrement; value big-endian): the chip's
    /// increment/decrement and transfer in one.
    public func changeValue(block: Int, by delta: Int32) throws {
        try checkAuthenticated(block, "changing the value of")
        let op: UInt8 = delta >= 0 ? 0x01 : 0x02
        let m = delta == Int32.min ? UInt32(1) << 31 : UInt32(abs(delta))
        let data = [op, UInt8(m >> 24), UInt8(m >> 16 & 0xFF), UInt8(m >> 8 & 0xFF), UInt8(m & 0xFF)]
        let r = try transport.send(CommandAPDU(cla: 0xFF, ins: 0xD7, p1: UInt8(block >> 8), p2: UInt8(block & 0xFF), data: data))
        guard r.statusWord == .success else {
            current = nil
            throw TagError(.writeFailed, "the card refused to \(delta >= 0 ? "increment" : "decrement") block \(block): \(r.statusWord) (\(r.statusWord.meaning.text))")
        }
    }

    /// Writes `value` as a value block (the ACS value-block command's store, op 00): the value
    /// format with the block's own number as its address.
    public func storeValue(block: Int, value: Int32) throws {
        try checkAuthenticated(block, "storing a value in")
        let u = UInt32(bitPattern: value)
        let data: [UInt8] = [0x00, UInt8(u >> 24), UInt8(u >> 16 & 0xFF), UInt8(u >> 8 & 0xFF), UInt8(u & 0xFF)]
        let r = try transport.send(CommandAPDU(cla: 0xFF, ins: 0xD7, p1: UInt8(block >> 8), p2: UInt8(block & 0xFF), data: data))
        guard r.statusWord == .success else {
            current = nil
            throw TagError(.writeFailed, "the card refused to store a value in block \(block): \(r.statusWord) (\(r.statusWord.meaning.text))")
        }
    }

    /// Forgets the authentication (the card went away, or a command failed elsewhere).
    public func forgetAuthentication() { current = nil }

    private var keyName: String { current.map { "\($0.keyType) (\($0.key.label))" } ?? "?" }
}
