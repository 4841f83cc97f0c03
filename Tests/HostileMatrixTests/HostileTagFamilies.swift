import ISO7816
import NFCTags
import TestSupport
import Testing
import VirtualCard

/// Hostile tags of the block-addressed families, drawn from their mappings' rules: a tag whose
/// capability container or attribute block announces more memory than the tag has (T5T §4.3,
/// T3T §7.1, T1T §2.3: the size a reader may use), holding a message written honestly before
/// the lie. Each runs `ndef-read`, `ndef-write` (a message the real memory cannot hold, so the
/// tag refuses a block past its end) and `ndef-lock` under every mutation, judged as the honest
/// tags are: no trap, no hang, and every claim against the tag's real memory.
extension TagFamiliesMatrixTests {
    static let hostileFamilies: [Family] = [
        Family(name: "Type 5 (ICODE SLIX, transparent), hostile: the CC announcing 2040 bytes", make: { message in
            let honest = ISO15693TagModel(chip: .icodeSlix)
            _ = holding(message, type5(honest))
            var memory = honest.contents
            memory[2] = 0xFF                                   // MLEN: 255 × 8 bytes
            return type5(ISO15693TagModel(chip: .icodeSlix, memory: memory))
        }, sizes: (30, 150), hostile: true),
        Family(name: "Type 3 (FeliCa Lite-S, ACR122U), hostile: Nmaxb past the tag's blocks", make: { message in
            let honest = FeliCaTagModel(chip: .liteS)
            _ = holding(message, type3(honest))
            var blocks = honest.contents
            if var a = blocks[0], a.count == 16 {
                a[3] = 0x00; a[4] = 0x40                       // Nmaxb 64 blocks
                let sum = a.prefix(14).reduce(0) { $0 + Int($1) }
                a[14] = UInt8(sum >> 8); a[15] = UInt8(sum & 0xFF)
                blocks[0] = a
            }
            return type3(FeliCaTagModel(chip: .liteS, blocks: blocks))
        }, sizes: (40, 400), hostile: true),
        Family(name: "Type 1 (Topaz 512, ACS), hostile: the CC announcing 2040 bytes", make: { message in
            let honest = Type1TagModel(chip: .topaz512)
            _ = holding(message, type1(honest))
            var memory = honest.contents
            memory[10] = 0xFF                                  // TMS: (255 + 1) × 8 bytes
            return type1(Type1TagModel(chip: .topaz512, memory: memory))
        }, sizes: (20, 600), hostile: true),
        Family(name: "MIFARE Classic 1K (PC/SC storage), hostile: MAD1's CRC wrong", make: { message in
            classic(message) { m in m[16] ^= 0x5A }                 // AN10787 §3.7: a reader shall check the CRC
        }, sizes: (40, 100), hostile: true),
        Family(name: "MIFARE Classic 1K (PC/SC storage), hostile: an NDEF TLV length past its one sector", make: { message in
            classic(message) { m in
                // The MAD gives sector 1 alone to NDEF (48 bytes), its CRC right; the NDEF TLV
                // at its start says 254 bytes (NFC Forum MIFARE Classic mapping §6: the TLV
                // lies within the NDEF sectors).
                for i in 20..<48 { m[i] = 0 }
                m[16] = ReferenceClassic.crc(m[17..<48])
                if m[64] == 0x03 { m[65] = 0xFE }
            }
        }, sizes: (40, 100), hostile: true),
    ]

    /// A Classic 1K formatted and holding `message` (written honestly), then `corrupt` applied
    /// to its memory: a tag that breaks a rule of the mapping by its own bytes.
    static func classic(_ message: [UInt8], corrupt: (inout [UInt8]) -> Void) -> Setup {
        let honest = MifareClassicModel(.classic1K)
        let setup = ContactlessReader(.storageOnly, tag: honest)
        _ = try? MifareClassicNDEFTag.format(APDUTransport(channel: EmulatedChannel(card: setup)), atr: honest.atr)
        _ = holding(message, Setup(card: setup, reading: { ReferenceClassic.read(honest.contents) },
                                   detect: { try MifareClassicNDEFTag.detect($0, atr: honest.atr) }))
        var memory = honest.contents
        corrupt(&memory)
        let model = MifareClassicModel(.classic1K, memory: memory)
        return Setup(card: ContactlessReader(.storageOnly, tag: model), reading: { ReferenceClassic.read(model.contents) },
                     detect: { try MifareClassicNDEFTag.detect($0, atr: model.atr) }, memory: { model.contents })
    }

    static func type5(_ model: ISO15693TagModel) -> Setup {
        let reader = ContactlessReader(.transparent, tag: model)
        return Setup(card: reader, reading: { ReferenceType5.read(model.contents) }, detect: {
            try Type5Tag.detect($0, atr: model.atr, commands: TagCommandChannel(transport: $0, dialect: .transparent))
        })
    }

    static func type3(_ model: FeliCaTagModel) -> Setup {
        let reader = ContactlessReader(.acr122u, tag: model)
        return Setup(card: reader, reading: { ReferenceType3.read(model.contents) }, detect: {
            try Type3Tag.detect($0, commands: TagCommandChannel(transport: $0, dialect: .acr122u))
        })
    }

    static func type1(_ model: Type1TagModel) -> Setup {
        let reader = Type1Reader(.acs, tag: model)
        return Setup(card: reader, reading: { ReferenceType1.read(model.contents, staticMemory: false) }, detect: {
            try Type1Tag.detect($0, atr: reader.atr, readerName: reader.form.rawValue,
                                commands: TagCommandChannel(transport: $0, dialect: .acr122u, readerName: "ACS ACR122U"))
        })
    }
}
