// Elliptic curves over prime fields, on libcrypto's EC_GROUP: the standardized curves of PACE
// and chip authentication (brainpool, NIST) and explicit domain parameters from a chip's
// SubjectPublicKeyInfo.
internal import COpenSSL

/// An elliptic curve with its generator, order and cofactor (a short Weierstrass curve over a
/// prime field).
public final class EllipticCurveDomain: KeyAgreementGroup, @unchecked Sendable {
    let group: OpaquePointer
    let p: BigNumber, a: BigNumber, b: BigNumber, n: BigNumber, h: BigNumber
    /// The curve's common name (`brainpoolP256r1`), or nil for explicit parameters.
    public let name: String?

    /// Takes ownership of `group`.
    init(group: OpaquePointer, name: String?) throws(MRTDProtocolError) {
        self.group = group
        self.name = name
        let context = try BigNumberContext()
        guard let pp = BN_new(), let aa = BN_new(), let bb = BN_new() else { EC_GROUP_free(group); throw MRTDProtocolError(.library, "libcrypto could not hold a number") }
        p = BigNumber(owning: pp); a = BigNumber(owning: aa); b = BigNumber(owning: bb)
        guard EC_GROUP_get_curve(group, p.raw, a.raw, b.raw, context.raw) == 1,
              let order = EC_GROUP_get0_order(group).flatMap({ BN_dup($0) }),
              let cofactor = EC_GROUP_get0_cofactor(group).flatMap({ BN_dup($0) }) else {
            EC_GROUP_free(group)
            throw MRTDProtocolError(.library, "libcrypto could not read the curve's parameters")
        }
        n = BigNumber(owning: order)
        h = BigNumber(owning: cofactor)
    }

    deinit { EC_GROUP_free(group) }

    /// A curve libcrypto knows by its short name (`brainpoolP256r1`, `prime256v1`, `secp384r1`).
    public convenience init(named shortName: String, displayName: String? = nil) throws(MRTDProtocolError) {
        let nid = OBJ_sn2nid(shortName)
        guard nid != NID_undef, let g = EC_GROUP_new_by_curve_name(nid) else {
            throw MRTDProtocolError(.unsupported, "libcrypto does not know the curve \(displayName ?? shortName)")
        }
        try self.init(group: g, name: displayName ?? shortName)
    }

    /// A curve given by its parameters (ECParameters of a SubjectPublicKeyInfo, RFC 3279):
    /// prime p, coefficients a and b, the generator as an uncompressed or compressed point, its
    /// order and cofactor. The generator is checked to lie on the curve.
    public convenience init(prime: [UInt8], a: [UInt8], b: [UInt8], generator: [UInt8], order: [UInt8], cofactor: [UInt8]) throws(MRTDProtocolError) {
        let context = try BigNumberContext()
        let pp = try BigNumber(prime), aa = try BigNumber(a), bb = try BigNumber(b), nn = try BigNumber(order), hh = try BigNumber(cofactor.isEmpty ? [1] : cofactor)
        guard pp.bitCount >= 160, pp.bitCount <= 1024, BN_is_odd(pp.raw) == 1, !nn.isZero else {
            throw MRTDProtocolError(.unsupported, "explicit curve parameters with a \(pp.bitCount)-bit prime are not supported")
        }
        guard let g = EC_GROUP_new_curve_GFp(pp.raw, aa.raw, bb.raw, context.raw) else {
            throw MRTDProtocolError(.invalidPublicKey, "libcrypto refused the explicit curve parameters")
        }
        guard let point = EC_POINT_new(g) else { EC_GROUP_free(g); throw MRTDProtocolError(.library, "libcrypto could not make a point") }
        defer { EC_POINT_free(point) }
        let decoded = generator.withUnsafeBufferPointer { EC_POINT_oct2point(g, point, $0.baseAddress, $0.count, context.raw) }
        guard decoded == 1, EC_POINT_is_on_curve(g, point, context.raw) == 1, EC_POINT_is_at_infinity(g, point) == 0,
              EC_GROUP_set_generator(g, point, nn.raw, hh.raw) == 1 else {
            EC_GROUP_free(g)
            throw MRTDProtocolError(.invalidPublicKey, "the explicit curve's generator is not a point on it")
        }
        // As for DH: unsigned explicit parameters must be a sound curve before any key is made on
        // it (p and the order prime, the order at least 160 bits and that of the generator, a
        // small cofactor), or a weak one would expose the password PACE keeps.
        guard BN_check_prime(pp.raw, context.raw, nil) == 1, BN_check_prime(nn.raw, context.raw, nil) == 1, nn.bitCount >= 160,
              hh.bitCount <= 8, EC_GROUP_check(g, context.raw) == 1 else {
            EC_GROUP_free(g)
            throw MRTDProtocolError(.invalidPublicKey, "the explicit curve parameters are not a sound curve (a prime field, a prime order of at least 160 bits that is the generator's, a small cofactor): refused before any key was made on it")
        }
        try self.init(group: g, name: nil)
    }

