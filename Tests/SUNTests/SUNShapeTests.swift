import Foundation
@testable import SUN
import Testing

/// SUN URLs of every shape read by a template URL: the bulk layout against nfc-developer/sdm-backend's
/// published bulk messages, path segments and mixed layouts against AN12196's messages (a message
/// without file data has an empty MAC input, so its PICC data and MAC verify wherever they stand),
/// and the template's own checks.
@Suite("SUN: URLs of every shape, read where the template's placeholders stand")
struct SUNShapeTests {
    let zero = [UInt8](repeating: 0, count: 16)

    /// sdm-backend tests/test_libsdm.py `test_sun3_custom`: PICC data, file data and MAC with
    /// custom keys, the MAC over the encrypted file data alone (SDMMAC_PARAM empty): what its
    /// BULK mode (`?e=` PICC ‖ file ‖ MAC, app.py `parse_parameters`) verifies.
    static let bulkCustom = "https://sdm.example/tag?e=8ACADDEF0A9B62CDAE39A16B83FC14DE" + "B8436E11F627BB7F543FCC0C1E0D1A89" + "238B2543A8DEBAD8"
    static let customKeys = (meta: hex("42AFF114F2CB3B6141BE6DC95DFC5416"), file: hex("B62A9BAF092439BD43C62AEE96B970C5"))

    @Test("sdm-backend's custom-key bulk message, byte for byte: ?e={picc}{file}{mac}, the MAC over the file data alone")
    func publishedBulk() throws {
        let template = try SUNTemplate(url: "https://sdm.example/tag?e={picc}{file}{mac}")
        let m = try SUNMessage(url: Self.bulkCustom, template: template)
        #expect(m.piccData == hex("8ACADDEF0A9B62CDAE39A16B83FC14DE") && m.encryptedFileData == hex("B8436E11F627BB7F543FCC0C1E0D1A89") && m.mac == hex("238B2543A8DEBAD8"))
        // NT4H2421Gx §9.3.7 / AN12196: the input runs from SDMMACInputOffset (the file data) to
        // SDMMACOffset, which directly follows it here.
        #expect(m.macInput == Array("B8436E11F627BB7F543FCC0C1E0D1A89".utf8))
        let keys = try SDMKeys(metaRead: Self.customKeys.meta, fileRead: Self.customKeys.file)
        let r = try m.verify(keys: keys)
        #expect(r.uid == hex("041D3C8A2D6B80") && r.counter == 291 && r.fileData == hex("4E545858716E6F5F6F42467077792D56") && r.piccDataTag == 0xC7 && r.encryption == .aes)
        // The same bytes with a MAC input that reaches further (as a separated layout's "&c=") do not verify.
        let longer = SUNMessage(piccData: m.piccData, mac: m.mac, encryptedFileData: m.encryptedFileData, macInput: m.macInput + Array("&c=".utf8))
        #expect(throws: SUNError.self) { try longer.verify(keys: keys) }
        // Each hex digit of the MAC or the file data altered: refused.
        for position in [Self.bulkCustom.utf8.count - 1, Self.bulkCustom.utf8.count - 20, Self.bulkCustom.utf8.count - 30] {
            var bytes = Array(Self.bulkCustom.utf8)
            bytes[position] = bytes[position] == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
            #expect(throws: SUNError.self, "\(position)") { try SUNMessage(url: String(decoding: bytes, as: UTF8.self), template: template).verify(keys: keys) }
        }
    }

    /// sdm-backend `test_decrypt_with_kdf1` / `kdf2` (BULK mode): keys derived by its derive.py from
    /// MASTER_KEY 47BBB68A…C521 (HMAC-SHA256 and CMAC; computed outside this project and given
    /// here as keys), 64 and 16 bytes of file data.
    @Test("sdm-backend's bulk messages with 64 and 16 bytes of file data", arguments: [
        ("8DE9030262807261850FCCF5FE007E21", "382B4C3D68552C3A5F417F0695A3D857923764E1737AD1F80E834E46387F45DC77FE7468BBCF9DBF43B29CA58E8D6435F908C9C0CD56E9B4B9960FE1279C5DF1",
         "DF3EF20BE7D91C8E", "1FD0D360CCF906DF902CC8404C7CE5AA", "04C24EDA926980", 1, "NT1xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxEEEEEEEEEEEE"),
        ("4F5B914723915D456C038FE658686CD5", "5CE7DCDEA93F5DA7AAA0AADC97485ABF", "FFCD8DE82AD05289", "97D1C3D765BC22AB707E80723E17B126", "047D5F2AAA6180", 2, "CC\u{04}aaaaEEEEEEEEE"),
    ])
    func publishedBulkKDF(picc: String, file: String, mac: String, fileKey: String, uid: String, counter: Int, text: String) throws {
        let template = try SUNTemplate(url: "https://sdm.example/tag?e={picc}{file}{mac}")
        let m = try SUNMessage(url: "https://sdm.example/tag?e=" + picc + file + mac, template: template)
        #expect(m.encryptedFileData == hex(file) && m.macInput == Array(file.utf8))
        let r = try m.verify(keys: try SDMKeys(metaRead: hex("C3B653D8484D82FD9D5DC48840E1F94E"), fileRead: hex(fileKey)))
        #expect(r.uid == hex(uid) && r.counter == counter && r.fileData == Array(text.utf8))
    }

