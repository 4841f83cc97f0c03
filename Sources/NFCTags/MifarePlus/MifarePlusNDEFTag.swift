// NDEF on a MIFARE Plus in SL3 (NXP AN10787): the MAD under the public AES MAD key, the NFC Forum
// sectors under the public NDEF key, read with MACed multi-block reads. Read-only here.
import ISO7816

/// NDEF on a MIFARE Plus in security level 3, laid out as NXP AN10787 describes: MAD1 (and MAD2)
/// as on a Classic, sector 0 (and 16) opened with key A `A0…A7` twice, every sector with the NFC
/// Forum AID `03E1` opened with key A `D3F7` eight times; the TLVs run through the NDEF sectors'
/// data blocks as on a Classic (AN1304). One authentication per sector (AuthenticateFirst once,
/// NonFirst after), reads of up to `blocksPerRead` blocks, every answer's MAC checked.
///
/// A card in SL1 is a MIFARE Classic to the reader and is read as one. This tool does not write
/// NDEF on SL3 cards (`writeNDEF` refuses before sending anything).
public final class MifarePlusNDEFTag: NDEFTag {
    public var writeObserver: ((WriteStep) -> Void)?
    public let card: MifarePlusCard
    /// 4K's layout: a 2K's first 32 sectors are the same, and the MAD says which exist.
    public let layout = MifareClassicLayout(.plus4K)
    public let directory: MifareApplicationDirectory
    public let sectors: [Int]
    public let uid: [UInt8]?
    /// Per NDEF sector, its trailer's general-purpose byte (the NFC Forum access byte).
    public private(set) var accessBytes: [Int: UInt8] = [:]
    var image: [UInt8] = []
    var readSectors: Set<Int> = []
    public private(set) var tlv: Type2TLVArea

    public var kind: String { "plus" }
    /// The family read, for people: "MIFARE Plus SL3 (MAD2, 30 NFC Forum sectors)" (issue 48: not a Type 4 tag).
    public var familyDescription: String { "MIFARE Plus SL3 (MAD\(directory.version), \(sectors.count) NFC Forum sector\(sectors.count == 1 ? "" : "s"))" }
    public var mappingVersion: String { sectors.first.flatMap { accessBytes[$0] }.map { MifareClassicNDEFAccess(gpb: $0).version } ?? "1.0" }
    public var capacity: Int { tlv.capacity }

    /// Whether the ATR names a MIFARE Plus in SL3 or SL0 by its ATS historical bytes.
    public static func isPlus(atr: [UInt8]) -> Bool { MifarePlusIdentity.historicalBytesNamePlus(atr) != nil }

    /// Reads the MAD (sector 0, and sector 16 for MAD2) and the NDEF TLV's start.
    public static func detect(_ transport: APDUTransport, atr: [UInt8], uid: [UInt8]? = nil) throws -> MifarePlusNDEFTag {
        let card = MifarePlusCard(transport: transport, wrappingAllowed: MifarePlusIdentity.historicalBytesNamePlus(atr)?.hasVersion ?? false)
        do {
            try card.authenticate(MifarePlusBlockNumber.sectorKey(0, .a), key: .mad)
        } catch let e as MifarePlusError where e.kind == .authenticationFailed {
            throw TagError(.notNDEF, "no NFC Forum MAD: sector 0 does not open with the public MAD key (\(e.message))")
        }
        let sector0 = try card.read(block: 1, count: 3)
        let mad1 = Array(sector0[0..<32]), gpb = sector0[32 + 9]
        var mad2: [UInt8]?
        if gpb & 0x03 == 2 {
            try card.authenticate(MifarePlusBlockNumber.sectorKey(16, .a), key: .mad, first: false)
            mad2 = try card.read(block: 64, count: 3)
        }
        let directory = try MifareApplicationDirectory(gpb: gpb, mad1: mad1, mad2: mad2)
        let tag = MifarePlusNDEFTag(card: card, directory: directory, uid: uid)
        guard !tag.sectors.isEmpty else { throw TagError(.notNDEF, "the MAD lists no NFC Forum sector (AID 03E1)") }
        try tag.walkTLVs()
        return tag
    }

