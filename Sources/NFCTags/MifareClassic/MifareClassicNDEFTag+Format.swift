// NFC Forum formatting of a factory-fresh MIFARE Classic card: MAD and NDEF sectors, resumable.
import ISO7816

/// What `MifareClassicNDEFTag.format` did.
public struct MifareClassicFormatReport: Sendable, Hashable {
    /// Sectors whose trailer (and MAD or first NDEF block) were written now.
    public var formatted: [Int]
    /// Sectors an earlier, interrupted format had done already.
    public var alreadyDone: [Int]
    public var madVersion: Int
    /// The largest NDEF message the card now holds.
    public var capacity: Int
}

extension MifareClassicNDEFTag {
    /// Turns a factory-fresh card (every sector opening with key A FFFFFFFFFFFF, writable trailers,
    /// data blocks empty) into an NFC Forum formatted one (NXP AN1304): NDEF sectors with key A
    /// D3F7D3F7D3F7, access bits 7F 07 88 and GPB 40, an empty NDEF TLV in the first; MAD1 (and
    /// MAD2 on cards of more than 16 sectors) with key A A0A1A2A3A4A5, access bits 78 77 88; key
    /// B left as it was. Sector 0's trailer, which makes the MAD valid (GPB C1 or C2), is written
    /// last, so until then the card reads as unformatted. Every sector is checked before the first
    /// write; a sector already formatted (a cut earlier run) is left alone, so running it again
    /// finishes a cut format.
    /// - Throws: `TagError` `.unsafe` for a card that is neither factory-fresh nor partly formatted
    ///   by this procedure, or holds data (nothing written); `LockInterrupted` naming the sectors
    ///   done when the card goes away part-way.
    /// - Parameters:
    ///   - transport: the channel to the reader.
    ///   - atr: the card's ATR, for its layout (or give `layout`).
    ///   - uid: the card's UID, for the detection that checks the result.
    ///   - known: the card's layout, when the ATR is not at hand.
    ///   - keySlot: the reader key slot LOAD KEYS fills.
    public static func format(_ transport: APDUTransport, atr: [UInt8], uid: [UInt8]? = nil, layout known: MifareClassicLayout? = nil, keySlot: UInt8 = 0) throws -> MifareClassicFormatReport {
        guard let layout = known ?? MifareClassicLayout(atr: atr) else { throw TagError(.notNDEF, "not a MIFARE Classic card") }
        let card = MifareClassicCard(transport: transport, layout: layout, keySlot: keySlot)
        let mad = MifareApplicationDirectory.ndef(for: layout)
        let ndefSectors = mad.ndefSectors(of: layout)
        let madSectors = mad.version == 2 ? [0, 16] : [0]
        let factory = MifareClassicKeyCandidate.publicKeys[0]
        // What each sector must hold: its trailer's key A, access bits and GPB, and its data blocks.
        func target(_ s: Int) -> (key: MifareClassicKeyCandidate, access: MifareClassicAccessBits, gpb: UInt8, data: [Int: [UInt8]]) {
            var data: [Int: [UInt8]] = [:]
            for b in layout.dataBlocks(inSector: s) where b != 0 { data[b] = [UInt8](repeating: 0, count: 16) }
            if s == 0 {
                data[1] = Array(mad.mad1[0..<16]); data[2] = Array(mad.mad1[16..<32])
                return (MifareClassicKeyCandidate.publicKeys[1], .mad, mad.generalPurposeByte, data)
            }
            if s == 16 && mad.version == 2 {
                for i in 0..<3 { data[64 + i] = Array(mad.mad2[(16 * i)..<(16 * i + 16)]) }
                return (MifareClassicKeyCandidate.publicKeys[1], .mad, 0x00, data)
            }
            if s == ndefSectors.first { data[layout.firstBlock(ofSector: s)] = [0x03, 0x00, 0xFE] + [UInt8](repeating: 0, count: 13) }
            return (MifareClassicKeyCandidate.publicKeys[2], .ndefReadWrite, MifareClassicNDEFAccess.readWrite, data)
        }
        // Survey: nothing is written until every sector is known to be factory-fresh or done.
        var keyB: [Int: MifareClassicKey] = [:]
        var done: [Int] = []
        for s in layout.sectors {
            let t = target(s)
            if try card.open(sector: s, with: [t.key], as: [.a]) != nil {
                let trailer = try card.read(block: layout.trailerBlock(ofSector: s))
                guard MifareClassicAccessBits(bytes: Array(trailer[6..<9])) == t.access, trailer[9] == t.gpb else {
                    throw TagError(.unsafe, "sector \(s) opens with the \(t.key.label) but its trailer is not the NFC Forum one (access bits \(Array(trailer[6..<9]).hexString), GPB \(Hex.encode([trailer[9]]))); nothing was written")
                }
                done.append(s)
                continue
            }
            guard try card.open(sector: s, with: [factory], as: [.a]) != nil else {
                throw TagError(.unsafe, "sector \(s) does not open with the factory key A: not a factory-fresh card (its keys are someone else's); nothing was written")
            }
            let trailer = try card.read(block: layout.trailerBlock(ofSector: s))
            guard let access = MifareClassicAccessBits(bytes: Array(trailer[6..<9])), access.conditions[3] == 1, access.keyBReadable,
                  let b = MifareClassicKey(Array(trailer[10..<16])) else {
                throw TagError(.unsafe, "sector \(s)'s access bits \(Array(trailer[6..<9]).hexString) are not the transport configuration (key A writes the whole trailer); nothing was written")
            }
            for block in layout.dataBlocks(inSector: s) where block != 0 {
                let bytes = try card.read(block: block)
                guard bytes.allSatisfy({ $0 == 0 }) || bytes == t.data[block] else {
                    throw TagError(.unsafe, "block \(block) holds data (\(bytes.prefix(8).hexString)…): ndef-format formats factory-fresh cards only; nothing was written")
                }
            }
            keyB[s] = b
        }
        // NDEF sectors, then MAD2, then MAD1 with sector 0's trailer last.
        var formatted: [Int] = []
        let order = ndefSectors + madSectors.reversed()
        for s in order where !done.contains(s) {
            let t = target(s)
            do {
                guard try card.open(sector: s, with: [factory], as: [.a]) != nil else {
                    throw TagError(.authenticationFailed, "sector \(s) no longer opens with the factory key")
                }
                for (block, bytes) in t.data.sorted(by: { $0.key < $1.key }) where bytes.contains(where: { $0 != 0 }) {
                    if try card.read(block: block) != bytes { try card.write(block: block, data: bytes) }
                }
                let trailer = MifareClassicTrailer(keyA: t.key.key, access: t.access, gpb: t.gpb, keyB: keyB[s]!)
                try card.write(block: layout.trailerBlock(ofSector: s), data: trailer.bytes)
            } catch {
                throw LockInterrupted(done: formatted.map { "sector \($0)" }, underlying: error, step: "format sector \(s)")
            }
            formatted.append(s)
        }
        card.forgetAuthentication()
        let tag = try MifareClassicNDEFTag.detect(transport, layout: layout, uid: uid, keySlot: keySlot)
        // A card formatted now reads as an empty message; one formatted before keeps its own.
        let message = try tag.readNDEF()
        guard formatted.isEmpty || message.isEmpty else { throw TagError(.verifyFailed, "the formatted card does not read as an empty NDEF message") }
        return MifareClassicFormatReport(formatted: formatted, alreadyDone: done, madVersion: mad.version, capacity: tag.capacity)
    }
}
