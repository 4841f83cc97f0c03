// What an emulated MIFARE Plus holds when it starts: as shipped (SL0), or in SL3 laid out for NDEF
// as NXP AN10787 describes, with its keys stated.
import NDEF

extension MifarePlusModel {
    /// The keys of the NDEF-formatted SL3 preset: sector 0 (and 16) key A the MAD key A0…A7
    /// twice, every other sector's key A the NDEF key D3F7 eight times, every key B and the
    /// system keys 9000-9003 `sl3KeyB`.
    public static let madKey: [UInt8] = [0xA0, 0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6, 0xA7, 0xA0, 0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6, 0xA7]
    public static let ndefKey: [UInt8] = (0..<16).map { $0 % 2 == 0 ? 0xD3 : 0xF7 }
    public static let sl3KeyB: [UInt8] = [UInt8](repeating: 0xB0, count: 16)

    /// An SL3 card formatted for NDEF (AN10787): MAD1 (and MAD2 in sector 16) naming every other
    /// sector NFC Forum (03E1), MAD sectors with access bits 78 77 88, NDEF sectors 7F 07 88 with
    /// access byte 40, and `message` in an NDEF TLV at the start of sector 1.
    public static func ndefFormatted(_ generation: Generation, sectors: Int = 32, uid: [UInt8] = [0x04, 0x50, 0x5D, 0x1A, 0xB7, 0x68, 0x80],
                                     message: [UInt8], signature: [UInt8]? = nil, readerForm: ReaderForm = .native,
                                     historicalBytes: [UInt8]? = nil, hostile: Hostile? = nil) -> MifarePlusModel {
        var blocks = factoryBlocks(sectors: sectors, uid: uid)
        let madSectors: Set<Int> = sectors > 16 ? [0, 16] : [0]
        for s in 0..<sectors {
            let mad = madSectors.contains(s)
            blocks[UInt16(0x4000 + 2 * s)] = mad ? madKey : ndefKey
            blocks[UInt16(0x4000 + 2 * s + 1)] = sl3KeyB
            let gpb: UInt8 = s == 0 ? (sectors > 16 ? 0xC2 : 0xC1) : mad ? 0x00 : 0x40
            let access: [UInt8] = mad ? [0x78, 0x77, 0x88] : [0x7F, 0x07, 0x88]
            blocks[UInt16(trailer(s))] = [UInt8](repeating: 0, count: 6) + access + [gpb] + [UInt8](repeating: 0, count: 6)
        }
        for n in UInt16(0x9000)...0x9003 { blocks[n] = sl3KeyB }
        // MAD1: CRC, info, the AIDs of sectors 1-15; MAD2: CRC, info, sectors 17-39.
        func aid(_ s: Int) -> [UInt8] { s < sectors ? [0x03, 0xE1] : [0x05, 0x00] }
        let body1: [UInt8] = [0x00] + (1...15).flatMap(aid)
        let mad1 = [madCRC(body1)] + body1
        blocks[1] = Array(mad1[0..<16])
        blocks[2] = Array(mad1[16..<32])
        if sectors > 16 {
            let body2: [UInt8] = [0x00] + (17...39).flatMap(aid)
            let mad2 = [madCRC(body2)] + body2
            for i in 0..<3 { blocks[UInt16(64 + i)] = Array(mad2[(16 * i)..<(16 * i + 16)]) }
        }
        // The TLV area: the data blocks of the NDEF sectors, in order.
        let length: [UInt8] = message.count < 0xFF ? [UInt8(message.count)] : [0xFF, UInt8(message.count >> 8), UInt8(message.count & 0xFF)]
        var area = [0x03] + length + message + [0xFE]
        var s = 1
        while !area.isEmpty && s < sectors {
            if madSectors.contains(s) { s += 1; continue }
            for b in firstBlock(s)..<trailer(s) where !area.isEmpty {
                let chunk = Array(area.prefix(16))
                area.removeFirst(chunk.count)
                blocks[UInt16(b)] = chunk + [UInt8](repeating: 0, count: 16 - chunk.count)
            }
            s += 1
        }
        return MifarePlusModel(generation, level: .sl3, sectors: sectors, uid: uid, signature: signature, readerForm: readerForm, blocks: blocks,
                               historicalBytes: historicalBytes, hostile: hostile)
    }

    /// The MAD's CRC-8: polynomial 1D, preset C7 (written here apart from NFCTags' own).
    static func madCRC(_ bytes: [UInt8]) -> UInt8 {
        var crc: UInt8 = 0xC7
        for b in bytes {
            crc ^= b
            for _ in 0..<8 { crc = crc & 0x80 != 0 ? (crc << 1) ^ 0x1D : crc << 1 }
        }
        return crc
    }

    /// The preset's message: one URI record.
    public static let presetMessage: [UInt8] = (try? NDEFMessage(records: [.uri("https://example.com/plus")]).encoded()) ?? []
}
