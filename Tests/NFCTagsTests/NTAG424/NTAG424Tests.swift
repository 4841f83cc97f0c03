import ISO7816
@testable import NFCTags
import Testing

/// A card that answers with canned responses, in order, and keeps the commands it got.
final class CannedCard: CardChannel {
    var responses: [[UInt8]]
    var commands: [[UInt8]] = []
    let supportsExtendedLength = false
    init(_ responses: [[UInt8]]) { self.responses = responses }
    func transmit(_ command: [UInt8]) throws -> [UInt8] {
        commands.append(command)
        return responses.isEmpty ? [0x6F, 0x00] : responses.removeFirst()
    }
}

func h(_ s: String) -> [UInt8] { try! Hex.decode(s) }

/// EV2 authentication and secure messaging against NXP AN12196's worked examples, byte for byte.
@Suite("NTAG 424 DNA: AuthenticateEV2First and CommMode.MAC / FULL, AN12196's examples")
struct NTAG424SecureMessagingTests {
    @Test("AuthenticateEV2First with key 0 (AN12196 §6.6) and key 3 (§6.10): the second command, TI and both session keys")
    func authenticate() throws {
        for v in [(rndA: "13C5DB8A5930439FC3DEF9A4C675360F", r1: "A04C124213C186F22399D33AC2A30215", c2: "35C3E05A752E0144BAC0DE51C1F22C56B34408A23D8AEA266CAB947EA8E0118D",
                   r2: "3FA64DB5446D1F34CD6EA311167F5E4985B89690C04A05F17FA7AB2F08120663", ti: "9D00C4DF", enc: "1309C877509E5A215007FF0ED19CA564", mac: "4C6626F5E72EA694202139295C7A7FC7"),
                  (rndA: "B98F4C50CF1C2E084FD150E33992B048", r1: "B875CEB0E66A6C5CD00898DC371F92D1", c2: "FF0306E47DFBC50087C4D8A78E88E62DE1E8BE457AA477C707E2F0874916A8B1",
                   r2: "0CC9A8094A8EEA683ECAAC5C7BF20584206D0608D477110FC6B3D5D3F65C3A6A", ti: "7614281A", enc: "7A93D6571E4B180FCA6AC90C9A7488D4", mac: "FC4AF159B62E549B5812394CAB1918CC")] {
            let card = CannedCard([h(v.r1) + [0x91, 0xAF], h(v.r2) + [0x91, 0x00]])
            let session = try EV2Authentication.first(APDUTransport(channel: card), keyNumber: 0, key: [UInt8](repeating: 0, count: 16), rndA: h(v.rndA))
            #expect(card.commands[0] == h("9071000002000000"))
            #expect(card.commands[1] == h("90AF000020") + h(v.c2) + [0x00])
            #expect(session.transactionIdentifier == h(v.ti))
            #expect(session.encryption.encrypt(block: [UInt8](repeating: 0, count: 16)) == (try SUNTestKeys.aes(v.enc)).encrypt(block: [UInt8](repeating: 0, count: 16)))
            #expect(session.macKey.cmac([]) == (try SUNTestKeys.aes(v.mac)).cmac([]))
        }
    }

