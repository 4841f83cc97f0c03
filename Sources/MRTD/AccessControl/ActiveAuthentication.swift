// Active Authentication (ICAO 9303 Part 11 §6.1): INTERNAL AUTHENTICATE with a random
// challenge, the signature checked with DG15's key: RSA with ISO/IEC 9796-2 scheme 1 (message
// recovery), or ECDSA with the hash ActiveAuthenticationInfo in DG14 names.
import CardCrypto
import ISO7816
internal import SwiftASN1

/// Active authentication from the terminal's side.
public enum ActiveAuthentication {
    /// Sends INTERNAL AUTHENTICATE with an 8-byte challenge and checks the chip's signature.
    /// - Parameters:
    ///   - channel: the channel, secure messaging established.
    ///   - publicKey: DG15's SubjectPublicKeyInfo.
    ///   - info: DG14's ActiveAuthenticationInfo (ECDSA's hash); nil means SHA-1 (§6.1).
    ///   - random: the 8-byte challenge is drawn from it (fixed bytes only in tests).
    ///   - extendedLength: whether the reader and the chip both take extended-length APDUs.
    public static func perform(on channel: MRTDChannel, publicKey: ChipPublicKey, info: ActiveAuthenticationInfo? = nil,
                               random: RandomSource = .system, extendedLength: Bool = false) throws -> ActiveAuthenticationResult {
        let challenge = random.bytes(8)
        // Le 256 carries an RSA-2048 signature in a plain answer, but under secure messaging a
        // short answer holds at most 223 plain bytes (AES; 231 with 3DES) beside DO 87's padding,
        // DO 99 and DO 8E: the emulated chip answered a 2048-bit key's signature with 67 00.
        // With extended length on both sides, ask for an extended answer when the signature may
        // not fit a short one; otherwise a chip that needs more answers 6Cxx or 61xx, which the
        // transport follows.
        let ne = extendedLength && (expectedSignatureLength(publicKey) ?? 0) > 223 ? 65536 : 256
        let answer = try channel.send(CommandAPDU(cla: 0x00, ins: 0x88, p1: 0, p2: 0, data: challenge, ne: ne))
        guard answer.statusWord == .success else { throw MRTDProtocolError.status(answer.statusWord, "INTERNAL AUTHENTICATE") }
        guard !answer.data.isEmpty else { throw MRTDProtocolError(.malformed, "INTERNAL AUTHENTICATE: the chip returned no signature") }
        return try verify(signature: answer.data, challenge: challenge, publicKey: publicKey, info: info)
    }

    /// Checks a signature over `challenge` (offline re-verification, and the tests).
    public static func verify(signature: [UInt8], challenge: [UInt8], publicKey: ChipPublicKey, info: ActiveAuthenticationInfo? = nil) throws(MRTDProtocolError) -> ActiveAuthenticationResult {
        if publicKey.isRSA {
            let (valid, digest) = try verifyRSA(signature: signature, challenge: challenge, key: publicKey.publicKey)
            return ActiveAuthenticationResult(algorithm: "RSA ISO/IEC 9796-2 scheme 1 with \(digest.map { "\($0)" } ?? "an unknown hash")",
                                              challenge: challenge, signatureValid: valid)
        }
        guard case let .ellipticCurve(curve) = try publicKey.specification.domain() else {
            throw MRTDProtocolError(.unsupported, "Active Authentication with a \(publicKey) is not supported")
        }
        let digest = try ecdsaDigest(info)
        let valid = try verifyECDSA(signature: signature, digest: digest.hash(challenge), key: publicKey.publicKey, curve: curve)
        return ActiveAuthenticationResult(algorithm: "ECDSA with \(digest) on \(curve)", challenge: challenge, signatureValid: valid)
    }

    /// The signature's length for `key`: the RSA modulus' bytes, or twice the curve order's
    /// (plain r ‖ s); nil when the key does not say.
    static func expectedSignatureLength(_ key: ChipPublicKey) -> Int? {
        if key.isRSA {
            guard let node = try? SecurityInfoASN1.parse(key.publicKey, "the RSA public key"),
                  let fields = try? SecurityInfoASN1.children(node, .sequence, "the RSA public key"), let first = fields.first,
                  let modulus = try? SecurityInfoASN1.unsignedInteger(first, "the RSA modulus") else { return nil }
            return modulus.drop { $0 == 0 }.count
        }
        guard case let .ellipticCurve(curve)? = try? key.specification.domain() else { return nil }
        return 2 * curve.n.byteCount
    }

    static func ecdsaDigest(_ info: ActiveAuthenticationInfo?) throws(MRTDProtocolError) -> Digest {
        guard let info else { return .sha1 }
        let table: [String: Digest] = [
            "1.2.840.10045.4.1": .sha1, "1.2.840.10045.4.3.1": .sha224, "1.2.840.10045.4.3.2": .sha256,
            "1.2.840.10045.4.3.3": .sha384, "1.2.840.10045.4.3.4": .sha512,
            "0.4.0.127.0.7.1.1.4.1.1": .sha1, "0.4.0.127.0.7.1.1.4.1.2": .sha224, "0.4.0.127.0.7.1.1.4.1.3": .sha256,
            "0.4.0.127.0.7.1.1.4.1.4": .sha384, "0.4.0.127.0.7.1.1.4.1.5": .sha512,
        ]
        guard let digest = table[info.signatureAlgorithm.dotted] else {
            throw MRTDProtocolError(.unsupported, "Active Authentication signature algorithm \(info.signatureAlgorithm) is not supported")
        }
        return digest
    }

