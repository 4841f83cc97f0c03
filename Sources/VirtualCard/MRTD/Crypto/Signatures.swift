// The chip's and specimen's signatures on libcrypto arithmetic: ISO/IEC 9796-2, PKCS#1 v1.5,
// RSASSA-PSS and ECDSA.
internal import COpenSSL
import CardCrypto

/// The chip's and the specimen's signatures, computed with libcrypto's big-number and curve
/// arithmetic so that they depend only on their inputs and the nonce given: Active
/// Authentication (ISO/IEC 9796-2 scheme 1, ECDSA), and the PKCS#1 v1.5, RSASSA-PSS and ECDSA
/// signatures of certificates and security objects.
extension ChipPrivateKey {
    /// m^d mod n: the RSA private operation on a representative shorter than the modulus.
    func rsaPrivateOperation(_ representative: [UInt8]) -> [UInt8]? {
        guard case .rsa(let n, _, let d, _) = material else { return nil }
        let modulus = BigNumber(bytes: n)
        let m = BigNumber(bytes: representative)
        guard m < modulus else { return nil }
        return BigNumber.modExp(m, BigNumber(bytes: d), modulus, BigNumberContext()).bytes(length: n.count)
    }

    var rsaModulusBits: Int {
        guard case .rsa(let n, _, _, _) = material else { return 0 }
        return BigNumber(bytes: n).bitCount
    }

    /// ISO/IEC 9796-2 digital signature scheme 1 with SHA-1 and partial message recovery, as
    /// Active Authentication asks (ICAO 9303 Part 11 §6.1): J = 6A ‖ M1 ‖ SHA-1(M1 ‖ M2) ‖ BC,
    /// where M2 is the terminal's challenge and M1 the chip's own nonce filling the modulus.
    func iso9796Signature(challenge: [UInt8], nonce: (Int) -> [UInt8]) -> [UInt8]? {
        let k = (rsaModulusBits + 7) / 8
        let m1Length = k - 2 - Digest.sha1.size
        guard m1Length > 0 else { return nil }
        let m1 = nonce(m1Length)
        let representative = [0x6A] + m1 + Digest.sha1.hash(m1 + challenge) + [0xBC]
        return rsaPrivateOperation(representative)
    }

    /// RSASSA-PKCS1-v1_5 (RFC 8017 §8.2) over `message` with `digest`.
    func pkcs1Signature(_ message: [UInt8], digest: Digest) -> [UInt8]? {
        let k = (rsaModulusBits + 7) / 8
        let info = DER.sequence(DER.sequence(DER.oid(Self.digestOID(digest)), DER.null), DER.octetString(digest.hash(message)))
        guard k >= info.count + 11 else { return nil }
        let encoded = [0x00, 0x01] + [UInt8](repeating: 0xFF, count: k - info.count - 3) + [0x00] + info
        return rsaPrivateOperation(encoded)
    }

    /// RSASSA-PSS (RFC 8017 §8.1, EMSA-PSS with MGF1 over the same hash).
    func pssSignature(_ message: [UInt8], digest: Digest, salt: [UInt8]) -> [UInt8]? {
        let modBits = rsaModulusBits
        let emBits = modBits - 1
        let emLength = (emBits + 7) / 8
        let h = digest.size
        guard emLength >= h + salt.count + 2 else { return nil }
        let hash = digest.hash([UInt8](repeating: 0, count: 8) + digest.hash(message) + salt)
        var db = [UInt8](repeating: 0, count: emLength - salt.count - h - 2) + [0x01] + salt
        let mask = Self.mgf1(hash, length: db.count, digest: digest)
        for i in db.indices { db[i] ^= mask[i] }
        db[0] &= 0xFF >> (8 * emLength - emBits)
        return rsaPrivateOperation(db + hash + [0xBC])
    }

    static func mgf1(_ seed: [UInt8], length: Int, digest: Digest) -> [UInt8] {
        var out: [UInt8] = []
        var counter: UInt32 = 0
        while out.count < length {
            out += digest.hash(seed + [UInt8(counter >> 24), UInt8(counter >> 16 & 0xFF), UInt8(counter >> 8 & 0xFF), UInt8(counter & 0xFF)])
            counter += 1
        }
        return Array(out.prefix(length))
    }

    static func digestOID(_ digest: Digest) -> String {
        switch digest {
        case .sha1: return OID.sha1
        case .sha224: return "2.16.840.1.101.3.4.2.4"
        case .sha256: return OID.sha256
        case .sha384: return OID.sha384
        case .sha512: return OID.sha512
        }
    }

    /// ECDSA (SEC 1 §4.1.3, TR-03111 §4.2.1.1) over a hash already computed: r and s, each as
    /// long as the group order. `nonce` gives candidate bytes for k until one lies in [1, n−1].
    func ecdsaSignature(hash: [UInt8], nonce: (Int) -> [UInt8]) -> (r: [UInt8], s: [UInt8])? {
        guard case .ec(_, let scalar) = material, let curve else { return nil }
        let order = curve.order
        let context = BigNumberContext()
        let n = curve.orderSize
        var e = BigNumber(bytes: hash)
        let excess = hash.count * 8 - order.bitCount
        if excess > 0 {
            let shifted = BigNumber()
            withExtendedLifetime(e) { _ = BN_rshift(shifted.pointer, e.pointer, Int32(excess)) }
            e = shifted
        }
        let d = BigNumber(bytes: scalar)
        for _ in 0..<64 {
            let k = BigNumber.candidate(below: order, nonce)
            guard !k.isZero, k < order, let point = curve.multiply(generatorBy: k) else { continue }
            let r = BigNumber.mod(BigNumber(bytes: point.x), order, context)
            guard !r.isZero, let kInverse = BigNumber.modInverse(k, order, context) else { continue }
            let s = BigNumber.modMul(kInverse, BigNumber.modAdd(e, BigNumber.modMul(r, d, order, context), order, context), order, context)
            guard !s.isZero else { continue }
            return (r.bytes(length: n), s.bytes(length: n))
        }
        return nil
    }
}
