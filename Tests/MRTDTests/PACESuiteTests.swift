import CardCrypto
import ISO7816
@testable import MRTD
import Testing

@Suite("PACE across ciphers, groups and recordings")
struct PACESuiteTests {
    /// gmrtd's recording of a New Zealand passport: id-PACE-ECDH-GM-3DES-CBC-CBC on
    /// brainpoolP256r1 (3DES tokens are retail MACs).
    @Test("3DES PACE byte for byte (gmrtd's NZ recording): K_Enc 430E4C8C…, K_MAC C1BC1F07…, 8-byte SSC")
    func tripleDES() throws {
        let script: [(String, String)] = [
            ("0022C1A412800A04007F0007020204020183010184010D", "9000"),
            ("10860000027C0000", "7C128010B88382812290017AF1CC906FF00E7F4D9000"),
            ("10860000457C438141047706B2B6246AB4612229B8A11212DDBA7FEA0568C9C0975DEE22C0E3DD3A3F0321E8AFEE836E373B570D24000D56FB195104D486E63321FF8C819DD5EE018DCB00",
             "7C43824104780B4EDEC9B926F9F964FAD826D9990A667608D96BA7B397AE8609B6533E0D036D148365DDF4E5FF6611C2B62AA17FC9899F327BC929DB543E7ABD0EE724E4BE9000"),
            ("10860000457C43834104507A0156EFAE8FB8ACC519036C0B2FE0393C878744C7F91878EE4E07A41412BA5C0753D68A44A91E9F57F3F992AB689E6C2065D3B2A27C3658A4FD632931EE3800",
             "7C438441042DBAF62E6FDFB31EB66F206493B9E7721586F0E5C93754D7BD5A884CA251EE4D720AB539A60561BC46812FA289B58AC69F0C6E32ADBAF7241049A31211F80F5B9000"),
            ("008600000C7C0A85088D7C617D43EFE09E00", "7C0A8608CB57047C809079F69000"),
        ]
        let key = try MRTDAccessKey.mrz(documentNumber: "LM277954", dateOfBirth: "781214", dateOfExpiry: "271115")
        let random = fixedRandom(["2808272C0EC20E01A3450030EF32855E9FEB5CB17719E985389B1CF47609E69F",
                                  "8F89449052DF6C7983750C7B042C3CEA12B36819174424C7CD28153F7B70B402"])
        let (result, chip) = try PACETests.run(script, cardAccess: "31143012060A04007F0007020204020102010202010D", key: key, random: random)
        #expect(chip.finished)
        #expect(result.secureMessaging.cipher == .tdes2)
        #expect(result.secureMessaging.macKey == h("C1BC1F075797B970B5A45E64A764B0CB"))
        #expect(result.secureMessaging.sendSequenceCounter == [UInt8](repeating: 0, count: 8))
    }

    /// H.2 as a whole exchange: the DH integrated mapping with the CAN. The terminal's private
    /// key is given mod q (the mapped generator has order q, so the public key is the printed one).
    @Test("H.2 through a scripted chip: DH integrated mapping, tokens 55D61977… and C2F04230…")
    func appendixH2() throws {
        guard case let .diffieHellman(group) = try StandardDomainParameters.named(0)!.domain() else { Issue.record("not DH"); return }
        let t = try BigNumberContext().mod(try BigNumber(h("4BD0E54740F9A028E6A515BFDAF967848C4F5F5FFF65AA0915947FFD1A0DF2FA6981271BC905F3551457B7E03AC3B8066DE4AA406C1171FB43DD939C4BA16175103BA3DEE16419AA248118F90CC36A3D6F4C373652E0C3CCE7F0F1D0C5425B3600F0F0D6A67F004C8BBA33F2B4733C7252445C1DFC4F1107203F71D2EFB28161")), group.q!)
        let terminalPublic = "0F0CC62945A8029251FB7EF3C094E12EC68E4EF07F27CB9D9CD04C5C4250FAE0E4F8A951557E929AEB48E5C6DD47F2F5CD7C351A9BD2CD722C07EDE166770F08FFCB370262CF308DD7B07F2E0DA9CAAA1492344C852906919538C98A4BA4187E76CE9D87832386D319CE2E043C3343AEAE6EDBA1A9894DC5094D22F7FE1351D5"
        let chipPublic = "928D9A0F9DBA450F13FC859C6F290D1D36E42431138A4378500BEB4E0401854CFF111F71CB6DC1D0335807A11388CC8EAA87B07907AAD9FBA6B169AF6D8C26AF8DDDC39ADC3AD2E3FF882B84D23E9768E95A80E4746FB07A9767679FE92133B4D379935C771BD7FBED6C7BB4B1708B275EA75679524CDC9C6A91370CC662A2F3"
        let script: [(String, String)] = [
            ("0022C1A412800A04007F00070202040302830102840100", "9000"),
            ("10860000027C0000", "7C1280109ABB8864CA0FF1551E620D1EF4E135109000"),
            (PACETests.dynamic("10860000", "81", "B3A6DB3C870C3E99245E0D1C06B747DE"), "7C009000"),
            (PACETests.dynamic("10860000", "83", terminalPublic), "7C8183848180" + chipPublic + "9000"),
            ("008600000C7C0A850855D61977CBF5307E00", "7C0A8608C2F04230187E15259000"),
        ]
        let random = fixedRandom(["B3A6DB3C870C3E99245E0D1C06B747DE", t.bytes(padTo: 20).hexString])
        let (result, chip) = try PACETests.run(script, cardAccess: "31143012060A04007F0007020204030202010202010 0".filter { $0 != " " }, key: PACETests.can, random: random)
        #expect(chip.finished)
        #expect(result.secureMessaging.macKey == h("23F0FBD05FD6C7B8B88F4C8309669061"))
    }

