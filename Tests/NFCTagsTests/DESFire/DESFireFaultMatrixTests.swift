import ISO7816
import NDEF
@testable import NFCTags
import Testing
import VirtualCard

/// Every operation that changes a DESFire, cut after every exchange, in both ways a pull takes the
/// exchange in flight (never run, or run with its answer lost), then the card powered off (the
/// model drops its session and every uncommitted change, as a chip does): the card holds the old
/// state or the new one, never anything else, and what the library said about it is true —
/// `.unchanged` and `.uncommitted` mean old, a receipt means new, `keyHolding` names the key the
/// card holds.
@Suite("DESFire fault matrix: writes, commits, key changes, create, delete, format, NDEF format cut after every exchange")
struct DESFireFaultMatrixTests {
    static let aid = DESFireApplicationID(rawValue: 0x00F001)!
    static let appKey = DESFireKey.zero(.aes)

    /// An EV1 card with one AES application holding every file type (every right key 0, MAC mode
    /// for the data so that the session matters).
    static func start(_ generation: DESFireModel.Generation = .ev1) -> DESFireModel.Image {
        typealias F = DESFireModel.File
        let rights = DESFireModel.AccessRights(0x0000)
        let app = DESFireModel.Application(aid: 0x00F001, keyType: .aes, keyCount: 2, files: [
            F(number: 1, commMode: .mac, access: rights, content: .standard([UInt8](repeating: 0x11, count: 120))),
            F(number: 2, commMode: .full, access: rights, content: .backup([UInt8](repeating: 0x22, count: 64))),
            F(number: 3, commMode: .mac, access: rights, content: .value(DESFireModel.ValueFile(value: 100, lowerLimit: 0, upperLimit: 1000))),
            F(number: 4, commMode: .plain, access: rights, content: .cyclicRecord(DESFireModel.RecordFile(recordSize: 8, maxRecords: 3, records: [[1, 1, 1, 1, 1, 1, 1, 1]]))),
        ])
        return DESFireModel.Image(chip: DESFireModel.Chip(generation: generation), applications: [app])
    }

    /// Runs `operation` on a copy of `image` cut after `n` exchanges; returns the model (powered
    /// off and on again) and what the operation threw.
    static func cut(_ image: DESFireModel.Image, after n: Int?, _ mode: CutChannel.Mode,
                    _ operation: (DESFireReader) throws -> Void) -> (DESFireModel, (any Error)?) {
        let model = DESFireModel(image: image)
        let channel = CutChannel(card: model, cutAfter: n, mode: mode)
        var failure: (any Error)?
        do {
            let card = try DESFireReader.detect(APDUTransport(channel: channel))
            guard let card else { return (model, nil) }
            try operation(card)
        } catch {
            failure = error
        }
        model.reset()
        return (model, failure)
    }

