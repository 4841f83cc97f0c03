import ISO7816
import NFCTags
import Testing
import TestSupport
import VirtualCard

/// Any page, block or sector range, on any tag behind any reader, gives a result or an error,
/// never a trap: a bounded sweep of edge values and seeded random ranges through the page map,
/// the dump and the block reads of every family (`Scripts/fuzz` runs the same paths unbounded).
/// A trap ends the test process, so this suite fails by crashing.
@Suite("Ranges: every family, every reader dialect, edge and random ranges, never a trap")
struct RangeSweepTests {
    static let edges = [-1, 0, 1, 3, 4, 15, 16, 44, 45, 63, 64, 134, 135, 230, 231, 252, 254, 255, 256, 257, 511, 512, 1023, 1024, 65535, 65536, Int.max / 4]

    /// Edge pairs, then seeded random ones (small, medium and huge numbers).
    static func ranges(seed: UInt64, count: Int) -> [(Int, Int)] {
        var rng = SplitMix(seed: seed)
        var out: [(Int, Int)] = []
        for a in edges { for b in edges where b >= a && (b - a < 2000 || b == Int.max / 4) { out.append((a, b)) } }
        for _ in 0..<count {
            let scale = [300, 1100, 70000][Int(rng.next() % 3)]
            let a = Int(rng.next() % UInt64(scale)) - 2
            out.append((a, a + Int(rng.next() % 40)))
        }
        return out
    }

    static let readers: [ContactlessReader.Model] = ContactlessReader.Dialect.allCases.map { ContactlessReader.Model($0) }
        + ContactlessReader.Model.generated().filter { $0.readLe != .any }.prefix(3)

    @Test("Type 2: the page map and the dump", arguments: [Type2TagModel.Chip.ntag213, .ntag215, .ntag216, .ultralight, .ultralightC, .twoSectorT2T])
    func type2(_ chip: Type2TagModel.Chip) throws {
        var tried = 0
        for reader in Self.readers {
            let model = Type2TagModel(chip: chip)
            let transport = APDUTransport(channel: EmulatedChannel(card: ContactlessReader(model: reader, tag: model)))
            let commands = try TagCommandChannel.open(transport: transport, readerName: "sweep")
            for (a, b) in Self.ranges(seed: 25, count: 60) {
                model.reset()
                let map = try? Type2Tag.pageMap(transport, atr: model.atr, pages: a...b, commands: commands)
                if let map, a >= 0 {
                    // What is shown is the tag's: rows in order, inside what was asked.
                    #expect(map.rows.allSatisfy { (a...b).contains($0.page) }, "\(chip.name), \(reader): \(a)-\(b)")
                    for row in map.rows where row.page < chip.pages {
                        if let bytes = row.bytes, chip.passwords?.secretPages.contains(row.page) != true {
                            #expect(bytes == Array(model.contents[(row.page * 4)..<(row.page * 4 + 4)]), "\(chip.name), \(reader): page \(row.page) of \(a)-\(b)")
                        }
                    }
                }
                if let tag = try? Type2Tag.detect(transport, atr: model.atr, commands: commands.dialect == .storageOnly ? nil : commands) {
                    _ = try? tag.dump(pages: a...b)
                }
                tried += 1
            }
            commands.endSession()
        }
        #expect(tried > 1000)
    }

