import ISO7816
import NFCTags
import Testing
import VirtualCard

/// MIFARE Classic: the pure pieces (access bits, MAD CRC, keys, value blocks), the emulated
/// chip's enforcement row by row, and the library's procedures against it.
@Suite("MIFARE Classic")
struct MifareClassicTests {
    static func card(_ model: MifareClassicModel, observer: ((Exchange) -> Void)? = nil) -> (MifareClassicCard, APDUTransport) {
        let transport = APDUTransport(channel: EmulatedChannel(card: ContactlessReader(.storageOnly, tag: model)), observer: observer)
        return (MifareClassicCard(transport: transport, layout: MifareClassicLayout(atr: model.atr)!), transport)
    }

    static func formatted(_ chip: MifareClassicModel.Chip, realism: MifareClassicModel.Realism = .all) throws -> MifareClassicModel {
        let model = MifareClassicModel(chip, realism: realism)
        let (_, transport) = Self.card(model)
        _ = try MifareClassicNDEFTag.format(transport, atr: model.atr)
        return model
    }

    static let factory = MifareClassicKeyCandidate.publicKeys[0]
    static let all = MifareClassicKeyCandidate.publicKeys

    // MARK: Pure

    @Test("access bits: the published trailers decode to the datasheet's conditions, and every combination round-trips")
    func accessBits() throws {
        #expect(MifareClassicAccessBits(bytes: [0xFF, 0x07, 0x80])?.conditions == [0, 0, 0, 1])
        #expect(MifareClassicAccessBits(bytes: [0x78, 0x77, 0x88])?.conditions == [4, 4, 4, 3])
        #expect(MifareClassicAccessBits(bytes: [0x7F, 0x07, 0x88])?.conditions == [0, 0, 0, 3])
        #expect(MifareClassicAccessBits(bytes: [0x07, 0x8F, 0x0F])?.conditions == [2, 2, 2, 6])
        #expect(MifareClassicAccessBits.transport.bytes == [0xFF, 0x07, 0x80])
        #expect(MifareClassicAccessBits.ndefReadOnly.bytes == [0x07, 0x8F, 0x0F])
        var seen = Set<[UInt8]>()
        for n in 0..<4096 {
            let c = (0..<4).map { UInt8(n >> (3 * $0) & 7) }
            let bits = MifareClassicAccessBits(conditions: c)
            #expect(MifareClassicAccessBits(bytes: bits.bytes)?.conditions == c)
            seen.insert(bits.bytes)
            // Any single flipped bit breaks the inverted copy.
            for bit in 0..<24 {
                var b = bits.bytes
                b[bit / 8] ^= 1 << (bit % 8)
                #expect(MifareClassicAccessBits(bytes: b) == nil)
            }
        }
        #expect(seen.count == 4096)
        #expect(MifareClassicAccessBits(conditions: [0, 0, 0, 6]).locksOutTrailer)
        #expect(!MifareClassicAccessBits.ndefReadWrite.locksOutTrailer)
        #expect(MifareClassicAccessBits.transport.keyBReadable && !MifareClassicAccessBits.mad.keyBReadable)
    }

    @Test("MAD: the NXP 1K vector (CRC 14 over 01 and fifteen 03 E1), MAD2 for 4K, a wrong CRC named")
    func mad() throws {
        let m = MifareApplicationDirectory.ndef(for: MifareClassicLayout(.classic1K))
        #expect(m.mad1 == [0x14, 0x01] + Array([[UInt8]](repeating: [0x03, 0xE1], count: 15).joined()))
        #expect(m.generalPurposeByte == 0xC1)
        let parsed = try MifareApplicationDirectory(gpb: 0xC1, mad1: m.mad1, mad2: nil)
        #expect(parsed.ndefSectors(of: MifareClassicLayout(.classic1K)) == Array(1...15))
        let big = MifareApplicationDirectory.ndef(for: MifareClassicLayout(.classic4K))
        #expect(big.version == 2 && big.generalPurposeByte == 0xC2)
        let back = try MifareApplicationDirectory(gpb: 0xC2, mad1: big.mad1, mad2: big.mad2)
        #expect(back.ndefSectors(of: MifareClassicLayout(.classic4K)) == Array(1...15) + Array(17...39))
        let mini = MifareApplicationDirectory.ndef(for: MifareClassicLayout(.mini))
        #expect(mini.ndefSectors(of: MifareClassicLayout(.mini)) == [1, 2, 3, 4] && mini.aids[5] == MifareApplicationDirectory.notApplicableAID)
        var broken = m.mad1
        broken[7] ^= 0x01
        #expect(throws: TagError.self) { try MifareApplicationDirectory(gpb: 0xC1, mad1: broken, mad2: nil) }
        #expect(throws: TagError.self) { try MifareApplicationDirectory(gpb: 0x69, mad1: m.mad1, mad2: nil) }
    }

