// Finite-field Diffie-Hellman groups, on libcrypto's BIGNUM: the RFC 5114 groups of PACE's
// standardized parameters 0-2 and explicit DH parameters from a chip's SubjectPublicKeyInfo.
internal import COpenSSL

/// A multiplicative group mod a prime p with generator g of prime order q.
public final class DiffieHellmanDomain: KeyAgreementGroup, @unchecked Sendable {
    let p: BigNumber, g: BigNumber, q: BigNumber?
    /// The group's common name (`1024-bit MODP group with 160-bit prime order subgroup`), or nil.
    public let name: String?

    init(p: BigNumber, g: BigNumber, q: BigNumber?, name: String?) {
        self.p = p; self.g = g; self.q = q; self.name = name
    }

    /// DH parameters (DomainParameters of ANSI X9.42, or PKCS #3's p and g): p prime, g its
    /// generator, q the order of g when given. Sizes are checked, not primality.
    public convenience init(prime: [UInt8], generator: [UInt8], order: [UInt8]?) throws(MRTDProtocolError) {
        let pp = try BigNumber(prime), gg = try BigNumber(generator)
        let qq = try order.map { (o) throws(MRTDProtocolError) in try BigNumber(o) }
        guard pp.bitCount >= 1024, pp.bitCount <= 8192, BN_is_odd(pp.raw) == 1 else {
            throw MRTDProtocolError(.unsupported, "DH parameters with a \(pp.bitCount)-bit prime are not supported")
        }
        guard BigNumber.compare(gg, try BigNumber(word: 1)) > 0, BigNumber.compare(gg, pp) < 0 else {
            throw MRTDProtocolError(.invalidPublicKey, "the DH generator is outside 2…p−1")
        }
        if let qq, qq.isZero || BigNumber.compare(qq, pp) >= 0 { throw MRTDProtocolError(.invalidPublicKey, "the DH group order is outside 1…p−1") }
        // Explicit parameters may come from EF.CardAccess, which nothing signs: a chip (or a man in
        // the middle) offering a small subgroup would let the PACE transcript be searched offline
        // for the CAN or MRZ (review of issue 48). So the group is proven sound before any key is
        // made in it: p prime, the order q prime (p−1)/2 when not given, at least 160 bits,
        // dividing p−1, and g of order q.
        let context = try BigNumberContext()
        let one = try BigNumber(word: 1)
        let pMinusOne = try context.sub(pp, one)
        let order: BigNumber
        if let qq { order = qq } else { order = try context.div(pMinusOne, try BigNumber(word: 2)) }
        guard BN_check_prime(pp.raw, context.raw, nil) == 1, BN_check_prime(order.raw, context.raw, nil) == 1, order.bitCount >= 160,
              try context.mod(pMinusOne, order).isZero, BigNumber.compare(try context.modExp(gg, order, pp), one) == 0 else {
            throw MRTDProtocolError(.invalidPublicKey, "the explicit DH parameters are not a sound group (p and its subgroup order q must be prime, q at least 160 bits dividing p−1, g of order q): refused before any key was made in it")
        }
        self.init(p: pp, g: gg, q: order, name: nil)
    }

    /// RFC 5114 §2.1-2.3: 0 the 1024-bit group with a 160-bit subgroup, 1 the 2048-bit group with
    /// a 224-bit subgroup, 2 the 2048-bit group with a 256-bit subgroup.
    convenience init(rfc5114 which: Int, name: String) throws(MRTDProtocolError) {
        var pp: OpaquePointer?, gg: OpaquePointer?, qq: OpaquePointer?
        guard apdu_mrtd_rfc5114_group(Int32(which), &pp, &gg, &qq) == 1, let pp, let gg, let qq else {
            throw MRTDProtocolError(.unsupported, "libcrypto does not provide the RFC 5114 group \(which)")
        }
        self.init(p: BigNumber(owning: pp), g: BigNumber(owning: gg), q: BigNumber(owning: qq), name: name)
    }

    public var description: String { name ?? "\(primeBits)-bit DH group" }
    /// Bytes of p: the length of public keys and shared secrets.
    public var fieldSize: Int { p.byteCount }
    /// Bits of p.
    public var primeBits: Int { p.bitCount }
    var prime: [UInt8] { p.bytes() }
    var order: [UInt8]? { q?.bytes() }
    var publicKeyTag: UInt8 { 0x84 }