    /// ISO/IEC 9796-2 scheme 1, partial recovery: m = s^e mod n must be 6A ‖ M1 ‖ H(M1 ‖ challenge)
    /// ‖ trailer, the trailer BC (SHA-1) or xx CC naming the hash (ISO/IEC 10118-3 identifiers).
    static func verifyRSA(signature: [UInt8], challenge: [UInt8], key: [UInt8]) throws(MRTDProtocolError) -> (Bool, Digest?) {
        let node = try SecurityInfoASN1.parse(key, "the RSA public key")
        let fields = try SecurityInfoASN1.children(node, .sequence, "the RSA public key")
        guard fields.count == 2 else { throw MRTDProtocolError(.malformed, "the RSA public key has \(fields.count) fields, not 2") }
        let modulus = try BigNumber(try SecurityInfoASN1.unsignedInteger(fields[0], "the RSA modulus"))
        let exponent = try BigNumber(try SecurityInfoASN1.unsignedInteger(fields[1], "the RSA exponent"))
        guard modulus.bitCount >= 1024, modulus.bitCount <= 8192, !exponent.isZero else {
            throw MRTDProtocolError(.unsupported, "an RSA key of \(modulus.bitCount) bits is not supported")
        }
        let s = try BigNumber(signature)
        guard signature.count <= modulus.byteCount, BigNumber.compare(s, modulus) < 0 else { return (false, nil) }
        let context = try BigNumberContext()
        let m = try context.modExp(s, exponent, modulus).bytes(padTo: modulus.byteCount)
        guard let last = m.last else { return (false, nil) }
        let digest: Digest?
        let trailer: Int
        if last == 0xBC {
            digest = .sha1; trailer = 1
        } else if last == 0xCC, m.count >= 2 {
            trailer = 2
            switch m[m.count - 2] {
            case 0x33: digest = .sha1
            case 0x38: digest = .sha224
            case 0x34: digest = .sha256
            case 0x36: digest = .sha384
            case 0x35: digest = .sha512
            default: digest = nil
            }
        } else {
            return (false, nil)
        }
        guard let digest, m.count > 1 + digest.size + trailer, m[0] == 0x6A else { return (false, digest) }
        let m1 = Array(m[1..<(m.count - trailer - digest.size)])
        let d = Array(m[(m.count - trailer - digest.size)..<(m.count - trailer)])
        return (constantTimeEquals(digest.hash(m1 + challenge), d), digest)
    }

    /// ECDSA (SEC 1 §4.1.4) over the digest e: r, s in 1…n−1; R = (e·s⁻¹)·G + (r·s⁻¹)·Q;
    /// valid when R.x mod n = r. The signature is plain r ‖ s (BSI TR-03111) or a DER SEQUENCE.
    static func verifyECDSA(signature: [UInt8], digest: [UInt8], key: [UInt8], curve: EllipticCurveDomain) throws(MRTDProtocolError) -> Bool {
        let size = curve.n.byteCount
        var rBytes: [UInt8], sBytes: [UInt8]
        if signature.count == 2 * size {
            rBytes = Array(signature[..<size]); sBytes = Array(signature[size...])
        } else {
            guard let node = try? BER.parse(signature), case let .constructed(items) = node.content, node.identifier == .sequence else {
                throw MRTDProtocolError(.malformed, "the ECDSA signature is \(signature.count) bytes: neither r ‖ s nor DER")
            }
            let values = Array(items)
            guard values.count == 2 else { throw MRTDProtocolError(.malformed, "the ECDSA signature's SEQUENCE holds \(values.count) values, not 2") }
            rBytes = try SecurityInfoASN1.unsignedInteger(values[0], "ECDSA r")
            sBytes = try SecurityInfoASN1.unsignedInteger(values[1], "ECDSA s")
        }
        let c = try BigNumberContext()
        let r = try BigNumber(rBytes), s = try BigNumber(sBytes)
        guard !r.isZero, !s.isZero, BigNumber.compare(r, curve.n) < 0, BigNumber.compare(s, curve.n) < 0 else { return false }
        // e: the leftmost bits of the digest, as many as n has.
        var e = try BigNumber(digest)
        let excess = digest.count * 8 - curve.n.bitCount
        if excess > 0 { e = try c.div(e, try BigNumber(word: 1 << UInt(min(excess, 62)))) }
        if excess > 62 { e = try c.div(e, try BigNumber(word: 1 << UInt(excess - 62))) }
        let w = try c.modInverse(s, curve.n)
        let u1 = try c.modMul(try c.mod(e, curve.n), w, curve.n)
        let u2 = try c.modMul(r, w, curve.n)
        let q = try curve.decode(key, context: c)
        let point = try curve.newPoint()
        guard curve.mulAdd(point, u1, q, u2, context: c) else { return false }
        guard let x = curve.affineX(point, context: c) else { return false }
        return BigNumber.compare(try c.mod(x, curve.n), r) == 0
    }
}

/// What Active Authentication proved: `signatureValid` means the chip holds the private key of
/// DG15's public key (it signed our fresh challenge). DG15 is the document's own only if passive
/// authentication verified its hash: only then is the chip not a clone.
public struct ActiveAuthenticationResult: Sendable, Hashable, CustomStringConvertible {
    /// `RSA ISO/IEC 9796-2 scheme 1 with SHA-256`, `ECDSA with SHA-256 on brainpoolP256r1`.
    public let algorithm: String
    /// The 8-byte challenge the chip signed.
    public let challenge: [UInt8]
    /// Whether the signature over `challenge` verifies with DG15's key.
    public let signatureValid: Bool

    public var description: String { "Active Authentication (\(algorithm)): " + (signatureValid ? "the chip signed the challenge" : "the signature does NOT verify") }
}