    @Test("key files: comments, CRLF, a byte-order mark and separators; a bad line named without its text")
    func keyFiles() throws {
        let text = "\u{FEFF}# site keys\r\nA0A1A2A3A4A5\r\n\r\n  d3:f7:d3:f7:d3:f7  # ndef\r\nff-ff-ff-ff-ff-ff\r\n"
        let keys = try MifareClassicKeyCandidate.parse(text, source: "keys.txt")
        #expect(keys.map(\.key) == [.mad, .ndef, .factory])
        #expect(keys.map(\.label) == ["keys.txt line 2", "keys.txt line 4", "keys.txt line 5"])
        #expect(!"\(keys[0])".contains("A0A1") && !"\(keys[0].key)".contains("A0"))
        do {
            _ = try MifareClassicKeyCandidate.parse("A0A1A2A3A4A5\n0123456789ABCD\n", source: "k")
            Issue.record("a 7-byte key was accepted")
        } catch {
            #expect(error.message.contains("k line 2") && !error.message.contains("0123"))
        }
    }

    @Test("value blocks: the format recognised, anything else not")
    func valueBlocks() {
        let v = MifareClassicValueBlock(value: -1234, address: 9)
        #expect(MifareClassicValueBlock(bytes: v.bytes) == v)
        var b = v.bytes
        b[5] ^= 1
        #expect(MifareClassicValueBlock(bytes: b) == nil)
        #expect(MifareClassicValueBlock(bytes: [UInt8](repeating: 0, count: 16)) == nil)
    }

    @Test("layouts: Mini, 1K, 4K (sectors 32-39 of 16 blocks), Plus SL1 from the ATR; Plus SL2 is not Classic")
    func layouts() {
        for chip in MifareClassicModel.Chip.allCases {
            let layout = MifareClassicLayout(atr: MifareClassicModel(chip).atr)!
            #expect(layout.sectorCount == chip.sectorCount)
        }
        let big = MifareClassicLayout(.classic4K)
        #expect(big.blockCount == 256 && big.firstBlock(ofSector: 33) == 144 && big.trailerBlock(ofSector: 39) == 255)
        #expect(big.accessGroup(ofBlock: 128) == 0 && big.accessGroup(ofBlock: 137) == 1 && big.accessGroup(ofBlock: 142) == 2 && big.accessGroup(ofBlock: 143) == 3)
        #expect(MifareClassicLayout(cardName: 0x0038) == nil)
    }

    // MARK: The chip's enforcement, row by row

    /// The datasheet's tables, a third time, as the test's expectation (read, write, inc, dec).
    static let dataRows: [UInt8: [String]] = [0: ["AB", "AB", "AB", "AB"], 2: ["AB", "", "", ""], 4: ["AB", "B", "", ""], 6: ["AB", "B", "B", "AB"],
                                              1: ["AB", "", "", "AB"], 3: ["B", "B", "", ""], 5: ["B", "", "", ""], 7: ["", "", "", ""]]

