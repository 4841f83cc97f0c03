// What an issuer and a card sign (EMV Book 2 §5-6), the signer's side: the messages built to the
// format, hashed with SHA-1 and raised to the private exponent.
import CardCrypto
internal import COpenSSL

/// Book 2's signed messages, built as an issuer personalises a card and as the card signs.
public enum PaymentCardSigner {
    /// `message`^`d` mod `n`, as long as the modulus.
    public static func rsa(_ message: [UInt8], modulus: [UInt8], privateExponent: [UInt8]) -> [UInt8] {
        let ctx = BN_CTX_new()!
        defer { BN_CTX_free(ctx) }
        let m = BN_bin2bn(message, Int32(message.count), nil)!, n = BN_bin2bn(modulus, Int32(modulus.count), nil)!
        let d = BN_bin2bn(privateExponent, Int32(privateExponent.count), nil)!, r = BN_new()!
        defer { BN_free(m); BN_free(n); BN_free(d); BN_free(r) }
        BN_mod_exp(r, m, d, n, ctx)
        var out = [UInt8](repeating: 0, count: modulus.count)
        BN_bn2binpad(r, &out, Int32(out.count))
        return out
    }

    /// 6A ‖ body padded with BB to N − 22 ‖ SHA-1(body padded ‖ hashExtra) ‖ BC.
    public static func message(_ body: [UInt8], size: Int, hashExtra: [UInt8]) -> [UInt8] {
        let padded = body + [UInt8](repeating: 0xBB, count: max(0, size - 22 - body.count))
        return [0x6A] + padded + Digest.sha1.hash(padded + hashExtra) + [0xBC]
    }

    /// A public key certificate of `subject` (format 02 issuer, 04 ICC) signed with `signer`:
    /// the certificate and the remainder of the subject's modulus.
    public static func certificate(format: UInt8, identity: [UInt8], expiry: [UInt8], serial: [UInt8], subject: [UInt8], subjectExponent: [UInt8],
                                   signerModulus: [UInt8], signerPrivateExponent: [UInt8], staticData: [UInt8] = []) -> (certificate: [UInt8], remainder: [UInt8]) {
        let room = signerModulus.count - 36 - (format == 0x04 ? 6 : 0)
        let leftmost = Array(subject.prefix(room)), remainder = Array(subject.dropFirst(room))
        let body: [UInt8] = [format] + identity + expiry + serial + [0x01, 0x01, UInt8(subject.count), UInt8(subjectExponent.count)] + leftmost
        let m = message(body, size: signerModulus.count, hashExtra: remainder + subjectExponent + staticData)
        return (rsa(m, modulus: signerModulus, privateExponent: signerPrivateExponent), remainder)
    }

    /// Signed Static Application Data (format 03) over `staticData`, with the DAC.
    public static func ssad(staticData: [UInt8], dac: [UInt8], signerModulus: [UInt8], signerPrivateExponent: [UInt8]) -> [UInt8] {
        rsa(message([0x03, 0x01] + dac, size: signerModulus.count, hashExtra: staticData), modulus: signerModulus, privateExponent: signerPrivateExponent)
    }

    /// Signed Dynamic Application Data (format 05, or 95 for Visa fDDA) over the terminal's data,
    /// with the ICC Dynamic Number.
    public static func sdad(idn: [UInt8], terminalData: [UInt8], format: UInt8 = 0x05, signerModulus: [UInt8], signerPrivateExponent: [UInt8]) -> [UInt8] {
        let dynamic = [UInt8(idn.count)] + idn
        let m = message([format, 0x01, UInt8(dynamic.count)] + dynamic, size: signerModulus.count, hashExtra: terminalData)
        return rsa(m, modulus: signerModulus, privateExponent: signerPrivateExponent)
    }
}