    /// Every Type 2 chip with every CC data-area size from 0 to past its memory, behind every
    /// reader model (the generated matrix and the three plain dialects): detection, status, the
    /// lock state, a read, a write and a lock end in a result or a one-line error, never a trap.
    /// A proven NTAG215 with a 144-byte CC once trapped here: its dynamic lock page lies far past
    /// the memory image the CC sized (issue 32).
    @Test("Type 2: every chip, every CC size, every reader: status, read, write, lock", arguments: Type2TagModel.Chip.all.keys.sorted())
    func type2CCSizes(_ name: String) throws {
        let chip = try #require(Type2TagModel.Chip.all[name])
        let readers = ContactlessReader.Dialect.allCases.map { ContactlessReader.Model($0) } + ContactlessReader.Model.generated()
        let largest = min(255, (chip.pages * 4 - 16) / 8 + 2)
        var served = 0
        for size in 0...largest {
            var image = Type2TagModel.factoryImage(chip: chip)
            image[14] = UInt8(size)
            for reader in readers {
                let model = Type2TagModel(chip: chip, memory: image)
                let transport = APDUTransport(channel: EmulatedChannel(card: ContactlessReader(model: reader, tag: model)))
                let commands = try? TagCommandChannel.open(transport: transport, readerName: "sweep")
                defer { commands?.endSession() }
                let native = commands.flatMap { $0.dialect == .storageOnly ? nil : $0 }
                guard let tag = try? Type2Tag.detect(transport, atr: model.atr, commands: native) else { continue }
                _ = tag.status
                _ = try? tag.readLockState()
                _ = try? tag.readNDEF()
                let message = [UInt8](repeating: 0x41, count: max(0, min(tag.capacity, 300)))
                if (try? tag.replaceNDEF(with: message, keepingOld: { _ in })) != nil { served += 1 }
                _ = try? tag.makeReadOnly()
            }
        }
        #expect(served > 0, "\(chip.name): no CC size could be written through any reader")
    }

    @Test("Type 5: single and multiple block reads, security status, plain and extended", arguments: [ISO15693TagModel.Chip.icodeSlix, .st25dv64k, .eightByteBlocks])
    func type5(_ chip: ISO15693TagModel.Chip) throws {
        let model = ISO15693TagModel(chip: chip)
        let transport = APDUTransport(channel: EmulatedChannel(card: ContactlessReader(.transparent, tag: model)))
        let iso = try ISO15693Commands(channel: TagCommandChannel(transport: transport, dialect: .transparent))
        for (a, b) in Self.ranges(seed: 5, count: 150) {
            for extended in [false, true] {
                _ = try? iso.readSingleBlock(a, blockSize: chip.blockSize, extended: extended)
                _ = try? iso.readMultipleBlocks(a, count: b - a, blockSize: chip.blockSize, extended: extended)
                _ = try? iso.securityStatus(a, count: b - a, extended: extended)
            }
        }
        // The storage path, through a reader wanting the exact Le.
        var exact = ContactlessReader.Model(.storageOnly)
        exact.readLe = .exactWrongLength
        let storage = APDUTransport(channel: EmulatedChannel(card: ContactlessReader(model: exact, tag: model)))
        for (a, _) in Self.ranges(seed: 6, count: 50) {
            _ = try? storage.storageReadBinary(block: a, size: chip.blockSize)
        }
    }

    @Test("Type 3: block lists of any numbers and lengths")
    func type3() throws {
        let model = FeliCaTagModel(chip: .liteS)
        let transport = APDUTransport(channel: EmulatedChannel(card: ContactlessReader(.transparent, tag: model)))
        let felica = try FeliCaCommands(channel: TagCommandChannel(transport: transport, dialect: .transparent))
        _ = try felica.polling()
        for (a, b) in Self.ranges(seed: 3, count: 150) {
            let blocks = Array(a...min(b, a + 300))
            _ = try? felica.read(blocks: blocks)
            _ = try? felica.write(blocks: blocks, data: [UInt8](repeating: 0, count: 16))
        }
    }

    @Test("MIFARE Classic: block reads and the dump", arguments: [MifareClassicModel.Chip.mini, .classic1K, .classic4K])
    func classic(_ chip: MifareClassicModel.Chip) throws {
        let model = MifareClassicModel(chip)
        let transport = APDUTransport(channel: EmulatedChannel(card: ContactlessReader(.storageOnly, tag: model)))
        let card = MifareClassicCard(transport: transport, layout: try #require(MifareClassicLayout(atr: model.atr)))
        for (a, _) in Self.ranges(seed: 7, count: 100) {
            _ = try? card.open(sector: card.layout.sector(ofBlock: max(0, min(a, card.layout.blockCount - 1))), with: MifareClassicKeyCandidate.publicKeys)
            _ = try? card.read(block: a)
        }
        _ = try card.dump(keys: MifareClassicKeyCandidate.publicKeys)
    }
}
