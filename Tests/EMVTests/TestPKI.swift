import COpenSSL
import VirtualCard
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
}

/// Book 2's signed messages of the test keys, built by the signer the emulated cards use
/// (VirtualCard's `PaymentCardSigner`), apart from the verifier under test.
enum TestSigner {
    /// An issuer certificate (format 02) of `issuer` by `ca`, and the remainder.
    static func issuerCertificate(_ issuer: TestRSAKey, ca: TestRSAKey, id: [UInt8] = [0x47, 0x61, 0x73, 0xFF], expiry: [UInt8] = [0x12, 0x49]) -> (certificate: [UInt8], remainder: [UInt8]) {
        PaymentCardSigner.certificate(format: 0x02, identity: id, expiry: expiry, serial: [0x00, 0x00, 0x01], subject: issuer.modulus, subjectExponent: issuer.exponent,
                                      signerModulus: ca.modulus, signerPrivateExponent: ca.privateExponent)
    }

    /// An SSAD (format 03) of `staticData` with the DAC.
    static func ssad(_ staticData: [UInt8], dac: [UInt8], issuer: TestRSAKey) -> [UInt8] {
        PaymentCardSigner.ssad(staticData: staticData, dac: dac, signerModulus: issuer.modulus, signerPrivateExponent: issuer.privateExponent)
    }

    /// An ICC certificate (format 04) of `icc` by `issuer` for `pan` (10 bytes, F-padded).
    static func iccCertificate(_ icc: TestRSAKey, issuer: TestRSAKey, pan: [UInt8], staticData: [UInt8], expiry: [UInt8] = [0x12, 0x49]) -> (certificate: [UInt8], remainder: [UInt8]) {
        PaymentCardSigner.certificate(format: 0x04, identity: pan, expiry: expiry, serial: [0x00, 0x00, 0x02], subject: icc.modulus, subjectExponent: icc.exponent,
                                      signerModulus: issuer.modulus, signerPrivateExponent: issuer.privateExponent, staticData: staticData)
    }

    /// An SDAD (format 05 or 95) over the terminal's data, with the ICC dynamic number.
    static func sdad(idn: [UInt8], terminalData: [UInt8], icc: TestRSAKey, format: UInt8 = 0x05) -> [UInt8] {
        PaymentCardSigner.sdad(idn: idn, terminalData: terminalData, format: format, signerModulus: icc.modulus, signerPrivateExponent: icc.privateExponent)
    }
}
