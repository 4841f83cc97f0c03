import ISO7816
import NDEF
@testable import NFCTags
import Testing
import VirtualCard

/// The card model VirtualCard brings (written apart from this library, from the same public
/// sources), and the library's reader side.
typealias DESFireModel = VirtualCard.DESFireCard
typealias DESFireReader = NFCTags.DESFireCard

/// A transport straight into `model`, counting exchanges.
func desfireTransport(_ model: DESFireModel) -> (APDUTransport, EmulatedChannel) {
    let channel = EmulatedChannel(card: model)
    return (APDUTransport(channel: channel), channel)
}

/// The library against the independently written card model: every scheme with every key type it
/// takes, every file type in every communication mode, transactions, ChangeKey both ways, on EV1,
/// EV2 and EV3. What the library reads back must be what the model holds.
@Suite("DESFire library against the card model: schemes, key types, files, modes, keys")
struct DESFireEmulatorTests {
    static let modes: [CommMode] = [.plain, .mac, .full]

    /// The schemes the library offers for a family on a generation.
    static func schemes(_ family: DESFireKeyFamily, _ generation: DESFireModel.Generation) -> [DESFireAuthenticationScheme] {
        switch family {
        case .des: return [.legacy, .iso]
        case .tdes3: return [.iso]
        case .aes: return generation == .ev1 ? [.aes] : [.aes, .ev2]
        }
    }