    init(card: MifarePlusCard, directory: MifareApplicationDirectory, uid: [UInt8]?) {
        self.card = card
        self.directory = directory
        self.uid = uid
        sectors = directory.ndefSectors(of: layout)
        image = [UInt8](repeating: 0, count: sectors.reduce(0) { [layout] in $0 + layout.dataBlocks(inSector: $1).count * 16 })
        tlv = (try? Type2TLVArea(memory: [0xFE], dataArea: 0..<1, controlTLVs: false))!
    }

    /// The offset in the TLV area of `sector`'s first data block.
    func areaOffset(of sector: Int) -> Int {
        sectors.prefix { $0 != sector }.reduce(0) { $0 + layout.dataBlocks(inSector: $1).count * 16 }
    }

    /// Reads a whole NDEF sector (its data blocks and its trailer), once.
    func readSector(_ sector: Int) throws {
        guard !readSectors.contains(sector) else { return }
        try card.authenticate(MifarePlusBlockNumber.sectorKey(sector, .a), key: .ndef, first: card.session == nil)
        let blocks = layout.blocks(inSector: sector)
        var bytes: [UInt8] = []
        var b = blocks.lowerBound
        while b < blocks.upperBound {
            let n = min(card.blocksPerRead, blocks.upperBound - b)
            bytes += try card.read(block: UInt16(b), count: n)
            b += n
        }
        let trailer = Array(bytes.suffix(16))
        accessBytes[sector] = trailer[9]
        guard MifareClassicNDEFAccess(gpb: trailer[9]).readable else {
            throw TagError(.readFailed, "sector \(sector)'s NFC Forum access byte \(Hex.encode([trailer[9]])) denies reading")
        }
        let offset = areaOffset(of: sector)
        let data = Array(bytes.dropLast(16))
        image.replaceSubrange(offset..<(offset + data.count), with: data)
        readSectors.insert(sector)
    }

    /// Reads sectors until the NDEF TLV's length and message are in.
    func walkTLVs() throws {
        var index = 0
        var readTo = 0
        while true {
            try readSector(sectors[index])
            readTo += layout.dataBlocks(inSector: sectors[index]).count * 16
            index += 1
            let walk = Result { () throws(TagError) in try Type2TLVArea(memory: Array(image.prefix(readTo)), dataArea: 0..<readTo, controlTLVs: false) }
            if case let .success(area) = walk, let p = area.ndefTLVPosition, p + 1 + area.ndefLengthFieldSize + area.ndefLength <= readTo {
                break
            }
            if index == sectors.count {
                if case let .failure(error) = walk { throw error }
                break
            }
            if case let .failure(error) = walk, error.kind != .lengthLies { throw error }
        }
        let area = try Type2TLVArea(memory: image, dataArea: 0..<image.count, controlTLVs: false)
        guard area.ndefTLVPosition != nil else { throw TagError(.notNDEF, "the NDEF sectors hold no NDEF TLV") }
        tlv = area
    }

    public var status: NDEFStatus {
        guard let gpb = sectors.first.flatMap({ accessBytes[$0] }) else { return .notSupported }
        let access = MifareClassicNDEFAccess(gpb: gpb)
        return !access.readable ? .notSupported : access.writable ? .readWrite : .readOnly
    }

    public func readNDEF() throws -> [UInt8] {
        guard let start = tlv.ndefTLVPosition else { throw TagError(.notNDEF, "no NDEF TLV") }
        let body = start + 1 + tlv.ndefLengthFieldSize
        return Array(image[body..<(body + tlv.ndefLength)])
    }

    static let writesRefused = "this tool reads NDEF on a MIFARE Plus in SL3 but does not write it (nothing was sent); write its blocks with apdu plus write"

    public func writeNDEF(_ message: [UInt8]) throws { throw TagError(.beyondReach, Self.writesRefused) }
    public func replaceNDEF(with message: [UInt8], keepingOld keep: (TagBackup) throws -> Void) throws { throw TagError(.beyondReach, Self.writesRefused) }
    public func restore(_ backup: TagBackup, allowingOtherTag: Bool) throws { throw TagError(.beyondReach, Self.writesRefused) }
}

extension MifarePlusNDEFTag: NDEFTagFamily {
    public static func recognizes(atr: [UInt8]) -> Bool { isPlus(atr: atr) }
    public static func detectNDEF(_ d: NDEFDetection) throws -> any NDEFTag { try detect(d.transport, atr: d.atr) }
}
