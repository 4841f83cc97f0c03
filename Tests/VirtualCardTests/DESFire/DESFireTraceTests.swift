import CardCrypto
import ISO7816
import Testing
import VirtualCard

func h(_ s: String) -> [UInt8] { (try? Hex.decode(s, allowEmpty: true)) ?? [] }

/// The real-card traces of sotechcllc/RFDoorLock, "Desfire EV1 Communication Examples.htm"
/// (a DESFire EV1 8K, UID 04 06 3F 72 63 34 80, behind a PN532): every command the door lock's
/// code sent and every byte the card answered, from the self test through DES, 2K3DES, 3K3DES
/// and AES authentication, ChangeKeySettings, both cases of ChangeKey, CreateApplication,
/// GetApplicationIDs, DeleteApplication, file creation, WriteData and ReadData with their CMACs,
/// to FormatPICC. The emulator gets the card's RndB values (the trace's "RndB" lines) and must
/// answer every command byte for byte.
@Suite("DESFire emulator: RFDoorLock's real-card EV1 traces replayed byte for byte")
struct DESFireTraceTests {
    /// Commands (native framing, command byte first) and the card's answers (status first), in
    /// order; the comments are the trace's own headings.
    static let exchanges: [(String, String)] = [
        // SelectApplication(0x000000)
        ("5A000000", "00"),
        // GetKeyVersion()
        ("6400", "0000"),
        // Authenticate(key 0, DES)
        ("1A00", "AF5D994CE085F24089"),
        ("AF21D0AD5F2FD97454A746CC80567F1B1C", "00913C6DED84221C41"),
        // GetCardVersion()
        ("60", "AF04010101001A05"),
        ("AF", "AF04010101041A05"),
        ("AF", "0004063F72633480BA4519E3204913CDC810BAFA401759"),
        // FormatCard()
        ("FC", "009C2C813A065C45F7"),
        // CreateApplication(App= 0x00DE16, KeyCount= 2, Type= 3DES)
        ("CA16DE000F02", "000A1379B01D85AD47"),
        // CreateApplication(App= 0x00DE24, KeyCount= 2, Type= 3K3DES)
        ("CA24DE000F42", "005D73AE5287A1BBE4"),
        // CreateApplication(App= 0x00AE16, KeyCount= 2, Type= AES)
        ("CA16AE000F82", "003B68D72A3BE0D20C"),
        // CreateApplication(App= 0xAABBCC, KeyCount= 1, Type= 3DES)
        ("CACCBBAA0F01", "00F11AC0738EF83878"),
        // GetApplicationIDs()
        ("6A", "0016DE0024DE0016AE00CCBBAA2739154E2630D650"),
        // DeleteApplication(0xAABBCC)
        ("DACCBBAA", "00A9AF19052292F662"),
        // GetApplicationIDs()
        ("6A", "0016DE0024DE0016AE00520E51E00AF06D5E"),
        // SelectApplication(0x00DE16)
        ("5A16DE00", "00"),
        // Authenticate(key 0, DES)
        ("1A00", "AF8476D1CF3024B7C7"),
        ("AFDAC67AB743763DC9FAF8A0AE504E80C5", "0013E9E4FA4388BF16"),
        // GetKeySettings()
        ("45", "000F0225DD8D7731B1CFD5"),
        // ChangeKeySettings(0x0D)
        ("5427882805FC3FD49D", "00A628378374270ACD"),
        // GetKeySettings()
        ("45", "000D02613FB2D3F453D2E4"),
        // SelectApplication(0x00DE16)
        ("5A16DE00", "00"),
        // Authenticate(key 0, DES)
        ("1A00", "AFDE50F92310CAF5A5"),
        ("AFE00616668704D5549C8D6A13A0F8FCED", "001D9D2954697DE760"),
        // ChangeKey(key 0)
        ("C400BEDE0FC6ED347DCF0D51C717DF75D97D2C5A2BA6CAC7479D", "00"),
        // Authenticate(key 0, 2K3DES)
        ("1A00", "AFB295579926155AE3"),
        ("AF70F349740C945DAE159BA9FEDBCC461A", "00B8FD7FE56B241FC4"),
        // ChangeKey(key 0)
        ("C40094E4F709DC2A2B07552610A1966E5C49EC90F616EDECA55B", "00"),
        // Authenticate(key 0, 2K3DES)
        ("1A00", "AF9414819CC8BB62C3"),
        ("AF937E6B1854A6D92E0FD975D9909001E8", "00E055D11DD9535060"),
        // GetKeyVersion()
        ("6400", "00103345AA95F2D956CF"),
        // ChangeKey(key 0)
        ("C400FC9E20FD77191E2AAB0CFD53D9999984BC59E886BFEB42D0", "00"),
        // Authenticate(key 0, DES)
        ("1A00", "AF53A670D78C0DFFD6"),
        ("AFB308408B575A2025253D49D693CCC29C", "00525BB01E5B70B794"),
        // ChangeKey(key 1)
        ("C4014EB669E48DCA584749542E1BE89CB4C7845A38C57D19DE59", "002EAD04DCF121E0FE"),
        // ChangeKey(key 1)
        ("C401FA7BEFA6782C93E8D69CF7352CFD33DF5BC8AC4FBA4906FC", "00CB0A506405512893"),
        // Authenticate(key 1, 2K3DES)
        ("1A01", "AF87D3AC1E09570AAD"),
        ("AFD82E8C092631FE15257D67629FC929D5", "00C4132CEF0D13F812"),
        // SelectApplication(0x00DE24)
        ("5A24DE00", "00"),
        // Authenticate(key 0, 3K3DES)
        ("1A00", "AFBC1C570BC948156187132364E4DCE176"),
        ("AFDDDC9A77597F03A40C7FAA362F45A8EADBE46A115D98198CBF36A6E51B39D87C", "007244D935ED9A1306CD8C841A7C1DE39A"),
        // ChangeKey(key 0)
        ("C400F4F865F318CB9DE80B2B165145021F4F3AFEF1244FEA42FC997726FDE750741D", "00"),
        // Authenticate(key 0, 3K3DES)
        ("1A00", "AFFA2FB9A17B359D034DF3EB1C4179207E"),
        ("AF7BF9E1AC2D7C2836112E642D398FBAEF5CA61CC3A629FA8BD52F43F9D931C043", "001E3051B59BA31E4CEF64BBE8721B7BD6"),
        // ChangeKey(key 0)
        ("C4000A9BE77E7203CD8D3EB13D5F2C1F11FFE897ECAC1FE054CE4287685F3CE2162E", "00"),
        // Authenticate(key 0, 3K3DES)
        ("1A00", "AFEDFAC076F7F75F3FA930D8365A7C9206"),
        ("AFB4F5266DBF4BF93970BC386E94F4FA59884E94F9F113B1BFB5A54E5A1BA08892", "0065F4F5DADE89E12E2405FCE14D5CD798"),
        // GetKeyVersion()
        ("6400", "0010AD4A52B1E31CC741"),
        // ChangeKey(key 0)
        ("C400E6D4F3409549F638364D6E64694EC051D60847159E1040C16B613618C797F707", "00"),
        // Authenticate(key 0, 3K3DES)
        ("1A00", "AF8F3154AFA86DA533EABE28859E5D5742"),
        ("AF1DD98B71B9006198B8B80043FF296386775ED2C2DBC877BBD952FD06F5F87361", "00AECD4704210BCAAFE1533D483FBEF3F8"),
        // ChangeKey(key 1)
        ("C4010170A4721342A8C4C5C4DB5BA1F1AEDFE9CEF73BB46BAC44B8C11498CA17D945", "00DC85C9A5A753B17A"),
        // ChangeKey(key 1)
        ("C401E3E2DD9F1E2C8DB578652F78C30C533EADE1E663625E0F74DD13D4F9B9B3E43C", "00FA142DEBA3080191"),
        // Authenticate(key 1, 3K3DES)
        ("1A01", "AF660B0E97E23B9C0F93FD82D0F069C298"),
        ("AF46D182F6B3C5C458EC1EC8BD43F0CA898CC9CD77F9BBC87F4E60617C1FF94266", "008018B80E2246BD1C1C05A067CD8E6E17"),
        // SelectApplication(0x00AE16)
        ("5A16AE00", "00"),
        // Authenticate(key 0, AES)
        ("AA00", "AFB969FDFE56FD91FC9DE6F6F213B8FD1E"),
        ("AF36AAD7DF6E436BA08D18613830A70D5AD43E3D3F4A8D47541EEE623A934E4774", "00800DB680BC146BD121D6578F2D2E2059"),
        // ChangeKey(key 0)
        ("C400E9F85E219496C2B58C1090DC3935FAE9E840CF61B383D9531946256B1F110C10", "00"),
        // Authenticate(key 0, AES)
        ("AA00", "AFCCC8316C2B2613FE9A189BAC9CC89D03"),
        ("AFC02E061E72E17726489CAEEC997C523758BF863EFE7671C55B4665D06ACCD97B", "0072ACCC0BDEA482B53185BB5AD0086246"),
        // ChangeKey(key 0)
        ("C4002945E3760E60F4A4046BB8A505B31CF559A3A2E05213BC82942CA6AB5DBCECF5", "00"),
        // Authenticate(key 0, AES)
        ("AA00", "AF3E2BE626C05E7798EE518355A751648E"),
        ("AFFABF71BB0DC45B8F31BAEDDFF7F3439652D4094DF12C17EF0C94353E6D7770C8", "001CE6C574E24923D404E18B6A240C1B08"),
        // GetKeyVersion()
        ("6400", "00108A8FA36F55CD210D"),
        // ChangeKey(key 0)
        ("C400635375E4919F8AF2E9E86B1C1BA55B0C0807EAF484D7A7EF6E0C3084160F5A61", "00"),
        // Authenticate(key 0, AES)
        ("AA00", "AFEDDAF0C5D9A7CF42B8808BE2013899A1"),
        ("AFD8105F874E2CA57B76C354A8066B0D7880B0C4EC399DBF253438DB46D75F8F60", "00459C76B71AB9F1736413F5ACD73E7DF9"),
        // ChangeKey(key 1)
        ("C401E7ECCB6BD1CA64BC161A12B1C024F71430337408C8A87EACAB7A1FF18951FCA3", "002128D3CD9C9ACFFF"),
        // ChangeKey(key 1)
        ("C4012841938C40A4BC2C33064482FEADA5F43EC535D34255B0286C2352CD173863C7", "00CAF3BF0B2836E9DE"),
        // Authenticate(key 1, AES)
        ("AA01", "AFB351CB2465D4F33AC627FD6E87A168F2"),
        ("AF044B6CAC343A0865895149649CA8DDE1F5AC4EC67BD208900AF02F049E05F0B0", "00A2EE144B1012FBEB7B2F11132D95A454"),
        // CreateStdDataFile(ID= 5, Size= 80)
        ("CD05001100500000", "00A75316AD1596B953"),
        // GetFileIDs()
        ("6F", "00052D5FF67FFEC9D2D3"),
        // GetFileSettings(ID= 5)
        ("F505", "00000011005000002AAC7517024E09DC"),
        // WriteFileData(ID= 5, Offset= 0, Length= 80)
        ("3D05000000340000000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F202122232425262728292A2B2C2D2E2F30313233", "00765C9DAA50ECB62F"),
        ("3D053400001C00003435363738393A3B3C3D3E3F404142434445464748494A4B4C4D4E4F", "003E0AED986B8B0F37"),
        // ReadFileData(ID= 5, Offset= 0, Length= 80)
        ("BD05000000300000", "00000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F202122232425262728292A2B2C2D2E2F4C65F1F842262BAC"),
        ("BD05300000200000", "00303132333435363738393A3B3C3D3E3F404142434445464748494A4B4C4D4E4FF02205CF913C03C9"),
        // DeleteFile(ID= 5)
        ("DF05", "001BEF0D32B6D1D7F9"),
        // GetFileIDs()
        ("6F", "00FC194EA93E3EF8E7"),
        // SelectApplication(0x000000)
        ("5A000000", "00"),
        // Authenticate(key 0, DES)
        ("1A00", "AF4415939B21D8EEE8"),
        ("AF89D611809D605F8C917A18BF26DE2D6F", "0021696214FDDA2504"),
        // FormatCard()
        ("FC", "003C28C112182E3BE8"),
    ]

