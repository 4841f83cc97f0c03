import Foundation
@testable import SUN
import Testing

func hex(_ s: String) -> [UInt8] { SUNMessage.decodeHex(ArraySlice(Array(s.utf8)))! }

/// AES-CMAC, LRP and SUN verification against published vectors: RFC 4493, NXP AN12304 (LRP),
/// NXP AN12196 (SUN messages), and the SUN/LRP vectors of nfc-developer/sdm-backend's tests.
@Suite("SUN: AES-CMAC, LRP and SDM messages against published vectors")
struct SUNVectorTests {
    let zero = [UInt8](repeating: 0, count: 16)

    @Test("AES-CMAC: RFC 4493 examples 1-4")
    func cmac() throws {
        let k = try AES128(key: hex("2B7E151628AED2A6ABF7158809CF4F3C"))
        #expect(k.cmac([]) == hex("BB1D6929E95937287FA37D129B756746"))
        #expect(k.cmac(hex("6BC1BEE22E409F96E93D7E117393172A")) == hex("070A16B46B4D4144F79BDD9DD04A287C"))
        #expect(k.cmac(hex("6BC1BEE22E409F96E93D7E117393172AAE2D8A571E03AC9C9EB76FAC45AF8E5130C81C46A35CE411")) == hex("DFA66747DE9AE63030CA32611497C827"))
        #expect(k.cmac(hex("6BC1BEE22E409F96E93D7E117393172AAE2D8A571E03AC9C9EB76FAC45AF8E5130C81C46A35CE411E5FBC1191A0A52EFF69F2445DF4F9B17AD2B417BE66C3710")) == hex("51F0BEBF7E3B9D92FC49741779363CFE"))
    }

    @Test("LRP (AN12304): plaintexts, updated keys, evaluation, LRICB, CMAC_LRP")
    func lrp() throws {
        let k = hex("567826B8DA8E768432A9548DBE4AA3A0")
        let l0 = try LRP(key: k)
        #expect(l0.plaintexts[0] == hex("AC20D39F5341FE98DFCA21DA86BA7914"))
        #expect(l0.plaintexts[15] == hex("71B444AF257A93215311D758DD333247"))
        #expect(l0.key == hex("163D14ED24ED935373568EC521E96CF4"))
        let l2 = try LRP(key: k, updatedKey: 2)
        #expect(l2.key == hex("FE30AB50467E61783BFE6B5E0560160E"))
        #expect(l2.evaluate([0x13, 0x59]) == hex("1BA2C0C578996BC497DD181C6885A9DD"))
        #expect(try LRP(key: hex("88B95581002057A93E421EFE4076338B"), updatedKey: 2).evaluate([0x77, 0x29, 0x9D]) == hex("E9C04556A214AC3297B83E4BDF46F142"))
        #expect(try LRP(key: hex("9AFF3EF56FFEC3153B1CADB48B445409"), updatedKey: 3).evaluate(hex("4B073B247CD48F7E0A"), final: false) == hex("909415E5C8BE77563050F2227E17C0E4"))
        // LRICB with bit padding (80 00…) written out, counter C3315DBF.
        let key = hex("E0C4935FF0C254CD2CEF8FDDC32460CF")
        let padded = hex("012D7F1653CAF6503C6AB0C1010E8CB0") + [0x80] + [UInt8](repeating: 0, count: 15)
        let ct = hex("FCBBACAA4F29182464F99DE41085266F480E863E487BAAF687B43ED1ECE0D623")
        #expect(try LRP(key: key).encrypt(padded, counter: hex("C3315DBF")) == ct)
        #expect(try LRP(key: key).decrypt(ct, counter: hex("C3315DBF")) == padded)
        #expect(try LRP(key: hex("8195088CE6C393708EBBE6C7914ECB0B")).cmac(hex("BBD5B85772C7")) == hex("AD8595E0B49C5C0DB18E77355F5AAFF6"))
        #expect(try LRP(key: hex("E2F84A0B0AF40EFEB3EEA215A436605C")).cmac(hex("8BF1DDA9FE445560A4F4EB9CE0")) == hex("D04382DF71BC293FEC4BB10BDB13805F"))
        #expect(try LRP(key: hex("5AA9F6C6DE5138113DF5D6B6C77D5D52")).cmac(hex("A4434D740C2CB665FE5396959189383F")) == hex("8B43ADF767E46B692E8F24E837CB5EFC"))
    }

