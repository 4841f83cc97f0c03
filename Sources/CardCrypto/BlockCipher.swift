// The block ciphers smart cards use (DES, two- and three-key triple DES, AES), in ECB and CBC
// without padding, through libcrypto's EVP interface.
internal import COpenSSL

/// A block cipher and key length, as secure-messaging protocols name them.
public enum CipherAlgorithm: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Single DES (8-byte key), run as triple DES with K1 = K2 = K3: the same result, and
    /// OpenSSL 3 keeps single DES in its legacy provider only.
    case des
    /// Two-key triple DES (16-byte key, K3 = K1): ICAO 9303 BAC and 3DES secure messaging,
    /// DESFire 2K3DES.
    case tdes2
    /// Three-key triple DES (24-byte key): DESFire 3K3DES.
    case tdes3
    case aes128
    case aes192
    case aes256

    public var keySize: Int {
        switch self {
        case .des: return 8
        case .tdes2, .aes128: return 16
        case .tdes3, .aes192: return 24
        case .aes256: return 32
        }
    }

    public var blockSize: Int { isAES ? 16 : 8 }
    public var isAES: Bool { self == .aes128 || self == .aes192 || self == .aes256 }

    public var description: String {
        switch self {
        case .des: return "DES"
        case .tdes2: return "2K3DES"
        case .tdes3: return "3K3DES"
        case .aes128: return "AES-128"
        case .aes192: return "AES-192"
        case .aes256: return "AES-256"
        }
    }
}

/// Why a cryptographic operation could not run: a key of the wrong length, data that is not
/// whole blocks, padding that does not check out, or libcrypto refusing.
public struct CryptoError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        case badKey, notBlockAligned, badPadding, library
    }
    public var kind: Kind
    public var message: String
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }
    public var description: String { message }
}

/// A block cipher with its key. The key bytes are wiped when the value goes away; they are
/// never part of its description.
public final class BlockCipher: Sendable, CustomStringConvertible {
    public let algorithm: CipherAlgorithm
    private nonisolated(unsafe) let key: UnsafeMutableBufferPointer<UInt8>

    /// - Parameter key: exactly `algorithm.keySize` bytes.
    public init(_ algorithm: CipherAlgorithm, key: [UInt8]) throws(CryptoError) {
        guard key.count == algorithm.keySize else {
            throw CryptoError(.badKey, "a \(algorithm) key is \(algorithm.keySize) bytes, not \(key.count)")
        }
        // libcrypto gets triple DES as three keys always.
        let expanded: [UInt8] = switch algorithm {
        case .des: key + key + key
        case .tdes2: key + key.prefix(8)
        default: key
        }
        self.algorithm = algorithm
        self.key = .allocate(capacity: expanded.count)
        _ = self.key.initialize(from: expanded)
    }

    deinit {
        key.update(repeating: 0)
        key.deallocate()
    }

    public var blockSize: Int { algorithm.blockSize }
    public var description: String { "\(algorithm) key" }

    /// ECB encryption of whole blocks.
    public func encrypt(ecb data: [UInt8]) throws(CryptoError) -> [UInt8] { try run(data, cbc: false, iv: nil, encrypt: true) }
    /// ECB decryption of whole blocks.
    public func decrypt(ecb data: [UInt8]) throws(CryptoError) -> [UInt8] { try run(data, cbc: false, iv: nil, encrypt: false) }
    /// CBC encryption of whole blocks; `iv` defaults to zeros.
    public func encrypt(cbc data: [UInt8], iv: [UInt8]? = nil) throws(CryptoError) -> [UInt8] { try run(data, cbc: true, iv: iv, encrypt: true) }
    /// CBC decryption of whole blocks; `iv` defaults to zeros.
    public func decrypt(cbc data: [UInt8], iv: [UInt8]? = nil) throws(CryptoError) -> [UInt8] { try run(data, cbc: true, iv: iv, encrypt: false) }

    /// One block enciphered (ECB): the raw permutation CMAC and key derivations use.
    public func encrypt(block: [UInt8]) throws(CryptoError) -> [UInt8] { try encrypt(ecb: block) }
    public func decrypt(block: [UInt8]) throws(CryptoError) -> [UInt8] { try decrypt(ecb: block) }

    private func cipher(cbc: Bool) -> OpaquePointer? {
        switch (algorithm, cbc) {
        case (.des, false), (.tdes2, false), (.tdes3, false): return EVP_des_ede3_ecb()
        case (.des, true), (.tdes2, true), (.tdes3, true): return EVP_des_ede3_cbc()
        case (.aes128, false): return EVP_aes_128_ecb()
        case (.aes128, true): return EVP_aes_128_cbc()
        case (.aes192, false): return EVP_aes_192_ecb()
        case (.aes192, true): return EVP_aes_192_cbc()
        case (.aes256, false): return EVP_aes_256_ecb()
        case (.aes256, true): return EVP_aes_256_cbc()
        }
    }

    private func run(_ data: [UInt8], cbc: Bool, iv: [UInt8]?, encrypt: Bool) throws(CryptoError) -> [UInt8] {
        let size = blockSize
        guard data.count % size == 0 else {
            throw CryptoError(.notBlockAligned, "\(data.count) bytes are not whole \(size)-byte \(algorithm) blocks")
        }
        if let iv, iv.count != size { throw CryptoError(.badKey, "a \(algorithm) IV is \(size) bytes, not \(iv.count)") }
        if data.isEmpty { return [] }
        guard let context = EVP_CIPHER_CTX_new() else { throw CryptoError(.library, "libcrypto could not make a cipher context") }
        defer { EVP_CIPHER_CTX_free(context) }
        let vector = iv ?? [UInt8](repeating: 0, count: size)
        var out = [UInt8](repeating: 0, count: data.count + size)
        var written: Int32 = 0
        let ok = vector.withUnsafeBufferPointer { v in
            out.withUnsafeMutableBufferPointer { o in
                data.withUnsafeBufferPointer { i in
                    guard EVP_CipherInit_ex(context, cipher(cbc: cbc), nil, key.baseAddress, cbc ? v.baseAddress : nil, encrypt ? 1 : 0) == 1,
                          EVP_CIPHER_CTX_set_padding(context, 0) == 1,
                          EVP_CipherUpdate(context, o.baseAddress, &written, i.baseAddress, Int32(i.count)) == 1 else { return false }
                    var tail: Int32 = 0
                    guard EVP_CipherFinal_ex(context, o.baseAddress! + Int(written), &tail) == 1 else { return false }
                    written += tail
                    return true
                }
            }
        }
        guard ok, Int(written) == data.count else { throw CryptoError(.library, "libcrypto refused the \(algorithm) operation") }
        return Array(out.prefix(data.count))
    }
}