    @Test("AN12196's e/c message in every layout without file data: path segments, run together, mixed with fixed parameters, LRP's 48 digits")
    func pathAndMixed() throws {
        let keys = try SDMKeys(metaRead: zero, fileRead: zero)
        let picc = "EF963FF7828658A599F3041510671E88", mac = "94EED9EE65337086"
        for (template, url) in [
            ("https://t.example/{picc}/{mac}", "https://t.example/\(picc)/\(mac)"),
            ("https://t.example/{picc}{mac}", "https://t.example/\(picc)\(mac)"),
            ("https://T.Example/a/b/{picc}?v=2&s={mac}", "https://t.example/a/b/\(picc)?v=2&s=\(mac)"),
            ("https://t.example/p{picc}x{mac}.html#top", "https://t.example/p\(picc)x\(mac).html#top"),
            ("https://t.example?e={picc}&c={mac}", "https://t.example/?e=\(picc)&c=\(mac)"),
            ("https://t.example/t?id=7&e={picc}&c={mac}", "https://t.example/t?c=\(mac)&utm_source=x&e=\(picc)&id=7"),
            ("https://t.example/t?d={picc}.{mac}", "https://t.example/t?d=\(picc).\(mac)"),
        ] {
            let t = try SUNTemplate(url: template)
            let r = try SUNMessage(url: url, template: t).verify(keys: keys)
            #expect(r.uid == hex("04DE5F1EACC040") && r.counter == 61, "\(template)")
        }
        // The server's view: the path and query only.
        let path = try SUNTemplate(url: "https://t.example/sun/{picc}/{mac}")
        #expect(try SUNMessage(url: "/sun/\(picc)/\(mac)", template: path).verify(keys: keys).counter == 61)
        #expect(throws: SUNError.self) { try SUNMessage(url: "e=\(picc)&c=\(mac)", template: path) }
        // A query template takes the query alone, with or without '?'.
        let query = try SUNTemplate(url: "https://t.example/t?e={picc}&c={mac}")
        #expect(try SUNMessage(url: "e=\(picc)&c=\(mac)", template: query).verify(keys: keys).counter == 61)
        #expect(try SUNMessage(url: "?e=\(picc)&c=\(mac)", template: query).verify(keys: keys).counter == 61)
        // LRP: 48 hex digits of PICC data where the template puts {picc} (sdm-backend test_sdm_lrp2).
        let lrp = try SUNMessage(url: "https://t.example/1FCBE61B3E4CAD980CBFDD333E7A4AC4A579569BAFD22C5F/4231608BA7B02BA9",
                                 template: try SUNTemplate(url: "https://t.example/{picc}/{mac}")).verify(keys: keys)
        #expect(lrp.uid == hex("04940E2A2F7080") && lrp.counter == 3 && lrp.encryption == .lrp)
        // AN12196's message with file data, through a template naming its parameters.
        let file = try SUNMessage(url: "https://www.my424dna.com/?picc_data=FD91EC264309878BE6345CBE53BADF40&enc=CEE9A53E3E463EF1F459635736738962&cmac=ECC1E7F6C6C73BF6",
                                  template: try SUNTemplate(url: "https://www.my424dna.com/?picc_data={picc}&enc={file}&cmac={mac}"))
        #expect(file.macInput == Array("CEE9A53E3E463EF1F459635736738962&cmac=".utf8))
        #expect(try file.verify(keys: keys).fileData == Array("xxxxxxxxxxxxxxxx".utf8))
    }