    @Test("2048-bit DH without extended length: a clear error, not a chain the chip cannot parse")
    func dhNeedsExtendedLength() throws {
        let info = try PACEInfo(protocol: "0.4.0.127.0.7.2.2.4.1.2", parameterId: 2)
        var infos = SecurityInfos()
        infos.paceInfos = [info]
        let chip = PACEChip(key: PACETests.can, info: info, domain: try infos.domainParameters(for: info))
        do {
            _ = try PACE.perform(on: MRTDChannel(transport: APDUTransport(channel: chip)), key: PACETests.can, info: info, securityInfos: infos)
            Issue.record("no error")
        } catch let e as MRTDProtocolError {
            #expect(e.kind == .unsupported)
        }
    }

    /// Every generic-mapping suite against the in-process chip: both sides agree (the tokens
    /// verify both ways) on each standardized group libcrypto has, with each cipher.
    @Test("generic mapping round trips: ECDH on every standard curve, DH on the RFC 5114 groups, 3DES and AES-128/192/256",
          arguments: [(2, 8), (2, 9), (2, 10), (2, 11), (2, 12), (2, 13), (2, 14), (2, 15), (2, 16), (2, 17), (2, 18), (1, 0), (1, 2)])
    func roundTrip(agreement: Int, parameterId: Int) throws {
        for cipher in 1...4 {
            let info = try PACEInfo(protocol: "0.4.0.127.0.7.2.2.4.\(agreement).\(cipher)", parameterId: parameterId)
            var infos = SecurityInfos()
            infos.paceInfos = [info]
            let chip = PACEChip(key: PACETests.can, info: info, domain: try infos.domainParameters(for: info))
            // 2048-bit DH keys do not fit a short APDU.
            chip.supportsExtendedLength = parameterId == 2
            let result = try PACE.perform(on: MRTDChannel(transport: APDUTransport(channel: chip)), key: PACETests.can, info: info, securityInfos: infos)
            #expect(chip.established, "\(info)")
            #expect(result.secureMessaging.cipher == info.cipher.algorithm)
        }
    }
}

@Suite("PACE with proprietary domain parameters")
struct PACEProprietaryParametersTests {
    static func der(_ tag: UInt8, _ value: [UInt8]) -> [UInt8] { [tag] + BERTLV.encodeLength(value.count) + value }

    /// EF.CardAccess with a PACEInfo on proprietary id 32 and the PACEDomainParameterInfo that
    /// describes it: explicit brainpoolP224r1 parameters (taken from zienit's DG14).
    @Test("a PACEInfo on a proprietary id uses the PACEDomainParameterInfo with that id; DO 84 is then left out")
    func proprietary() throws {
        let dg14 = try BERTLV.decode(h(SecurityInfosTests.dg14Explicit))
        let set = try #require(dg14.first?.children?.first?.children)
        let spki = try #require(set.first?.children?[1].children)
        let algorithm = try #require(spki.first)
        let algorithmBytes = algorithm.tag + BERTLV.encodeLength(algorithm.value.count) + algorithm.value
        let paceInfo = Self.der(0x30, Self.der(0x06, h("04007F00070202040202")) + [0x02, 0x01, 0x02, 0x02, 0x01, 0x20])
        let domainInfo = Self.der(0x30, Self.der(0x06, h("04007F000702020402")) + algorithmBytes + [0x02, 0x01, 0x20])
        let infos = try SecurityInfos(encoded: Self.der(0x31, paceInfo + domainInfo))
        let info = try #require(infos.paceInfos.first)
        #expect(info.parameterId == 32 && infos.paceDomainParameterInfos.count == 1)
        let domain = try infos.domainParameters(for: info)
        #expect(domain.group.primeBits == 224)
        let chip = PACEChip(key: PACETests.can, info: info, domain: domain)
        var sent: [[UInt8]] = []
        let transport = APDUTransport(channel: chip) { sent.append($0.command) }
        _ = try PACE.perform(on: MRTDChannel(transport: transport), key: PACETests.can, info: info, securityInfos: infos)
        #expect(chip.established)
        // One PACEInfo and a proprietary id: MSE:Set AT without DO 84.
        #expect(sent.first == h("0022C1A40F800A04007F00070202040202830102"))
    }
}