    /// The card's challenges, one for each authentication, in order.
    static let rndB: [String] = [
        "4FD1B75942A8B8E1",
        "3B3DFE628164BFDA",
        "4C647E5672E2A651",
        "BCD8299747332DAF",
        "A40E79E0F52F63AF",
        "CBE9525FB7DF5C3A",
        "608BECD60A7E4934",
        "316E6D76A449F925BA304FB2653656A2",
        "F4D65642AEEB3D12FB8AC6FE46CE7A2F",
        "5814D2513D9EC06668C0CC1B59237AFD",
        "E59426666D9009A7158EDE04436BDA5E",
        "41C40C7F0E89710D08A394E304D115E8",
        "C05DDD714FD788A6B7B754F3C4D066E8",
        "271047125A2AA58178F5C51B1177A19B",
        "910368457E2E9AA167355BFB544B9931",
        "D81000444B976F48340DCDE34D7AB17C",
        "626FFBD45CAF334ACCA45599304F5B17",
        "144A72D25B227062",
    ]

    static func card() -> DESFireCard {
        let chip = DESFireCard.Chip(generation: .ev1, storage: .kb8, uid: h("04063F72633480"), batch: h("BA4519E320"), productionWeek: 0x49, productionYear: 0x13)
        return DESFireCard(image: .factory(chip), random: .fixed(h(rndB.joined())))
    }

    @Test("native framing: all 85 exchanges, the card's answers byte for byte")
    func nativeFraming() {
        let card = Self.card()
        for (i, (command, answer)) in Self.exchanges.enumerated() {
            let got = card.process(h(command))
            #expect(got == h(answer), "exchange \(i): \(command) answered \(Hex.encode(got)), the card answered \(answer)")
            if got != h(answer) { return }
        }
        #expect(card.image.applications.isEmpty, "the trace ends with FormatPICC")
    }

    @Test("ISO 7816 wrapping (90 INS 00 00 Lc data 00 → data 91 SW) gives the same answers")
    func wrappedFraming() {
        let card = Self.card()
        for (i, (command, answer)) in Self.exchanges.enumerated() {
            let c = h(command), a = h(answer)
            let data = Array(c.dropFirst())
            let apdu = [0x90, c[0], 0x00, 0x00] + (data.isEmpty ? [] : [UInt8(data.count)] + data) + [0x00]
            let got = card.process(apdu)
            #expect(got == Array(a.dropFirst()) + [0x91, a[0]], "exchange \(i): \(command)")
            if got != Array(a.dropFirst()) + [0x91, a[0]] { return }
        }
    }
}
