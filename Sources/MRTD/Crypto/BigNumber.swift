// libcrypto's BIGNUM, owned: the numbers of Diffie-Hellman and elliptic-curve key agreement.
internal import COpenSSL

/// An arbitrary-precision non-negative integer in a libcrypto BIGNUM. Private keys are marked
/// constant-time for exponentiation and cleared when freed.
final class BigNumber: @unchecked Sendable {
    let raw: OpaquePointer

    /// Takes ownership of `raw`.
    init(owning raw: OpaquePointer) { self.raw = raw }

    /// The big-endian unsigned integer in `bytes` (empty is zero).
    convenience init(_ bytes: some Collection<UInt8>) throws(MRTDProtocolError) {
        let array = Array(bytes)
        guard let bn = array.withUnsafeBufferPointer({ BN_bin2bn($0.baseAddress, Int32($0.count), nil) }) else {
            throw MRTDProtocolError(.library, "libcrypto could not hold a number")
        }
        self.init(owning: bn)
    }

    convenience init(word: UInt) throws(MRTDProtocolError) {
        guard let bn = BN_new(), BN_set_word(bn, word) == 1 else { throw MRTDProtocolError(.library, "libcrypto could not hold a number") }
        self.init(owning: bn)
    }

    deinit { BN_clear_free(raw) }

    /// Marks the number secret: libcrypto then takes constant-time paths in modular exponentiation.
    func markSecret() { BN_set_flags(raw, Int32(BN_FLG_CONSTTIME)) }

    var byteCount: Int { (Int(BN_num_bits(raw)) + 7) / 8 }
    var bitCount: Int { Int(BN_num_bits(raw)) }
    var isZero: Bool { BN_is_zero(raw) == 1 }
    var isOne: Bool { BN_is_one(raw) == 1 }

    /// Big-endian bytes, left-padded with zeros to `length` (at least the number's own length).
    func bytes(padTo length: Int = 0) -> [UInt8] {
        let size = max(length, byteCount)
        var out = [UInt8](repeating: 0, count: size)
        guard size > 0 else { return out }
        _ = out.withUnsafeMutableBufferPointer { BN_bn2binpad(raw, $0.baseAddress, Int32(size)) }
        return out
    }

    static func compare(_ a: BigNumber, _ b: BigNumber) -> Int { Int(BN_cmp(a.raw, b.raw)) }

    func copy() throws(MRTDProtocolError) -> BigNumber {
        guard let d = BN_dup(raw) else { throw MRTDProtocolError(.library, "libcrypto could not copy a number") }
        let out = BigNumber(owning: d)
        if BN_get_flags(raw, Int32(BN_FLG_CONSTTIME)) != 0 { out.markSecret() }
        return out
    }
}

/// A BN_CTX for one computation.
final class BigNumberContext {
    let raw: OpaquePointer
    init() throws(MRTDProtocolError) {
        guard let c = BN_CTX_new() else { throw MRTDProtocolError(.library, "libcrypto could not make a number context") }
        raw = c
    }
    deinit { BN_CTX_free(raw) }

    /// Runs a libcrypto call into a fresh result number; throws when it returns anything but 1.
    func compute(_ what: String, _ body: (OpaquePointer, OpaquePointer) -> Int32) throws(MRTDProtocolError) -> BigNumber {
        guard let r = BN_new() else { throw MRTDProtocolError(.library, "libcrypto could not hold a number") }
        let result = BigNumber(owning: r)
        guard body(r, raw) == 1 else { throw MRTDProtocolError(.library, "libcrypto refused \(what)") }
        return result
    }

    func modExp(_ base: BigNumber, _ exponent: BigNumber, _ modulus: BigNumber) throws(MRTDProtocolError) -> BigNumber {
        try compute("a modular exponentiation") { r, ctx in BN_mod_exp(r, base.raw, exponent.raw, modulus.raw, ctx) }
    }
    func modMul(_ a: BigNumber, _ b: BigNumber, _ m: BigNumber) throws(MRTDProtocolError) -> BigNumber {
        try compute("a modular multiplication") { r, ctx in BN_mod_mul(r, a.raw, b.raw, m.raw, ctx) }
    }
    func modAdd(_ a: BigNumber, _ b: BigNumber, _ m: BigNumber) throws(MRTDProtocolError) -> BigNumber {
        try compute("a modular addition") { r, ctx in BN_mod_add(r, a.raw, b.raw, m.raw, ctx) }
    }
    func modSub(_ a: BigNumber, _ b: BigNumber, _ m: BigNumber) throws(MRTDProtocolError) -> BigNumber {
        try compute("a modular subtraction") { r, ctx in BN_mod_sub(r, a.raw, b.raw, m.raw, ctx) }
    }
    func mod(_ a: BigNumber, _ m: BigNumber) throws(MRTDProtocolError) -> BigNumber {
        try compute("a reduction") { r, ctx in BN_div(nil, r, a.raw, m.raw, ctx) }
    }
    func modInverse(_ a: BigNumber, _ m: BigNumber) throws(MRTDProtocolError) -> BigNumber {
        try compute("a modular inverse") { r, ctx in BN_mod_inverse(r, a.raw, m.raw, ctx) == nil ? 0 : 1 }
    }
    func sub(_ a: BigNumber, _ b: BigNumber) throws(MRTDProtocolError) -> BigNumber {
        try compute("a subtraction") { r, _ in BN_sub(r, a.raw, b.raw) }
    }
    func add(_ a: BigNumber, _ b: BigNumber) throws(MRTDProtocolError) -> BigNumber {
        try compute("an addition") { r, _ in BN_add(r, a.raw, b.raw) }
    }
    func div(_ a: BigNumber, _ b: BigNumber) throws(MRTDProtocolError) -> BigNumber {
        try compute("a division") { r, ctx in BN_div(r, nil, a.raw, b.raw, ctx) }
    }
}
