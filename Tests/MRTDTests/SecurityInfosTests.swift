import CardCrypto
import ISO7816
@testable import MRTD
import Testing

@Suite("SecurityInfos (ICAO 9303 Part 11 §9.2, BSI TR-03110 Part 3 A.1)")
struct SecurityInfosTests {
    /// DG14 of zienit/icao-examples: a CA key on explicit brainpoolP224r1 parameters,
    /// id-CA-ECDH-3DES-CBC-CBC version 1, id-TA.
    static let dg14Explicit = "6E82014A3182014630820122060904007F000702020102308201133081D406072A8648CE3D02013081C8020101302806072A8648CE3D0101021D00D7C134AA264366862A18302575D1D787B09F075797DA89F57EC8C0FF303C041C68A5E62CA9CE6C1C299803A6C1530B514E182AD8B0042A59CAD29F43041C2580F63CCFE44138870713B1A92369E33E2135D266DBB372386C400B0439040D9029AD2C7E5CF4340823B2A87DC68C9E4CE3174C1E6EFDEE12C07D58AA56F772C0726F24C6B89E4ECDAC24354B9E99CAA3F6D3761402CD021D00D7C134AA264366862A18302575D0FB98D116BC4B6DDEBCA3A5A7939F020101033A0004A847F020F71DF33D386BE7C9223A354D6AC7727018B26E281C6FFB96A83B142AAF303C23F2BCF2CDE4706C14E45914A9BE42C15BCB67A01F300F060A04007F00070202030201020101300D060804007F0007020202020101"
    /// EF.CardAccess of OpenPACE's example (a German test card): TA, CA with key id 41, PACE
    /// ECDH-GM AES-128 on id 13, CA domain parameters, a CardInfoLocator; padded after the SET.
    static let openPACECardAccess = "318182300D060804007F00070202020201023012060A04007F000702020302020201020201413012060A04007F0007020204020202010202010D301C060904007F000702020302300C060704007F0007010202010D020141302B060804007F0007020206161F655041202D2042447220476D6248202D20546573746B617274652076322E3004491715411928800A01B421FA07000000000000000000000000000000000000201010291010"

    @Test("DG14 with explicit curve parameters: the CA key builds a 224-bit curve and lies on it")
    func explicitCurveDG14() throws {
        let infos = try SecurityInfos(dg14: h(Self.dg14Explicit))
        #expect(infos.chipAuthenticationPublicKeyInfos.count == 1 && infos.chipAuthenticationInfos.count == 1 && infos.terminalAuthenticationInfos.count == 1)
        let key = try #require(infos.chipAuthenticationPublicKeyInfos.first)
        #expect(key.keyAgreement == .ecdh)
        guard case let .ellipticCurve(curve) = try key.publicKey.specification.domain() else { Issue.record("not EC"); return }
        #expect(curve.primeBits == 224)
        #expect(try curve.validatePublicKey(key.publicKey.publicKey) == key.publicKey.publicKey)
        let ca = try #require(infos.chipAuthenticationInfos.first)
        #expect(ca.cipher == .tdes && ca.keyAgreement == .ecdh && ca.version == 1)
        #expect("\(ca)" == "Chip Authentication ECDH, 3DES (version 1)")
    }

    @Test("OpenPACE's EF.CardAccess: names for every known OID; unknown SecurityInfos kept; padding after the SET ignored")
    func cardAccess() throws {
        let infos = try SecurityInfos(encoded: h(Self.openPACECardAccess))
        let pace = try #require(infos.paceInfos.first)
        #expect(pace.keyAgreement == .ecdh && pace.mapping == .generic && pace.cipher == .aes128 && pace.parameterId == 13)
        #expect("\(pace)" == "PACE ECDH Generic Mapping, AES-128, brainpoolP256r1 (version 2)")
        #expect(pace.protocolIdentifier.name == "id-PACE-ECDH-GM-AES-CBC-CMAC-128")
        #expect(infos.chipAuthenticationInfos.first?.keyId == 0x41)
        #expect(infos.terminalAuthenticationInfos.first?.version == 2)
        #expect(infos.unknown.count == 2)
        #expect(infos.unknown.contains { $0.protocolIdentifier?.name == "id-CI" })
    }

    @Test("standard parameter ids 0-2 and 8-18 all have names and build in libcrypto")
    func standardParameters() throws {
        for id in [0, 1, 2] + Array(8...18) {
            let standard = try #require(StandardDomainParameters.named(id))
            let domain = try standard.domain()
            #expect(domain.isEllipticCurve == standard.isEllipticCurve, "\(id)")
            #expect(domain.group.primeBits == standard.bits, "\(id)")
        }
        #expect(StandardDomainParameters.named(3) == nil)
        #expect(ObjectIdentifier9303("0.4.0.127.0.7.2.2.4.6.4")?.name == "id-PACE-ECDH-CAM-AES-CBC-CMAC-256")
        #expect(ObjectIdentifier9303("0.4.0.127.0.7.2.2.4.2.2")?.encoded == h("04007F00070202040202"))
    }

    @Test("hostile SecurityInfos: every truncation and thousands of mutations of real files give a value or a typed error, never a trap")
    func hostile() {
        var generator = SplitMix(seed: 9303)
        for sample in [Self.dg14Explicit, Self.openPACECardAccess, PACECAMTests.cardAccess, PACETests.g1CardAccess] {
            let bytes = h(sample)
            for n in 0..<bytes.count { _ = try? SecurityInfos(encoded: Array(bytes.prefix(n))) }
            for _ in 0..<3000 {
                var m = bytes
                for _ in 0..<Int(generator.next() % 3 + 1) { m[Int(generator.next() % UInt64(m.count))] = UInt8(truncatingIfNeeded: generator.next()) }
                if let infos = try? SecurityInfos(encoded: m) {
                    for k in infos.chipAuthenticationPublicKeyInfos { _ = try? k.publicKey.specification.domain() }
                    for p in infos.paceInfos { _ = try? infos.domainParameters(for: p) }
                }
            }
        }
        for _ in 0..<2000 {
            let random = (0..<Int(generator.next() % 64)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            _ = try? SecurityInfos(encoded: random)
            _ = try? ChipPublicKey(encoded: random)
            _ = try? PACE.dynamicAuthenticationData(random, what: "fuzz")
            _ = MRTDReader.objectLength(random)
        }
    }
}

/// A deterministic generator for fuzz tests.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
