import ISO7816
import Testing
import VirtualCard

/// The published worked examples of ICAO Doc 9303 Part 11 (8th edition, 2021), replayed from the
/// chip's side byte for byte: the chip's random numbers are fixed to those the examples print,
/// every command is the terminal's as printed, and every answer must be the chip's as printed.
@Suite("eMRTD chip: ICAO 9303 Part 11 worked examples")
struct MRTDChipVectorTests {
    static func hex(_ text: String) -> [UInt8] { (try? Hex.decode(text)) ?? [] }

    // MARK: Appendix D: BAC and 3DES secure messaging

    /// EF.COM of Appendix D.4: LDS 1.6, Unicode 4.0.0, DG1 and DG2.
    static let appendixDCOM = hex("60145F0104303130365F36063034303030305C026175")

    func appendixDChip() -> MRTDChip {
        let document = MRTDDocument(files: [.com: Self.appendixDCOM],
                                    accessKey: MRZAccessKey(documentNumber: "L898902C<", dateOfBirth: "690806", dateOfExpiry: "940623"))
        var configuration = MRTDChip.Configuration()
        configuration.accessControl = .bac
        // D.3: RND.IC, then K.IC.
        let random = ChipRandomSource.sequence([Self.hex("4608F91988702212"), Self.hex("0B4F80323EB3191CB04970CB4052790B")])
        return MRTDChip(document: document, configuration: configuration, random: random)
    }

