import CardCrypto
import COpenSSL
@testable import EMV

/// RSA keys with exponent 3, generated for the tests with libcrypto's BIGNUM (p, q ≡ 2 mod 3 so
/// that 3 is invertible), and the EMV certificates and signatures Book 2 specifies, built by the
/// signer's rules, so the verifier is checked against data it did not make.
struct TestRSAKey {
    var modulus: [UInt8]
    var privateExponent: [UInt8]
    var exponent: [UInt8] = [0x03]
    var publicKey: EMVPublicKey { EMVPublicKey(modulus: modulus, exponent: exponent) }

    static func generate(bytes: Int) -> TestRSAKey {
        while true {
            let ctx = BN_CTX_new()!, p = BN_new()!, q = BN_new()!, n = BN_new()!, phi = BN_new()!, d = BN_new()!
            let three = BN_new()!, two = BN_new()!, p1 = BN_new()!, q1 = BN_new()!
            defer { [p, q, n, phi, d, three, two, p1, q1].forEach { BN_free($0) }; BN_CTX_free(ctx) }
            BN_set_word(three, 3); BN_set_word(two, 2)
            BN_generate_prime_ex(p, Int32(bytes * 4), 0, three, two, nil)
            BN_generate_prime_ex(q, Int32(bytes * 4), 0, three, two, nil)
            BN_mul(n, p, q, ctx)
            guard (BN_num_bits(n) + 7) / 8 == Int32(bytes) else { continue }
            BN_sub(p1, p, BN_value_one()); BN_sub(q1, q, BN_value_one())
            BN_mul(phi, p1, q1, ctx)
            guard BN_mod_inverse(d, three, phi, ctx) != nil else { continue }
            var nb = [UInt8](repeating: 0, count: bytes), db = [UInt8](repeating: 0, count: bytes)
            BN_bn2binpad(n, &nb, Int32(bytes)); BN_bn2binpad(d, &db, Int32(bytes))
            // Every signed message starts 6A: the modulus must be above it, as issued keys are.
            guard nb[0] >= 0x80 else { continue }
            return TestRSAKey(modulus: nb, privateExponent: db)
        }
    }

    func sign(_ x: [UInt8]) -> [UInt8] { RSARecovery.sign(x, modulus: modulus, privateExponent: privateExponent)! }
}

/// Book 2's signed messages, built as an issuer and a card build them.
enum TestSigner {
    /// 6A ‖ body (padded with BB to N-22) ‖ SHA-1(body ‖ extra) ‖ BC.
    static func message(_ body: [UInt8], size: Int, hashExtra: [UInt8]) -> [UInt8] {
        let padded = body + [UInt8](repeating: 0xBB, count: size - 22 - body.count)
        return [0x6A] + padded + Digest.sha1.hash(padded + hashExtra) + [0xBC]
    }

    /// An issuer certificate (format 02) of `issuer` by `ca`, and the remainder.
    static func issuerCertificate(_ issuer: TestRSAKey, ca: TestRSAKey, id: [UInt8] = [0x47, 0x61, 0x73, 0xFF], expiry: [UInt8] = [0x12, 0x49]) -> (certificate: [UInt8], remainder: [UInt8]) {
        let room = ca.modulus.count - 36
        let leftmost = Array(issuer.modulus.prefix(room)), remainder = Array(issuer.modulus.dropFirst(room))
        let body: [UInt8] = [0x02] + id + expiry + [0x00, 0x00, 0x01, 0x01, 0x01, UInt8(issuer.modulus.count), UInt8(issuer.exponent.count)] + leftmost
        return (ca.sign(message(body, size: ca.modulus.count, hashExtra: remainder + issuer.exponent)), remainder)
    }

    /// An SSAD (format 03) of `staticData` with the DAC.
    static func ssad(_ staticData: [UInt8], dac: [UInt8], issuer: TestRSAKey) -> [UInt8] {
        issuer.sign(message([0x03, 0x01] + dac, size: issuer.modulus.count, hashExtra: staticData))
    }

    /// An ICC certificate (format 04) of `icc` by `issuer` for `pan` (10 bytes, F-padded).
    static func iccCertificate(_ icc: TestRSAKey, issuer: TestRSAKey, pan: [UInt8], staticData: [UInt8], expiry: [UInt8] = [0x12, 0x49]) -> (certificate: [UInt8], remainder: [UInt8]) {
        let room = issuer.modulus.count - 42
        let leftmost = Array(icc.modulus.prefix(room)), remainder = Array(icc.modulus.dropFirst(room))
        let body: [UInt8] = [0x04] + pan + expiry + [0x00, 0x00, 0x02, 0x01, 0x01, UInt8(icc.modulus.count), UInt8(icc.exponent.count)] + leftmost
        return (issuer.sign(message(body, size: issuer.modulus.count, hashExtra: remainder + icc.exponent + staticData)), remainder)
    }

    /// An SDAD (format 05 or 95) over the terminal's data, with the ICC dynamic number.
    static func sdad(idn: [UInt8], terminalData: [UInt8], icc: TestRSAKey, format: UInt8 = 0x05) -> [UInt8] {
        let dynamic = [UInt8(idn.count)] + idn
        return icc.sign(message([format, 0x01, UInt8(dynamic.count)] + dynamic, size: icc.modulus.count, hashExtra: terminalData))
    }
}
