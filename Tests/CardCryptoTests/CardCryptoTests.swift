import CardCrypto
import Testing

private func hex(_ s: String) -> [UInt8] {
    let c = Array(s.utf8).filter { $0 != 0x20 }
    return stride(from: 0, to: c.count, by: 2).map { UInt8(String(decoding: c[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
}

@Suite("CardCrypto: published vectors")
struct CardCryptoTests {
    @Test("DES, 2K3DES and AES against FIPS 197, the DES textbook example and libcrypto-independent values")
    func ciphers() throws {
        #expect(try BlockCipher(.des, key: hex("133457799BBCDFF1")).encrypt(ecb: hex("0123456789ABCDEF")) == hex("85E813540F0AB405"))
        #expect(try BlockCipher(.aes128, key: hex("000102030405060708090a0b0c0d0e0f")).encrypt(ecb: hex("00112233445566778899aabbccddeeff"))
                == hex("69c4e0d86a7b0430d8cdb78070b4c55a"))
        let tdes = try BlockCipher(.tdes2, key: hex("0123456789abcdeffedcba9876543210"))
        let c = try tdes.encrypt(cbc: hex("0011223344556677 0011223344556677"))
        #expect(c == hex("31a7364cac91ca3902960c360dd7f660"))
        #expect(try tdes.decrypt(cbc: c) == hex("0011223344556677 0011223344556677"))
        #expect(throws: CryptoError.self) { try BlockCipher(.aes128, key: [1, 2, 3]) }
        #expect(throws: CryptoError.self) { try tdes.encrypt(cbc: [1, 2, 3]) }
    }

    @Test("CMAC: RFC 4493 (AES-128) and SP 800-38B D.2 (three-key TDEA)")
    func cmac() throws {
        let aes = try CMAC(.aes128, key: hex("2b7e151628aed2a6abf7158809cf4f3c"))
        #expect(try aes.mac([]) == hex("bb1d6929e95937287fa37d129b756746"))
        #expect(try aes.mac(hex("6bc1bee22e409f96e93d7e117393172a")) == hex("070a16b46b4d4144f79bdd9dd04a287c"))
        #expect(try aes.mac(hex("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e5130c81c46a35ce411"))
                == hex("dfa66747de9ae63030ca32611497c827"))
        let tdes = try CMAC(.tdes3, key: hex("8aa83bf8cbda1062 0bc1bf19fbb6cd58 bc313d4a371ca8b5"))
        #expect(try tdes.mac([]) == hex("b7a688e122ffaf95"))
        #expect(try tdes.mac(hex("6bc1bee22e409f96")) == hex("8e8f293136283797"))
        #expect(try tdes.mac(hex("6bc1bee22e409f96e93d7e117393172aae2d8a57")) == hex("743ddbe0ce2dc2ed"))
    }

    @Test("retail MAC: ICAO 9303 Part 11 Appendix D, the terminal's MAC of its cryptogram")
    func retailMAC() throws {
        let e = hex("72C29C2371CC9BDB65B779B8E8D37B29ECC154AA56A8799FAE2F498F76ED92F2")
        #expect(try RetailMAC.mac(key: hex("7962D9ECE03D1ACD4C76089DCE131543"), data: Padding.pad(e, blockSize: 8)) == hex("5F1448EEA8AD90A7"))
    }

    @Test("padding method 2 round trips; a wrong pad is nil")
    func padding() {
        #expect(Padding.pad([1, 2, 3], blockSize: 8) == [1, 2, 3, 0x80, 0, 0, 0, 0])
        #expect(Padding.pad([UInt8](repeating: 1, count: 8), blockSize: 8).count == 16)
        #expect(Padding.unpad([1, 2, 3, 0x80, 0, 0, 0, 0], blockSize: 8) == [1, 2, 3])
        #expect(Padding.unpad([1, 2, 3, 0x81, 0, 0, 0, 0], blockSize: 8) == nil)
        #expect(Padding.unpad([0, 0, 0, 0, 0, 0, 0, 0], blockSize: 8) == nil)
    }

    @Test("CRC_A (ISO 14443-3 Annex B) and DESFire's CRC32; SHA-256 of abc; constant-time compare")
    func checksums() {
        #expect(CRC.crc16([0x00, 0x00]) == [0xA0, 0x1E])
        #expect(CRC.crc16([0x12, 0x34]) == [0x26, 0xCF])
        // Without the final inversion: the bitwise complement of zlib's CRC32 of "123456789" (CBF43926).
        #expect(CRC.crc32(Array("123456789".utf8)) == [0xD9, 0xC6, 0x0B, 0x34])
        #expect(Digest.sha256.hash(Array("abc".utf8)) == hex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"))
        #expect(Digest.sha1.hash([]).count == 20)
        #expect(constantTimeEquals([1, 2, 3], [1, 2, 3]))
        #expect(!constantTimeEquals([1, 2, 3], [1, 2, 4]))
        #expect(!constantTimeEquals([1, 2], [1, 2, 3]))
        #expect(secureRandomBytes(16) != secureRandomBytes(16))
    }
}
