// The RSA public operation EMV's certificates and signatures use (ISO/IEC 9796-2 message
// recovery, EMV Book 2 Annex A2.1): X = S^e mod n, through libcrypto's BIGNUM.
internal import COpenSSL

enum RSARecovery {
    /// `signature`^`exponent` mod `modulus`, as many bytes as the modulus; nil when the
    /// signature is not as long as the modulus or not below it (Book 2 §5.3 step 1).
    static func recover(_ signature: [UInt8], modulus: [UInt8], exponent: [UInt8]) -> [UInt8]? {
        guard !modulus.isEmpty, signature.count == modulus.count, !exponent.isEmpty else { return nil }
        guard let ctx = BN_CTX_new() else { return nil }
        defer { BN_CTX_free(ctx) }
        let s = BN_bin2bn(signature, Int32(signature.count), nil)
        let n = BN_bin2bn(modulus, Int32(modulus.count), nil)
        let e = BN_bin2bn(exponent, Int32(exponent.count), nil)
        let r = BN_new()
        defer { BN_free(s); BN_free(n); BN_free(e); BN_free(r) }
        guard let s, let n, let e, let r, BN_is_zero(n) == 0, BN_cmp(s, n) < 0 else { return nil }
        guard BN_mod_exp(r, s, e, n, ctx) == 1 else { return nil }
        var out = [UInt8](repeating: 0, count: modulus.count)
        guard BN_bn2binpad(r, &out, Int32(out.count)) == Int32(out.count) else { return nil }
        return out
    }
}
