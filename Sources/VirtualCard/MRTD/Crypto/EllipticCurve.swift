// Prime-field elliptic curves through libcrypto's EC_GROUP/EC_POINT: the standard curves of
// ICAO 9303 Part 11 §9.5.1 (NIST and brainpool), and the groups PACE's mappings make from them
// with a new generator.
internal import COpenSSL

/// A curve with its generator, order and cofactor.
final class EllipticCurve: @unchecked Sendable {
    let pointer: OpaquePointer
    let context = BigNumberContext()

    /// A named curve (an OpenSSL short name such as "brainpoolP256r1"); nil when libcrypto
    /// does not know it.
    init?(name: String) {
        let nid = OBJ_sn2nid(name)
        guard nid != NID_undef, let g = EC_GROUP_new_by_curve_name(nid) else { ERR_clear_error(); return nil }
        pointer = g
    }

    private init(owning g: OpaquePointer) { pointer = g }

    deinit { EC_GROUP_free(pointer) }

    /// The same curve with `generator` in place of its own (PACE's mapped generator Ĝ, which has
    /// the same order: ICAO 9303 Part 11 §4.4.3.3.1).
    func with(generator: ECPoint) -> EllipticCurve? {
        guard let g = EC_GROUP_dup(pointer) else { return nil }
        let copy = EllipticCurve(owning: g)
        // The order and cofactor objects must outlive the call that reads them.
        let (n, h) = (order, cofactor)
        let set = withExtendedLifetime((n, h, generator)) { EC_GROUP_set_generator(g, generator.pointer, n.pointer, h.pointer) }
        guard set == 1 else { ERR_clear_error(); return nil }
        return copy
    }

    var order: BigNumber {
        guard let o = EC_GROUP_get0_order(pointer), let c = BN_dup(o) else { preconditionFailure("libcrypto lost a curve's order") }
        return BigNumber(owning: c)
    }

    var cofactor: BigNumber {
        guard let h = EC_GROUP_get0_cofactor(pointer), let c = BN_dup(h) else { preconditionFailure("libcrypto lost a curve's cofactor") }
        return BigNumber(owning: c)
    }

    /// The field prime p and the coefficients a and b.
    var coefficients: (p: BigNumber, a: BigNumber, b: BigNumber) {
        let p = BigNumber(), a = BigNumber(), b = BigNumber()
        EC_GROUP_get_curve(pointer, p.pointer, a.pointer, b.pointer, context.pointer)
        return (p, a, b)
    }

    var generator: ECPoint {
        guard let g = EC_GROUP_get0_generator(pointer), let c = EC_POINT_dup(g, pointer) else { preconditionFailure("libcrypto lost a curve's generator") }
        return ECPoint(owning: c, curve: self)
    }

    /// Bytes of one field element (the length of x and y in an uncompressed point).
    var fieldSize: Int { (Int(EC_GROUP_get_degree(pointer)) + 7) / 8 }
    var orderSize: Int { order.byteCount }

    /// The curve's object identifier (DER content), for named-curve key encodings.
    var nameOID: [UInt8]? {
        let nid = EC_GROUP_get_curve_name(pointer)
        guard nid != NID_undef, let object = OBJ_nid2obj(nid) else { return nil }
        let n = OBJ_length(object)
        guard n > 0, let data = OBJ_get0_data(object) else { return nil }
        return Array(UnsafeBufferPointer(start: data, count: n))
    }

    /// `scalar`·G (+ `other`·`point` when given): EC_POINT_mul.
    func multiply(generatorBy scalar: BigNumber?, point: ECPoint? = nil, by other: BigNumber? = nil) -> ECPoint? {
        guard let r = EC_POINT_new(pointer) else { return nil }
        let result = ECPoint(owning: r, curve: self)
        guard EC_POINT_mul(pointer, r, scalar?.pointer, point?.pointer, other?.pointer, context.pointer) == 1 else { ERR_clear_error(); return nil }
        return result
    }

    func add(_ a: ECPoint, _ b: ECPoint) -> ECPoint? {
        guard let r = EC_POINT_new(pointer) else { return nil }
        let result = ECPoint(owning: r, curve: self)
        guard EC_POINT_add(pointer, r, a.pointer, b.pointer, context.pointer) == 1 else { ERR_clear_error(); return nil }
        return result
    }

    /// A point from its encoding (04‖x‖y, or compressed); nil unless it is on the curve and not
    /// the point at infinity: a terminal's public key is checked before any use.
    func point(_ octets: [UInt8]) -> ECPoint? {
        guard !octets.isEmpty, let r = EC_POINT_new(pointer) else { return nil }
        let result = ECPoint(owning: r, curve: self)
        let ok = octets.withUnsafeBufferPointer { EC_POINT_oct2point(pointer, r, $0.baseAddress, $0.count, context.pointer) }
        guard ok == 1, EC_POINT_is_at_infinity(pointer, r) == 0, EC_POINT_is_on_curve(pointer, r, context.pointer) == 1 else {
            ERR_clear_error()
            return nil
        }
        return result
    }

    /// A point from affine coordinates (checked as `point(_:)` checks).
    func point(x: [UInt8], y: [UInt8]) -> ECPoint? {
        let n = fieldSize
        guard x.count <= n, y.count <= n else { return nil }
        return point([0x04] + [UInt8](repeating: 0, count: n - x.count) + x + [UInt8](repeating: 0, count: n - y.count) + y)
    }
}

/// A point on an `EllipticCurve` (kept alive by the point).
final class ECPoint: @unchecked Sendable {
    let pointer: OpaquePointer
    let curve: EllipticCurve

    init(owning p: OpaquePointer, curve: EllipticCurve) {
        pointer = p
        self.curve = curve
    }

    deinit { EC_POINT_clear_free(pointer) }

    var isInfinity: Bool { EC_POINT_is_at_infinity(curve.pointer, pointer) == 1 }

    /// 04‖x‖y, each coordinate as long as the field.
    var uncompressed: [UInt8] {
        let n = 1 + 2 * curve.fieldSize
        var out = [UInt8](repeating: 0, count: n)
        let written = out.withUnsafeMutableBufferPointer {
            EC_POINT_point2oct(curve.pointer, pointer, POINT_CONVERSION_UNCOMPRESSED, $0.baseAddress, n, curve.context.pointer)
        }
        return written == n ? out : []
    }

    /// The affine x coordinate, as long as the field (the shared secret of ECDH: TR-03111 §4.3.1).
    var x: [UInt8] { Array(uncompressed.dropFirst().prefix(curve.fieldSize)) }
    var y: [UInt8] { Array(uncompressed.dropFirst(1 + curve.fieldSize)) }

    /// The same point as a point of `other` (a curve with the same equation, another generator).
    func on(_ other: EllipticCurve) -> ECPoint? { other.point(uncompressed) }
}
