import CardCrypto
import ISO7816
import Testing
@testable import GlobalPlatform

private func h(_ s: String) -> [UInt8] { try! Hex.decode(s) }

/// Published vectors, byte for byte:
/// - GlobalPlatformPro, library/src/test/java/pro/javacard/gp/TestSCP03.java (commit 0014bdaf):
///   the KDF3 diversification of the ENC key;
/// - osmocom pySim, tests/unittests/test_globalplatform.py (commit 078ac2bf) over
///   pySim/global_platform/scp.py: SCP02 and SCP03 (AES-128/192/256 at levels 11, 03, 33)
///   INITIALIZE UPDATE, the card cryptogram, EXTERNAL AUTHENTICATE, wrapped commands of the four
///   cases, a wrapped GET EID and its R-MAC/R-ENC answer.
@Suite("GlobalPlatform published vectors")
struct PublishedVectorTests {
    @Test("GlobalPlatformPro TestSCP03.testKDF3: master 8C72…BCD, KDD D9B1DE5D0362DEDCE4FB → ENC 9AAC…4781")
    func gpproKDF3() throws {
        let master = h("8C72C72CF908411653018807950D82FBAD947562F0828A0B10B8B9606ABF3BCD")
        let kdd = h("D9B1DE5D0362DEDCE4FB")
        let enc = try KDF.counterMode(key: master, fixedBefore: [], fixedAfter: h("0000000100") + kdd, bytes: 32)
        #expect(enc.hexString == "9AAC5D0B3601F89438A0D9D0B6B256CFB47E6462DFA5228D3420C4AC7C224781")
        // The same through StaticKeys' KDF3 diversification (which needs the 10-byte data).
        let keys = try StaticKeys(master: master, diversification: .kdf3).diversified(with: kdd, aes: true)
        #expect(keys.enc.hexString == "9AAC5D0B3601F89438A0D9D0B6B256CFB47E6462DFA5228D3420C4AC7C224781")
    }

    /// Runs pySim's SCP02_Auth_Test and SCP02_Test.test_mac_command.
    @Test("pySim SCP02: INITIALIZE UPDATE, card cryptogram, EXTERNAL AUTHENTICATE, C-MAC of the four cases with ICV encryption")
    func pysimSCP02() throws {
        let keys = StaticKeys(enc: h("100102030405060708090a0b0c0d0e0f"), mac: h("101102030405060708090a0b0c0d0e0f"), dek: h("102102030405060708090a0b0c0d0e0f"), version: 0x20)
        let challenge = h("40A62C37FA6304F8")
        let initialize = CommandAPDU(cla: 0x80, ins: 0x50, p1: keys.version, p2: 0, data: challenge, ne: 256)
        #expect(initialize.bytes.hexString == "805020000840A62C37FA6304F800")
        let answer = try InitializeUpdateResponse(h("00000000000000000000700200016B4524ABEE7CF32EA3838BC148F3"))
        #expect(answer.scp.version == 2 && answer.sequenceCounter == [0, 1])
        var session = try SecureChannelSession(keys: keys, hostChallenge: challenge, response: answer)
        #expect(session.cardCryptogramMatches(answer.cardCryptogram))
        var wrong = answer.cardCryptogram
        wrong[7] = 0xFF
        #expect(!session.cardCryptogramMatches(wrong), "pySim's test_mutual_auth_fail_card_cryptogram")
        #expect(try session.externalAuthenticate(level: .cMAC).bytes.hexString == "8482010010BA6961667737C5BCEBECE14C7D6A4376")
        for (plain, wrapped) in [("80F22002", "84F220020814DB34FA4341DCA8"), ("80ca006600", "84CA00660855ED7C5FF069512B00"),
                                 ("80F220020a4f0212345c054f9f70c5", "84F22002124F0212345C054F9F70C58FC1B380C4228AF8"),
                                 ("80f28002024f0000", "84F280020A4F003B95F09317DE6A4E00")] {
            #expect(try session.wrap(CommandAPDU(bytes: h(plain))).bytes.hexString == wrapped)
        }
    }

    struct SCP03Case: Sendable, CustomStringConvertible {
        var name: String, keyLength: Int, initUpdate: String, initAnswer: String, extAuth: String, eidCommand: String, eidAnswer: String
        var cases: [String]
        var description: String { name }
    }

