import ISO7816
import NFCTags
import Testing
import TestSupport
import VirtualCard

/// Every family through every generated reader (`ContactlessReader.Model.generated()`: READ
/// BINARY's Le form, the status word for unsupported commands, how a transparent exchange
/// reports a 4-bit ACK, silence and BER lengths and in which order, the ACR122U's ACK and
/// trailing-Le quirks, extended APDUs refused): the dialect probed as the tools probe it, the
/// message written and read, the status asked, the write cut after every exchange with the
/// do-no-harm invariant judged by the reference readers and the backup put back, the lock cut
/// after every exchange, and the pages dumped and compared with the tag's memory.
@Suite("Every reader: each family's read, status, write, restore, lock and dump through generated reader models")
struct ReaderMatrixTests {
    enum Family: Sendable, CustomStringConvertible {
        case type2(Type2TagModel.Chip), type5(ISO15693TagModel.Chip), type3(FeliCaTagModel.Chip), classic(MifareClassicModel.Chip)
        var description: String {
            switch self {
            case let .type2(c): return c.name
            case let .type5(c): return c.name
            case let .type3(c): return c.name
            case let .classic(c): return "MIFARE Classic \(c.rawValue)"
            }
        }
    }

    struct Case: Sendable, CustomStringConvertible {
        var family: Family
        var reader: ContactlessReader.Model
        var description: String { "\(family) behind a reader: \(reader)" }
    }

    static let families: [Family] = [.type2(.ntag215), .type2(.twoSectorT2T), .type2(.ultralightC), .type5(.icodeSlix), .type5(.eightByteBlocks),
                                     .type3(.liteS), .classic(.classic1K)]

    /// Every pair a real reader can serve: FeliCa needs a raw path, and the ACR122U (PN532) has
    /// no ISO 15693 (the library says so before anything is sent; checked in `unreachable`).
    static func cases() -> [Case] {
        ContactlessReader.Model.generated().flatMap { reader in
            families.compactMap { family in
                switch (family, reader.dialect) {
                case (.type3, .storageOnly), (.type5, .acr122u): return nil
                default: return Case(family: family, reader: reader)
                }
            }
        }
    }

    /// A tag's memory: bytes (Types 2, 5, Classic) or FeliCa blocks.
    enum State: Hashable { case bytes([UInt8]), blocks([Int: [UInt8]]) }

    final class Harness {
        let c: Case
        init(_ c: Case) { self.c = c }

        func model(_ state: State?) -> any NativeTagModel {
            switch (c.family, state) {
            case let (.type2(chip), .bytes(m)?): return Type2TagModel(chip: chip, memory: m)
            case let (.type2(chip), nil): return Type2TagModel(chip: chip)
            case let (.type5(chip), .bytes(m)?): return ISO15693TagModel(chip: chip, memory: m)
            case let (.type5(chip), nil): return ISO15693TagModel(chip: chip)
            case let (.type3(chip), .blocks(b)?): return FeliCaTagModel(chip: chip, blocks: b)
            case let (.type3(chip), nil): return FeliCaTagModel(chip: chip)
            case let (.classic(chip), .bytes(m)?): return MifareClassicModel(chip, memory: m)
            case let (.classic(chip), nil):
                let model = MifareClassicModel(chip)
                _ = try! MifareClassicNDEFTag.format(APDUTransport(channel: EmulatedChannel(card: ContactlessReader(.storageOnly, tag: model))), atr: model.atr)
                return model
            default: fatalError("a state of another family")
            }
        }

        func state(_ model: any NativeTagModel) -> State {
            switch model {
            case let m as Type2TagModel: return .bytes(m.contents)
            case let m as ISO15693TagModel: return .bytes(m.contents)
            case let m as FeliCaTagModel: return .blocks(m.contents)
            case let m as MifareClassicModel: return .bytes(m.contents)
            default: fatalError("unknown model")
            }
        }

        /// What a reader sees, from the bytes alone (the reference readers of the fault matrices).
        func reading(_ state: State) -> ReferenceType2.Reading {
            switch (c.family, state) {
            case let (.type2, .bytes(m)): return ReferenceType2.read(m)
            case let (.type5, .bytes(m)): return ReferenceType5.read(m)
            case let (.classic, .bytes(m)): return ReferenceClassic.read(m)
            case let (.type3, .blocks(b)): return ReferenceType3.read(b)
            default: return .broken("a state of another family")
            }
        }

        /// The tools' own path: the dialect probed (nothing reaches the tag), then detection.
        func detect(_ model: any NativeTagModel, cutAfter: Int? = nil, tolerant: Bool = false) throws -> (tag: any NDEFTag, channel: CutChannel, transport: APDUTransport) {
            model.reset()
            let channel = CutChannel(card: ContactlessReader(model: c.reader, tag: model), cutAfter: cutAfter)
            let transport = APDUTransport(channel: channel)
            let commands = usesTagCommands(atr: model.atr) ? try TagCommandChannel.open(transport: transport, readerName: "generated reader") : nil
            return (try detectNDEFTag(transport, atr: model.atr, tolerant: tolerant, commands: commands), channel, transport)
        }
    }