    @Test("a tap that does not have the template's form: one line naming what differs, never a trap", arguments: [
        ("https://t.example/{picc}/{mac}", "https://t.example/EF963FF7828658A599F3041510671E88-94EED9EE65337086"),
        ("https://t.example/{picc}/{mac}", "https://other.example/EF963FF7828658A599F3041510671E88/94EED9EE65337086"),
        ("https://t.example/{picc}/{mac}", "https://t.example/EF963FF7828658A599F3041510671E8/94EED9EE65337086"),
        ("https://t.example/{picc}/{mac}", "https://t.example/EF963FF7828658A599F3041510671E88/94EED9EE6533708Z"),
        ("https://t.example/{picc}/{mac}", "https://t.example/EF963FF7828658A599F3041510671E88/94EED9EE65337086/extra"),
        ("https://t.example/t?v=2&e={picc}&c={mac}", "https://t.example/t?v=3&e=EF963FF7828658A599F3041510671E88&c=94EED9EE65337086"),
        ("https://t.example/t?e={picc}&c={mac}", "https://t.example/t?e=EF963FF7828658A599F3041510671E88"),
        ("https://t.example/t?e={picc}{file}{mac}", "https://t.example/t?e=EF963FF7828658A599F3041510671E88ABCD94EED9EE65337086"),
        ("https://t.example/t?e={picc}{file}{mac}", "https://t.example/t?e="),
        ("https://t.example/t?f={file}&c={mac}&e={picc}", "https://t.example/t?c=94EED9EE65337086&f=CEE9A53E3E463EF1F459635736738962&e=EF963FF7828658A599F3041510671E88"),
        ("https://t.example/{picc}{mac}", "%%%"),
        ("https://t.example/{picc}{mac}", ""),
    ])
    func mismatches(template: String, url: String) throws {
        let t = try SUNTemplate(url: template)
        do {
            _ = try SUNMessage(url: url, template: t)
            Issue.record("accepted \(url)")
        } catch {
            #expect(error.kind == .malformed && !error.message.contains("\n") && !error.message.isEmpty, "\(error.message)")
        }
    }

    @Test("the template's own checks: one line each", arguments: [
        ("https://t.example/t?e={picc}", "no {mac}"),
        ("https://t.example/t?c={mac}", "needs {picc}"),
        ("https://t.example/t?e={picc}&u={uid}&c={mac}", "not both"),
        ("https://t.example/t?ctr={ctr}&e={picc}&c={mac}", "not both"),
        ("https://t.example/t?n={ctr}&c={mac}", "needs {picc}"),
        ("https://t.example/t?c={mac}&f={file}&e={picc}", "comes after {mac}"),
        ("https://t.example/t?u={uid}&f={file}&c={mac}", "needs the read counter"),
        ("https://t.example/t?e={picc}&c={mac}&d={bogus}", "unknown placeholder"),
        ("https://t.example/t?e={picc}&c={mac}&e2={picc}", "twice"),
        ("https://t.example/t?e={pi{mac}cc}", "overlap or nest"),
        ("https://t.example/t?e={picc&c={mac}", "overlap or nest"),
        ("https://t.example/t?e={picc}&c={mac", "unclosed"),
        ("https://t.example/t?e=picc}&c={mac}", "without '{'"),
        ("https://{picc}.t.example/t?c={mac}", "host"),
        ("https://t.example/t?e={picc}#c={mac}", "fragment"),
    ])
    func badTemplates(template: String, reason: String) {
        do {
            _ = try SUNTemplate(url: template)
            Issue.record("accepted \(template)")
        } catch {
            #expect(error.kind == .malformed && error.message.contains(reason) && !error.message.contains("\n"), "\(error.message)")
        }
    }

    @Test("random bytes against every layout: a typed error or a parse, never a trap")
    func noTraps() throws {
        var rng = SystemRandomNumberGenerator()
        let templates = try ["https://t.example/{picc}/{mac}", "https://t.example/t?e={picc}{file}{mac}", "https://t.example/{picc}{mac}?v=1",
                             "https://t.example/t?u={uid}&n={ctr}&f={file}&c={mac}", "?e={picc}&c={mac}"].map { try SUNTemplate(url: $0) }
        let alphabet = Array("0123456789ABCDEFabcdef/?&=#.:xhtps".utf8)
        for _ in 0..<3000 {
            let length = Int.random(in: 0..<200, using: &rng)
            let url = String(decoding: (0..<length).map { _ in alphabet.randomElement(using: &rng)! }, as: UTF8.self)
            for t in templates { _ = try? SUNMessage(url: url, template: t) }
            for t in templates { _ = try? SUNMessage(url: "https://t.example/t?e=" + url, template: t) }
        }
    }
}