    @Test("a tag that does not hold the key: its RndA' does not match, refused as a bad cryptogram")
    func wrongKey() throws {
        let card = CannedCard([h("A04C124213C186F22399D33AC2A30215") + [0x91, 0xAF], h("3FA64DB5446D1F34CD6EA311167F5E4985B89690C04A05F17FA7AB2F08120663") + [0x91, 0x00]])
        #expect(throws: NTAG424Error.self) {
            try EV2Authentication.first(APDUTransport(channel: card), keyNumber: 0, key: [UInt8](repeating: 0, count: 16), rndA: h("03C5DB8A5930439FC3DEF9A4C675360F"))
        }
        let refused = CannedCard([[0x91, 0xAE]])
        do {
            _ = try EV2Authentication.first(APDUTransport(channel: refused), keyNumber: 0, key: [UInt8](repeating: 0, count: 16))
            Issue.record("91 AE accepted")
        } catch let e as NTAG424Error {
            #expect(e.kind == .authenticationError)
        }
    }

    @Test("CommMode.MAC (AN12196 §5.3): GetFileSettings 02 signed, the answer's MAC checked; one bit off refused")
    func macMode() throws {
        let s = try EV2Session(transactionIdentifier: h("7A21085E"), encryptionKey: [UInt8](repeating: 0, count: 16), macKey: h("8248134A386E86EB7FAF54A52E536CB6"))
        #expect(try s.wrap(ins: 0xF5, header: [0x02], mode: .mac).bytes == h("90F5000009026597A457C8CD442C00"))
        let answer = h("0040EEEE000100D1FE001F00004400004400002000006A0000")
        #expect(try s.unwrap(ResponseAPDU(data: answer + h("2A474282E7A47986"), statusWord: StatusWord(rawValue: 0x9100)), mode: .mac, what: "GetFileSettings") == answer)
        let t = try EV2Session(transactionIdentifier: h("7A21085E"), encryptionKey: [UInt8](repeating: 0, count: 16), macKey: h("8248134A386E86EB7FAF54A52E536CB6"))
        _ = try t.wrap(ins: 0xF5, header: [0x02], mode: .mac)
        #expect(throws: NTAG424Error.self) { try t.unwrap(ResponseAPDU(data: answer + h("2A474282E7A47987"), statusWord: StatusWord(rawValue: 0x9100)), mode: .mac, what: "GetFileSettings") }
    }

    @Test("CommMode.FULL (AN12196 §5.4, §6.12, §7.3): WriteData encrypted and MACed, GetCardUID's answer decrypted")
    func fullMode() throws {
        let s = try EV2Session(transactionIdentifier: h("9D00C4DF"), encryptionKey: h("1309C877509E5A215007FF0ED19CA564"), macKey: h("4C6626F5E72EA694202139295C7A7FC7"))
        // The plain WriteData of AN12196 §5.4: header 02 000000 800000, 128 bytes of NDEF file.
        let plain = h("908D000087020000008000000051D1014D550463686F6F73652E75726C2E636F6D2F6E7461673432343F653D3030303030303030303030303030303030303030"
                      + "30303030303030303030303026633D30303030303030303030303030303030000000000000000000000000000000000000000000000000000000000000000000"
                      + "00000000000000000000000000")
        let ndef = Array(plain[12..<(plain.count - 1)])
        let wrapped = try s.wrap(ins: 0x8D, header: h("02000000800000"), data: ndef, mode: .full)
        #expect(wrapped.bytes == h("908D00009F02000000800000421C73A27D827658AF481FDFF20A5025B559D0E3AA21E58D347F343CFFC768BFE596C706BC00F2176781D4B0242642A0FF5A42C461AAF894D9A1284B8C76BCFA658ACD40555D362E08DB15CF421B51283F9064BCBE20E96CAE545B407C9D651A3315B27373772E5DA2367D2064AE054AF996C6F1F669170FA88CE8C4E3A4A7BBBEF0FD971FF532C3A802AF745660F2B4D1D9A8499661EBF300"))
        #expect(try s.unwrap(ResponseAPDU(data: h("FC222E5F7A542452"), statusWord: StatusWord(rawValue: 0x9100)), mode: .full, what: "WriteData") == [])
        let t = try EV2Session(transactionIdentifier: h("7614281A"), encryptionKey: h("7A93D6571E4B180FCA6AC90C9A7488D4"), macKey: h("FC4AF159B62E549B5812394CAB1918CC"))
        #expect(try t.wrap(ins: 0x8D, header: h("030000000A0000"), data: h("0102030405060708090A"), mode: .full).bytes == h("908D00001F030000000A00006B5E6804909962FC4E3FF5522CF0F8436C0C53315B9C73AA00"))
        #expect(try t.unwrap(ResponseAPDU(data: h("C26D236E4A7C046D"), statusWord: StatusWord(rawValue: 0x9100)), mode: .full, what: "WriteData") == [])
        let u = try EV2Session(transactionIdentifier: h("DF055522"), encryptionKey: h("2B4D963C014DC36F24F69A50A394F875"), macKey: h("379D32130CE61705DD5FD8C36B95D764"))
        #expect(try u.wrap(ins: 0x51, mode: .full).bytes == h("90510000088E2C155ADDA99BE300"))
        #expect(try u.unwrap(ResponseAPDU(data: h("70756055688505B52A5E26E59E329CD6595F672298EA41B7"), statusWord: StatusWord(rawValue: 0x9100)), mode: .full, what: "GetCardUID") == h("04958CAA5C5E80"))
    }
}

