import ISO7816
@testable import NFCTags
import Testing
import VirtualCard

/// The library on DESFire cards that break a rule of their data sheet
/// (`VirtualCard.DESFireCard.Hostile`): what it reports stays true of the card.
@Suite("DESFire library on hostile cards: committed means read back, a size that lies is refused")
struct DESFireHostileCardTests {
    static let aid = DESFireApplicationID(rawValue: 0x00F001)!
    static let appKey = DESFireKey.zero(.aes)

    /// Key 0 may do everything; key 1 may write and credit file 2 (backup) and add records to
    /// file 4, and read neither.
    static func model(_ generation: DESFireModel.Generation, _ hostile: DESFireModel.Hostile?) -> DESFireModel {
        typealias F = DESFireModel.File
        let all = DESFireModel.AccessRights(0x0000), writeOnly = DESFireModel.AccessRights(read: 0, write: 1, readWrite: 0, change: 0)
        let app = DESFireModel.Application(aid: 0x00F001, keyType: .aes, keyCount: 2, files: [
            F(number: 1, commMode: .full, access: all, content: .standard([UInt8](repeating: 0x11, count: 80))),
            F(number: 2, commMode: .mac, access: writeOnly, content: .backup([UInt8](repeating: 0x22, count: 48))),
            F(number: 3, commMode: .mac, access: all, content: .value(DESFireModel.ValueFile(value: 100, lowerLimit: 0, upperLimit: 1000))),
            F(number: 4, commMode: .full, access: all, content: .linearRecord(DESFireModel.RecordFile(recordSize: 8, maxRecords: 3, records: [[1, 1, 1, 1, 1, 1, 1, 1]]))),
            // Free to write, read with key 1 alone: key 0's write goes plain and cannot be read back.
            F(number: 5, commMode: .mac, access: DESFireModel.AccessRights(read: 1, write: 0xE, readWrite: 1, change: 0), content: .standard([UInt8](repeating: 0x55, count: 8))),
        ])
        return DESFireModel(image: DESFireModel.Image(chip: DESFireModel.Chip(generation: generation), applications: [app]), hostile: hostile)
    }

    static func open(_ model: DESFireModel, key: UInt8 = 0) throws -> DESFireReader {
        let card = try #require(try DESFireReader.detect(desfireTransport(model).0))
        try card.selectApplication(aid)
        try card.authenticate(keyNumber: key, key: appKey)
        return card
    }

    @Test("an honest card: committed and read back; with a key that may not read the file, committed but not read back",
          arguments: [DESFireModel.Generation.ev1, .ev2])
    func honest(_ generation: DESFireModel.Generation) throws {
        let model = Self.model(generation, nil)
        let card = try Self.open(model)
        let receipt = try card.change(3, settings: card.fileSettings(3), .credit(5))
        #expect(receipt.committed && receipt.readBack && receipt.proven)
        #expect(try card.change(4, settings: card.fileSettings(4), .record([7, 7], offset: 2)).readBack)
        #expect(try card.change(2, settings: card.fileSettings(2), .data([9, 9], offset: 0)).readBack)
        let writer = try Self.open(model, key: 1)
        let blind = try writer.change(2, settings: writer.fileSettings(2), .data([8, 8], offset: 4))
        // Not read back, and proven all the same: the commit's answer carries the session's MAC.
        #expect(blind.committed && !blind.readBack && blind.proven)
        #expect(model.image.application(0x00F001)?.file(2)?.content == .backup([9, 9, 0x22, 0x22, 8, 8] + [UInt8](repeating: 0x22, count: 42)))
    }

    @Test("commit ignored: the read-back finds the change missing: a value read back as before is uncommitted, the rest 'not as answered', never committed",
          arguments: [DESFireModel.Generation.ev1, .ev2])
    func commitIgnored(_ generation: DESFireModel.Generation) throws {
        let changes: [(UInt8, DESFireFileChange)] = [(2, .data([9, 9], offset: 0)), (3, .credit(5)), (3, .debit(5)), (4, .record([7], offset: 0)), (4, .clearRecords)]
        for (file, change) in changes {
            let model = Self.model(generation, .commitIgnored)
            let before = model.image
            let card = try Self.open(model)
            do {
                let receipt = try card.change(file, settings: card.fileSettings(file), change)
                Issue.record("\(change.name) of file \(file): reported \(receipt), the card holds the old contents")
            } catch let e as DESFireInterrupted {
                // Only a value read back as before is the old one; other bytes or records than
                // those written say the card did not make the change, and claim nothing more.
                #expect(e.state == (file == 3 ? .uncommitted : .notAsAnswered), "\(change.name) of file \(file): \(e)")
                #expect("\(e)".contains("did not make the change"), "\(e)")
            }
            #expect(model.image == before)
        }
    }