    @Test("Appendix D.3 and D.4: BAC, then SELECT EF.COM and two READ BINARY under 3DES secure messaging")
    func appendixD() {
        let chip = appendixDChip()
        #expect(chip.process(Self.hex("00A4040C07A0000002471001")) == [0x90, 0x00])
        // D.3 step 1: GET CHALLENGE → RND.IC.
        #expect(chip.process(Self.hex("0084000008")) == Self.hex("4608F919887022129000"))
        // D.3 steps 2–4: EXTERNAL AUTHENTICATE with E_IFD ‖ M_IFD → E_IC ‖ M_IC.
        let ea = chip.process(Self.hex("0082000028 72C29C2371CC9BDB65B779B8E8D37B29ECC154AA56A8799FAE2F498F76ED92F2 5F1448EEA8AD90A7 28"))
        #expect(ea == Self.hex("46B9342A41396CD7386BF5803104D7CEDC122B9132139BAF2EEDC94EE178534F2F2D235D074D74499000"))
        #expect(chip.access == .bac)
        // D.4: the protected SELECT EF.COM (SSC 887022120C06C227 for the command, …28 for the answer).
        #expect(chip.process(Self.hex("0CA4020C158709016375432908C044F68E08BF8B92D635FF24F800")) == Self.hex("990290008E08FA855A5D4C50A8ED9000"))
        // READ BINARY of the first four bytes.
        #expect(chip.process(Self.hex("0CB000000D9701048E08ED6705417E96BA5500")) == Self.hex("8709019FF0EC34F9922651990290008E08AD55CC17140B2DED9000"))
        // READ BINARY of the remaining 18 bytes.
        #expect(chip.process(Self.hex("0CB000040D9701128E082EA28A70F3C7B53500"))
                == Self.hex("871901FB9235F4E4037F2327DCC8964F1F9B8C30F42C8E2FFF224A990290008E08C8B2787EAEA07D749000"))
    }

    @Test("Appendix D.3 with one bit of M_IFD flipped: 6300, no session, the challenge is spent")
    func appendixDWrongMAC() {
        let chip = appendixDChip()
        _ = chip.process(Self.hex("00A4040C07A0000002471001"))
        _ = chip.process(Self.hex("0084000008"))
        #expect(chip.process(Self.hex("0082000028 72C29C2371CC9BDB65B779B8E8D37B29ECC154AA56A8799FAE2F498F76ED92F2 5F1448EEA8AD90A6 28")) == [0x63, 0x00])
        #expect(chip.access == nil)
        // The right cryptogram, after the failure: the challenge was good for one attempt.
        #expect(chip.process(Self.hex("0082000028 72C29C2371CC9BDB65B779B8E8D37B29ECC154AA56A8799FAE2F498F76ED92F2 5F1448EEA8AD90A7 28")) == [0x69, 0x85])
    }

    @Test("Appendix D.4 with one bit of the command MAC flipped: 6988 unprotected, and the session is over")
    func appendixDBadCommandMAC() {
        let chip = appendixDChip()
        _ = chip.process(Self.hex("00A4040C07A0000002471001"))
        _ = chip.process(Self.hex("0084000008"))
        _ = chip.process(Self.hex("0082000028 72C29C2371CC9BDB65B779B8E8D37B29ECC154AA56A8799FAE2F498F76ED92F2 5F1448EEA8AD90A7 28"))
        #expect(chip.process(Self.hex("0CA4020C158709016375432908C044F68E08BF8B92D635FF24F900")) == [0x69, 0x88])
        #expect(chip.access == nil)
        // The command that was right a moment ago finds no keys any more.
        #expect(chip.process(Self.hex("0CA4020C158709016375432908C044F68E08BF8B92D635FF24F800")) == [0x69, 0x88])
        // And EF.COM is closed again, as before access control.
        #expect(chip.process(Self.hex("00B09E0004")) == [0x69, 0x82])
    }

    @Test("Appendix D.3's cryptogram after another challenge: the MAC holds, RND.IC does not: 6300")
    func appendixDWrongChallenge() {
        let document = MRTDDocument(files: [.com: Self.appendixDCOM],
                                    accessKey: MRZAccessKey(documentNumber: "L898902C<", dateOfBirth: "690806", dateOfExpiry: "940623"))
        let chip = MRTDChip(document: document, random: .sequence([Self.hex("4608F91988702213")]))
        _ = chip.process(Self.hex("0084000008"))
        #expect(chip.process(Self.hex("0082000028 72C29C2371CC9BDB65B779B8E8D37B29ECC154AA56A8799FAE2F498F76ED92F2 5F1448EEA8AD90A7 28")) == [0x63, 0x00])
        #expect(chip.access == nil)
    }

    @Test("the test terminal checks the chip's MAC: Appendix D.4's answer with one bit flipped is refused")
    func terminalChecksAnswerMAC() {
        var sm = TestSecureMessaging(cipher: .tdes2, encryptionKey: Self.hex("979EC13B1CBFE9DCD01AB0FED307EAE5"),
                                     macKey: Self.hex("F1CB1F1FB5ADF208806B89DC579DC1F8"), ssc: Self.hex("887022120C06C227"))
        var good = sm
        #expect(good.unprotect(Self.hex("990290008E08FA855A5D4C50A8ED9000")) == .success(ResponseAPDU(statusWord: .success)))
        if case .broken = sm.unprotect(Self.hex("990290008E08FA855A5D4C50A8EC9000")) {} else { Issue.record("a wrong MAC passed") }
    }

    // MARK: Appendix G: PACE

    @Test("Appendix G.1: PACE ECDH Generic Mapping on brainpoolP256r1 with AES-128 and the MRZ")
    func appendixG1() {
        let document = MRTDDocument(files: [.cardAccess: Self.hex("31143012060A04007F0007020204020202010202010D")],
                                    accessKey: MRZAccessKey(documentNumber: "T22000129", dateOfBirth: "640812", dateOfExpiry: "101031"))
        // The chip's nonce s, its mapping key and its ephemeral key, as G.1 prints them.
        let random = ChipRandomSource.sequence([
            Self.hex("3F00C4D39D153F2B2A214A078D899B22"),
            Self.hex("498FF49756F2DC1587840041839A85982BE7761D14715FB091EFA7BCE9058560"),
            Self.hex("107CF58696EF6155053340FD633392BA81909DF7B9706F226F32086C7AFF974A"),
        ])
        let chip = MRTDChip(document: document, random: random)
        #expect(chip.process(Self.hex("0022C1A40F800A04007F00070202040202830101")) == [0x90, 0x00])
        #expect(chip.process(Self.hex("10860000027C0000")) == Self.hex("7C12801095A3A016522EE98D01E76CB6B98B42C39000"))
        #expect(chip.process(Self.hex("""
            10860000457C438141047ACF3EFC982EC45565A4B155129EFBC74650DCBFA6362D896FC70262E0C2CC5E\
            544552DCB6725218799115B55C9BAA6D9F6BC3A9618E70C25AF71777A9C4922D00
            """)) == Self.hex("""
            7C43824104824FBA91C9CBE26BEF53A0EBE7342A3BF178CEA9F45DE0B70AA601651FBA3F57\
            30D8C879AAA9C9F73991E61B58F4D52EB87A0A0C709A49DC63719363CCD13C549000
            """))
        #expect(chip.process(Self.hex("""
            10860000457C438341042DB7A64C0355044EC9DF190514C625CBA2CEA48754887122F3A5EF0D5EDD301C\
            3556F3B3B186DF10B857B58F6A7EB80F20BA5DC7BE1D43D9BF850149FBB3646200
            """)) == Self.hex("""
            7C438441049E880F842905B8B3181F7AF7CAA9F0EFB743847F44A306D2D28C1D9EC65DF6DB\
            7764B22277A2EDDC3C265A9F018F9CB852E111B768B326904B59A0193776F0949000
            """))
        #expect(chip.process(Self.hex("008600000C7C0A8508C2B0BD78D94BA86600")) == Self.hex("7C0A86083ABB9674BCE93C089000"))
        #expect(chip.access == .pace)
        #expect(chip.sessionCipher == .aes128)
        // G.1's session keys (KS_enc F5F0E35C…, KS_mac FE251C78…) with SSC 0 open the application.
        var terminal = TestSecureMessaging(cipher: .aes128, encryptionKey: Self.hex("F5F0E35C0D7161EE6724EE513A0D9A7F"),
                                           macKey: Self.hex("FE251C7858B356B24514B3BD5F4297D1"), ssc: [UInt8](repeating: 0, count: 16))
        let answer = terminal.send(CommandAPDU(cla: 0, ins: 0xA4, p1: 0x04, p2: 0x0C, data: MRTDChip.applicationIdentifier), to: chip)
        #expect(answer == .success(ResponseAPDU(statusWord: .success)))
    }

    @Test("Appendix G.1 with the terminal's token one bit off: 6300, and no session")
    func appendixG1WrongToken() {
        let document = MRTDDocument(files: [.cardAccess: Self.hex("31143012060A04007F0007020204020202010202010D")],
                                    accessKey: MRZAccessKey(documentNumber: "T22000129", dateOfBirth: "640812", dateOfExpiry: "101031"))
        let random = ChipRandomSource.sequence([
            Self.hex("3F00C4D39D153F2B2A214A078D899B22"),
            Self.hex("498FF49756F2DC1587840041839A85982BE7761D14715FB091EFA7BCE9058560"),
            Self.hex("107CF58696EF6155053340FD633392BA81909DF7B9706F226F32086C7AFF974A"),
        ])
        let chip = MRTDChip(document: document, random: random)
        _ = chip.process(Self.hex("0022C1A40F800A04007F00070202040202830101"))
        _ = chip.process(Self.hex("10860000027C0000"))
        _ = chip.process(Self.hex("10860000457C438141047ACF3EFC982EC45565A4B155129EFBC74650DCBFA6362D896FC70262E0C2CC5E544552DCB6725218799115B55C9BAA6D9F6BC3A9618E70C25AF71777A9C4922D00"))
        _ = chip.process(Self.hex("10860000457C438341042DB7A64C0355044EC9DF190514C625CBA2CEA48754887122F3A5EF0D5EDD301C3556F3B3B186DF10B857B58F6A7EB80F20BA5DC7BE1D43D9BF850149FBB3646200"))
        #expect(chip.process(Self.hex("008600000C7C0A8508C2B0BD78D94BA86700")) == [0x63, 0x00])
        #expect(chip.access == nil)
        // The run is over: a second token, even the right one, finds no PACE in progress.
        #expect(chip.process(Self.hex("008600000C7C0A8508C2B0BD78D94BA86600")) == [0x69, 0x85])
    }

    @Test("Appendix G.1 with bad terminal keys: a point off the curve (step 2), the chip's own key sent back (step 3): 6A80")
    func appendixG1BadKeys() {
        func fresh() -> MRTDChip {
            let document = MRTDDocument(files: [.cardAccess: Self.hex("31143012060A04007F0007020204020202010202010D")],
                                        accessKey: MRZAccessKey(documentNumber: "T22000129", dateOfBirth: "640812", dateOfExpiry: "101031"))
            let random = ChipRandomSource.sequence([
                Self.hex("3F00C4D39D153F2B2A214A078D899B22"),
                Self.hex("498FF49756F2DC1587840041839A85982BE7761D14715FB091EFA7BCE9058560"),
                Self.hex("107CF58696EF6155053340FD633392BA81909DF7B9706F226F32086C7AFF974A"),
            ])
            let chip = MRTDChip(document: document, random: random)
            _ = chip.process(Self.hex("0022C1A40F800A04007F00070202040202830101"))
            _ = chip.process(Self.hex("10860000027C0000"))
            return chip
        }
        // The terminal's mapping key with the last byte of y changed: not on brainpoolP256r1.
        #expect(fresh().process(Self.hex("10860000457C438141047ACF3EFC982EC45565A4B155129EFBC74650DCBFA6362D896FC70262E0C2CC5E544552DCB6725218799115B55C9BAA6D9F6BC3A9618E70C25AF71777A9C4922E00")) == [0x6A, 0x80])
        let chip = fresh()
        _ = chip.process(Self.hex("10860000457C438141047ACF3EFC982EC45565A4B155129EFBC74650DCBFA6362D896FC70262E0C2CC5E544552DCB6725218799115B55C9BAA6D9F6BC3A9618E70C25AF71777A9C4922D00"))
        // Step 3 with the chip's own ephemeral key (G.1 prints it) as the terminal's.
        #expect(chip.process(Self.hex("10860000457C438341049E880F842905B8B3181F7AF7CAA9F0EFB743847F44A306D2D28C1D9EC65DF6DB7764B22277A2EDDC3C265A9F018F9CB852E111B768B326904B59A0193776F09400")) == [0x6A, 0x80])
    }

    @Test("Appendix G.2: PACE DH Generic Mapping on the RFC 5114 1024-bit group with AES-128")
    func appendixG2() {
        let document = MRTDDocument(files: [.cardAccess: Self.hex("31143012060A04007F00070202040102020102020100")],
                                    accessKey: MRZAccessKey(documentNumber: "T22000129", dateOfBirth: "640812", dateOfExpiry: "101031"))
        let random = ChipRandomSource.sequence([
            Self.hex("FA5B7E3E49753A0DB9178B7B9BD898C8"),
            Self.hex("66DDAFEAC1609CB5B963BB0CB3FF8B3E047F336C"),
            Self.hex("A5B780126B7C980E9FCEA1D4539DA1D27C342DFA"),
        ])
        let chip = MRTDChip(document: document, random: random)
        #expect(chip.process(Self.hex("0022C1A40F800A04007F00070202040102830101")) == [0x90, 0x00])
        #expect(chip.process(Self.hex("10860000027C0000")) == Self.hex("7C128010854D8DF5827FA6852D1A4FA701CDDDCA9000"))
        #expect(chip.process(Self.hex("""
            10860000867C818381818023FB3749EA030D2A25B278D2A562047ADE3F01B74F17A15402CB7352CA7D2B3E\
            B71C343DB13D1DEBCE9A3666DBCFC920B49174A602CB47965CAA73DC702489A44D41DB914DE9613DC5E98C94\
            160551C0DF86274B9359BC0490D01B03AD54022DCB4F57FAD6322497D7A1E28D46710F461AFE710FBBBC5F8B\
            A166F4311975EC6C00
            """)) == Self.hex("""
            7C818382818078879F57225AA8080D52ED0FC890A4B25336F699AA89A2D3A189654AF70729E623EA5738B263\
            81E4DA19E004706FACE7B235C2DBF2F38748312F3C98C2DD4882A41947B324AA1259AC22579DB93F7085655A\
            F30889DBB845D9E6783FE42C9F2449400306254C8AE8EE9DD812A804C0B66E8CAFC14F84D8258950A91B4412\
            6EE69000
            """))
        #expect(chip.process(Self.hex("""
            10860000867C8183838180907D89E2D425A178AA81AF4A7774EC8E388C115CAE67031E85EECE520BD911551B\
            9AE4D04369F29A02626C86FBC6747CC7BC352645B6161A2A42D44EDA80A08FA8D61B76D3A154AD8A5A51786B\
            0BC07147057871A922212C5F67F43173172236B7747D1671E6D692A3C7D40A0C3C5CE397545D015C175EB513\
            0551EDBC2EE5D400
            """)) == Self.hex("""
            7C8183848180075693D9AE941877573E634B6E644F8E60AF17A0076B8B123D9201074D36152BD8B3A213F538\
            20C42ADC79AB5D0AEEC3AEFB91394DA476BD97B9B14D0A65C1FC71A0E019CB08AF55E1F729005FBA7E3FA5DC\
            41899238A250767A6D46DB974064386CD456743585F8E5D90CC8B4004B1F6D866C79CE0584E49687FF61BC29\
            AEA19000
            """))
        // G.2 prints the chip's token 917F37B5C0E6D8D1 followed by a certification authority
        // reference (DO 87) the terminal did not ask for; this chip sends the token alone.
        #expect(chip.process(Self.hex("008600000C7C0A8508B46DD9BD4D98381F00")) == Self.hex("7C0A8608917F37B5C0E6D8D19000"))
        #expect(chip.access == .pace)
    }
}
