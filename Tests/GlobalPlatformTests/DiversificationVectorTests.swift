import ISO7816
import Testing
@testable import GlobalPlatform

private func h(_ s: String) -> [UInt8] { try! Hex.decode(s) }

/// Published key diversification vectors: GlobalPlatformPro,
/// library/src/test/java/pro/javacard/gp/test/TestPlaintextKeys.java (commit 236a610a), the
/// `testDiversification_EMV_SCP02`, `_VISA2_SCP02` and `_KDF3_SCP03_AES128/192/256` cases:
/// the master key 40..4F (and its 24- and 32-byte extensions 40..57, 40..5F) over the key
/// diversification data 00010203040506070809, each card key pinned by its key check value (3DES:
/// 00×8 enciphered; AES: 01×16 enciphered; the first 3 bytes), which `StaticKeys.checkValue` makes.
@Suite("GlobalPlatform key diversification: published vectors")
struct DiversificationVectorTests {
    static let kdd = h("00010203040506070809")

    struct Vector: Sendable, CustomStringConvertible {
        var method: Diversification, master: String, enc: String, mac: String, dek: String
        var description: String { "\(method) \(master.count * 4)-bit master" }
    }

    static let vectors: [Vector] = [
        Vector(method: .emv, master: "404142434445464748494A4B4C4D4E4F", enc: "C33013", mac: "6F4CA6", dek: "BB8179"),
        Vector(method: .visa2, master: "404142434445464748494A4B4C4D4E4F", enc: "2BE598", mac: "58DA38", dek: "3C328E"),
        Vector(method: .kdf3, master: "404142434445464748494A4B4C4D4E4F", enc: "E79C05", mac: "D1BD77", dek: "3FDE8C"),
        Vector(method: .kdf3, master: "404142434445464748494A4B4C4D4E4F5051525354555657", enc: "1DE8EA", mac: "47C00C", dek: "C04D76"),
        Vector(method: .kdf3, master: "404142434445464748494A4B4C4D4E4F505152535455565758595A5B5C5D5E5F", enc: "2972D2", mac: "036F94", dek: "5D57B8"),
    ]

    @Test("GlobalPlatformPro TestPlaintextKeys: EMV CPS 1.1, VISA2 and KDF3 card keys by their check values", arguments: vectors)
    func published(_ v: Vector) throws {
        let aes = v.method == .kdf3
        let keys = try StaticKeys(master: h(v.master), diversification: v.method).diversified(with: Self.kdd, aes: aes)
        #expect(try StaticKeys.checkValue(keys.enc, aes: aes).hexString == v.enc)
        #expect(try StaticKeys.checkValue(keys.mac, aes: aes).hexString == v.mac)
        #expect(try StaticKeys.checkValue(keys.dek, aes: aes).hexString == v.dek)
        // The master's own check value differs: the derivation did something.
        #expect(try StaticKeys.checkValue(h(v.master), aes: aes).hexString != v.enc)
    }
}
