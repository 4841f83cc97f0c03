import CardCrypto
@testable import MRTD
import Testing

@Suite("Public-key validation of everything the chip sends")
struct KeyAgreementTests {
    static func kind(_ body: () throws -> Any) -> MRTDProtocolError.Kind? {
        do { _ = try body(); return nil } catch let e as MRTDProtocolError { return e.kind } catch { return nil }
    }

    @Test("EC: a point off the curve, the point at infinity, a truncated point: invalidPublicKey")
    func ellipticCurve() throws {
        let curve = try EllipticCurveDomain(named: "brainpoolP256r1")
        let good = try curve.keyPair(privateKey: [5]).publicKey
        var off = good
        off[off.count - 1] ^= 1
        #expect(Self.kind { try curve.validatePublicKey(off) } == .invalidPublicKey)
        #expect(Self.kind { try curve.validatePublicKey([0x00]) } == .invalidPublicKey)
        #expect(Self.kind { try curve.validatePublicKey(Array(good.prefix(40))) } == .invalidPublicKey)
        #expect(try curve.validatePublicKey(good) == good)
    }

    @Test("DH (RFC 5114 group 0): 1, p−1 and an element outside the order-q subgroup: invalidPublicKey")
    func diffieHellman() throws {
        guard case let .diffieHellman(group) = try StandardDomainParameters.named(0)!.domain() else { Issue.record("not DH"); return }
        let p = group.p.bytes()
        var pMinus1 = p
        pMinus1[pMinus1.count - 1] -= 1
        #expect(Self.kind { try group.validatePublicKey([1]) } == .invalidPublicKey)
        #expect(Self.kind { try group.validatePublicKey(pMinus1) } == .invalidPublicKey)
        // 2 generates far more than the order-q subgroup of this group.
        #expect(Self.kind { try group.validatePublicKey([2]) } == .invalidPublicKey)
        let good = try group.keyPair(privateKey: [9]).publicKey
        #expect(try group.validatePublicKey(good) == good)
    }
}