    /// How many exchanges the whole operation takes.
    static func total(_ image: DESFireModel.Image, _ operation: (DESFireReader) throws -> Void) throws -> Int {
        let model = DESFireModel(image: image)
        let channel = CutChannel(card: model, cutAfter: nil)
        try operation(try #require(try DESFireReader.detect(APDUTransport(channel: channel))))
        return channel.exchanges
    }

    static func enter(_ card: DESFireReader) throws {
        try card.selectApplication(aid)
        try card.authenticate(keyNumber: 0, key: appKey)
    }

    static func content(_ model: DESFireModel, _ file: UInt8) -> DESFireModel.FileContent? {
        model.image.application(0x00F001)?.file(file)?.content
    }

    @Test("changes to every file type, committed where transactional: old or new, and the library's word for it holds",
          arguments: [UInt8(1), 2, 3, 4])
    func changes(_ file: UInt8) throws {
        let image = Self.start()
        let old = image.application(0x00F001)?.file(file)?.content
        let change: DESFireFileChange
        switch file {
        case 1: change = .data((0..<120).map { UInt8($0) }, offset: 0)
        case 2: change = .data([UInt8](repeating: 0x99, count: 64), offset: 0)
        case 3: change = .credit(50)
        default: change = .record([9, 9, 9, 9, 9, 9, 9, 9], offset: 0)
        }
        let operation = { (card: DESFireReader) throws in
            try Self.enter(card)
            _ = try card.change(file, settings: card.fileSettings(file), change)
        }
        let total = try Self.total(image, operation)
        let (done, _) = Self.cut(image, after: nil, .beforeExecution, operation)
        let new = Self.content(done, file)
        #expect(new != old)
        var cases = 0
        for mode in CutChannel.Mode.allCases {
            for n in 0..<total {
                let (model, error) = Self.cut(image, after: n, mode, operation)
                let now = Self.content(model, file)
                cases += 1
                #expect(now == old || now == new, "file \(file), cut after \(n) (\(mode)): neither old nor new")
                if let e = error as? DESFireInterrupted {
                    switch e.state {
                    case .unchanged, .uncommitted: #expect(now == old, "file \(file), cut after \(n) (\(mode)): \(e.state) but the file changed")
                    case .done: #expect(now == new)
                    case .notAsAnswered: #expect(now != new, "file \(file), cut after \(n) (\(mode)): not as answered, but the file holds the change")
                    case .commitUnknown, .partlyWritten, .doneOrNot: break
                    }
                } else if error == nil {
                    #expect(now == new, "file \(file), cut after \(n): no error, but the change is not there")
                }
            }
        }
        print("DESFire change of file \(file): \(total) exchanges, \(cases) cut cases")
    }

    @Test("ChangeKey of another key and of the authenticated key: the card holds the old or the new key, and keyHolding says which",
          arguments: [UInt8(1), 0])
    func keyChanges(_ number: UInt8) throws {
        let image = Self.start()
        let new = try DESFireKey(.aes, (0..<16).map { UInt8($0 * 11 + 7) }, version: 4)
        let operation = { (card: DESFireReader) throws in
            try Self.enter(card)
            try card.changeKey(number, to: new, from: Self.appKey, confirmed: true)
        }
        let total = try Self.total(image, operation)
        for mode in CutChannel.Mode.allCases {
            for n in 0..<total {
                let (model, _) = Self.cut(image, after: n, mode, operation)
                guard let keys = model.image.application(0x00F001)?.keys else { Issue.record("the application is gone"); continue }
                let held = keys[Int(number)].bytes
                #expect(held == Self.appKey.stored || held == new.stored, "key \(number), cut after \(n) (\(mode)): neither old nor new")
                #expect(keys[Int(1 - number)].bytes == Self.appKey.stored, "key \(number), cut after \(n): the other key changed")
                // After the pull: which one holds, by trying both.
                let (transport, _) = desfireTransport(model)
                let card = try #require(try DESFireReader.detect(transport))
                let found = try card.keyHolding(number, of: Self.aid, candidates: [Self.appKey, new])
                #expect(found?.stored == held, "key \(number), cut after \(n) (\(mode)): keyHolding named the wrong key")
            }
        }
    }

    @Test("create an application and a file, delete an application, change key settings, format: done whole or not at all")
    func atomicCommands() throws {
        let spec = DESFireApplicationSpec(aid: DESFireApplicationID(rawValue: 0x00F002)!, keyCount: 1, family: .aes)
        let operations: [(String, (DESFireReader) throws -> Void, (DESFireModel) -> Bool, (DESFireModel) -> Bool)] = [
            ("CreateApplication", { card in
                try card.selectApplication(.picc)
                try card.authenticate(keyNumber: 0, key: .zero(.des))
                try card.atomically("CreateApplication") { try card.createApplication(spec) }
            }, { $0.image.application(0x00F002) == nil }, { $0.image.application(0x00F002) != nil }),
            ("CreateStdDataFile", { card in
                try Self.enter(card)
                try card.atomically("CreateStdDataFile") { try card.createFile(DESFireFileSpec(number: 9, kind: .standardData(size: 32), access: DESFireAccessRights(0xEEEE))) }
            }, { $0.image.application(0x00F001)?.file(9) == nil }, { $0.image.application(0x00F001)?.file(9) != nil }),
            ("DeleteApplication", { card in
                try card.selectApplication(.picc)
                try card.authenticate(keyNumber: 0, key: .zero(.des))
                try card.atomically("DeleteApplication") { try card.deleteApplication(Self.aid, confirmed: true) }
            }, { $0.image.application(0x00F001) != nil }, { $0.image.application(0x00F001) == nil }),
            ("ChangeKeySettings", { card in
                try Self.enter(card)
                try card.atomically("ChangeKeySettings") { try card.changeKeySettings(DESFireKeySettings(rawValue: 0x0B), confirmed: false) }
            }, { $0.image.application(0x00F001)?.keySettings == 0x0F }, { $0.image.application(0x00F001)?.keySettings == 0x0B }),
            ("FormatPICC", { card in
                try card.selectApplication(.picc)
                try card.authenticate(keyNumber: 0, key: .zero(.des))
                try card.atomically("FormatPICC") { try card.formatPICC(confirmed: true) }
            }, { $0.image.applications.count == 1 }, { $0.image.applications.isEmpty }),
        ]
        let image = Self.start()
        for (name, operation, isOld, isNew) in operations {
            let total = try Self.total(image, operation)
            for mode in CutChannel.Mode.allCases {
                for n in 0..<total {
                    let (model, error) = Self.cut(image, after: n, mode, operation)
                    #expect(isOld(model) || isNew(model), "\(name), cut after \(n) (\(mode)): neither before nor after")
                    if let e = error as? DESFireInterrupted, e.state == .unchanged {
                        #expect(isOld(model), "\(name), cut after \(n) (\(mode)): 'unchanged' but it changed")
                    }
                }
            }
        }
    }

    @Test("ndef-format cut after every exchange: the steps it names as done are on the card, and running it again finishes")
    func ndefFormat() throws {
        let image = DESFireModel.Image.factory()
        let operation = { (card: DESFireReader) throws in _ = try card.formatForNDEF() }
        let total = try Self.total(image, operation)
        for mode in CutChannel.Mode.allCases {
            for n in 0..<total {
                let (model, error) = Self.cut(image, after: n, mode, operation)
                if let e = error as? DESFireNDEFFormatInterrupted {
                    if e.done.contains(where: { $0.hasPrefix("created application") }) { #expect(model.image.application(1) != nil) }
                    if e.done.contains(where: { $0.hasPrefix("created the CC file") }) { #expect(model.image.application(1)?.file(1) != nil) }
                }
                // Again, uncut: it finishes, and the card is an empty NDEF tag.
                let (transport, _) = desfireTransport(model)
                let card = try #require(try DESFireReader.detect(transport))
                _ = try card.formatForNDEF()
                #expect(try Type4Tag.detect(transport).readNDEF() == [], "cut after \(n) (\(mode)): not an empty NDEF tag after the rerun")
            }
        }
    }
}