import SUN
enum SUNTestKeys { static func aes(_ hex: String) throws -> AES128 { try AES128(key: h(hex)) } }

import VirtualCard

/// NTAG424Tag against the chip-true emulator: detection, EV2, file settings, SDM provisioning
/// read back and verified by the SUN module, key changes, and each error code the chip gives.
@Suite("NTAG 424 DNA against the emulator: detect, authenticate, SDM, ChangeKey, error codes")
struct NTAG424TagTests {
    let zero = [UInt8](repeating: 0, count: 16)

    func connect(_ model: NTAG424TagModel) throws -> (NTAG424Tag, APDUTransport) {
        let transport = APDUTransport(channel: EmulatedChannel(card: ApplicationHost(applications: [model], uid: model.uid)))
        return (try #require(try NTAG424Tag.detect(transport)), transport)
    }

    @Test("GetVersion and the factory file settings; a Type 4 tag without the chip is not one")
    func detect() throws {
        let (tag, _) = try connect(NTAG424TagModel())
        #expect(tag.version.productName == "NTAG 424 DNA" && tag.version.uid == NTAG424TagModel().uid)
        let ndef = try tag.fileSettings(NTAG424Tag.ndefFile)
        #expect(ndef.read == .free && ndef.write == .free && ndef.change == .key(0) && ndef.size == 256 && ndef.sdm == nil && ndef.commMode == .plain)
        let proprietary = try tag.fileSettings(NTAG424Tag.proprietaryFile)
        #expect(proprietary.commMode == .full && proprietary.read == .key(2))
        let plainType4 = APDUTransport(channel: EmulatedChannel(card: ApplicationHost(applications: [Type4TagModel()])))
        #expect(try NTAG424Tag.detect(plainType4) == nil)
    }

    @Test("GetFileSettings decoded: AN12196 §5.3's answer (SDM with PICC data, encrypted file data, MAC)")
    func decodeAN12196() throws {
        let s = try NTAG424FileSettings(parsing: h("0040EEEE000100D1FE001F00004400004400002000006A0000"))
        #expect(s.size == 256 && s.read == .free && s.write == .free && s.commMode == .plain)
        let sdm = try #require(s.sdm)
        #expect(sdm.mirrorsUID && sdm.mirrorsCounter && sdm.encryptsFileData && sdm.asciiEncoding && sdm.metaRead == .key(0) && sdm.fileRead == .key(0))
        #expect(sdm.piccDataOffset == 0x1F && sdm.macInputOffset == 0x44 && sdm.encOffset == 0x44 && sdm.encLength == 0x20 && sdm.macOffset == 0x6A)
        #expect(s.changeData == h("40EEEE") + h("D1FE001F00004400004400002000006A0000"))
    }

    @Test("ChangeKey of key 0 (AN12196 Table 26): the FULL command byte for byte")
    func changeKeyVector() throws {
        let s = try EV2Session(transactionIdentifier: h("7614281A"), encryptionKey: h("4CF3CB41A22583A61E89B158D252FC53"), macKey: h("5529860B2FC5FB6154B7F28361D30BF9"), commandCounter: 3)
        #expect(try s.wrap(ins: 0xC4, header: [0x00], data: h("5004BF991F408672B1EF00F08F9E8647") + [0x01], mode: .full).bytes
                == h("90C4000029") + h("00C0EB4DEEFEDDF0B513A03A95A75491818580503190D4D05053FF75668A01D6FDA6610234BDED6432") + [0x00])
    }