    func generateKeyPair(random: RandomSource) throws(MRTDProtocolError) -> KeyPair {
        let c = try BigNumberContext()
        let bound: BigNumber
        if let q { bound = q } else { bound = try c.sub(p, try BigNumber(word: 1)) }
        for _ in 0..<8 {
            let x = try c.mod(try BigNumber(random.bytes(bound.byteCount)), bound)
            x.markSecret()
            if x.isZero { continue }
            return KeyPair(privateKey: PrivateKey(value: x), publicKey: try c.modExp(g, x, p).bytes(padTo: fieldSize))
        }
        throw MRTDProtocolError(.library, "the random source gave no usable private key")
    }

    func keyPair(privateKey: [UInt8]) throws(MRTDProtocolError) -> KeyPair {
        let c = try BigNumberContext()
        let x = try BigNumber(privateKey)
        x.markSecret()
        guard !x.isZero, BigNumber.compare(x, p) < 0 else { throw MRTDProtocolError(.invalidPublicKey, "a private key outside 1…p−1") }
        return KeyPair(privateKey: PrivateKey(value: x), publicKey: try c.modExp(g, x, p).bytes(padTo: fieldSize))
    }

    /// 1 < y < p − 1, and y^q = 1 when q is known (NIST SP 800-56A §5.6.2.3.1).
    func decode(_ bytes: [UInt8], context c: BigNumberContext) throws(MRTDProtocolError) -> BigNumber {
        guard !bytes.isEmpty, bytes.count <= fieldSize + 1 else { throw MRTDProtocolError(.invalidPublicKey, "the chip's DH public key is \(bytes.count) bytes, longer than p") }
        let y = try BigNumber(bytes)
        let pMinus1 = try c.sub(p, try BigNumber(word: 1))
        guard BigNumber.compare(y, try BigNumber(word: 1)) > 0, BigNumber.compare(y, pMinus1) < 0 else {
            throw MRTDProtocolError(.invalidPublicKey, "the chip's DH public key is outside 2…p−2")
        }
        if let q {
            guard try c.modExp(y, q, p).isOne else { throw MRTDProtocolError(.invalidPublicKey, "the chip's DH public key is not in the subgroup of order q") }
        }
        return y
    }

    func validatePublicKey(_ key: [UInt8]) throws(MRTDProtocolError) -> [UInt8] {
        let c = try BigNumberContext()
        return try decode(key, context: c).bytes(padTo: fieldSize)
    }

    func agreeElement(privateKey: PrivateKey, peer: [UInt8]) throws(MRTDProtocolError) -> [UInt8] {
        let c = try BigNumberContext()
        let k = try c.modExp(try decode(peer, context: c), privateKey.value, p)
        guard !k.isOne else { throw MRTDProtocolError(.invalidPublicKey, "DH key agreement gave 1") }
        return k.bytes(padTo: fieldSize)
    }

    func sharedSecret(privateKey: PrivateKey, peer: [UInt8]) throws(MRTDProtocolError) -> [UInt8] {
        try agreeElement(privateKey: privateKey, peer: peer)
    }

    func genericMapping(nonce: [UInt8], element: [UInt8]) throws(MRTDProtocolError) -> any KeyAgreementGroup {
        let c = try BigNumberContext()
        let s = try BigNumber(nonce)
        s.markSecret()
        // g' = g^s · h mod p (§4.4.3.3.1)
        let mapped = try c.modMul(try c.modExp(g, s, p), try BigNumber(element), p)
        guard BigNumber.compare(mapped, try BigNumber(word: 1)) > 0 else { throw MRTDProtocolError(.invalidPublicKey, "the mapped DH generator is 0 or 1") }
        return DiffieHellmanDomain(p: p, g: mapped, q: q, name: name.map { "\($0) (mapped)" })
    }

    func integratedMapping(fieldElement: [UInt8]) throws(MRTDProtocolError) -> any KeyAgreementGroup {
        guard let q else { throw MRTDProtocolError(.unsupported, "the DH integrated mapping needs the group order q") }
        let c = try BigNumberContext()
        // g' = x^((p−1)/q) mod p, and g' ≠ 1 (§4.4.3.3.2)
        let exponent = try c.div(try c.sub(p, try BigNumber(word: 1)), q)
        let mapped = try c.modExp(try c.mod(try BigNumber(fieldElement), p), exponent, p)
        guard BigNumber.compare(mapped, try BigNumber(word: 1)) > 0 else { throw MRTDProtocolError(.invalidPublicKey, "the mapped DH generator is 0 or 1") }
        return DiffieHellmanDomain(p: p, g: mapped, q: q, name: name.map { "\($0) (mapped)" })
    }

    /// The generator, as long as p.
    var generatorBytes: [UInt8] { g.bytes(padTo: fieldSize) }
}
