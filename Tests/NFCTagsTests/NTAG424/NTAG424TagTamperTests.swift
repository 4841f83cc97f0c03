import ISO7816
import NDEF
@testable import NFCTags
import SUN
import Testing
import VirtualCard

/// NTAG 424 DNA TagTamper (issue 51): the status mirrored by SDM in either placement, provisioned
/// on the emulated TT, read as a phone reads it and verified; the loop opened and closed while
/// the card is served; GetTTStatus in an authenticated session; a chip without TagTamper refused.
@Suite("NTAG 424 DNA TagTamper: --tamper provisioned, the loop opened and closed, each tap verified")
struct NTAG424TagTamperTests {
    static let zero = [UInt8](repeating: 0, count: 16)

    /// (template, file data, placement)
    static let layouts: [(String, String?, SUNTamperPlacement)] = [
        ("https://t.example/tagtt?picc_data={picc}&enc={file}&cmac={mac}", "--------------------------------", .fileData(offset: 0)),
        ("https://t.example/tagtt?picc_data={picc}&enc={file}&cmac={mac}", "seal:..........!", .fileData(offset: 5)),
        ("https://t.example/t?e={picc}&tt={tt}&c={mac}", nil, .clear),
        ("https://t.example/t?e={picc}&enc={file}&tt={tt}&c={mac}", "secret:0123456!!", .clear),
        ("https://t.example/{uid}/{ctr}/{tt}?c={mac}", nil, .clear),
    ]

    func tap(_ tag: NTAG424Tag, _ plan: SUNURLTemplate) throws -> String {
        let bytes = try tag.plainRead(length: plan.fileContents.count)
        guard case let .uri(url)? = try NDEFMessage(decoding: Array(bytes.dropFirst(2))).records.first?.content() else { throw NTAG424Error(.malformed, "no URI") }
        return url
    }

    @Test("closed, opened, reclosed: CC, OO, OC in each tap (the permanent letter stays O), and GetTTStatus agrees", arguments: layouts)
    func loop(template: String, fileData: String?, placement: SUNTamperPlacement) throws {
        let model = NTAG424TagModel(tagTamper: true)
        let transport = APDUTransport(channel: EmulatedChannel(card: ApplicationHost(applications: [model], uid: model.uid)))
        let tag = try #require(try NTAG424Tag.detect(transport))
        #expect(tag.version.productName == "NTAG 424 DNA TagTamper")
        let plan = try SUNURLTemplate(template, fileData: fileData.map { Array($0.utf8) }, tamper: placement)
        #expect(plan.settings.tamperOffset != nil)
        // The settings read back as written: TTStatusOffset where the library put it.
        let first = try tag.provisionSDM(plan, key: Self.zero) { _ in }
        #expect(try tag.fileSettings(NTAG424Tag.ndefFile).sdm == plan.settings)
        let parser = try SUNTemplate(url: template)
        let keys = try SDMKeys(metaRead: Self.zero, fileRead: Self.zero)
        func verify(_ url: String) throws -> SUNResult { try SUNMessage(url: url, template: parser).verify(keys: keys, tamper: placement) }

        let closed = try verify(first.served)
        #expect(closed.tamper?.bytes == Array("CC".utf8) && closed.tamper?.seal == .intact && closed.uid == model.uid)
        model.openTamperLoop()
        let open = try verify(try tap(tag, plan))
        #expect(open.tamper?.bytes == Array("OO".utf8) && open.tamper?.seal == .open)
        model.closeTamperLoop()
        let reclosedURL = try tap(tag, plan)
        let reclosed = try verify(reclosedURL)
        #expect(reclosed.tamper?.bytes == Array("OC".utf8) && reclosed.tamper?.seal == .reclosed)
        #expect([closed.counter, open.counter, reclosed.counter] == [1, 2, 3])
        if let data = fileData, case .fileData(let at) = placement {
            // The rest of the file data is the provisioned text.
            var expected = Array(data.utf8)
            expected.replaceSubrange(at..<(at + 2), with: Array("OC".utf8))
            #expect(reclosed.fileData == expected)
        }
        if placement == .clear {
            // The letters are in the MAC input: one changed letter fails the MAC.
            for forged in ["CC", "OO"] {
                let altered = reclosedURL.replacingOccurrences(of: "OC", with: forged)
                #expect(altered != reclosedURL)
                #expect { try verify(altered) } throws: { ($0 as? SUNError)?.kind == .invalidMAC }
            }
        }
        try tag.authenticate(keyNumber: 0, key: Self.zero)
        #expect(try tag.tagTamperStatus() == SUNTagTamperStatus(permanent: .open, current: .closed))
    }

    @Test("a chip without TagTamper: provisioning with a tamper placement is refused before anything is written")
    func notTagTamper() throws {
        let model = NTAG424TagModel()
        let transport = APDUTransport(channel: EmulatedChannel(card: ApplicationHost(applications: [model], uid: model.uid)))
        let tag = try #require(try NTAG424Tag.detect(transport))
        let plan = try SUNURLTemplate("https://t.example/t?e={picc}&tt={tt}&c={mac}", tamper: .clear)
        let before = model.ndefFile
        #expect { _ = try tag.provisionSDM(plan, key: Self.zero) { _ in } } throws: { error in
            guard let e = error as? NTAG424Error else { return false }
            return e.kind == .refused && e.message.contains("without TagTamper") && e.message.contains("nothing was written")
        }
        #expect(model.ndefFile == before && model.file(2)?.sdmEnabled == false)
    }

    @Test("TTStatusOffset's rules: {tt} with the placement, the letters inside the file data, before the MAC", arguments: [
        ("https://t.example/t?e={picc}&tt={tt}&c={mac}", nil, nil, "not asked for"),
        ("https://t.example/t?e={picc}&c={mac}", nil, SUNTamperPlacement.clear, "has none"),
        ("https://t.example/t?e={picc}&c={mac}", nil, .fileData(offset: 0), "needs {file}"),
        ("https://t.example/t?e={picc}&enc={file}&c={mac}", "0123456789abcdef", .fileData(offset: 15), "does not fit"),
        ("https://t.example/t?e={picc}&c={mac}&tt={tt}", nil, .clear, "after {mac}"),
    ] as [(String, String?, SUNTamperPlacement?, String)])
    func refused(template: String, fileData: String?, placement: SUNTamperPlacement?, reason: String) {
        do {
            _ = try SUNURLTemplate(template, fileData: fileData.map { Array($0.utf8) }, tamper: placement)
            Issue.record("accepted \(template)")
        } catch let e as NTAG424Error {
            #expect(e.message.contains(reason), "\(e.message)")
        } catch {
            Issue.record("\(error)")
        }
    }
}
