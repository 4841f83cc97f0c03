import CardCrypto
import ISO7816
@testable import MRTD
import Testing

/// PACE against ICAO 9303 Part 11's worked examples (8th edition): Appendix G.1 (ECDH generic
/// mapping, brainpoolP256r1, AES-128), G.2 (DH generic mapping, RFC 5114 1024-bit group),
/// H.1 (ECDH integrated mapping), H.2 (DH integrated mapping). G and H use the MRZ
/// T22000129 / 640812 / 101031, except H, whose password is the CAN 123456 (erratum: its text
/// names the MRZ).
@Suite("PACE (ICAO 9303 Part 11 Appendices G and H)")
struct PACETests {
    static let mrz = try! MRTDAccessKey.mrz(documentNumber: "T22000129", dateOfBirth: "640812", dateOfExpiry: "101031")
    static let can = try! MRTDAccessKey.can("123456")

    // G.1, as gmrtd's pace tests replay it (every APDU).
    static let g1CardAccess = "31143012060A04007F0007020204020202010202010D"
    static let g1: [(String, String)] = [
        ("0022C1A412800A04007F0007020204020283010184010D", "9000"),
        ("10860000027C0000", "7C12801095A3A016522EE98D01E76CB6B98B42C39000"),
        ("10860000457C438141047ACF3EFC982EC45565A4B155129EFBC74650DCBFA6362D896FC70262E0C2CC5E544552DCB6725218799115B55C9BAA6D9F6BC3A9618E70C25AF71777A9C4922D00",
         "7C43824104824FBA91C9CBE26BEF53A0EBE7342A3BF178CEA9F45DE0B70AA601651FBA3F5730D8C879AAA9C9F73991E61B58F4D52EB87A0A0C709A49DC63719363CCD13C549000"),
        ("10860000457C438341042DB7A64C0355044EC9DF190514C625CBA2CEA48754887122F3A5EF0D5EDD301C3556F3B3B186DF10B857B58F6A7EB80F20BA5DC7BE1D43D9BF850149FBB3646200",
         "7C438441049E880F842905B8B3181F7AF7CAA9F0EFB743847F44A306D2D28C1D9EC65DF6DB7764B22277A2EDDC3C265A9F018F9CB852E111B768B326904B59A0193776F0949000"),
        ("008600000C7C0A8508C2B0BD78D94BA86600", "7C0A86083ABB9674BCE93C089000"),
    ]
    static var g1Random: RandomSource { fixedRandom(["7F4EF07B9EA82FD78AD689B38D0BC78CF21F249D953BC46F4C6E19259C010F99",
                                                     "A73FB703AC1436A18E0CFA5ABB3F7BEC7A070E7A6788486BEE230C4A22762595"]) }

    static func run(_ exchanges: [(String, String)], cardAccess: String, key: MRTDAccessKey, random: RandomSource) throws -> (PACEResult, ScriptedChip) {
        let chip = ScriptedChip(exchanges)
        let channel = MRTDChannel(transport: APDUTransport(channel: chip))
        let infos = try SecurityInfos(encoded: h(cardAccess))
        let info = try #require(infos.paceInfos.first)
        return (try PACE.perform(on: channel, key: key, info: info, securityInfos: infos, random: random), chip)
    }

