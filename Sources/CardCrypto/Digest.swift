// Hashes, random bytes, constant-time comparison and the CRCs of card protocols.
internal import COpenSSL

/// The SHA family, through libcrypto.
public enum Digest: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case sha1 = "SHA-1", sha224 = "SHA-224", sha256 = "SHA-256", sha384 = "SHA-384", sha512 = "SHA-512"

    public var description: String { rawValue }

    public var size: Int {
        switch self {
        case .sha1: return 20
        case .sha224: return 28
        case .sha256: return 32
        case .sha384: return 48
        case .sha512: return 64
        }
    }

    private var evp: OpaquePointer? {
        switch self {
        case .sha1: return EVP_sha1()
        case .sha224: return EVP_sha224()
        case .sha256: return EVP_sha256()
        case .sha384: return EVP_sha384()
        case .sha512: return EVP_sha512()
        }
    }

    public func hash(_ data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = data.withUnsafeBufferPointer { i in
            out.withUnsafeMutableBufferPointer { o in EVP_Digest(i.baseAddress, i.count, o.baseAddress, &length, evp, nil) }
        }
        // EVP_Digest fails only on allocation failure: no way on for the program.
        precondition(ok == 1, "libcrypto could not hash")
        return Array(out.prefix(Int(length)))
    }
}

/// `count` bytes from libcrypto's CSPRNG (seeded by the kernel).
public func secureRandomBytes(_ count: Int) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: count)
    guard count > 0 else { return out }
    let ok = out.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32($0.count)) }
    precondition(ok == 1, "libcrypto's random generator failed")
    return out
}

/// Compares MACs and cryptograms in time that depends on their lengths only (CRYPTO_memcmp).
public func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    if a.isEmpty { return true }
    return a.withUnsafeBufferPointer { x in b.withUnsafeBufferPointer { y in CRYPTO_memcmp(x.baseAddress, y.baseAddress, x.count) == 0 } }
}

/// The CRCs DESFire puts into enciphered frames and changed keys.
public enum CRC {
    /// ISO/IEC 14443-3 CRC_A (polynomial 8408 reflected, preset 6363), least significant byte
    /// first: DESFire's CRC16 under legacy DES/2K3DES authentication.
    public static func crc16(_ data: [UInt8]) -> [UInt8] {
        var crc: UInt16 = 0x6363
        for b in data {
            var x = b ^ UInt8(crc & 0xFF)
            x ^= x << 4
            crc = (crc >> 8) ^ (UInt16(x) << 8) ^ (UInt16(x) << 3) ^ (UInt16(x) >> 4)
        }
        return [UInt8(crc & 0xFF), UInt8(crc >> 8)]
    }

    /// The IEEE CRC32 (polynomial EDB88320 reflected, preset FFFFFFFF) without the final
    /// inversion, least significant byte first: DESFire EV1/EV2 and NTAG 424 DNA.
    public static func crc32(_ data: [UInt8]) -> [UInt8] {
        var crc: UInt32 = 0xFFFF_FFFF
        for b in data {
            crc ^= UInt32(b)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return [UInt8(crc & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 24)]
    }
}