    /// Sets sector 1 to `conditions` (trailer written raw), value block 4 = 100, key A = factory,
    /// key B = 0102030405 06, and tries each operation with each key.
    static func observe(_ conditions: [UInt8], realism: MifareClassicModel.Realism) throws -> [String] {
        var memory = MifareClassicModel.factoryImage(.classic1K)
        let keyB = MifareClassicKey([1, 2, 3, 4, 5, 6])!
        memory.replaceSubrange(64..<80, with: MifareClassicValueBlock(value: 100, address: 4).bytes)
        memory.replaceSubrange(112..<128, with: MifareClassicTrailer(keyA: .factory, access: MifareClassicAccessBits(conditions: conditions), gpb: 0, keyB: keyB).bytes)
        var out: [String] = []
        for (type, key) in [(MifareClassicKeyType.a, MifareClassicKey.factory), (.b, keyB)] {
            var row = ""
            for op in 0..<4 {
                let model = MifareClassicModel(.classic1K, memory: memory, realism: realism)
                let (card, _) = Self.card(model)
                try #require(try card.authenticate(sector: 1, keyType: type, key: MifareClassicKeyCandidate(key, label: "k")))
                let ok: Bool
                switch op {
                case 0: ok = (try? card.read(block: 4)) != nil
                case 1: ok = (try? card.write(block: 4, data: MifareClassicValueBlock(value: 7, address: 4).bytes)) != nil
                case 2: ok = (try? card.changeValue(block: 4, by: 5)) != nil
                default: ok = (try? card.changeValue(block: 4, by: -5)) != nil
                }
                row += ok ? "1" : "0"
            }
            out.append(row)
        }
        return out
    }

    static func expected(_ c: UInt8, keyBReadable: Bool) -> [String] {
        [MifareClassicKeyType.a, .b].map { type in
            Self.dataRows[c]!.map { who in
                (type == .a ? who.contains("A") : who.contains("B") && !keyBReadable) ? "1" : "0"
            }.joined()
        }
    }

    @Test("data blocks: every access-condition row, with key A and key B, read/write/increment/decrement", arguments: [UInt8](0...7))
    func dataRow(condition: UInt8) throws {
        // Trailer 011: key B is secret, so it works; trailer 001: key B readable, so it does not.
        #expect(try Self.observe([condition, condition, condition, 3], realism: .all) == Self.expected(condition, keyBReadable: false))
        #expect(try Self.observe([condition, condition, condition, 1], realism: .all) == Self.expected(condition, keyBReadable: true))
    }

    @Test("without the access-bit enforcement the rows above do not hold (the test can fail)")
    func dataRowsNeedEnforcement() throws {
        let disagreeing = try (UInt8(0)...7).filter { c in try Self.observe([c, c, c, 3], realism: MifareClassicModel.Realism.all.subtracting(.accessBits)) != Self.expected(c, keyBReadable: false) }
        #expect(disagreeing.count >= 6)
        #expect(try Self.observe([0, 0, 0, 3], realism: MifareClassicModel.Realism.all.subtracting(.sectorAuthentication)) == Self.expected(0, keyBReadable: false))
    }

