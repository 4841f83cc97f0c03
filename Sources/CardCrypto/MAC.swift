// Message authentication codes of card protocols: CMAC over any block cipher (NIST SP 800-38B:
// AES for PACE and EV2, triple DES for DESFire), the ISO/IEC 9797-1 "retail MAC" of BAC and 3DES
// secure messaging, and the padding they share.

/// ISO/IEC 9797-1 padding method 2 (ISO 7816-4): 80, then zeros to a whole block.
public enum Padding {
    /// Always adds at least one byte (a full block when `data` is already whole blocks).
    public static func pad(_ data: [UInt8], blockSize: Int) -> [UInt8] {
        var out = data
        out.append(0x80)
        while out.count % blockSize != 0 { out.append(0) }
        return out
    }

    /// Removes method-2 padding; nil when the bytes do not end in 80 00…00 within one block.
    public static func unpad(_ data: [UInt8], blockSize: Int) -> [UInt8]? {
        var i = data.count - 1
        while i >= 0, data.count - i <= blockSize {
            if data[i] == 0x80 { return Array(data[..<i]) }
            if data[i] != 0 { return nil }
            i -= 1
        }
        return nil
    }
}

/// CMAC (NIST SP 800-38B; RFC 4493 for AES) over a block cipher of 8 or 16 bytes.
public struct CMAC: Sendable {
    public let cipher: BlockCipher
    private let k1: [UInt8], k2: [UInt8]

    public init(_ cipher: BlockCipher) throws(CryptoError) {
        self.cipher = cipher
        let l = try cipher.encrypt(block: [UInt8](repeating: 0, count: cipher.blockSize))
        k1 = Self.double(l)
        k2 = Self.double(k1)
    }

    public init(_ algorithm: CipherAlgorithm, key: [UInt8]) throws(CryptoError) {
        try self.init(BlockCipher(algorithm, key: key))
    }

    /// The full tag (one block). `iv`: the chaining value to start from (zeros in the standard;
    /// DESFire EV1 carries the session's IV from command to command).
    public func mac(_ message: [UInt8], iv: [UInt8]? = nil) throws(CryptoError) -> [UInt8] {
        let n = cipher.blockSize
        let complete = !message.isEmpty && message.count % n == 0
        var last: [UInt8]
        var body: [UInt8]
        if complete {
            body = Array(message.dropLast(n))
            last = Array(message.suffix(n))
            for i in 0..<n { last[i] ^= k1[i] }
        } else {
            let cut = message.count - message.count % n
            body = Array(message[..<cut])
            last = Padding.pad(Array(message[cut...]), blockSize: n)
            for i in 0..<n { last[i] ^= k2[i] }
        }
        body += last
        let chained = try cipher.encrypt(cbc: body, iv: iv)
        return Array(chained.suffix(n))
    }

    /// Multiplication by x in GF(2^64) or GF(2^128), the block read big-endian (Rb 1B or 87):
    /// CMAC's subkey step, which LRP's CMAC also uses (SUN).
    public static func double(_ v: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: v.count)
        var carry: UInt8 = 0
        for i in stride(from: v.count - 1, through: 0, by: -1) {
            out[i] = v[i] << 1 | carry
            carry = v[i] >> 7
        }
        if carry != 0 { out[v.count - 1] ^= v.count == 16 ? 0x87 : 0x1B }
        return out
    }
}

/// ISO/IEC 9797-1 MAC algorithm 3 with DES ("retail MAC"): single-DES CBC under K1 over every
/// block, then the last block deciphered with K2 and enciphered with K1 again. The MAC of ICAO
/// 9303 BAC and 3DES secure messaging (Part 11 §9.8.6.2).
public enum RetailMAC {
    /// - Parameters:
    ///   - key: 16 bytes (K1 ‖ K2).
    ///   - data: the message, padded by the caller (the protocols differ in what they pad).
    public static func mac(key: [UInt8], data: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard key.count == 16 else { throw CryptoError(.badKey, "a retail MAC key is 16 bytes, not \(key.count)") }
        guard !data.isEmpty, data.count % 8 == 0 else { throw CryptoError(.notBlockAligned, "\(data.count) bytes are not whole 8-byte blocks") }
        let k1 = try BlockCipher(.des, key: Array(key[0..<8]))
        let k2 = try BlockCipher(.des, key: Array(key[8..<16]))
        let h = Array(try k1.encrypt(cbc: data).suffix(8))
        return try k1.encrypt(block: try k2.decrypt(block: h))
    }
}
