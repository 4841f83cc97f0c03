import CardCrypto
import ISO7816
@testable import MRTD
import Testing

/// Active Authentication. The RSA case follows ICAO 9303 Part 11's worked example (Appendix on
/// Active Authentication: k = 1024, SHA-1, RND.IFD F173589974BF40C6, its M1 and H = C063AA1E…);
/// the example gives no key pair, so a test key signs its F = 6A ‖ M1 ‖ H ‖ BC.
@Suite("Active Authentication (ICAO 9303 Part 11 §6.1)")
struct ActiveAuthenticationTests {
    static let modulus = "BDB7FA008B38FEEDB665ADFB049379C03E0201D3DF7D646CB561C99AF193E48C90CFCE07178F20483A155AFBCE185D2CE032F0CED531819EB326B8BF41A9B06F6D4B85573FAD8E6B814BE668544EA95869DD3E3810F0AA0A1534FA9A7BBD64B50FFBA81187199273DA9AFC455E739C5201545CB596CA2A9325FBADCC1E406363"
    static let privateExponent = "64876352FC72E42AC416D6FD072CBA3C12DF6F667CAB6E16687A7BA0BDD7D72860E7AC4D77BF60A4C51A61CEC22388E3E99D349AF4BF39E7051944961BCE35EDBBCC9D52E047704C076FF4EA50CCA5BF730E13E7E650F8C8CFA3DC0C574FC76A45225A44A00B3B3194C3A72894B9FC8AA11749D0A6070732F4E1703411D80729"
    static let dg15 = "6F81A2 30819F300D06092A864886F70D010101050003818D0030818902818100" + modulus + "0203010001"
    static let challenge = "F173589974BF40C6"
    static let m1 = "9D2784A67F8E7C659973EA1AEA25D95B6C8F91E5002F369F0FBDCE8A3CEC1991B543F1696546C5524CF23A5303CD6C98599F40B79F377B5F3A1406B3B4D8F96784D23AA88DB7E1032A405E69325FA91A6E86F5C71AEA978264C4A207446DAD4E7292E2DCDA3024B47DA8"

    static func rsaSign(_ f: [UInt8]) throws -> [UInt8] {
        let c = try BigNumberContext()
        return try c.modExp(try BigNumber(f), try BigNumber(h(privateExponent)), try BigNumber(h(modulus))).bytes(padTo: 128)
    }

    @Test("RSA, ISO/IEC 9796-2 scheme 1: the worked example's H = C063AA1E…; its signature verifies, a wrong challenge does not")
    func rsa() throws {
        let hash = Digest.sha1.hash(h(Self.m1 + Self.challenge))
        #expect(hash == h("C063AA1E6D22FBD976AB0FE73D94D2D9C6D88127"))
        let signature = try Self.rsaSign([0x6A] + h(Self.m1) + hash + [0xBC])
        let key = try ChipPublicKey(encoded: h(Self.dg15))
        #expect(key.isRSA)
        let good = try ActiveAuthentication.verify(signature: signature, challenge: h(Self.challenge), publicKey: key)
        #expect(good.signatureValid && good.algorithm.contains("SHA-1"))
        #expect(try !ActiveAuthentication.verify(signature: signature, challenge: h("F173589974BF40C7"), publicKey: key).signatureValid)
        // A header other than 6A, or a signature over a different message, fails.
        #expect(try !ActiveAuthentication.verify(signature: try Self.rsaSign([0x4A] + h(Self.m1) + hash + [0xBC]), challenge: h(Self.challenge), publicKey: key).signatureValid)
        // SHA-256 with the two-byte trailer 34 CC.
        let sha256 = Digest.sha256.hash(h(Self.m1) + h(Self.challenge))
        // M1 is 93 bytes then (128 − 1 − 32 − 2); a hash over the 106-byte M1 does not match it.
        let m1short = Array(h(Self.m1).dropLast(13))
        let wrong = [0x6A] + m1short + sha256 + [0x34, 0xCC]
        #expect(try !ActiveAuthentication.verify(signature: try Self.rsaSign(wrong), challenge: h(Self.challenge), publicKey: key).signatureValid)
        let f256ok = [0x6A] + m1short + Digest.sha256.hash(m1short + h(Self.challenge)) + [0x34, 0xCC]
        #expect(try ActiveAuthentication.verify(signature: try Self.rsaSign(f256ok), challenge: h(Self.challenge), publicKey: key).signatureValid)
    }

