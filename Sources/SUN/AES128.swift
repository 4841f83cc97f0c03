// AES-128 on libcrypto for SUN and EV2: block, CBC and CMAC, the AN10922 diversification step,
// and the constant-time comparison of MACs.
internal import COpenSSL
internal import CardCrypto
import Synchronization

/// An AES-128 key (libcrypto), with the single-block, CBC and CMAC operations NTAG 424 DNA's
/// Secure Dynamic Messaging and EV2 secure messaging use. The expanded key is wiped when the
/// value goes away.
///
/// Immutable once made (the CMAC subkeys are computed at once), so one key is safe to use
/// from any number of threads at the same time: a verification service shares its keys.
public final class AES128: Sendable {
    private nonisolated(unsafe) let state: UnsafeMutablePointer<apdu_aes128>
    private let k1: [UInt8], k2: [UInt8]
    /// Whether the decryption key is expanded: on first use, once, under the lock.
    private let decryptReady = Atomic<Bool>(false)
    private let decryptLock = Mutex(())

    /// - Parameter key: 16 bytes; anything else is refused (`SUNError.badKey`).
    public init(key: [UInt8]) throws(SUNError) {
        guard key.count == 16 else { throw SUNError(.badKey, "an AES-128 key is 16 bytes, not \(key.count)") }
        let state = UnsafeMutablePointer<apdu_aes128>.allocate(capacity: 1)
        state.initialize(to: apdu_aes128())
        key.withUnsafeBufferPointer { apdu_aes128_init(state, $0.baseAddress) }
        self.state = state
        // K1 = dbl(E(K, 0)), K2 = dbl(K1).
        var l = [UInt8](repeating: 0, count: 16)
        l.withUnsafeMutableBufferPointer { o in
            let zero = [UInt8](repeating: 0, count: 16)
            zero.withUnsafeBufferPointer { apdu_aes128_encrypt(state, $0.baseAddress, o.baseAddress) }
        }
        k1 = CMAC.double(l)
        k2 = CMAC.double(k1)
    }

    deinit {
        UnsafeMutableRawBufferPointer(start: state, count: MemoryLayout<apdu_aes128>.size).initializeMemory(as: UInt8.self, repeating: 0)
        state.deallocate()
    }

    /// E(K, block) for one 16-byte block.
    public func encrypt(block: [UInt8]) -> [UInt8] {
        precondition(block.count == 16)
        var out = [UInt8](repeating: 0, count: 16)
        block.withUnsafeBufferPointer { i in out.withUnsafeMutableBufferPointer { o in apdu_aes128_encrypt(state, i.baseAddress, o.baseAddress) } }
        return out
    }

    /// D(K, block) for one 16-byte block.
    public func decrypt(block: [UInt8]) -> [UInt8] {
        precondition(block.count == 16)
        if !decryptReady.load(ordering: .acquiring) {
            decryptLock.withLock { _ in
                apdu_aes128_prepare_decrypt(state)
                decryptReady.store(true, ordering: .releasing)
            }
        }
        var out = [UInt8](repeating: 0, count: 16)
        block.withUnsafeBufferPointer { i in out.withUnsafeMutableBufferPointer { o in apdu_aes128_decrypt(state, i.baseAddress, o.baseAddress) } }
        return out
    }

    /// AES-CBC decryption without padding; `data` is whole blocks.
    public func cbcDecrypt(_ data: [UInt8], iv: [UInt8] = [UInt8](repeating: 0, count: 16)) throws(SUNError) -> [UInt8] {
        guard data.count % 16 == 0 else { throw SUNError(.malformed, "\(data.count) bytes of ciphertext, not whole 16-byte blocks") }
        var out: [UInt8] = []
        out.reserveCapacity(data.count)
        var previous = iv
        var start = 0
        while start < data.count {
            let block = Array(data[start..<(start + 16)])
            let plain = decrypt(block: block)
            for i in 0..<16 { out.append(plain[i] ^ previous[i]) }
            previous = block
            start += 16
        }
        return out
    }

    /// AES-CBC encryption without padding; `data` is whole blocks.
    public func cbcEncrypt(_ data: [UInt8], iv: [UInt8] = [UInt8](repeating: 0, count: 16)) throws(SUNError) -> [UInt8] {
        guard data.count % 16 == 0 else { throw SUNError(.malformed, "\(data.count) bytes of plaintext, not whole 16-byte blocks") }
        var out: [UInt8] = []
        out.reserveCapacity(data.count)
        var previous = iv
        var start = 0
        while start < data.count {
            var block = Array(data[start..<(start + 16)])
            for i in 0..<16 { block[i] ^= previous[i] }
            previous = encrypt(block: block)
            out += previous
            start += 16
        }
        return out
    }

    /// AES-CMAC (NIST SP 800-38B, RFC 4493): the full 16-byte tag.
    public func cmac(_ message: [UInt8]) -> [UInt8] {
        Self.cmac(message, k1: k1, k2: k2) { encrypt(block: $0) }
    }

    /// AN10922's AES-128 diversification step: CMAC over D = 01 ‖ M made 32 bytes long, padded
    /// (80 00 …) and closed with K2 when M is shorter than 31 bytes, with K1 when it is 31.
    /// Differs from CMAC(01 ‖ M) when 01 ‖ M fits one block.
    func an10922(_ m: [UInt8]) -> [UInt8] {
        var d: [UInt8] = [0x01] + m
        let padded = d.count < 32
        if padded {
            d.append(0x80)
            d += [UInt8](repeating: 0, count: 32 - d.count)
        }
        let x = encrypt(block: Array(d[0..<16]))
        let k = padded ? k2 : k1
        return encrypt(block: (0..<16).map { d[16 + $0] ^ k[$0] ^ x[$0] })
    }

    /// CMAC's chaining over any 16-byte block function (AES here, the LRP evaluation in
    /// CMAC_LRP): each block XORed into the state and enciphered, the last one padded (80 00…)
    /// and XORed with K2, or complete and XORed with K1.
    static func cmac(_ message: [UInt8], k1: [UInt8], k2: [UInt8], cipher: ([UInt8]) -> [UInt8]) -> [UInt8] {
        let complete = !message.isEmpty && message.count % 16 == 0
        let blocks = max(1, (message.count + 15) / 16)
        var x = [UInt8](repeating: 0, count: 16)
        for b in 0..<blocks {
            var block = [UInt8](repeating: 0, count: 16)
            let start = b * 16, end = min(start + 16, message.count)
            for i in start..<end { block[i - start] = message[i] }
            if b == blocks - 1 {
                if !complete { block[end - start] = 0x80 }
                let k = complete ? k1 : k2
                for i in 0..<16 { block[i] ^= k[i] }
            }
            for i in 0..<16 { block[i] ^= x[i] }
            x = cipher(block)
        }
        return x
    }
}

/// Compares two byte strings in time that depends on their lengths only, never on where they
/// differ: MACs and cryptograms are compared with it. The same comparison as CardCrypto's
/// `constantTimeEquals` (libcrypto's CRYPTO_memcmp), under the name SUN has always exported.
public func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    constantTimeEquals(a, b)
}
