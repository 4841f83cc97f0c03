// nfcpy's Type 1 test images (`tests/test_tag_tt1.py`, `tests/test_tag_tt1_broadcom.py`, nfcpy
// 8a195262), rebuilt from their description (the files are EUPL: the facts, not the code), for the
// library's tests and the CLI's tests through pcscd alike.

/// The memory images and messages nfcpy's Type 1 tests assert.
public enum NfcpyType1Images {
    public static let message42: [UInt8] = [0xD1, 0x01, 0x26, 0x55, 0x01] + Array("abcdefghijklmnopqrstuvwxyzabcdefg.com".utf8)
    public static let alphabet = Array("abcdefghijklmnopqrstuvwxyz".utf8)
    public static let message461: [UInt8] = [0xC1, 0x01, 0x00, 0x00, 0x01, 0xC6, 0x55, 0x01] + Array(repeating: alphabet, count: 17).flatMap { $0 } + Array("abcdefg.com".utf8)
    public static let message254: [UInt8] = [0xD1, 0x01, 0xFA, 0x55, 0x01] + Array(repeating: alphabet, count: 9).flatMap { $0 } + Array("abcdefghijk.com".utf8)

    /// nfcpy's `static` image (120 bytes): CC E1 1F 0E 00, the 42-byte URI at 0C, FE after it,
    /// block D 55 55 AA AA, LOCK0/LOCK1 01 60.
    public static func staticImage(version: UInt8 = 0x1F) -> [UInt8] {
        var m = [UInt8](repeating: 0, count: 120)
        let head: [UInt8] = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x00, 0xE1, version, 0x0E, 0x00, 0x03, 0x2A] + message42 + [0xFE]
        m.replaceSubrange(0..<head.count, with: head)
        m.replaceSubrange(0x68..<0x6C, with: [0x55, 0x55, 0xAA, 0xAA])
        m[0x70] = 0x01; m[0x71] = 0x60
        return m
    }

    /// A dynamic image: block 0, CC, then `tlvBytes` from 0C laid over the data area with 68-7F
    /// skipped, and 68-7F as given.
    public static func dynamicImage(block0: [UInt8], cc: [UInt8], tlvBytes: [UInt8], reserved68: [UInt8]) -> [UInt8] {
        var m = [UInt8](repeating: 0, count: 512)
        m.replaceSubrange(0..<8, with: block0)
        m.replaceSubrange(8..<12, with: cc)
        var p = 12
        for b in tlvBytes {
            if p == 0x68 { p = 0x80 }
            m[p] = b
            p += 1
        }
        m.replaceSubrange(0x68..<0x80, with: reserved68)
        return m
    }

    public static let controlTLVs: [UInt8] = [0x01, 0x03, 0xF2, 0x30, 0x33, 0x02, 0x03, 0xF0, 0x02, 0x03]
    public static let dynReserved: [UInt8] = [0x55, 0x55, 0xAA, 0xAA, 0x12, 0x49, 0x06, 0x00, 0x01, 0xE0] + [UInt8](repeating: 0, count: 14)

    /// nfcpy's `dyn` image: NDEF TLV 03 FF 01 CD at 16, the 461-byte message to 1FE, FE at 1FF.
    public static var dynImage: [UInt8] {
        dynamicImage(block0: [0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77], cc: [0xE1, 0x1F, 0x3F, 0x00],
                     tlvBytes: controlTLVs + [0x03, 0xFF, 0x01, 0xCD] + message461 + [0xFE], reserved68: dynReserved)
    }

    /// nfcpy's Topaz 512 image (`proc` with block 0 31…37): 254-byte message, FE at 12E.
    public static var t512Image: [UInt8] {
        dynamicImage(block0: [0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x00], cc: [0xE1, 0x10, 0x3F, 0x00],
                     tlvBytes: controlTLVs + [0x03, 0xFE] + message254 + [0xFE], reserved68: dynReserved)
    }
}