    @Test("every scheme and key type, every file type in plain, MAC and full, on EV1, EV2 and EV3", arguments: DESFireModel.Generation.allCases)
    func everything(_ generation: DESFireModel.Generation) throws {
        let model = DESFireModel.factory(DESFireModel.Chip(generation: generation))
        let (transport, _) = desfireTransport(model)
        let card = try #require(try DESFireReader.detect(transport))
        #expect(card.version?.generation.rawValue == generation.rawValue)
        try card.selectApplication(.picc)
        try card.authenticate(keyNumber: 0, key: .zero(.des))
        #expect(try card.cardUID() == model.image.chip.uid)
        let families: [(DESFireKeyFamily, DESFireKeyType, UInt32)] = [(.des, .tdes2, 0x00DE16), (.tdes3, .tdes3, 0x00DE24), (.aes, .aes, 0x00AE16)]
        for (family, type, aidNumber) in families {
            let aid = try #require(DESFireApplicationID(rawValue: aidNumber))
            try card.selectApplication(.picc)
            try card.authenticate(keyNumber: 0, key: .zero(.des))
            try card.createApplication(DESFireApplicationSpec(aid: aid, keyCount: 3, family: family))
            try card.selectApplication(aid)
            let zero = DESFireKey.zero(type == .tdes2 ? .des : type)
            try card.authenticate(keyNumber: 0, key: zero)
            // Files 0-14: five types in three modes, every right key 0 (so the mode applies).
            for (m, mode) in Self.modes.enumerated() {
                let kinds: [DESFireFileSpec.Kind] = [.standardData(size: 100), .backupData(size: 64), .value(lower: -50, upper: 1000, initial: 20, limitedCredit: true),
                                                     .linearRecord(recordSize: 12, maxRecords: 4), .cyclicRecord(recordSize: 20, maxRecords: 3)]
                for (k, kind) in kinds.enumerated() {
                    try card.createFile(DESFireFileSpec(number: UInt8(m * 5 + k), kind: kind, commMode: mode, access: DESFireAccessRights(0x0000)))
                }
            }
            for scheme in Self.schemes(family, generation) {
                let label = "\(generation) \(type) \(scheme)"
                try card.selectApplication(aid)
                try card.authenticate(keyNumber: 0, key: zero, scheme: scheme)
                #expect(card.session?.scheme == scheme, "\(label)")
                for (m, mode) in Self.modes.enumerated() {
                    let base = UInt8(m * 5)
                    let seed = Int(base) + Int(scheme.instruction)
                    let data: [UInt8] = (0..<100).map { (i: Int) -> UInt8 in UInt8(truncatingIfNeeded: i * 7 + seed) }
                    let s0 = try card.fileSettings(base)
                    #expect(s0.commMode == mode && s0.size == 100, "\(label) \(mode)")
                    #expect(try card.change(base, settings: s0, .data(data, offset: 0)).committed == false)
                    #expect(try card.contents(base, settings: s0) == .data(data), "\(label) \(mode) standard")
                    #expect(Self.modelFile(model, aidNumber, base) == .standard(data), "\(label) \(mode): the model holds what was written")
                    let s1 = try card.fileSettings(base + 1)
                    let backup = Array(data.prefix(64).reversed())
                    #expect(try card.change(base + 1, settings: s1, .data(backup, offset: 0)).committed == true)
                    #expect(try card.contents(base + 1, settings: s1) == .data(backup), "\(label) \(mode) backup")
                    let s2 = try card.fileSettings(base + 2)
                    let before = try card.getValue(base + 2, mode: mode)
                    try card.change(base + 2, settings: s2, .credit(10))
                    try card.change(base + 2, settings: s2, .debit(4))
                    try card.change(base + 2, settings: try card.fileSettings(base + 2), .limitedCredit(1))
                    #expect(try card.getValue(base + 2, mode: mode) == before + 7, "\(label) \(mode) value")
                    for f in [base + 3, base + 4] {
                        let s = try card.fileSettings(f)
                        let size = s.records?.recordSize ?? 0
                        try card.change(f, settings: s, .record(Array(data.prefix(size)), offset: 0))
                        let after = try card.fileSettings(f)
                        guard case let .records(r)? = try? card.contents(f, settings: after) else {
                            Issue.record("\(label) \(mode) records of file \(f)")
                            continue
                        }
                        #expect(r.last == Array(data.prefix(size)), "\(label) \(mode) record file \(f)")
                    }
                }
                // Another key (new ⊕ old, CRC of the new key), proved; then back, by key 0.
                let k1 = try DESFireKey(type, (0..<type.keySize).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) }, version: 3)
                try card.changeKey(1, to: k1, from: zero)
                #expect(card.session?.keyNumber == 1, "\(label): proved by authenticating with key 1")
                #expect(Self.modelKey(model, aidNumber, 1) == k1.stored, "\(label): the model holds key 1")
                try card.selectApplication(aid)
                try card.authenticate(keyNumber: 0, key: zero, scheme: scheme)
                // A wrong old value is refused by the card; nothing changes.
                #expect(throws: DESFireError.self) { try card.changeKey(1, to: zero, from: zero) }
                #expect(Self.modelKey(model, aidNumber, 1) == k1.stored, "\(label): a wrong old key changed nothing")
                try card.selectApplication(aid)
                try card.authenticate(keyNumber: 0, key: zero, scheme: scheme)
                try card.changeKey(1, to: zero, from: k1)
                // The authenticated key itself (the session ends), and back.
                let k0 = try DESFireKey(type, (0..<type.keySize).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ 5) }, version: 9)
                try card.selectApplication(aid)
                try card.authenticate(keyNumber: 0, key: zero, scheme: scheme)
                #expect(throws: DESFireError.self) { try card.changeKey(0, to: k0, from: nil) }
                try card.changeKey(0, to: k0, from: nil, confirmed: true)
                let version0 = try card.keyVersion(0)
                #expect(Self.modelKey(model, aidNumber, 0) == k0.stored && version0 == k0.version, "\(label): key 0 and its version")
                try card.changeKey(0, to: zero, from: nil, confirmed: true)
            }
        }
    }

    static func modelFile(_ model: DESFireModel, _ aid: UInt32, _ file: UInt8) -> DESFireModel.FileContent? {
        model.image.application(aid)?.file(file)?.content
    }

    static func modelKey(_ model: DESFireModel, _ aid: UInt32, _ number: Int) -> [UInt8]? {
        guard let keys = model.image.application(aid)?.keys, number < keys.count else { return nil }
        return keys[number].bytes
    }

    @Test("a transit-like card without keys: applications and files listed, free files read, the rest named as refused")
    func transitWithoutKeys() throws {
        let model = DESFireModel(image: .transit())
        let (transport, _) = desfireTransport(model)
        let card = try #require(try DESFireReader.detect(transport))
        let survey = try card.survey(readContents: true)
        #expect(survey.problem == nil && survey.applications.count == 2)
        let app = try #require(survey.applications.first)
        let files = try #require(app.files)
        #expect(files.map(\.number) == [1, 2, 3, 4, 5])
        #expect(files[0].contents == .data(Array("TRANSIT CARD 0001".utf8) + [UInt8](repeating: 0, count: 15)))
        #expect(files[2].contents.map { if case let .records(r) = $0 { return r.count } else { return -1 } } == 3)
        #expect(files[3].contents == nil, "the enciphered file needs key 1")
        // The value is free to see through GetValue's free flag, not the read right.
        #expect(files[1].settings?.limits?.freeGetValue == true)
        try card.selectApplication(app.aid)
        #expect(try card.getValue(2, mode: .plain) == 2500)
        let hidden = survey.applications[1]
        #expect(hidden.files == nil && hidden.problem?.contains("91") == true, "\(hidden.problem ?? "")")
        // With the application's key the enciphered file reads too.
        let key = try DESFireKey(.aes, DESFireModel.Image.transitApplicationKeys[1].bytes, version: 1)
        let keyed = try card.survey(readContents: true, keys: [app.aid: (1, key)])
        #expect(keyed.applications[0].files?[3].contents == .data(Array("operator secret!".utf8)))
    }

    @Test("ndef-format (AN11004) on a factory card: then a Type 4 tag, written and read by the Type 4 procedure; again: nothing to do",
          arguments: DESFireModel.Storage.allCases)
    func ndef(_ storage: DESFireModel.Storage) throws {
        let model = DESFireModel.factory(DESFireModel.Chip(storage: storage))
        let (transport, _) = desfireTransport(model)
        let card = try #require(try DESFireReader.detect(transport))
        let report = try card.formatForNDEF()
        #expect(report.done.count == 4 && report.alreadyDone.isEmpty, "\(report)")
        let type4 = try Type4Tag.detect(transport)
        #expect(type4.capacity == report.capacity)
        let message = try NDEFMessage(records: [.uri("https://example.com/desfire")]).encoded()
        try type4.writeNDEF(message)
        #expect(try Type4Tag.detect(transport).readNDEF() == message)
        let again = try card.formatForNDEF()
        #expect(again.done.isEmpty && again.alreadyDone.count == 4)
        #expect(try Type4Tag.detect(transport).readNDEF() == message)
    }

    @Test("a card another program left in an EV2 session (PC/SC does not reset it): detect ends the session and proves the card")
    func staleSession() throws {
        let model = DESFireModel.factory(DESFireModel.Chip(generation: .ev2))
        model.reset()
        let channel = CutChannel(card: model, cutAfter: nil)
        let first = try #require(try DESFireReader.detect(APDUTransport(channel: channel)))
        try first.selectApplication(.picc)
        try first.createApplication(DESFireApplicationSpec(aid: DESFireApplicationID(rawValue: 0x00F001)!, keyCount: 1, family: .aes))
        try first.selectApplication(DESFireApplicationID(rawValue: 0x00F001)!)
        try first.authenticate(keyNumber: 0, key: .zero(.aes))
        #expect(first.session?.scheme == .ev2 && model.isAuthenticated)
        // A second program on the same card, no reset in between.
        let second = try #require(try DESFireReader.detect(APDUTransport(channel: channel)))
        #expect(second.version?.generation == .ev2 && !model.isAuthenticated && second.application == .picc)
    }

    @Test("refusals are typed: no such application, file, key; permission denied; boundary; duplicates")
    func refusals() throws {
        let model = DESFireModel(image: .transit())
        let (transport, _) = desfireTransport(model)
        let card = try #require(try DESFireReader.detect(transport))
        func kind(_ body: () throws -> Void) -> DESFireError.Kind? {
            do { try body() } catch let e as DESFireError { return e.kind } catch { return nil }
            return nil
        }
        #expect(kind { try card.selectApplication(DESFireApplicationID(rawValue: 0x123456)!) } == .applicationNotFound)
        try card.selectApplication(DESFireApplicationID(rawValue: DESFireModel.Image.transitAID)!)
        #expect(kind { _ = try card.fileSettings(9) } == .fileNotFound)
        // A file that needs a key, read without one: "the authentication status does not allow it".
        #expect(kind { _ = try card.readData(4, length: 16, mode: .full) } == .authenticationError)
        #expect(kind { _ = try card.readData(1, offset: 30, length: 10, mode: .plain) } == .boundaryError)
        #expect(kind { try card.authenticate(keyNumber: 7, key: .zero(.aes)) } == .noSuchKey)
        #expect(kind { try card.authenticate(keyNumber: 1, key: .zero(.aes)) } == .authenticationError)
        try card.selectApplication(.picc)
        #expect(kind { try card.createApplication(DESFireApplicationSpec(aid: DESFireApplicationID(rawValue: DESFireModel.Image.transitAID)!, keyCount: 1, family: .aes)) } != nil)
    }
}