    public var description: String { name ?? "explicit \(primeBits)-bit curve" }
    /// Bytes of p: the length of a coordinate and of the shared secret.
    public var fieldSize: Int { p.byteCount }
    /// Bits of p.
    public var primeBits: Int { p.bitCount }
    var prime: [UInt8] { p.bytes() }
    var order: [UInt8]? { n.bytes() }
    var publicKeyTag: UInt8 { 0x86 }

    /// A point, freed with its owner.
    final class Point {
        let raw: OpaquePointer
        init(_ raw: OpaquePointer) { self.raw = raw }
        deinit { EC_POINT_clear_free(raw) }
    }

    func newPoint() throws(MRTDProtocolError) -> Point {
        guard let p = EC_POINT_new(group) else { throw MRTDProtocolError(.library, "libcrypto could not make a point") }
        return Point(p)
    }

    func encode(_ point: Point, context: BigNumberContext) throws(MRTDProtocolError) -> [UInt8] {
        let length = EC_POINT_point2oct(group, point.raw, POINT_CONVERSION_UNCOMPRESSED, nil, 0, context.raw)
        guard length > 0 else { throw MRTDProtocolError(.library, "libcrypto could not encode a point") }
        var out = [UInt8](repeating: 0, count: length)
        _ = out.withUnsafeMutableBufferPointer { EC_POINT_point2oct(group, point.raw, POINT_CONVERSION_UNCOMPRESSED, $0.baseAddress, length, context.raw) }
        return out
    }

    /// Decodes and validates a point (§4.4.3.3, §6.2: every public key from the chip): on the
    /// curve, not the point at infinity, and of the group's prime order when the cofactor is not 1.
    func decode(_ bytes: [UInt8], context: BigNumberContext) throws(MRTDProtocolError) -> Point {
        let point = try newPoint()
        guard !bytes.isEmpty, bytes.count <= 1 + 2 * 128 else { throw MRTDProtocolError(.invalidPublicKey, "the chip's public key is \(bytes.count) bytes: no point of this curve") }
        let ok = bytes.withUnsafeBufferPointer { EC_POINT_oct2point(group, point.raw, $0.baseAddress, $0.count, context.raw) }
        guard ok == 1 else { throw MRTDProtocolError(.invalidPublicKey, "the chip's public key is not a point of \(description)") }
        guard EC_POINT_is_at_infinity(group, point.raw) == 0 else { throw MRTDProtocolError(.invalidPublicKey, "the chip's public key is the point at infinity") }
        guard EC_POINT_is_on_curve(group, point.raw, context.raw) == 1 else { throw MRTDProtocolError(.invalidPublicKey, "the chip's public key is not on \(description)") }
        if !h.isOne {
            let check = try newPoint()
            guard EC_POINT_mul(group, check.raw, nil, point.raw, n.raw, context.raw) == 1, EC_POINT_is_at_infinity(group, check.raw) == 1 else {
                throw MRTDProtocolError(.invalidPublicKey, "the chip's public key is outside the curve's prime-order subgroup")
            }
        }
        return point
    }

    /// scalar·G (point nil) or scalar·point.
    func multiply(_ scalar: BigNumber, _ point: Point?, context: BigNumberContext) throws(MRTDProtocolError) -> Point {
        let r = try newPoint()
        let ok = point.map { EC_POINT_mul(group, r.raw, nil, $0.raw, scalar.raw, context.raw) } ?? EC_POINT_mul(group, r.raw, scalar.raw, nil, nil, context.raw)
        guard ok == 1 else { throw MRTDProtocolError(.library, "libcrypto refused a point multiplication") }
        guard EC_POINT_is_at_infinity(group, r.raw) == 0 else { throw MRTDProtocolError(.invalidPublicKey, "key agreement gave the point at infinity") }
        return r
    }