    /// ECDSA signatures made here with the SEC 1 equations (private key d, nonce k).
    static func ecdsaSign(_ digest: [UInt8], curve: EllipticCurveDomain, d: [UInt8], k: [UInt8]) throws -> (r: [UInt8], s: [UInt8]) {
        let c = try BigNumberContext()
        let kk = try BigNumber(k)
        let point = try curve.multiply(kk, nil, context: c)
        let r = try c.mod(try #require(curve.affineX(point, context: c)), curve.n)
        let e = try c.mod(try BigNumber(digest), curve.n)
        let s = try c.modMul(try c.modInverse(kk, curve.n), try c.modAdd(e, try c.modMul(r, try BigNumber(d), curve.n), curve.n), curve.n)
        return (r.bytes(padTo: 32), s.bytes(padTo: 32))
    }

    @Test("ECDSA on brainpoolP256r1: plain r ‖ s and DER verify with the hash ActiveAuthenticationInfo names; SHA-1 by default")
    func ecdsa() throws {
        let curve = try EllipticCurveDomain(named: "brainpoolP256r1")
        let d = h("1FCD3D8AC4FAE3960A14FEA2925D75ADD335F13B248EBA192358DDED93A89552")
        let pair = try curve.keyPair(privateKey: d)
        // SubjectPublicKeyInfo: id-ecPublicKey with the named curve brainpoolP256r1.
        let spki = h("305A301406072A8648CE3D020106092B2403030208010107034200") + pair.publicKey
        let key = try ChipPublicKey(encoded: spki)
        let challenge = h("0102030405060708")
        let sig1 = try Self.ecdsaSign(Digest.sha1.hash(challenge), curve: curve, d: d, k: h("A73FB703AC1436A18E0CFA5ABB3F7BEC7A070E7A6788486BEE230C4A22762595"))
        #expect(try ActiveAuthentication.verify(signature: sig1.r + sig1.s, challenge: challenge, publicKey: key).signatureValid)
        #expect(try !ActiveAuthentication.verify(signature: sig1.r + sig1.s, challenge: h("0102030405060709"), publicKey: key).signatureValid)
        let sig256 = try Self.ecdsaSign(Digest.sha256.hash(challenge), curve: curve, d: d, k: h("7F4EF07B9EA82FD78AD689B38D0BC78CF21F249D953BC46F4C6E19259C010F99"))
        let infos = try SecurityInfos(encoded: h("3119 3017 0606678108010105 020101 060A04007F00070101040103"))
        let info = try #require(infos.activeAuthenticationInfos.first)
        #expect(try ActiveAuthentication.verify(signature: sig256.r + sig256.s, challenge: challenge, publicKey: key, info: info).signatureValid)
        #expect(try !ActiveAuthentication.verify(signature: sig256.r + sig256.s, challenge: challenge, publicKey: key).signatureValid)
        func integer(_ v: [UInt8]) -> [UInt8] { let t = v.first! & 0x80 != 0 ? [0] + v : v; return [0x02, UInt8(t.count)] + t }
        let der = integer(sig256.r) + integer(sig256.s)
        #expect(try ActiveAuthentication.verify(signature: [0x30, UInt8(der.count)] + der, challenge: challenge, publicKey: key, info: info).signatureValid)
    }

    @Test("through the reader under secure messaging: INTERNAL AUTHENTICATE, RSA verified; a chip signing with another key fails")
    func throughReader() throws {
        let chip = MRTDReaderTests.chip()
        chip.activeAuthentication = { challenge in
            let hash = Digest.sha1.hash(h(Self.m1) + challenge)
            return (try? Self.rsaSign([0x6A] + h(Self.m1) + hash + [0xBC])) ?? []
        }
        let reader = MRTDReaderTests.reader(chip)
        _ = try reader.establishAccess(.bac, key: MRTDReaderTests.key)
        let key = try ChipPublicKey(encoded: h(Self.dg15))
        let result = try reader.performActiveAuthentication(dg15: key, dg14: nil)
        #expect(result.signatureValid && result.challenge.count == 8)
        chip.activeAuthentication = { _ in (try? Self.rsaSign([0x6A] + h(Self.m1) + [UInt8](repeating: 0x11, count: 20) + [0xBC])) ?? [] }
        #expect(try !reader.performActiveAuthentication(dg15: key, dg14: nil).signatureValid)
    }
}