    static let scp03: [SCP03Case] = [
        SCP03Case(name: "AES128_11", keyLength: 16, initUpdate: "8050300008b13e5f938fc108c400", initAnswer: "000000000000000000003003703eb51047495b249f66c484c1d2ef1948000002",
                  extAuth: "84821100107d5f5826a993ebc89eea24957fa0b3ce", eidCommand: "84e291000ebf3e035c015a558d036518a2829700",
                  eidAnswer: "bf3e125a1089882119900000000000000000000005971be68992dbbdfa",
                  cases: ["84f220020863a63f8959827fb2", "84ca006608a0c6a4a74166f7ce00", "84f22002124f0212345c054f9f70c52249b50272656536", "84f280020a4f00e91443f6dce6b8ed00"]),
        SCP03Case(name: "AES128_03", keyLength: 16, initUpdate: "80503000088e1552d0513c60f300", initAnswer: "0000000000000000000030037030760cd2c47c1dd395065fe5ead8a9d7000001",
                  extAuth: "8482030010fd4721a14d9b07003c451d2f8ae6bb21", eidCommand: "84e2910018ca9c00f6713d79bc8baa642bdff51c3f6a4082d3bd9ad26c00",
                  eidAnswer: "bf3e125a1089882119900000000000000000000005",
                  cases: ["84f2200208c9811b11f1264cf1", "84ca006608e10ab60b3054798800", "84f22002184e2908bdb48b2315a55482e9e936ca122d6ecfae7d17416e", "84f28002180dd10a6b6193e5340b9e77d32d5a179cd710ac2773aefb2800"]),
        SCP03Case(name: "AES128_33", keyLength: 16, initUpdate: "8050300008fdf38259a1e0de4400", initAnswer: "000000000000000000003003703b1aca81e821f219081cdc01c26b372d000003",
                  extAuth: "84823300108c36f96bcc00724a4e13ad591d7da3f0", eidCommand: "84e2910018267a85dfe4a98fca6fb0527e0dfecce4914e40401433c87f00",
                  eidAnswer: "f3ba2b1013aa6224f5e1c138d71805c569e5439b47576260b75fc021b25097cb2e68f8a0144975b9",
                  cases: ["84f2200208ac6a59024bed84cc", "84ca006608409912ad8fb7aed000", "84f22002185f3dafc3ac14c381536a488bf44e06d056df9d74dbd21e5a", "84f280021865165105be3373347d0424d4400af2ac393f569ec779389e00"]),
        SCP03Case(name: "AES192_11", keyLength: 24, initUpdate: "80503100087396430b768b085b00", initAnswer: "000000000000000000003103708cfc23522ffdbf1e5df5542cac8fd866000003",
                  extAuth: "84821100102145ed30b146f5db252fb7e624cec244", eidCommand: "84e291000ebf3e035c015aff42cf801d14394400",
                  eidAnswer: "bf3e125a1089882119900000000000000000000005162fbd33e04940a9",
                  cases: ["84f22002084584e4f6784811ee", "84ca006608937776ebe190fa3000", "84f22002124f0212345c054f9f70c59a52bddf3040368c", "84f280020a4f009804b11411f7393d00"]),
        SCP03Case(name: "AES192_03", keyLength: 24, initUpdate: "805031000869c65da8202bf19f00", initAnswer: "00000000000000000000310370b570a67be38446717729d6dd3d2ec5b1000001",
                  extAuth: "848203001065df4f1a356a887905466516d9e5b7c1", eidCommand: "84e2910018d2c6fb477c5d4afe4fd4d21f17eff10d3578ec1774a12a2d00",
                  eidAnswer: "bf3e125a1089882119900000000000000000000005",
                  cases: ["84f2200208964e188f0b1bb697", "84ca006608f0820035a41d3e1800", "84f220021806b076ed452cd1fa84f77f5c08a146aa77a9286757dea791", "84f2800218d06527e39222dce091fabdb8e9b898417a67a6852d3577db00"]),
        SCP03Case(name: "AES192_33", keyLength: 24, initUpdate: "80503100089b3f2eef0e8c937400", initAnswer: "00000000000000000000310370f6bb305a15bae1a68f79fb08212fbed7000002",
                  extAuth: "84823300109100bc22d58b45b86a26365ce39ff3cf", eidCommand: "84e29100188f7f946c84f70d17994bc6e8791251bb1bb1bf02cf8de58900",
                  eidAnswer: "c05176c1b6f72aae50c32cbee63b0e95998928fd4dfb2be9f27ffde8c8476f5909b4805cc4039599",
                  cases: ["84f2200208d5d97754b6b3d2ba", "84ca006608516c82b8e30adbeb00", "84f2200218cc247f4761e6944277a4e0d6e32e44025b1e31537e2fc668", "84f2800218ba22b63d509bef5d093b43e5eaed03ed23144ab2d9cb51de00"]),
        SCP03Case(name: "AES256_11", keyLength: 32, initUpdate: "805032000811666d57866c6f5400", initAnswer: "0000000000000000000032037053ea8847efa7674e41498a4d66cf0dee000003",
                  extAuth: "84821100102f2ad190eff2fafc4908996d1cebd310", eidCommand: "84e291000ebf3e035c015af4b680372542b59d00",
                  eidAnswer: "bf3e125a10898821199000000000000000000000058012dd7f01f1c4c1",
                  cases: ["84f2200208d618b7da68d5fe52", "84ca0066088f3e055db23ad5e500", "84f22002124f0212345c054f9f70c5b6e15cc42404915e", "84f280020a4f00aa124aa74afe7f7500"]),
        SCP03Case(name: "AES256_03", keyLength: 32, initUpdate: "8050320008c6066990fc426e1d00", initAnswer: "000000000000000000003203708682cd81bbd8919f2de3f2664581f118000001",
                  extAuth: "848203001077c493b632edadaf865a1e64acc07ce9", eidCommand: "84e29100183ddaa60594963befaada3525b492ede23c2ab2c1ce3afe4400",
                  eidAnswer: "bf3e125a1089882119900000000000000000000005",
                  cases: ["84f2200208480ddc8e419da38d", "84ca0066083e9d6a6c0b2d732000", "84f22002183ebfef2da8b04af2a85f491f299b76973df76ff08a4031be", "84f2800218783fff80990f5585b1055010ea95094a26e4a8f1ef4b18e100"]),
        SCP03Case(name: "AES256_33", keyLength: 32, initUpdate: "805032000897b2055fe58599fd00", initAnswer: "00000000000000000000320370a8439a22cedf045fa9f1903b2834f26e000002",
                  extAuth: "8482330010508a0fd959d2e547c6b33154a6be2057", eidCommand: "84e29100187a5ef717eaf1e135ae92fe54429d0e465decda65f5fe5aea00",
                  eidAnswer: "ea90dbfa648a67c5eb6abc57f8530b97d0cd5647c5e8732016b55203b078dd2ace7f8bc5d1c1cd99",
                  cases: ["84f2200208bcc5c17275545d93", "84ca00660804806aba9d543bb600", "84f2200218717222491556ec81a45f49ce48be33320024801a1c4cb0e0", "84f2800218561f105bccd3a1642904b251ccc1228beb80a82370a8637000"]),
    ]