    @Test("AN12196 §SUN: e / c with factory keys → UID 04DE5F1EACC040, counter 61")
    func an12196PICC() throws {
        let m = try SUNMessage(url: "https://ntag.nxp.com/424?e=EF963FF7828658A599F3041510671E88&c=94EED9EE65337086")
        let r = try m.verify(keys: try SDMKeys(metaRead: zero, fileRead: zero))
        #expect(r.uid == hex("04DE5F1EACC040") && r.counter == 61 && r.piccDataTag == 0xC7 && r.fileData == nil && r.encryption == .aes)
    }

    @Test("AN12196 §SDMENCFileData: picc_data / enc / cmac → UID 04958CAA5C5E80, counter 8, file data xxxxxxxxxxxxxxxx")
    func an12196File() throws {
        let url = "https://www.my424dna.com/?picc_data=FD91EC264309878BE6345CBE53BADF40&enc=CEE9A53E3E463EF1F459635736738962&cmac=ECC1E7F6C6C73BF6"
        let m = try SUNMessage(url: url)
        #expect(m.macInput == Array("CEE9A53E3E463EF1F459635736738962&cmac=".utf8))
        let r = try m.verify(keys: try SDMKeys(metaRead: zero, fileRead: zero))
        #expect(r.uid == hex("04958CAA5C5E80") && r.counter == 8 && r.fileData == Array("xxxxxxxxxxxxxxxx".utf8))
        // One MAC byte wrong: refused, in constant time, with the reason.
        let forged = try SUNMessage(url: url.replacingOccurrences(of: "ECC1E7F6C6C73BF6", with: "3CC1E7F6C6C33B33"))
        #expect(throws: SUNError(.invalidMAC, "the SDMMAC does not verify: the keys are not this tag's, or the URL was altered or forged")) {
            try forged.verify(keys: try SDMKeys(metaRead: zero, fileRead: zero))
        }
        // The right MAC with other keys: refused too.
        #expect(throws: SUNError.self) { try m.verify(keys: try SDMKeys(metaRead: zero, fileRead: [UInt8](repeating: 1, count: 16))) }
    }

    /// Review (issue 51): without a template, a TagTamper status or file data appended after a
    /// genuine tap's MAC was read and reported as verified, though the MAC never covered it.
    @Test("a tamper status or file data placed after the MAC is refused, not reported as verified")
    func fieldsAfterTheMAC() throws {
        let url = "https://www.my424dna.com/?picc_data=FD91EC264309878BE6345CBE53BADF40&enc=CEE9A53E3E463EF1F459635736738962&cmac=ECC1E7F6C6C73BF6"
        for appended in ["&tt=CC", "&tt=OO"] {
            #expect(throws: SUNError.self) { _ = try SUNMessage(url: url + appended).verify(keys: try SDMKeys(metaRead: zero, fileRead: zero)) }
        }
        // File data after the MAC, the tamper letters before it.
        let moved = "https://www.my424dna.com/?picc_data=FD91EC264309878BE6345CBE53BADF40&tt=CC&cmac=ECC1E7F6C6C73BF6&enc=CEE9A53E3E463EF1F459635736738962"
        #expect(throws: SUNError.self) { _ = try SUNMessage(url: moved) }
    }

    @Test("custom keys, MAC over the file data alone (bulk layout): UID 041D3C8A2D6B80, counter 291")
    func customKeys() throws {
        let m = SUNMessage(piccData: hex("8ACADDEF0A9B62CDAE39A16B83FC14DE"), mac: hex("238B2543A8DEBAD8"), encryptedFileData: hex("B8436E11F627BB7F543FCC0C1E0D1A89"),
                           macInput: Array("B8436E11F627BB7F543FCC0C1E0D1A89".utf8))
        let r = try m.verify(keys: try SDMKeys(metaRead: hex("42AFF114F2CB3B6141BE6DC95DFC5416"), fileRead: hex("B62A9BAF092439BD43C62AEE96B970C5")))
        #expect(r.uid == hex("041D3C8A2D6B80") && r.counter == 291 && r.fileData == hex("4E545858716E6F5F6F42467077792D56"))
    }

    @Test("plain UID and counter mirroring: uid / ctr / c")
    func plain() throws {
        let keys = try SDMKeys(metaRead: zero, fileRead: zero)
        let r = try SUNMessage(url: "https://x.example/t?uid=041E3C8A2D6B80&ctr=000006&c=4B00064004B0B3D3").verify(keys: keys)
        #expect(r.uid == hex("041E3C8A2D6B80") && r.counter == 6 && r.piccDataTag == nil)
        #expect(throws: SUNError.self) { try SUNMessage(url: "https://x.example/t?uid=041E3C8A2D6B80&ctr=000006&c=AB00064004B0B3AB").verify(keys: keys) }
        // The counter is the MAC's input: another counter, the same MAC, refused.
        #expect(throws: SUNError.self) { try SUNMessage(url: "https://x.example/t?uid=041E3C8A2D6B80&ctr=000007&c=4B00064004B0B3D3").verify(keys: keys) }
    }

    @Test("LRP mode: 24-byte PICC data, with and without file data")
    func lrpMessages() throws {
        let keys = try SDMKeys(metaRead: zero, fileRead: zero)
        let a = try SUNMessage(url: "https://x.example/?e=07D9CA2545881D4BFDD920BE1603268C0714420DD893A497&enc=D6E921C47DB4C17C56F979F81559BB83&cmac=F9481AC7D855BDB6").verify(keys: keys)
        #expect(a.uid == hex("049B112A2F7080") && a.counter == 4 && a.fileData == Array("NTXXb7dz3PsYYBlU".utf8) && a.encryption == .lrp)
        let b = try SUNMessage(url: "https://x.example/?e=1FCBE61B3E4CAD980CBFDD333E7A4AC4A579569BAFD22C5F&c=4231608BA7B02BA9").verify(keys: keys)
        #expect(b.uid == hex("04940E2A2F7080") && b.counter == 3 && b.encryption == .lrp)
    }

    @Test("templates and malformed URLs: one clear error each, never a trap")
    func malformed() throws {
        let t = try SUNTemplate(url: "https://x.example/t?p={picc}&s={mac}")
        let r = try SUNMessage(url: "https://x.example/t?p=EF963FF7828658A599F3041510671E88&s=94EED9EE65337086", template: t).verify(keys: try SDMKeys(metaRead: zero, fileRead: zero))
        #expect(r.counter == 61)
        for bad in ["https://x/?e=EF96&c=94EED9EE65337086", "https://x/?e=ZZ963FF7828658A599F3041510671E88&c=94EED9EE65337086", "https://x/?c=94EED9EE65337086",
                    "https://x/?e=EF963FF7828658A599F3041510671E88", "https://x/?e=EF963FF7828658A599F3041510671E88&c=94EE", "", "?", "&&&==", "https://x/?e=&c=",
                    "https://x/?e=EF963FF7828658A599F3041510671E88&enc=ABC&c=94EED9EE65337086", String(repeating: "e=00&", count: 500)] {
            #expect(throws: SUNError.self, "\(bad)") { try SUNMessage(url: bad) }
        }
        #expect(throws: SUNError.self) { try SUNTemplate(url: "https://x/?a={picc}") }
        #expect(throws: SUNError.self) { try SDMKeys(metaRead: [1, 2, 3], fileRead: zero) }
        // PICC data that decrypts to no usable UID (wrong meta key): unsupported, not a trap.
        #expect(throws: SUNError.self) {
            try SUNMessage(url: "https://ntag.nxp.com/424?e=EF963FF7828658A599F3041510671E88&c=94EED9EE65337086").verify(keys: try SDMKeys(metaRead: [UInt8](repeating: 7, count: 16), fileRead: zero))
        }
    }
}