    @Test("G.1 byte for byte: MSE:Set AT with DO 84, four General Authenticate steps, K_Enc F5F0E35C…, K_MAC FE251C78…")
    func appendixG1() throws {
        let (result, chip) = try Self.run(Self.g1, cardAccess: Self.g1CardAccess, key: Self.mrz, random: Self.g1Random)
        #expect(chip.finished)
        #expect(result.secureMessaging.macKey == h("FE251C7858B356B24514B3BD5F4297D1"))
        #expect(try result.secureMessaging.encryption.encrypt(block: [UInt8](repeating: 0, count: 16))
                == (try BlockCipher(.aes128, key: h("F5F0E35C0D7161EE6724EE513A0D9A7F")).encrypt(block: [UInt8](repeating: 0, count: 16))))
        #expect(result.secureMessaging.sendSequenceCounter == [UInt8](repeating: 0, count: 16))
        #expect(result.info.mapping == .generic && result.domainParameters == "brainpoolP256r1")
    }

    @Test("G.1: a chip token altered by one bit is refused")
    func badChipToken() throws {
        var script = Self.g1
        script[4].1 = "7C0A86083ABB9674BCE93C099000"
        do {
            _ = try Self.run(script, cardAccess: Self.g1CardAccess, key: Self.mrz, random: Self.g1Random)
            Issue.record("a bad token was accepted")
        } catch let e as MRTDProtocolError {
            #expect(e.kind == .badCryptogram)
        }
    }

    @Test("G.1: a chip public key off the curve, or the terminal's own key echoed, is refused before any token")
    func badChipKeys() throws {
        var offCurve = Self.g1
        offCurve[2].1 = "7C43824104824FBA91C9CBE26BEF53A0EBE7342A3BF178CEA9F45DE0B70AA601651FBA3F5730D8C879AAA9C9F73991E61B58F4D52EB87A0A0C709A49DC63719363CCD13C559000"
        #expect(throws: MRTDProtocolError.self) { try Self.run(Array(offCurve.prefix(3)), cardAccess: Self.g1CardAccess, key: Self.mrz, random: Self.g1Random) }
        var echo = Self.g1
        echo[2].1 = "7C43824104" + "7ACF3EFC982EC45565A4B155129EFBC74650DCBFA6362D896FC70262E0C2CC5E544552DCB6725218799115B55C9BAA6D9F6BC3A9618E70C25AF71777A9C4922D" + "9000"
        #expect(throws: MRTDProtocolError.self) { try Self.run(Array(echo.prefix(3)), cardAccess: Self.g1CardAccess, key: Self.mrz, random: Self.g1Random) }
    }

    @Test("G.1: 63 00 to the terminal's token is access denied (wrong MRZ), with no key material in the message")
    func wrongPassword() throws {
        var script = Self.g1
        script[4].1 = "6300"
        do {
            _ = try Self.run(script, cardAccess: Self.g1CardAccess, key: Self.mrz, random: Self.g1Random)
            Issue.record("accepted")
        } catch let e as MRTDProtocolError {
            #expect(e.kind == .accessDenied)
            #expect(!e.message.contains("T22000129") && !e.message.contains("640812"))
        }
    }

    // G.2: RFC 5114 group 0, id-PACE-DH-GM-AES-CBC-CMAC-128.
    static let g2Protocol = "04007F00070202040102"
    static let g2MapT = "23FB3749EA030D2A25B278D2A562047ADE3F01B74F17A15402CB7352CA7D2B3EB71C343DB13D1DEBCE9A3666DBCFC920B49174A602CB47965CAA73DC702489A44D41DB914DE9613DC5E98C94160551C0DF86274B9359BC0490D01B03AD54022DCB4F57FAD6322497D7A1E28D46710F461AFE710FBBBC5F8BA166F4311975EC6C"
    static let g2MapC = "78879F57225AA8080D52ED0FC890A4B25336F699AA89A2D3A189654AF70729E623EA5738B26381E4DA19E004706FACE7B235C2DBF2F38748312F3C98C2DD4882A41947B324AA1259AC22579DB93F7085655AF30889DBB845D9E6783FE42C9F2449400306254C8AE8EE9DD812A804C0B66E8CAFC14F84D8258950A91B44126EE6"
    static let g2T = "907D89E2D425A178AA81AF4A7774EC8E388C115CAE67031E85EECE520BD911551B9AE4D04369F29A02626C86FBC6747CC7BC352645B6161A2A42D44EDA80A08FA8D61B76D3A154AD8A5A51786B0BC07147057871A922212C5F67F43173172236B7747D1671E6D692A3C7D40A0C3C5CE397545D015C175EB5130551EDBC2EE5D4"
    static let g2C = "075693D9AE941877573E634B6E644F8E60AF17A0076B8B123D9201074D36152BD8B3A213F53820C42ADC79AB5D0AEEC3AEFB91394DA476BD97B9B14D0A65C1FC71A0E019CB08AF55E1F729005FBA7E3FA5DC41899238A250767A6D46DB974064386CD456743585F8E5D90CC8B4004B1F6D866C79CE0584E49687FF61BC29AEA1"

    static func dynamic(_ ins: String, _ tag: String, _ value: String) -> String {
        let v = h(value)
        let inner = h(tag) + BERTLV.encodeLength(v.count) + v
        let body = [0x7C] + BERTLV.encodeLength(inner.count) + inner
        return ins + Hex.encode([UInt8(body.count)]) + body.hexString + "00"
    }

    @Test("G.2 through a scripted chip: DH generic mapping; tokens B46DD9BD… and 917F37B5…; an unrequested DO 87 in the last answer is tolerated")
    func appendixG2() throws {
        let script: [(String, String)] = [
            ("0022C1A412800A\(Self.g2Protocol)830101840100", "9000"),
            ("10860000027C0000", "7C128010854D8DF5827FA6852D1A4FA701CDDDCA9000"),
            (Self.dynamic("10860000", "81", Self.g2MapT), "7C8183828180" + Self.g2MapC + "9000"),
            (Self.dynamic("10860000", "83", Self.g2T), "7C8183848180" + Self.g2C + "9000"),
            ("008600000C7C0A8508B46DD9BD4D98381F00", "7C1A8608917F37B5C0E6D8D1870E4445544553544456303030303100 9000"),
        ]
        let random = fixedRandom(["5265030F751F4AD18B08AC565FC7AC952E41618D", "89CCD99B0E8D3B1F11E1296DCA68EC53411CF2CA"])
        let (result, chip) = try Self.run(script, cardAccess: "3114 3012060A\(Self.g2Protocol)020102020100", key: Self.mrz, random: random)
        #expect(chip.finished)
        #expect(result.secureMessaging.macKey == h("805A1D27D45A5116F73C54469462B7D8"))
    }

    // H.1: id-PACE-ECDH-IM-AES-CBC-CMAC-128, brainpoolP256r1, CAN 123456.
    static let h1T = "0489CBA23FFE96AA18D824627C3E934E54A9FD0B87A95D1471DC1C0ABFDCD640D46755DE9B7B778280B6BEBD57439ADFEB0E21FD4ED6DF42578C13418A59B34C37"
    static let h1C = "0467F78E5F7F7686082B293E8D087E056916D0F74BC01A5F8957D0DE45691E51E8932B69A962B52A0985AD2C0A271EE6A13A8ADDDCD1A3A994B9DED257F4D22753"

    @Test("H.1 through a scripted chip, with step 2 answered 7C 00 and 7C 02 82 00: K_MAC B01E89E3…, tokens 450F02B8… and 75D4D96E…",
          arguments: ["7C00", "7C028200"])
    func appendixH1(stepTwoAnswer: String) throws {
        let script: [(String, String)] = [
            ("0022C1A412800A04007F0007020204040283010284010D", "9000"),
            ("10860000027C0000", "7C128010143DC40C08C8E891FBED7DEDB92B64AD9000"),
            (Self.dynamic("10860000", "81", "5DD4CBFC96F5453B130D890A1CDBAE32"), stepTwoAnswer + "9000"),
            (Self.dynamic("10860000", "83", Self.h1T), "7C438441" + Self.h1C + "9000"),
            ("008600000C7C0A8508450F02B86F6A090900", "7C0A860875D4D96E8D5B03089000"),
        ]
        let random = fixedRandom(["5DD4CBFC96F5453B130D890A1CDBAE32", "A73FB703AC1436A18E0CFA5ABB3F7BEC7A070E7A6788486BEE230C4A22762595"])
        let (result, chip) = try Self.run(script, cardAccess: "31143012060A04007F0007020204040202010202010D", key: Self.can, random: random)
        #expect(chip.finished)
        #expect(result.secureMessaging.macKey == h("B01E89E3D9E8719E586B50B4A7506E0B"))
    }

    @Test("H.1 step by step: R(s,t) E4447E2D…, mod p A2F8FF2D…, Appendix B.2 point 8E82D315…/4C1AE14B…")
    func integratedMappingECDH() throws {
        let curve = try EllipticCurveDomain(named: "brainpoolP256r1")
        let r = try PACE.pseudoRandom(s: h("2923BE84E16CD6AE529049F1F1BBE9EB"), t: h("5DD4CBFC96F5453B130D890A1CDBAE32"), cipher: .aes128, primeBits: curve.primeBits)
        #expect(r == h("E4447E2DFB3586BAC05DDB00156B57FBB2179A3949294C97254189800C517BAA8DA0FF397ED8C445D3E421E4FEB57322"))
        let mapped = try #require(try curve.integratedMapping(fieldElement: r) as? EllipticCurveDomain)
        #expect(mapped.generatorEncoding == h("048E82D31559ED0FDE92A4D0498ADD3C23BABA94FB77691E31E90AEA77FB17D4274C1AE14BD0C3DBAC0C871B7F3608169364437CA30AC243A089D3F266C1E60FAD"))
        #expect(try PACE.decryptNonce(h("143DC40C08C8E891FBED7DEDB92B64AD"), passwordKey: KeyDerivation.derive(Self.can.pacePassword, purpose: .password, cipher: .aes128), cipher: .aes128)
                == h("2923BE84E16CD6AE529049F1F1BBE9EB"))
    }

    @Test("H.2 step by step: R(s,t) EAB98D13…, mapped generator 1D7D767F…, K 419410D6…, K_MAC 23F0FBD0…, tokens 55D61977… and C2F04230…")
    func integratedMappingDH() throws {
        guard case let .diffieHellman(group) = try #require(StandardDomainParameters.named(0)).domain() else { Issue.record("not DH"); return }
        let s = try PACE.decryptNonce(h("9ABB8864CA0FF1551E620D1EF4E13510"), passwordKey: KeyDerivation.derive(Self.can.pacePassword, purpose: .password, cipher: .aes128), cipher: .aes128)
        #expect(s == h("FA5B7E3E49753A0DB9178B7B9BD898C8"))
        let r = try PACE.pseudoRandom(s: s, t: h("B3A6DB3C870C3E99245E0D1C06B747DE"), cipher: .aes128, primeBits: group.primeBits)
        #expect(r == h("EAB98D13E09052952AA729907C3C946184DEA0FE74AD2B3AF506F0A83018459C38099CD1F7FF4EA0A078DB1FAC1365505E3DC85500EF95E20B4EEF2E88489233BEE0546B472F994B618D168702406791DEEF3CB4810932EC278F3533FDB860EB4835C36FA4F1BF3FA0B828A718C96BDE88FBA38A3E6C35AAA10959251EB5FC710FC187258995944C0F926E249373F485"))
        let mapped = try #require(try group.integratedMapping(fieldElement: r) as? DiffieHellmanDomain)
        #expect(mapped.generatorBytes == h("1D7D767F11E333BCD6DBAEF40E799E7A926B96973550656FF3C830726D118D61C276CDCC61D475CF03A98E0C0E79CAEBA5BE25578BD4551D0B10903236F0B0F976852FA78EEA14EA0ACA87D1E91F688FE0DFF897BBE35A472621D343564B262F34223AE8FC59B664BFEDFA2BFE7516CA5510A6BBB633D517EC25D4E0BBAA16C2"))
        let terminal = try mapped.keyPair(privateKey: h("4BD0E54740F9A028E6A515BFDAF967848C4F5F5FFF65AA0915947FFD1A0DF2FA6981271BC905F3551457B7E03AC3B8066DE4AA406C1171FB43DD939C4BA16175103BA3DEE16419AA248118F90CC36A3D6F4C373652E0C3CCE7F0F1D0C5425B3600F0F0D6A67F004C8BBA33F2B4733C7252445C1DFC4F1107203F71D2EFB28161"))
        let chip = "928D9A0F9DBA450F13FC859C6F290D1D36E42431138A4378500BEB4E0401854CFF111F71CB6DC1D0335807A11388CC8EAA87B07907AAD9FBA6B169AF6D8C26AF8DDDC39ADC3AD2E3FF882B84D23E9768E95A80E4746FB07A9767679FE92133B4D379935C771BD7FBED6C7BB4B1708B275EA75679524CDC9C6A91370CC662A2F3"
        let secret = try mapped.sharedSecret(privateKey: terminal.privateKey, peer: h(chip))
        #expect(secret == h("419410D6C0A17A4C07C54872CE1CBCEB0A2705C1A434C8A89A4CFE41F1D78124CA7EC52BDE7615E5345E48AB1ABB6E7D1D59A57F3174084D3CA4570397C1F62228BDFDB2DA191EA2239E2C060DBE3BBC23C2FCD0AF12E0F9E0B99FCF91FF1959011D5798B2FCBC1F14FCC24E441F4C8F9B08D977E9498560E63E7FFAB3134EA7"))
        let kMac = KeyDerivation.derive(secret, purpose: .mac, cipher: .aes128)
        #expect(kMac == h("23F0FBD05FD6C7B8B88F4C8309669061"))
        let oid = try #require(ObjectIdentifier9303("0.4.0.127.0.7.2.2.4.3.2"))
        #expect(try PACE.authenticationToken(publicKey: h(chip), tag: 0x84, protocol: oid, macKey: kMac, cipher: .aes128) == h("55D61977CBF5307E"))
        #expect(try PACE.authenticationToken(publicKey: terminal.publicKey, tag: 0x84, protocol: oid, macKey: kMac, cipher: .aes128) == h("C2F04230187E1525"))
    }

    @Test("G.2 step by step: H = 5BABEBEF…, mapped generator 7C9CBFE9…")
    func genericMappingDH() throws {
        guard case let .diffieHellman(group) = try #require(StandardDomainParameters.named(0)).domain() else { Issue.record("not DH"); return }
        let terminal = try group.keyPair(privateKey: h("5265030F751F4AD18B08AC565FC7AC952E41618D"))
        #expect(terminal.publicKey == h(Self.g2MapT))
        let element = try group.agreeElement(privateKey: terminal.privateKey, peer: h(Self.g2MapC))
        #expect(element == h("5BABEBEF5B74E5BA94B5C063FDA15F1F1CDE94873EE0A5D3A2FCAB49F258D07F544F13CB66658C3AFEE9E727389BE3F6CBBBD32128A8C21DD6EEA3CF7091CDDFB08B8D007D40318DCCA4FFBF51208790FB4BD111E5A968ED6B6F08B26CA87C410B3CE0C310CE104EABD16629AA48620C1279270CB0750C0D37C57FFFE302AE7F"))
        let mapped = try #require(try group.genericMapping(nonce: h("FA5B7E3E49753A0DB9178B7B9BD898C8"), element: element) as? DiffieHellmanDomain)
        #expect(mapped.generatorBytes == h("7C9CBFE98F9FBDDA8D143506FA7D9306F4CB17E3C71707AFF5E1C1A12370249684D64EE37AF44B8DBD9D45BF6023919CBAA027AB97ACC771666C8E98FF483301BFA4872DEDE9034EDFACB70814166B7F360676829B826BEA57291B5AD69FBC84EF1E779032A305803F74341793E869742D401325B37EE8565FFCDEE618342DC5"))
    }
}