    func generateKeyPair(random: RandomSource) throws(MRTDProtocolError) -> KeyPair {
        let context = try BigNumberContext()
        for _ in 0..<8 {
            let k = try context.mod(try BigNumber(random.bytes(n.byteCount)), n)
            k.markSecret()
            if k.isZero { continue }
            return KeyPair(privateKey: PrivateKey(value: k), publicKey: try encode(try multiply(k, nil, context: context), context: context))
        }
        throw MRTDProtocolError(.library, "the random source gave no usable private key")
    }

    func keyPair(privateKey: [UInt8]) throws(MRTDProtocolError) -> KeyPair {
        let context = try BigNumberContext()
        let k = try BigNumber(privateKey)
        k.markSecret()
        guard !k.isZero, BigNumber.compare(k, n) < 0 else { throw MRTDProtocolError(.invalidPublicKey, "a private key outside 1…n−1") }
        return KeyPair(privateKey: PrivateKey(value: k), publicKey: try encode(try multiply(k, nil, context: context), context: context))
    }

    func validatePublicKey(_ key: [UInt8]) throws(MRTDProtocolError) -> [UInt8] {
        let context = try BigNumberContext()
        return try encode(try decode(key, context: context), context: context)
    }

    func agreeElement(privateKey: PrivateKey, peer: [UInt8]) throws(MRTDProtocolError) -> [UInt8] {
        let context = try BigNumberContext()
        return try encode(try multiply(privateKey.value, try decode(peer, context: context), context: context), context: context)
    }

    func sharedSecret(privateKey: PrivateKey, peer: [UInt8]) throws(MRTDProtocolError) -> [UInt8] {
        let element = try agreeElement(privateKey: privateKey, peer: peer)
        // Uncompressed 04 ‖ x ‖ y: the x-coordinate is ECDH's shared secret (§9.6, BSI TR-03111).
        return Array(element.dropFirst().prefix(fieldSize))
    }

    /// This curve with `generator` in place of G (same order and cofactor).
    func withGenerator(_ generator: Point) throws(MRTDProtocolError) -> EllipticCurveDomain {
        guard let copy = EC_GROUP_dup(group) else { throw MRTDProtocolError(.library, "libcrypto could not copy the curve") }
        guard EC_GROUP_set_generator(copy, generator.raw, n.raw, h.raw) == 1 else {
            EC_GROUP_free(copy)
            throw MRTDProtocolError(.library, "libcrypto refused the mapped generator")
        }
        return try EllipticCurveDomain(group: copy, name: name.map { "\($0) (mapped)" })
    }

    func genericMapping(nonce: [UInt8], element: [UInt8]) throws(MRTDProtocolError) -> any KeyAgreementGroup {
        let context = try BigNumberContext()
        let s = try BigNumber(nonce)
        s.markSecret()
        let hPoint = try decode(element, context: context)
        let g = try newPoint()
        // G' = s·G + H (Part 11 §4.4.3.3.1).
        guard EC_POINT_mul(group, g.raw, s.raw, hPoint.raw, BN_value_one(), context.raw) == 1 else {
            throw MRTDProtocolError(.library, "libcrypto refused the generic mapping")
        }
        guard EC_POINT_is_at_infinity(group, g.raw) == 0 else { throw MRTDProtocolError(.invalidPublicKey, "the mapped generator is the point at infinity") }
        return try withGenerator(g)
    }