    /// Trailer rows: which parts a full trailer write with each key changes, and what a read shows.
    @Test("trailers: every row, which of key A / access bits / key B each key may write, and key B shown only when readable", arguments: [UInt8](0...7))
    func trailerRow(condition: UInt8) throws {
        let keyB = MifareClassicKey([1, 2, 3, 4, 5, 6])!
        let start = MifareClassicTrailer(keyA: .factory, access: MifareClassicAccessBits(conditions: [0, 0, 0, condition]), gpb: 0x11, keyB: keyB)
        let rights = MifareClassicAccessBits.trailerRights(condition)
        let keyBReadable = [0, 2, 1].contains(condition)
        for (type, key) in [(MifareClassicKeyType.a, MifareClassicKey.factory), (.b, keyB)] {
            for realism in [MifareClassicModel.Realism.all, MifareClassicModel.Realism.all.subtracting(.accessBits)] {
                var memory = MifareClassicModel.factoryImage(.classic1K)
                memory.replaceSubrange(112..<128, with: start.bytes)
                let model = MifareClassicModel(.classic1K, memory: memory, realism: realism)
                let (card, _) = Self.card(model)
                try #require(try card.authenticate(sector: 1, keyType: type, key: MifareClassicKeyCandidate(key, label: "k")))
                let read = try? card.read(block: 7)
                if type == .a {
                    #expect(read.map { Array($0[0..<6]) } == [0, 0, 0, 0, 0, 0])
                    if realism == .all { #expect(read.map { Array($0[10..<16]) == keyB.bytes } == keyBReadable) }
                }
                try #require(try card.authenticate(sector: 1, keyType: type, key: MifareClassicKeyCandidate(key, label: "k")))
                let new = MifareClassicTrailer(keyA: MifareClassicKey([9, 9, 9, 9, 9, 9])!, access: MifareClassicAccessBits(conditions: [0, 0, 0, 3]), gpb: 0x22, keyB: MifareClassicKey([8, 8, 8, 8, 8, 8])!)
                _ = try? card.write(block: 7, data: new.bytes)
                let after = Array(model.contents[112..<128])
                let usable = !(type == .b && keyBReadable)
                let expect = [usable && rights.writeKeyA.allows(type), usable && rights.writeAccessBits.allows(type), usable && rights.writeKeyB.allows(type)]
                let changed = [after[0..<6] != start.bytes[0..<6], after[6..<10] != start.bytes[6..<10], after[10..<16] != start.bytes[10..<16]]
                if realism == .all {
                    #expect(changed == expect, "condition \(condition), key \(type)")
                } else if expect != [true, true, true] {
                    #expect(changed != expect, "without enforcement, condition \(condition) key \(type) should differ")
                }
            }
        }
    }

    @Test("authentication: a wrong key answers 63 00, another sector needs its own, a refusal drops it")
    func authentication() throws {
        let model = MifareClassicModel(.classic1K)
        let (card, transport) = Self.card(model)
        #expect(try !card.authenticate(sector: 2, keyType: .a, key: MifareClassicKeyCandidate(.ndef, label: "ndef")))
        #expect(try transport.send(CommandAPDU(cla: 0xFF, ins: 0x86, p1: 0, p2: 0, data: [1, 0, 8, 0x60, 0])).statusWord == StatusWord(0x63, 0x00))
        #expect(try card.authenticate(sector: 2, keyType: .a, key: Self.factory))
        #expect(try card.read(block: 8).count == 16)
        // The raw command: a block of sector 3 while sector 2 is authenticated.
        #expect(try transport.send(CommandAPDU(cla: 0xFF, ins: 0xB0, p1: 0, p2: 12, ne: 16)).statusWord == StatusWord(0x69, 0x82))
        #expect(try transport.send(CommandAPDU(cla: 0xFF, ins: 0xB0, p1: 0, p2: 8, ne: 16)).statusWord == StatusWord(0x69, 0x82), "the refusal halted the chip")
        #expect(try card.authenticate(sector: 0, keyType: .a, key: Self.factory))
        #expect(throws: TagError.self) { try card.write(block: 0, data: [UInt8](repeating: 0, count: 16)) }
        #expect(model.failedAuthentications == 2)
    }

    @Test("keys and trailers are marked secret for traces: LOAD KEYS and a trailer write show **")
    func redaction() throws {
        var shown: [String] = []
        let model = MifareClassicModel(.classic1K)
        let (card, _) = Self.card(model) { shown.append(Redaction.hex($0)) }
        try card.writeChecked(block: 7, data: MifareClassicTrailer(keyA: MifareClassicKey([0x11, 0x22, 0x33, 0x44, 0x55, 0x66])!, access: .transport, gpb: 0x69, keyB: .factory).bytes,
                              keys: [Self.factory], trailer: true)
        #expect(shown.contains { $0.hasPrefix("FF 82 00 00 06 ** ** ** ** ** **") })
        #expect(shown.contains { $0.hasPrefix("FF D6 00 07 10 **") })
        #expect(!shown.joined().contains("11 22 33 44 55 66") && !shown.joined().contains("FF FF FF FF FF FF"))
        #expect(Redaction.hex([0xFF, 0x82, 0x00, 0x00, 0x06, 1, 2, 3, 4, 5, 6]) == "FF 82 00 00 06 ** ** ** ** ** **")
    }

    @Test("trailer writes: refused without --trailer, with invalid access bits, or locking the sector out unless confirmed by its number")
    func trailerSafety() throws {
        let model = MifareClassicModel(.classic1K)
        let (card, _) = Self.card(model)
        let before = model.contents
        var bad = MifareClassicTrailer(keyA: .factory, access: .transport, gpb: 0x69, keyB: .factory).bytes
        #expect(throws: TagError.self) { try card.writeChecked(block: 7, data: bad, keys: [Self.factory]) }
        bad[7] ^= 0x10
        do { try card.writeChecked(block: 7, data: bad, keys: [Self.factory], trailer: true); Issue.record("invalid bits written") } catch let e as TagError {
            #expect(e.kind == .unsafe && e.message.contains("invalid"))
        }
        let lockout = MifareClassicTrailer(keyA: .factory, access: MifareClassicAccessBits(conditions: [0, 0, 0, 7]), gpb: 0, keyB: .factory).bytes
        #expect(throws: TagError.self) { try card.writeChecked(block: 7, data: lockout, keys: [Self.factory], trailer: true) }
        #expect(throws: TagError.self) { try card.writeChecked(block: 7, data: lockout, keys: [Self.factory], trailer: true, confirmLockout: 2) }
        #expect(throws: TagError.self) { try card.writeChecked(block: 0, data: [UInt8](repeating: 0, count: 16), keys: [Self.factory]) }
        #expect(throws: TagError.self) { try card.writeChecked(block: 64, data: [UInt8](repeating: 0, count: 16), keys: [Self.factory]) }
        #expect(model.contents == before, "nothing was written")
        try card.writeChecked(block: 7, data: lockout, keys: [Self.factory], trailer: true, confirmLockout: 1)
        #expect(Array(model.contents[118..<121]) == MifareClassicAccessBits(conditions: [0, 0, 0, 7]).bytes)
    }

    // MARK: Procedures

    @Test("format → NDEF: every chip formats from factory, reads empty, takes a message up to its capacity; the 1K MAD is NXP's", arguments: MifareClassicModel.Chip.allCases)
    func formatAndWrite(chip: MifareClassicModel.Chip) throws {
        let model = try Self.formatted(chip)
        if chip == .classic1K {
            #expect(Array(model.contents[16..<20]) == [0x14, 0x01, 0x03, 0xE1])
            #expect(Array(model.contents[54..<58]) == [0x78, 0x77, 0x88, 0xC1])
            #expect(Array(model.contents[64..<67]) == [0x03, 0x00, 0xFE])
            #expect(Array(model.contents[112..<128]) == MifareClassicKey.ndef.bytes + [0x7F, 0x07, 0x88, 0x40] + MifareClassicKey.factory.bytes)
        }
        let (_, transport) = Self.card(model)
        let tag = try MifareClassicNDEFTag.detect(transport, atr: model.atr)
        let sectors = chip == .mini ? 4 : chip == .classic1K ? 15 : chip == .plus2K ? 30 : 38
        #expect(tag.sectors.count == sectors)
        let dataBlocks = chip == .classic4K || chip == .plus4K ? 30 * 3 + 8 * 15 : sectors * 3
        #expect(tag.capacity == Type2TLVArea.messageCapacity(available: dataBlocks * 16))
        #expect(try tag.readNDEF() == [] && tag.status == .readWrite && tag.uid == [0xC1, 0xA5, 0x51, 0xC0])
        for size in [1, 47, 48, 254, 255, tag.capacity] where size <= tag.capacity {
            let message = (0..<size).map { UInt8(truncatingIfNeeded: $0 * 7 + 3) }
            try tag.writeNDEF(message)
            let again = try MifareClassicNDEFTag.detect(Self.card(model).1, atr: model.atr)
            #expect(try again.readNDEF() == message)
        }
        #expect(throws: TagError.self) { try tag.writeNDEF([UInt8](repeating: 1, count: tag.capacity + 1)) }
        // A second format finds everything done and writes nothing.
        let before = model.contents
        let report = try MifareClassicNDEFTag.format(Self.card(model).1, atr: model.atr)
        #expect(report.formatted.isEmpty && model.contents == before)
    }

    @Test("format refuses a card with data or foreign keys before writing anything")
    func formatRefuses() throws {
        var memory = MifareClassicModel.factoryImage(.classic1K)
        memory[20 * 16 + 3] = 0x42
        let model = MifareClassicModel(.classic1K, memory: memory)
        #expect(throws: TagError.self) { try MifareClassicNDEFTag.format(Self.card(model).1, atr: model.atr) }
        #expect(model.contents == memory)
        memory = MifareClassicModel.factoryImage(.classic1K)
        memory.replaceSubrange(44..<50, with: [1, 2, 3, 4, 5, 6])
        let foreign = MifareClassicModel(.classic1K, memory: memory)
        #expect(throws: TagError.self) { try MifareClassicNDEFTag.format(Self.card(foreign).1, atr: foreign.atr) }
        #expect(foreign.contents == memory)
        // An unformatted card is not NDEF, with the way to format it.
        do { _ = try MifareClassicNDEFTag.detect(Self.card(MifareClassicModel(.classic1K)).1, atr: model.atr); Issue.record("detected") } catch let e as TagError {
            #expect(e.kind == .notNDEF && e.message.contains("ndef-format"))
        }
    }

    @Test("dump: one authentication per sector with the right keys, every block read, access decoded, value blocks found", arguments: [MifareClassicModel.Chip.classic1K, .classic4K])
    func dump(chip: MifareClassicModel.Chip) throws {
        let model = try Self.formatted(chip)
        let (card, _) = Self.card(model)
        let uid: [UInt8] = [0xC1, 0xA5, 0x51, 0xC0]
        // A value block in the last NDEF sector's first block (access 000 lets key A store it).
        let last = card.layout.sectorCount - 1
        try #require(try card.authenticate(sector: last, keyType: .a, key: Self.all[2]))
        try card.storeValue(block: card.layout.firstBlock(ofSector: last), value: 1000)
        try card.changeValue(block: card.layout.firstBlock(ofSector: last), by: -1)
        let start = model.authentications, failedBefore = model.failedAuthentications
        let dump = try card.dump(keys: [Self.all[1], Self.all[2]], uid: uid)
        // One authentication per sector, and a failure where the key changes: the MAD key tried
        // on sector 1, after which the NDEF key that opened it is tried first (and on 4K, the
        // same around the MAD2 sector 16).
        let switches = chip == .classic4K ? 3 : 1
        #expect(model.authentications - start == card.layout.sectorCount + switches && dump.authentications == card.layout.sectorCount + switches)
        #expect(model.failedAuthentications - failedBefore == switches)
        #expect(dump.reads == card.layout.blockCount)
        #expect(dump.sectors.allSatisfy { $0.blocks.allSatisfy { $0 != nil } && $0.notes.isEmpty })
        #expect(dump.sectors[0].access == .mad && dump.sectors[1].access == .ndefReadWrite)
        #expect(dump.sectors[last].valueBlocks.map(\.block) == [card.layout.firstBlock(ofSector: last)])
        #expect(dump.sectors[last].valueBlocks.first?.value.value == 999)
        #expect(dump.sectors[1].blocks.last!!.prefix(6) == [0, 0, 0, 0, 0, 0], "key A reads as zeros")
    }

    @Test("dump of a card keyed with one key: exactly one authentication per sector, and a read per block")
    func dumpMinimum() throws {
        let model = MifareClassicModel(.classic1K)
        let (card, _) = Self.card(model)
        let dump = try card.dump(keys: [MifareClassicKeyCandidate(.factory, label: "k")])
        #expect(model.authentications == 16 && model.failedAuthentications == 0 && dump.reads == 64)
    }

    @Test("key search: which public key opens each sector as A and as B; the MAD sector's key B is not NDEF's")
    func findKeys() throws {
        let model = try Self.formatted(.mini)
        let (card, _) = Self.card(model)
        let found = try card.findKeys(Self.all)
        #expect(found[0].keyA == "MAD key" && found[0].keyB == "factory key" && found[0].access == .mad)
        #expect(found[1...].allSatisfy { $0.keyA == "NDEF key" && $0.keyB == "factory key" })
    }

    @Test("lock: every NDEF sector read-only (07 8F 0F, GPB 43, keys kept), writes refused, reported only then")
    func lock() throws {
        let model = try Self.formatted(.mini)
        let tag = try MifareClassicNDEFTag.detect(Self.card(model).1, atr: model.atr)
        try tag.writeNDEF([0xD0, 0x00, 0x00])
        let report = try tag.makeReadOnly()
        #expect(report.refusesWrites && report.state.isFullyLocked && report.done.count == 4)
        for s in 1...4 {
            #expect(Array(model.contents[(s * 64 + 48)..<(s * 64 + 64)]) == MifareClassicKey.ndef.bytes + [0x07, 0x8F, 0x0F, 0x43] + MifareClassicKey.factory.bytes)
        }
        let again = try MifareClassicNDEFTag.detect(Self.card(model).1, atr: model.atr)
        let message = try again.readNDEF()
        #expect(again.status == .readOnly && message == [0xD0, 0x00, 0x00])
        #expect(throws: TagError.self) { try again.writeNDEF([0xD0, 0x00, 0x00, 0x01]) }
    }
}
