// ICAO 9303's key derivation function (Part 11 §9.7.1), written for the emulated chip.
import CardCrypto

/// The key derivation function of ICAO 9303 Part 11 §9.7.1: a hash of the shared secret and a
/// 32-bit big-endian counter (1 for encryption, 2 for MAC, 3 for the PACE password key).
enum KeyDerivation {
    static let encryption: UInt32 = 1, mac: UInt32 = 2, password: UInt32 = 3

    /// 3DES: SHA-1, 16 bytes, DES parity adjusted; AES-128: SHA-1, 16 bytes; AES-192 and
    /// AES-256: SHA-256, 24 or 32 bytes.
    static func key(_ secret: [UInt8], counter: UInt32, for cipher: CipherAlgorithm) -> [UInt8] {
        let input = secret + [UInt8(counter >> 24), UInt8(counter >> 16 & 0xFF), UInt8(counter >> 8 & 0xFF), UInt8(counter & 0xFF)]
        switch cipher {
        case .aes192, .aes256:
            return Array(Digest.sha256.hash(input).prefix(cipher.keySize))
        case .tdes2, .des, .tdes3:
            return adjustingParity(Array(Digest.sha1.hash(input).prefix(16)))
        case .aes128:
            return Array(Digest.sha1.hash(input).prefix(16))
        }
    }

    /// Each byte's lowest bit set so the byte has odd parity (FIPS 46-3), as Part 11 Appendix
    /// D.1 prints the keys.
    static func adjustingParity(_ key: [UInt8]) -> [UInt8] {
        key.map { b in
            let high = b & 0xFE
            return high.nonzeroBitCount % 2 == 0 ? high | 1 : high
        }
    }
}
