// Keys of a secure-messaging session and the key derivation function that makes them (ICAO 9303
// Part 11 §9.7.1), shared by BAC, PACE and chip authentication.
import CardCrypto

/// The two keys and the send sequence counter of a secure-messaging session. Never printed: the
/// description names the cipher only.
public struct SessionKeys: Sendable, CustomStringConvertible {
    /// 2K3DES (BAC, PACE with 3DES) or AES-128/192/256.
    public var cipher: CipherAlgorithm
    public var encryption: [UInt8]
    public var mac: [UInt8]
    /// SSC: 8 bytes for 3DES, 16 for AES (Part 11 §9.8.2, §9.8.3).
    public var sendSequenceCounter: [UInt8]

    public init(cipher: CipherAlgorithm, encryption: [UInt8], mac: [UInt8], sendSequenceCounter: [UInt8]) {
        self.cipher = cipher
        self.encryption = encryption
        self.mac = mac
        self.sendSequenceCounter = sendSequenceCounter
    }

    public var description: String { "\(cipher) secure-messaging keys" }
}

/// KDF(K, c) of ICAO 9303 Part 11 §9.7.1: a hash of the shared secret (or key seed) and a 32-bit
/// counter, cut to the cipher's key length.
public enum KeyDerivation {
    /// What a derived key is for: the counter appended to the secret.
    public enum Purpose: UInt32, Sendable {
        case encryption = 1
        case mac = 2
        /// K_π, PACE's password key (§9.7.3).
        case password = 3
    }

    /// SHA-1 for 3DES and AES-128, SHA-256 for AES-192 and AES-256; 3DES keys get their DES
    /// parity bits set (the published examples show them so; the cipher ignores them).
    public static func derive(_ secret: [UInt8], purpose: Purpose, cipher: CipherAlgorithm) -> [UInt8] {
        let counter = purpose.rawValue
        let input = secret + [UInt8(counter >> 24), UInt8(counter >> 16 & 0xFF), UInt8(counter >> 8 & 0xFF), UInt8(counter & 0xFF)]
        switch cipher {
        case .des, .tdes2, .tdes3:
            return Array(Digest.sha1.hash(input).prefix(16)).map(withOddParity)
        case .aes128:
            return Array(Digest.sha1.hash(input).prefix(16))
        case .aes192:
            return Array(Digest.sha256.hash(input).prefix(24))
        case .aes256:
            return Digest.sha256.hash(input)
        }
    }

    /// The byte with its lowest bit set so that it has an odd number of ones (DES parity).
    static func withOddParity(_ b: UInt8) -> UInt8 {
        let high = b & 0xFE
        return high.nonzeroBitCount % 2 == 0 ? high | 1 : high
    }
}