    @Test("SUN provisioning: the URL written through the Type 4 engine, SDM enabled, and every read a fresh tap the SUN module accepts",
          arguments: ["https://example.com/t?e={picc}&c={mac}", "https://example.com/t?uid={uid}&ctr={ctr}&c={mac}", "https://x.example/?e={picc}&enc={file}&c={mac}"])
    func provision(_ template: String) throws {
        let model = NTAG424TagModel()
        let (tag, transport) = try connect(model)
        let plan = try SUNURLTemplate(template, fileData: template.contains("{file}") ? Array("secret:0123456!!".utf8) : nil)
        try Type4Tag.detect(transport).writeNDEF(Array(plan.fileContents.dropFirst(2)))
        #expect(Array(model.ndefFile.prefix(plan.fileContents.count)) == plan.fileContents)
        try tag.authenticate(keyNumber: 0, key: zero)
        var settings = try tag.fileSettings(NTAG424Tag.ndefFile)
        settings.sdm = plan.settings
        try tag.changeFileSettings(NTAG424Tag.ndefFile, to: settings)
        #expect(try tag.fileSettings(NTAG424Tag.ndefFile).sdm == plan.settings)
        let keys = try SDMKeys(metaRead: zero, fileRead: zero)
        var counters: [Int] = []
        for _ in 0..<3 {
            let served = try tag.plainRead(length: plan.fileContents.count)
            let message = try NDEFMessage(decoding: Array(served.dropFirst(2)))
            guard case let .uri(url)? = try message.records.first?.content() else { Issue.record("no URI served"); return }
            let result = try SUNMessage(url: url).verify(keys: keys)
            #expect(result.uid == model.uid)
            if template.contains("{file}") { #expect(result.fileData == Array("secret:0123456!!".utf8)) }
            counters.append(result.counter ?? -1)
        }
        #expect(counters == [1, 2, 3])
        // Another key cannot verify it.
        let other = try SDMKeys(metaRead: zero, fileRead: [UInt8](repeating: 9, count: 16))
        let served = try tag.plainRead(length: plan.fileContents.count)
        guard case let .uri(url)? = try NDEFMessage(decoding: Array(served.dropFirst(2))).records.first?.content() else { return }
        #expect(throws: SUNError.self) { try SUNMessage(url: url).verify(keys: other) }
    }

    @Test("without the counter mirrored: the tap verifies (UID only), a replay store refuses it as unverifiable; {ctr} or {file} then refused")
    func noCounter() throws {
        let model = NTAG424TagModel()
        let (tag, transport) = try connect(model)
        let plan = try SUNURLTemplate("https://example.com/t?e={picc}&c={mac}", mirrorsCounter: false)
        #expect(!plan.settings.mirrorsCounter)
        try Type4Tag.detect(transport).writeNDEF(Array(plan.fileContents.dropFirst(2)))
        try tag.authenticate(keyNumber: 0, key: zero)
        var settings = try tag.fileSettings(2)
        settings.sdm = plan.settings
        try tag.changeFileSettings(2, to: settings)
        let served = try tag.plainRead(length: plan.fileContents.count)
        guard case let .uri(url)? = try NDEFMessage(decoding: Array(served.dropFirst(2))).records.first?.content() else { Issue.record("no URI"); return }
        let result = try SUNMessage(url: url).verify(keys: try SDMKeys(metaRead: zero, fileRead: zero))
        #expect(result.uid == model.uid && result.counter == nil && result.piccDataTag == 0x87)
        #expect(throws: (any Error).self) { try SUNURLTemplate("https://x/?uid={uid}&ctr={ctr}&c={mac}", mirrorsCounter: false) }
        #expect(throws: (any Error).self) { try SUNURLTemplate("https://x/?e={picc}&enc={file}&c={mac}", mirrorsCounter: false) }
        // Plain mirroring of the UID alone, provisioned and verified.
        let plainModel = NTAG424TagModel()
        let (plainTag, plainTransport) = try connect(plainModel)
        let plainPlan = try SUNURLTemplate("https://x.example/?uid={uid}&c={mac}", mirrorsCounter: false)
        try Type4Tag.detect(plainTransport).writeNDEF(Array(plainPlan.fileContents.dropFirst(2)))
        try plainTag.authenticate(keyNumber: 0, key: zero)
        var plainSettings = try plainTag.fileSettings(2)
        plainSettings.sdm = plainPlan.settings
        try plainTag.changeFileSettings(2, to: plainSettings)
        let plainServed = try plainTag.plainRead(length: plainPlan.fileContents.count)
        guard case let .uri(plainURL)? = try NDEFMessage(decoding: Array(plainServed.dropFirst(2))).records.first?.content() else { Issue.record("no URI"); return }
        let plainResult = try SUNMessage(url: plainURL).verify(keys: try SDMKeys(metaRead: zero, fileRead: zero))
        #expect(plainResult.uid == plainModel.uid && plainResult.counter == nil)
    }

    @Test("templates the tag cannot serve are refused before anything is written")
    func badTemplates() {
        for t in ["https://example.com/t?e={picc}", "https://x/?e={picc}&uid={uid}&c={mac}", "https://x/?c={mac}&enc={file}&e={picc}", "https://x/?e={picc}&c={mac}&d={bogus}",
                  "https://example.com/" + String(repeating: "a", count: 240) + "?e={picc}&c={mac}", "https://x/?uid={uid}&c={mac}"] {
            #expect(throws: (any Error).self, "\(t)") { try SUNURLTemplate(t) }
        }
    }

    @Test("ChangeKey: key 2 with its CRC, a wrong old key refused (91 1E), nothing changed and nothing claimed; key 0 last, the session ends with it")
    func changeKeys() throws {
        let model = NTAG424TagModel()
        let (tag, _) = try connect(model)
        try tag.authenticate(keyNumber: 0, key: zero)
        let k2 = h("00112233445566778899AABBCCDDEEFF"), k0 = h("F0E1D2C3B4A5968778695A4B3C2D1E0F")
        try tag.changeKey(2, to: k2, from: zero, version: 1)
        #expect(model.keys[2] == k2 && model.keyVersions[2] == 1)
        do {
            try tag.changeKey(3, to: k2, from: k2, version: 1)   // key 3 is still zero: the old key given is wrong
            Issue.record("a wrong old key was accepted")
        } catch let e as NTAG424Error {
            // The tag's 91 1E, then neither the old key given (wrong) nor the new one
            // authenticates: nothing proves which key holds, so nothing is claimed (issue 49).
            #expect(e.kind == .badCryptogram && e.message.contains("91 1E") && e.message.contains("not confirmed"), "\(e)")
        }
        #expect(model.keys[3] == zero)
        try tag.authenticate(keyNumber: 0, key: zero)
        try tag.changeKey(0, to: k0, from: zero, version: 2)
        #expect(tag.session == nil && model.keys[0] == k0)
        #expect(throws: NTAG424Error.self) { try tag.authenticate(keyNumber: 0, key: zero) }
        try tag.authenticate(keyNumber: 0, key: k0)
        try tag.authenticate(keyNumber: 2, key: k2)
    }

    @Test("AuthenticateEV2NonFirst: another key in the same transaction, TI and counter kept; the new session works; without a session, 91 AE")
    func nonFirst() throws {
        let k3 = h("33333333333333333333333333333333")
        let model = NTAG424TagModel(keys: [zero, zero, zero, k3, zero])
        let (tag, _) = try connect(model)
        do { try tag.authenticate(keyNumber: 3, key: k3, nonFirst: false); try tag.authenticate(keyNumber: 0, key: zero, nonFirst: true) }
        let first = try #require(tag.session)
        _ = try tag.fileSettings(2)
        let counter = try #require(tag.session).commandCounter
        try tag.authenticate(keyNumber: 3, key: k3, nonFirst: true)
        let second = try #require(tag.session)
        #expect(second.transactionIdentifier == first.transactionIdentifier && second.commandCounter == counter && second.keyNumber == 3)
        #expect(try tag.fileSettings(3).commMode == .full)
        do { try tag.authenticate(keyNumber: 3, key: zero, nonFirst: true); Issue.record("a wrong key authenticated") } catch let e as NTAG424Error { #expect(e.kind == .authenticationError) }
        let (fresh, transport) = try connect(NTAG424TagModel())
        _ = fresh
        let r = try transport.send(CommandAPDU(cla: 0x90, ins: 0x77, p1: 0, p2: 0, data: [0], ne: 256))
        #expect(r.statusWord == StatusWord(rawValue: 0x91AE))
    }

    @Test("the chip's error codes: 91 AE wrong key, 91 9D no permission, 91 1E a bad MAC, 91 40 no such key, 91 7E a bad length")
    func errorCodes() throws {
        let model = NTAG424TagModel()
        let (tag, transport) = try connect(model)
        func sw(_ apdu: [UInt8]) throws -> [UInt8] { let w = try transport.send(try CommandAPDU(bytes: apdu)).statusWord; return [w.sw1, w.sw2] }
        do { try tag.authenticate(keyNumber: 0, key: h("01000000000000000000000000000000")); Issue.record("a wrong key authenticated") } catch let e as NTAG424Error { #expect(e.kind == .authenticationError) }
        #expect(try sw(h("9071000002070000")) == [0x91, 0x40])
        #expect(try sw(h("90F5000000")) == [0x91, 0x7E])
        // ChangeFileSettings with a session of key 1 (the NDEF file's change key is 0).
        try tag.authenticate(keyNumber: 1, key: zero)
        do { try tag.changeFileSettings(2, to: try tag.fileSettings(2)); Issue.record("key 1 changed file 2's settings") } catch let e as NTAG424Error { #expect(e.kind == .permissionDenied) }
        try tag.authenticate(keyNumber: 1, key: zero)
        do { try tag.changeKey(2, to: zero, from: zero, version: 0); Issue.record("key 1 changed a key") } catch let e as NTAG424Error { #expect(e.kind == .permissionDenied) }
        // A command whose MAC is off by one bit.
        try tag.authenticate(keyNumber: 0, key: zero)
        var forged = try tag.session!.wrap(ins: 0xF5, header: [2], mode: .mac).bytes
        forged[forged.count - 2] ^= 1
        #expect(try sw(forged) == [0x91, 0x1E])
    }
}

import NDEF
import SUN

/// SUN URLs of every shape (issue 32): each layout provisioned through `provisionSDM` on the
/// emulator, then read as a phone reads it and verified by the SUN module with the same template.
/// The emulator computes the MAC and the ciphertexts at the offsets the settings name, so a tap
/// verifies only if every offset is where its placeholder stands.
@Suite("NTAG 424 DNA: provision-then-verify for every URL layout")
struct NTAG424ShapeTests {
    static let zero = [UInt8](repeating: 0, count: 16)

    /// (template, file data, counter mirrored)
    static let layouts: [(String, String?, Bool)] = [
        ("https://example.com/t?e={picc}&c={mac}", nil, true),
        ("https://example.com/t?e={picc}&enc={file}&c={mac}", "secret:0123456!!", true),
        ("https://example.com/t?e={picc}{mac}", nil, true),
        ("https://example.com/t?e={picc}{file}{mac}", "secret:0123456!!", true),
        ("https://example.com/t?e={picc}{file}{mac}", "0123456789abcdef0123456789ABCDEF", true),
        ("https://t.example/{picc}/{mac}", nil, true),
        ("https://t.example/{picc}{mac}", nil, true),
        ("https://t.example/{picc}/{file}/{mac}", "secret:0123456!!", true),
        ("https://t.example/b/{picc}?v=1&c={mac}", nil, true),
        ("https://t.example/b/{picc}?v=1&f={file}&c={mac}&w=2", "secret:0123456!!", true),
        ("https://t.example/{uid}/{ctr}?c={mac}", nil, true),
        ("https://t.example/t?m={uid}{ctr}{mac}", nil, true),
        ("https://t.example/{uid}x{ctr}?f={file}&c={mac}", "secret:0123456!!", true),
        ("https://t.example/{picc}{mac}", nil, false),
        ("https://t.example/t?e={picc}&c={mac}", nil, false),
        ("https://t.example/{uid}/{mac}", nil, false),
        ("https://t.example/t?u={uid}{mac}", nil, false),
    ]

    @Test("provision, read three taps, verify each by the template", arguments: layouts)
    func roundTrip(template: String, fileData: String?, counter: Bool) throws {
        let model = NTAG424TagModel()
        let transport = APDUTransport(channel: EmulatedChannel(card: ApplicationHost(applications: [model], uid: model.uid)))
        let tag = try #require(try NTAG424Tag.detect(transport))
        let plan = try SUNURLTemplate(template, fileData: fileData.map { Array($0.utf8) }, mirrorsCounter: counter)
        let first = try tag.provisionSDM(plan, key: Self.zero) { _ in }
        let parser = try SUNTemplate(url: template)
        let keys = try SDMKeys(metaRead: Self.zero, fileRead: Self.zero)
        var served = [first.served]
        for _ in 0..<2 {
            let bytes = try tag.plainRead(length: plan.fileContents.count)
            guard case let .uri(url)? = try NDEFMessage(decoding: Array(bytes.dropFirst(2))).records.first?.content() else { Issue.record("no URI"); return }
            served.append(url)
        }
        var counters: [Int?] = []
        for url in served {
            #expect(NTAG424Tag.sameShape(url, plan.shape), "\(url)")
            let r = try SUNMessage(url: url, template: parser).verify(keys: keys)
            #expect(r.uid == model.uid, "\(url)")
            #expect(r.fileData == fileData.map { Array($0.utf8) }, "\(url)")
            counters.append(r.counter)
        }
        #expect(counters == (counter ? [1, 2, 3] : [nil, nil, nil]), "\(template)")
        // The MAC input is the file data's text up to the MAC (empty without it), as the settings say.
        let s = plan.settings
        #expect(s.macInputOffset == (s.encOffset ?? s.macOffset))
        // The same tap under another file-read key does not verify.
        #expect(throws: SUNError.self) { try SUNMessage(url: served[2], template: parser).verify(keys: try SDMKeys(metaRead: Self.zero, fileRead: [UInt8](repeating: 7, count: 16))) }
    }

    @Test("what provisioning refuses before writing: one line each", arguments: [
        ("https://example.com/" + String(repeating: "a", count: 200) + "?e={picc}{file}{mac}", "NDEF file holds"),
        ("https://t.example/{uid}/{mac}", "needs both {uid} and {ctr}"),
        ("https://t.example/?e={picc}&c={mac}#{file}", "fragment"),
        ("https://{picc}.t.example/?c={mac}", "host"),
        ("https://t.example/{mac}/{file}/{picc}", "comes after {mac}"),
        ("https://t.example/{picc}{mac}{picc}", "twice"),
    ])
    func refused(template: String, reason: String) {
        do {
            _ = try SUNURLTemplate(template, fileData: template.contains("{file}") ? [UInt8](repeating: 0x41, count: 32) : nil)
            Issue.record("accepted \(template)")
        } catch let e as NTAG424Error {
            #expect(e.message.contains(reason) && !e.message.contains("\n"), "\(e.message)")
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test("the options' checks: a file-read key, file data only with {file} and in 16-byte blocks, no counter means no {ctr}, {file} or limit")
    func optionChecks() {
        let cases: [(() throws -> SUNURLTemplate, String)] = [
            ({ try SUNURLTemplate("https://t.example/{picc}/{file}/{mac}", fileReadKey: 0x0F) }, "file-read key"),
            ({ try SUNURLTemplate("https://t.example/{picc}/{mac}", metaReadKey: 0x0E) }, "meta-read key"),
            ({ try SUNURLTemplate("https://t.example/{picc}/{mac}", fileData: Array("0123456789abcdef".utf8)) }, "no {file}"),
            ({ try SUNURLTemplate("https://t.example/{picc}/{file}/{mac}", fileData: Array("0123456789".utf8)) }, "multiple of 16"),
            ({ try SUNURLTemplate("https://t.example/{picc}/{file}/{mac}", mirrorsCounter: false) }, "need the read counter"),
            ({ try SUNURLTemplate("https://t.example/{picc}/{mac}", counterLimit: 10, mirrorsCounter: false) }, "need the read counter"),
            ({ try SUNURLTemplate("https://t.example/{uid}/{ctr}/{mac}", mirrorsCounter: false) }, "{uid} alone"),
        ]
        for (make, reason) in cases {
            do { _ = try make(); Issue.record("accepted: \(reason)") } catch let e as NTAG424Error {
                #expect(e.message.contains(reason), "\(e.message)")
            } catch { Issue.record("\(error)") }
        }
    }

    @Test("the emulator refuses SDM settings the datasheet does not allow (Table 69/71): file data outside the MAC's input, before it, or without the UID and counter")
    func emulatorConditions() throws {
        let model = NTAG424TagModel()
        let transport = APDUTransport(channel: EmulatedChannel(card: ApplicationHost(applications: [model], uid: model.uid)))
        let tag = try #require(try NTAG424Tag.detect(transport))
        let plan = try SUNURLTemplate("https://t.example/t?e={picc}&f={file}&c={mac}", fileData: Array("0123456789abcdef".utf8))
        try Type4Tag.detect(transport).writeNDEF(Array(plan.fileContents.dropFirst(2)))
        var bad: [SDMSettings] = []
        var inputAfterFile = plan.settings
        inputAfterFile.macInputOffset = (plan.settings.encOffset ?? 0) + 1
        bad.append(inputAfterFile)
        var macInsideFile = plan.settings
        macInsideFile.macOffset = (plan.settings.encOffset ?? 0) + 16
        macInsideFile.macInputOffset = plan.settings.encOffset
        bad.append(macInsideFile)
        var noCounter = plan.settings
        noCounter.mirrorsCounter = false
        bad.append(noCounter)
        for settings in bad {
            try tag.authenticate(keyNumber: 0, key: Self.zero)
            var file = try tag.fileSettings(NTAG424Tag.ndefFile)
            file.sdm = settings
            do { try tag.changeFileSettings(NTAG424Tag.ndefFile, to: file); Issue.record("accepted \(settings)") } catch let e as NTAG424Error {
                #expect(e.statusWord == StatusWord(rawValue: 0x919E), "\(e.message)")
            }
        }
        try tag.authenticate(keyNumber: 0, key: Self.zero)
        var good = try tag.fileSettings(NTAG424Tag.ndefFile)
        good.sdm = plan.settings
        try tag.changeFileSettings(NTAG424Tag.ndefFile, to: good)
    }
}
