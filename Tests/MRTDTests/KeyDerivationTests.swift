import CardCrypto
import MRTD
import Testing

@Suite("KDF (ICAO 9303 Part 11 §9.7.1)")
struct KeyDerivationTests {
    @Test("Appendix D.2: K_seed 239AB9CB… gives K_Enc AB94FDEC… and K_MAC 7962D9EC… (parity adjusted)")
    func bacKeys() {
        let seed: [UInt8] = [0x23, 0x9A, 0xB9, 0xCB, 0x28, 0x2D, 0xAF, 0x66, 0x23, 0x1D, 0xC5, 0xA4, 0xDF, 0x6B, 0xFB, 0xAE]
        #expect(KeyDerivation.derive(seed, purpose: .encryption, cipher: .tdes2)
                == [0xAB, 0x94, 0xFD, 0xEC, 0xF2, 0x67, 0x4F, 0xDF, 0xB9, 0xB3, 0x91, 0xF8, 0x5D, 0x7F, 0x76, 0xF2])
        #expect(KeyDerivation.derive(seed, purpose: .mac, cipher: .tdes2)
                == [0x79, 0x62, 0xD9, 0xEC, 0xE0, 0x3D, 0x1A, 0xCD, 0x4C, 0x76, 0x08, 0x9D, 0xCE, 0x13, 0x15, 0x43])
        #expect(KeyDerivation.derive(seed, purpose: .mac, cipher: .aes256).count == 32)
        #expect(KeyDerivation.derive(seed, purpose: .mac, cipher: .aes192).count == 24)
    }

    @Test("keys never show in a description")
    func redacted() {
        let keys = SessionKeys(cipher: .aes128, encryption: [UInt8](repeating: 0xAB, count: 16), mac: [UInt8](repeating: 0xCD, count: 16), sendSequenceCounter: [UInt8](repeating: 0, count: 16))
        #expect(!"\(keys)".contains("AB") && !"\(keys)".contains("171"))
    }
}
