// libcrypto's BIGNUM as a Swift value owner: the integers of PACE, chip authentication, RSA and
// ECDSA on the chip side.
internal import COpenSSL

/// An integer held by libcrypto, cleared and freed with the value.
///
/// Allocation failures stop the program (as `Digest.hash` does): there is no way on without
/// memory, and no card data can cause one.
///
/// A value must outlive every libcrypto call given its `pointer`: keep it in a named constant
/// used after the call, or wrap the call in `withExtendedLifetime`.
final class BigNumber: @unchecked Sendable {
    let pointer: OpaquePointer

    init() {
        guard let p = BN_new() else { preconditionFailure("libcrypto could not allocate a number") }
        pointer = p
    }

    /// Takes ownership of a BIGNUM libcrypto made.
    init(owning p: OpaquePointer) { pointer = p }

    /// The unsigned big-endian integer in `bytes`.
    convenience init(bytes: [UInt8]) {
        self.init()
        _ = bytes.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), pointer) }
    }

    convenience init(_ value: UInt) {
        self.init()
        BN_set_word(pointer, value)
    }

    deinit { BN_clear_free(pointer) }

    func copy() -> BigNumber {
        guard let p = BN_dup(pointer) else { preconditionFailure("libcrypto could not copy a number") }
        return BigNumber(owning: p)
    }

    var byteCount: Int { Int(apdu_bn_num_bytes(pointer)) }
    var bitCount: Int { Int(BN_num_bits(pointer)) }
    var isZero: Bool { BN_is_zero(pointer) == 1 }
    var isOne: Bool { BN_is_one(pointer) == 1 }
    var isOdd: Bool { BN_is_odd(pointer) == 1 }

    /// Big-endian, left-padded with zeros to `length` (nil: the minimal length). A number too
    /// large for `length` comes back at its own length.
    func bytes(length: Int? = nil) -> [UInt8] {
        let own = byteCount
        let n = max(length ?? own, own)
        var out = [UInt8](repeating: 0, count: n)
        if n == 0 { return out }
        _ = out.withUnsafeMutableBufferPointer { BN_bn2binpad(pointer, $0.baseAddress, Int32(n)) }
        return out
    }

    static func < (a: BigNumber, b: BigNumber) -> Bool { BN_cmp(a.pointer, b.pointer) < 0 }
    static func == (a: BigNumber, b: BigNumber) -> Bool { BN_cmp(a.pointer, b.pointer) == 0 }

    // Modular arithmetic; `context` is scratch space for one thread.
    static func modExp(_ base: BigNumber, _ exponent: BigNumber, _ modulus: BigNumber, _ context: BigNumberContext) -> BigNumber {
        let r = BigNumber()
        guard BN_mod_exp(r.pointer, base.pointer, exponent.pointer, modulus.pointer, context.pointer) == 1 else {
            preconditionFailure("libcrypto could not exponentiate")
        }
        return r
    }

    static func modMul(_ a: BigNumber, _ b: BigNumber, _ modulus: BigNumber, _ context: BigNumberContext) -> BigNumber {
        let r = BigNumber()
        guard BN_mod_mul(r.pointer, a.pointer, b.pointer, modulus.pointer, context.pointer) == 1 else {
            preconditionFailure("libcrypto could not multiply")
        }
        return r
    }

    static func modAdd(_ a: BigNumber, _ b: BigNumber, _ modulus: BigNumber, _ context: BigNumberContext) -> BigNumber {
        let r = BigNumber()
        guard BN_mod_add(r.pointer, a.pointer, b.pointer, modulus.pointer, context.pointer) == 1 else {
            preconditionFailure("libcrypto could not add")
        }
        return r
    }

    /// `a` reduced into [0, modulus).
    static func mod(_ a: BigNumber, _ modulus: BigNumber, _ context: BigNumberContext) -> BigNumber {
        let r = BigNumber()
        guard BN_nnmod(r.pointer, a.pointer, modulus.pointer, context.pointer) == 1 else {
            preconditionFailure("libcrypto could not reduce")
        }
        return r
    }

    /// The inverse of `a` modulo `modulus`, nil when there is none.
    static func modInverse(_ a: BigNumber, _ modulus: BigNumber, _ context: BigNumberContext) -> BigNumber? {
        let r = BigNumber()
        guard BN_mod_inverse(r.pointer, a.pointer, modulus.pointer, context.pointer) != nil else {
            ERR_clear_error()
            return nil
        }
        return r
    }

    static func * (a: BigNumber, b: BigNumber) -> BigNumber {
        let r = BigNumber()
        let context = BigNumberContext()
        let ok = withExtendedLifetime(context) { BN_mul(r.pointer, a.pointer, b.pointer, context.pointer) }
        guard ok == 1 else { preconditionFailure("libcrypto could not multiply") }
        return r
    }

    static func - (a: BigNumber, b: BigNumber) -> BigNumber {
        let r = BigNumber()
        guard BN_sub(r.pointer, a.pointer, b.pointer) == 1 else { preconditionFailure("libcrypto could not subtract") }
        return r
    }

    static func + (a: BigNumber, b: BigNumber) -> BigNumber {
        let r = BigNumber()
        guard BN_add(r.pointer, a.pointer, b.pointer) == 1 else { preconditionFailure("libcrypto could not add") }
        return r
    }

    /// Whether this is (with overwhelming probability) prime, by libcrypto's Miller–Rabin.
    func isProbablePrime(_ context: BigNumberContext) -> Bool {
        BN_check_prime(pointer, context.pointer, nil) == 1
    }
}

/// libcrypto's scratch space for big-number operations (BN_CTX).
final class BigNumberContext: @unchecked Sendable {
    let pointer: OpaquePointer
    init() {
        guard let p = BN_CTX_new() else { preconditionFailure("libcrypto could not allocate a number context") }
        pointer = p
    }
    deinit { BN_CTX_free(pointer) }
}
