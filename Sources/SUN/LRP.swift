// NXP's Leakage Resilient Primitive (AN12304) for the verifier side: LRP evaluation, LRICB and
// CMAC_LRP.
internal import CardCrypto

/// NXP's Leakage Resilient Primitive (AN12304), as NTAG 424 DNA uses it in LRP mode: the key's
/// sixteen plaintexts and its updated keys (algorithms 1 and 2), the evaluation over the input's
/// nibbles (algorithm 3, m = 4), LRICB decryption with a counter and CMAC_LRP.
///
/// For the reader side only (a verifier): the evaluation expands a new AES key per nibble, and
/// nothing here is hardened against side channels on the tag's side.
public struct LRP: Sendable {
    let plaintexts: [[UInt8]]
    let key: [UInt8]

    /// `key`'s LRP instance with updated key number `u` (0 for MACs, 1 for SDM file data).
    public init(key: [UInt8], updatedKey u: Int = 0) throws(SUNError) {
        let base = try AES128(key: key)
        let fives = [UInt8](repeating: 0x55, count: 16), as_ = [UInt8](repeating: 0xAA, count: 16)
        // Algorithm 1: the plaintexts.
        var h = base.encrypt(block: fives)
        var p: [[UInt8]] = []
        for _ in 0..<16 {
            let hk = try AES128(key: h)
            p.append(hk.encrypt(block: as_))
            h = hk.encrypt(block: fives)
        }
        plaintexts = p
        // Algorithm 2: the updated keys, up to the one asked for.
        h = base.encrypt(block: as_)
        var updated: [UInt8] = []
        for _ in 0...u {
            let hk = try AES128(key: h)
            updated = hk.encrypt(block: as_)
            h = hk.encrypt(block: fives)
        }
        self.key = updated
    }

    /// Algorithm 3: y = K'; y = E(y, P[nibble]) for each nibble of `x`, high one first; with
    /// `final`, y = E(y, 0^16) at the end.
    func evaluate(_ x: [UInt8], final: Bool = true) -> [UInt8] {
        var y = key
        for byte in x {
            for nibble in [byte >> 4, byte & 0x0F] {
                y = (try! AES128(key: y)).encrypt(block: plaintexts[Int(nibble)])
            }
        }
        if final { y = (try! AES128(key: y)).encrypt(block: [UInt8](repeating: 0, count: 16)) }
        return y
    }

    /// LRICB decryption (no padding): block i is D(eval(r + i), c_i), the counter `r` counted as a
    /// big-endian number of its own width that wraps to zero.
    public func decrypt(_ data: [UInt8], counter: [UInt8]) throws(SUNError) -> [UInt8] {
        try lricb(data, counter: counter, what: "ciphertext") { $0.decrypt(block: $1) }
    }

    /// LRICB encryption (no padding), the inverse of `decrypt`.
    public func encrypt(_ data: [UInt8], counter: [UInt8]) throws(SUNError) -> [UInt8] {
        try lricb(data, counter: counter, what: "plaintext") { $0.encrypt(block: $1) }
    }

    /// LRICB's loop: block i goes through `operation` under the key eval(r + i).
    private func lricb(_ data: [UInt8], counter: [UInt8], what: String, _ operation: (AES128, [UInt8]) -> [UInt8]) throws(SUNError) -> [UInt8] {
        guard data.count % 16 == 0, !data.isEmpty else { throw SUNError(.malformed, "\(data.count) bytes of LRP \(what), not whole 16-byte blocks") }
        var r = counter
        var out: [UInt8] = []
        var start = 0
        while start < data.count {
            out += operation(try AES128(key: evaluate(r)), Array(data[start..<(start + 16)]))
            for i in stride(from: r.count - 1, through: 0, by: -1) {
                r[i] &+= 1
                if r[i] != 0 { break }
            }
            start += 16
        }
        return out
    }

    /// CMAC_LRP: CMAC's chaining and subkeys (K0 = eval(0^16), K1 = 2·K0, K2 = 4·K0) with the
    /// LRP evaluation in place of the block cipher.
    public func cmac(_ message: [UInt8]) -> [UInt8] {
        let k1 = CMAC.double(evaluate([UInt8](repeating: 0, count: 16))), k2 = CMAC.double(k1)
        return AES128.cmac(message, k1: k1, k2: k2) { evaluate($0) }
    }
}