    /// Part 11 Appendix B.2 (affine coordinates), for p ≡ 3 mod 4: the point of the curve that
    /// encodes t; then the cofactor applied. (B.3 as printed can give −P; B.2 gives Appendix H.1's
    /// points.)
    func integratedMapping(fieldElement: [UInt8]) throws(MRTDProtocolError) -> any KeyAgreementGroup {
        let c = try BigNumberContext()
        guard BN_is_bit_set(p.raw, 0) == 1, BN_is_bit_set(p.raw, 1) == 1 else {
            throw MRTDProtocolError(.unsupported, "the integrated mapping's point encoding needs p ≡ 3 mod 4, which \(description) lacks")
        }
        let t = try c.mod(try BigNumber(fieldElement), p)
        let one = try BigNumber(word: 1), two = try BigNumber(word: 2), three = try BigNumber(word: 3)
        // α = −t² mod p
        let t2 = try c.modMul(t, t, p)
        let alpha = try c.modSub(try BigNumber(word: 0), t2, p)
        let alpha2 = try c.modMul(alpha, alpha, p)
        let sum = try c.modAdd(alpha, alpha2, p)
        // X2 = −b(1 + α + α²)·(a(α + α²))^(p−2) mod p
        let pMinus2 = try c.sub(p, two)
        let inverse = try c.modExp(try c.modMul(a, sum, p), pMinus2, p)
        let minusB = try c.modSub(try BigNumber(word: 0), b, p)
        let x2 = try c.modMul(try c.modMul(minusB, try c.modAdd(one, sum, p), p), inverse, p)
        let x3 = try c.modMul(alpha, x2, p)
        // h2 = X2³ + a·X2 + b
        let x2cubed = try c.modExp(x2, three, p)
        let h2 = try c.modAdd(try c.modAdd(x2cubed, try c.modMul(a, x2, p), p), b, p)
        let u = try c.modMul(try c.modExp(t, three, p), h2, p)
        // A = h2^(p − 1 − (p + 1)/4)
        let quarter = try c.div(try c.add(p, one), try BigNumber(word: 4))
        let exponent = try c.sub(try c.sub(p, one), quarter)
        let aa = try c.modExp(h2, exponent, p)
        let check = try c.modMul(try c.modMul(aa, aa, p), h2, p)
        let x: BigNumber, y: BigNumber
        if check.isOne {
            x = x2; y = try c.modMul(aa, h2, p)
        } else {
            x = x3; y = try c.modMul(aa, u, p)
        }
        let point = try newPoint()
        guard EC_POINT_set_affine_coordinates(group, point.raw, x.raw, y.raw, c.raw) == 1 else {
            throw MRTDProtocolError(.library, "the integrated mapping gave no point of the curve")
        }
        let mapped = h.isOne ? point : try multiply(h, point, context: c)
        guard EC_POINT_is_at_infinity(group, mapped.raw) == 0 else { throw MRTDProtocolError(.invalidPublicKey, "the mapped generator is the point at infinity") }
        return try withGenerator(mapped)
    }

    /// x and y of an uncompressed point (tests and displays).
    func coordinates(_ encoded: [UInt8]) -> (x: [UInt8], y: [UInt8])? {
        guard encoded.count == 1 + 2 * fieldSize, encoded.first == 0x04 else { return nil }
        return (Array(encoded[1...fieldSize]), Array(encoded[(1 + fieldSize)...]))
    }

    /// The generator, uncompressed.
    var generatorEncoding: [UInt8] {
        guard let g = EC_GROUP_get0_generator(group), let c = try? BigNumberContext() else { return [] }
        let length = EC_POINT_point2oct(group, g, POINT_CONVERSION_UNCOMPRESSED, nil, 0, c.raw)
        var out = [UInt8](repeating: 0, count: length)
        _ = out.withUnsafeMutableBufferPointer { EC_POINT_point2oct(group, g, POINT_CONVERSION_UNCOMPRESSED, $0.baseAddress, length, c.raw) }
        return out
    }
}

extension EllipticCurveDomain {
    /// r = u1·G + u2·Q; false when libcrypto refuses or the sum is the point at infinity.
    func mulAdd(_ r: Point, _ u1: BigNumber, _ q: Point, _ u2: BigNumber, context: BigNumberContext) -> Bool {
        EC_POINT_mul(group, r.raw, u1.raw, q.raw, u2.raw, context.raw) == 1 && EC_POINT_is_at_infinity(group, r.raw) == 0
    }

    func affineX(_ point: Point, context: BigNumberContext) -> BigNumber? {
        guard let x = BN_new() else { return nil }
        let number = BigNumber(owning: x)
        return EC_POINT_get_affine_coordinates(group, point.raw, x, nil, context.raw) == 1 ? number : nil
    }
}