    /// pySim's SCP03_Test steps 01-06 in their order (the class shares one session).
    @Test("pySim SCP03: INITIALIZE UPDATE, cryptograms, EXTERNAL AUTHENTICATE, GET EID wrapped and its answer unwrapped, the four cases", arguments: scp03)
    func pysimSCP03(_ v: SCP03Case) throws {
        func key(_ base: String) -> [UInt8] { Array((h(base) + h(base)).prefix(v.keyLength)) }
        let kvn = h(v.initUpdate)[2]
        let keys = StaticKeys(enc: key("000102030405060708090a0b0c0d0e0f"), mac: key("101112131415161718191a1b1c1d1e1f"),
                              dek: key("202122232425262728292a2b2c2d2e2f"), version: kvn)
        let challenge = Array(h(v.initUpdate)[5..<13])
        #expect(CommandAPDU(cla: 0x80, ins: 0x50, p1: kvn, p2: 0, data: challenge, ne: 256).bytes == h(v.initUpdate))
        let answer = try InitializeUpdateResponse(h(v.initAnswer))
        #expect(answer.scp == SecureChannelProtocol(version: 3, i: 0x70) && answer.keyVersion == kvn)
        var session = try SecureChannelSession(keys: keys, hostChallenge: challenge, response: answer)
        #expect(session.cardCryptogramMatches(answer.cardCryptogram))
        let level = SecurityLevel(rawValue: h(v.extAuth)[2])
        #expect(try session.externalAuthenticate(level: level).bytes == h(v.extAuth))
        #expect(try session.wrap(CommandAPDU(bytes: h("80E2910006BF3E035C015A00"))).bytes == h(v.eidCommand))
        #expect(try session.unwrap(ResponseAPDU(data: h(v.eidAnswer), statusWord: .success)).data == h("bf3e125a1089882119900000000000000000000005"))
        for (plain, wrapped) in zip(["80F22002", "80ca006600", "80F220020a4f0212345c054f9f70c5", "80f28002024f0000"], v.cases) {
            #expect(try session.wrap(CommandAPDU(bytes: h(plain))).bytes == h(wrapped), "\(plain)")
        }
    }

    @Test("a response whose R-MAC is one bit off is refused")
    func rmacFlipped() throws {
        let v = Self.scp03[0]
        let keys = StaticKeys(enc: h("000102030405060708090a0b0c0d0e0f"), mac: h("101112131415161718191a1b1c1d1e1f"), dek: h("202122232425262728292a2b2c2d2e2f"))
        let answer = try InitializeUpdateResponse(h(v.initAnswer))
        var session = try SecureChannelSession(keys: keys, hostChallenge: Array(h(v.initUpdate)[5..<13]), response: answer)
        _ = try session.externalAuthenticate(level: [.cMAC, .rMAC])
        _ = try session.wrap(CommandAPDU(bytes: h("80E2910006BF3E035C015A00")))
        var bad = h(v.eidAnswer)
        bad[bad.count - 1] ^= 1
        #expect(throws: GlobalPlatformError.self) { try session.unwrap(ResponseAPDU(data: bad, statusWord: .success)) }
    }
}