    @Test("a size announced larger or smaller than the file: the whole-file read refuses it, naming both; a survey notes it",
          arguments: [DESFireModel.Hostile.fileSizeLarger, .fileSizeSmaller])
    func sizes(_ hostile: DESFireModel.Hostile) throws {
        for generation in [DESFireModel.Generation.ev1, .ev2] {
            let card = try Self.open(Self.model(generation, hostile))
            let settings = try card.fileSettings(1)
            #expect(throws: DESFireError.self) { try card.contents(1, settings: settings) }
            do { _ = try card.contents(1, settings: settings) } catch let e as DESFireError {
                #expect(e.kind == .boundaryError && e.status == nil && e.message.contains("announces \(settings.size ?? 0) bytes") && e.message.contains("brought 80"), "\(e)")
            }
            let survey = try card.survey(readContents: true, keys: [Self.aid: (0, Self.appKey)])
            let file = survey.applications.first?.files?.first { $0.number == 1 }
            #expect(file?.contents == nil && file?.problem?.contains("brought 80") == true, "\(String(describing: file))")
            #expect(survey.applications.first?.files?.first { $0.number == 3 }?.contents == .value(100))
        }
    }

    @Test("EV2 without EV2First: the refusal names the AES scheme as the way out; AA then reads")
    func ev2WithoutEV2First() throws {
        let model = Self.model(.ev2, .ev2WithoutEV2First)
        let card = try #require(try DESFireReader.detect(desfireTransport(model).0))
        try card.selectApplication(Self.aid)
        do {
            try card.authenticate(keyNumber: 0, key: Self.appKey)
            Issue.record("EV2First taken by a card that refuses it")
        } catch let e as DESFireError {
            #expect(e.kind == .illegalCommand && e.message.contains("AES scheme (AA)"), "\(e)")
        }
        try card.selectApplication(Self.aid)
        try card.authenticate(keyNumber: 0, key: Self.appKey, scheme: .aes)
        #expect(try card.contents(1, settings: card.fileSettings(1)) == .data([UInt8](repeating: 0x11, count: 80)))
    }

    /// A keyless middle that answers 91 00 in place of the card's 91 AF to a command's first
    /// frame (the second review of issue 49): the rest never leaves.
    final class EarlyEnd: EmulatedCard, @unchecked Sendable {
        let card: DESFireModel
        init(_ card: DESFireModel) { self.card = card }
        var atr: [UInt8] { card.atr }
        func reset() { card.reset() }
        func process(_ apdu: [UInt8]) -> [UInt8] {
            let answer = card.process(apdu)
            return apdu.count > 1 && apdu[1] == 0x3D && answer == [0x91, 0xAF] ? [0x91, 0x00] : answer
        }
    }

    @Test("91 00 before a write's last frame: no 'written', the state names nothing run, the file unchanged", arguments: [DESFireModel.Generation.ev1, .ev2])
    func earlyEnd(_ generation: DESFireModel.Generation) throws {
        let model = Self.model(generation, nil)
        let before = model.image
        let card = try #require(try DESFireReader.detect(APDUTransport(channel: EmulatedChannel(card: EarlyEnd(model)))))
        try card.selectApplication(Self.aid)
        try card.authenticate(keyNumber: 0, key: Self.appKey)
        do {
            let receipt = try card.change(1, settings: card.fileSettings(1), .data([UInt8](repeating: 0x77, count: 80), offset: 0))
            Issue.record("reported \(receipt) after 91 00 to the first of two frames")
        } catch let e as DESFireInterrupted {
            #expect(e.state == .unchanged && "\(e)".contains("before the command's last frame"), "\(e)")
        }
        #expect(model.image == before)
    }

    @Test("a free file written with a key that holds no write right: the write goes plain, so EV2 proves nothing and says so; EV1's CMAC proves it",
          arguments: [DESFireModel.Generation.ev1, .ev2])
    func freeWrite(_ generation: DESFireModel.Generation) throws {
        let model = Self.model(generation, nil)
        let card = try Self.open(model)
        let settings = try card.fileSettings(5)
        #expect(card.writeMode(settings) == .plain)
        let receipt = try card.change(5, settings: settings, .data([9, 9], offset: 0))
        #expect(!receipt.readBack && receipt.proven == (generation == .ev1), "\(receipt)")
    }
}