    func lock<T: PermanentlyLockable>(_ tag: T) throws -> Bool { try tag.makeReadOnly().refusesWrites }

    @Test("every family, every generated reader", arguments: cases())
    func everyReader(_ c: Case) throws {
        let h = Harness(c)
        // The dialect the probe finds is the reader's.
        let probeModel = h.model(nil)
        let probe = try TagCommandChannel.open(transport: APDUTransport(channel: EmulatedChannel(card: ContactlessReader(model: c.reader, tag: probeModel))), readerName: "generated reader")
        #expect(probe.dialect.rawValue == c.reader.dialect.rawValue, "\(c): probed \(probe.dialect)")

        // Write, read, status.
        let fresh = h.model(nil)
        let capacity = try h.detect(fresh).tag.capacity
        let old = patternMessage(min(capacity, 40), seed: 1), new = patternMessage(min(capacity, 90), seed: 2)
        try h.detect(fresh).tag.writeNDEF(old)
        let start = h.state(fresh)
        #expect(h.reading(start) == .message(old), "\(c): the write")
        let again = try h.detect(h.model(start))
        #expect(try again.tag.readNDEF() == old, "\(c): the read")
        #expect(again.tag.status == .readWrite, "\(c): the status")

        // The write, cut after every exchange: old, empty or new; the backup puts old back.
        var n = 0
        while true {
            let model = h.model(start)
            var backup: TagBackup?
            var finished = false
            do {
                try h.detect(model, cutAfter: n).tag.replaceNDEF(with: new) { backup = $0 }
                finished = true
            } catch {}
            let now = h.state(model)
            let seen = h.reading(now)
            #expect([.message(old), .message([]), .message(new)].contains(seen), "\(c): write cut after \(n): \(seen)")
            if finished {
                #expect(seen == .message(new), "\(c): a finished write")
                break
            }
            if let backup, now != start {
                let restored = h.model(now)
                try h.detect(restored, tolerant: true).tag.restore(backup, allowingOtherTag: false)
                #expect(h.reading(h.state(restored)) == .message(old), "\(c): restore after a write cut at \(n)")
            }
            n += 1
            if n > 400 { Issue.record("\(c): the write never finished"); break }
        }

        // The lock, cut after every exchange: the message stays; a reported lock is real; a
        // refusal changes nothing.
        n = 0
        while true {
            let model = h.model(start)
            var outcome: Result<Bool, any Error>
            do {
                guard let lockable = try h.detect(model, cutAfter: n).tag as? any PermanentlyLockable else { break }
                outcome = .success(try lock(lockable))
            } catch { outcome = .failure(error) }
            #expect(h.reading(h.state(model)) == .message(old), "\(c): lock cut after \(n)")
            if case let .success(refuses) = outcome {
                if refuses { #expect(throws: (any Error).self, "\(c): a reported lock") { try h.detect(model).tag.writeNDEF(new) } }
                break
            }
            if case let .failure(error) = outcome, !(error is CardPulled) {
                // Refused before the cut: nothing changed.
                #expect(h.state(model) == start || error is LockInterrupted, "\(c): a refused lock changed the tag: \(error)")
                break
            }
            n += 1
            if n > 400 { Issue.record("\(c): the lock never finished"); break }
        }

        // The dump: every page shown is the tag's page (and a read never leaves its sector).
        if case let .type2(chip) = c.family {
            // Every page of the dump distinct (pages past 255 too): a page shown from the wrong
            // sector, or a roll-over taken for pages, cannot match by chance.
            guard case var .bytes(memory) = start else { return }
            if chip.pages > 256 { for i in (250 * 4)..<(266 * 4) { memory[i] = UInt8(truncatingIfNeeded: i * 7 + 1) } }
            let model = h.model(.bytes(memory)) as! Type2TagModel
            let transport = APDUTransport(channel: EmulatedChannel(card: ContactlessReader(model: c.reader, tag: model)))
            let commands = try TagCommandChannel.open(transport: transport, readerName: "generated reader")
            let reach = commands.dialect == .storageOnly ? 256 : chip.pages
            let pages = chip.pages > 256 ? 250...min(265, reach - 1) : 0...(chip.pages - 1)
            let map = try Type2Tag.pageMap(transport, atr: model.atr, pages: pages, commands: commands)
            for row in map.rows {
                if let bytes = row.bytes {
                    #expect(bytes == Array(model.contents[(row.page * 4)..<(row.page * 4 + 4)]), "\(c): page \(row.page) shows \(bytes.hexString)")
                }
            }
            #expect(map.rows.map(\.page) == Array(pages), "\(c): the dump's pages")
            commands.endSession()
        }
        if case .classic = c.family {
            let model = h.model(start)
            let layout = MifareClassicLayout(.classic1K)
            let card = MifareClassicCard(transport: APDUTransport(channel: EmulatedChannel(card: ContactlessReader(model: c.reader, tag: model))), layout: layout)
            let dump = try card.dump(keys: MifareClassicKeyCandidate.publicKeys)
            guard case let .bytes(memory) = h.state(model) else { return }
            for sector in dump.sectors {
                // Trailers read with key A concealed: compared only outside them.
                for (i, block) in sector.blocks.enumerated() where block != nil && sector.firstBlock + i != layout.trailerBlock(ofSector: sector.sector) {
                    let b = sector.firstBlock + i
                    #expect(block == Array(memory[(b * 16)..<(b * 16 + 16)]), "\(c): block \(b)")
                }
            }
        }
    }

    @Test("Type 4 through every generated reader: write, read, status, a write cut after every exchange with the backup put back, the lock",
          arguments: ContactlessReader.Model.generated())
    func type4(_ reader: ContactlessReader.Model) throws {
        var c = Type4TagModel.Configuration()
        (c.mle, c.mlc, c.fileSize) = (1024, 1024, 2048)
        func detect(_ model: Type4TagModel, cutAfter: Int? = nil) throws -> Type4Tag {
            let channel = CutChannel(card: ReaderFront(model: reader, card: ApplicationHost(applications: [model])), cutAfter: cutAfter)
            return try Type4Tag.detect(APDUTransport(channel: channel))
        }
        let old = patternMessage(600, seed: 1), new = patternMessage(900, seed: 2)
        let fresh = Type4TagModel(configuration: c)
        try detect(fresh).writeNDEF(old)
        let start = fresh.fileContents
        #expect(Type4FaultMatrixTests.reading(start, extended: false) == .message(old), "\(reader)")
        #expect(try detect(Type4TagModel(configuration: c, fileContents: start)).readNDEF() == old, "\(reader)")
        var n = 0
        while true {
            let model = Type4TagModel(configuration: c, fileContents: start)
            var backup: TagBackup?, finished = false
            do {
                try detect(model, cutAfter: n).replaceNDEF(with: new) { backup = $0 }
                finished = true
            } catch {}
            let seen = Type4FaultMatrixTests.reading(model.fileContents, extended: false)
            #expect([.message(old), .message([]), .message(new)].contains(seen), "\(reader): write cut after \(n): \(seen)")
            if finished { #expect(seen == .message(new)); break }
            if let backup, model.fileContents != start {
                let again = Type4TagModel(configuration: c, fileContents: model.fileContents)
                try detect(again).restore(backup)
                #expect(Type4FaultMatrixTests.reading(again.fileContents, extended: false) == .message(old), "\(reader): restore after \(n)")
            }
            n += 1
            if n > 100 { Issue.record("\(reader): the write never finished"); break }
        }
        let locked = Type4TagModel(configuration: c, fileContents: start)
        #expect(try detect(locked).makeReadOnly(), "\(reader): the lock")
        #expect(throws: (any Error).self) { try detect(locked).writeNDEF(new) }
        #expect(try detect(locked).readNDEF() == old)
    }

    @Test("a Type 5 tag behind an ACR122U: refused in one line before anything reaches the tag")
    func unreachable() throws {
        let model = ISO15693TagModel(chip: .icodeSlix)
        let transport = APDUTransport(channel: EmulatedChannel(card: ContactlessReader(.acr122u, tag: model)))
        let commands = try TagCommandChannel.open(transport: transport, readerName: "ACS ACR122U")
        #expect(throws: TagCommandError.self) { try detectNDEFTag(transport, atr: model.atr, commands: commands) }
    }

    @Test("the exact-Le form is learned once per connection: one retry, then every read in the working form")
    func leLearnedOnce() throws {
        for readLe in [ContactlessReader.Model.ReadLe.exactWrongLength, .exactCorrectLength] {
            var reader = ContactlessReader.Model(.storageOnly)
            reader.readLe = readLe
            let model = ISO15693TagModel(chip: .icodeSlix)
            var commands: [[UInt8]] = []
            let transport = APDUTransport(channel: EmulatedChannel(card: ContactlessReader(model: reader, tag: model))) { commands.append($0.command) }
            let tag = try detectNDEFTag(transport, atr: model.atr)
            try tag.writeNDEF(patternMessage(60, seed: 3))
            #expect(try detectNDEFTag(transport, atr: model.atr).readNDEF() == patternMessage(60, seed: 3))
            let reads = commands.filter { $0.starts(with: [0xFF, 0xB0]) }
            // Only the very first READ BINARY went out with Le 00; every other one with Le 04.
            #expect(reads.first?.last == 0x00 && reads.dropFirst().allSatisfy { $0.last == 0x04 }, "\(readLe): \(reads.map(\.hexString))")
            #expect(transport.forms.readBinaryLe == .exact)
        }
        // A reader that takes Le 00 costs no extra exchange.
        let model = ISO15693TagModel(chip: .icodeSlix)
        var count = 0
        let transport = APDUTransport(channel: EmulatedChannel(card: ContactlessReader(.storageOnly, tag: model))) { _ in count += 1 }
        _ = try detectNDEFTag(transport, atr: model.atr).readNDEF()
        #expect(transport.leCorrections == 0 && transport.forms.readBinaryLe == .maximum)
    }
}
