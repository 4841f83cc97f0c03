import ISO7816
import NDEF
import NFCTags
import Testing
import VirtualCard

@Suite("Type 2 tag procedures")
struct Type2TagTests {
    func tag(_ chip: Type2TagModel.Chip, memory: [UInt8]? = nil) throws -> (Type2Tag, Type2TagModel, Locked<[Exchange]>) {
        let model = Type2TagModel(chip: chip, memory: memory)
        let seen = Locked([Exchange]())
        let transport = APDUTransport(channel: EmulatedChannel(card: model)) { e in seen.withLock { $0.append(e) } }
        return (try Type2Tag.detect(transport, atr: model.atr), model, seen)
    }

    func message(_ size: Int) -> [UInt8] {
        let payloadLength = size - 6 < 256 ? size - 6 : size - 9
        let m = try! NDEFMessage(records: [.mime("x/y", (0..<payloadLength).map { UInt8($0 % 251) })]).encoded()
        precondition(m.count == size)
        return m
    }

    @Test("capacity as the NFC Forum counts it", arguments: [
        // Data areas per the factory CCs: 48, 144, 144, 496 (0x3E), 872 (0x6D); minus the lock
        // control TLV (5) where the chip ships one (NTAG213), minus the NDEF TLV header (2, or 4
        // past 254 bytes): 492 and 868 are what NFC apps report for NTAG215 and NTAG216.
        (Type2TagModel.Chip.ultralight, 46), (.ntag213, 137), (.ultralightC, 142), (.ntag215, 492), (.ntag216, 868),
    ] as [(Type2TagModel.Chip, Int)])
    func capacity(chip: Type2TagModel.Chip, expected: Int) throws {
        let (t, _, _) = try tag(chip)
        #expect(t.capacity == expected)
        #expect(t.status == .readWrite)
        #expect(try t.readNDEF().isEmpty)
    }

    @Test("the 48-byte static layout: a 46-byte message fills it exactly, no terminator")
    func staticLayout() throws {
        let (t, model, _) = try tag(.ultralight)
        let m = message(46)
        try t.writeNDEF(m)
        #expect(Array(model.contents[16..<18]) == [0x03, 46])
        #expect(Array(model.contents[18..<64]) == m)
        #expect(throws: TagError.self) { try t.writeNDEF(self.message(47)) }
    }

    @Test("writes leave the bytes as the NFC Forum layouts expect: TLV, message, terminator")
    func writeImage() throws {
        let (t, model, seen) = try tag(.ntag213)
        let before = model.contents
        let m = message(30)
        seen.withLock { $0 = [] }
        try t.writeNDEF(m)
        var expected = before
        let tlv: [UInt8] = [0x03, UInt8(m.count)] + m + [0xFE]
        for (i, b) in tlv.enumerated() { expected[21 + i] = b }
        #expect(model.contents == expected)
        // Power-loss-safe order: the length was 0 already, so the body goes first and the page
        // holding the length (page 5) last, alone.
        let writes = seen.current.filter { $0.command[1] == 0xD6 }
        #expect(writes.dropLast().allSatisfy { $0.command[3] != 5 })
        #expect(writes.last?.command[3] == 5)
        #expect(writes.last?.command[6...7] == [0x03, UInt8(m.count)])
        // Over a message, the length byte goes to 0 first, in a write of its page alone.
        let (again, second, seenAgain) = try tag(.ntag213, memory: model.contents)
        seenAgain.withLock { $0 = [] }
        try again.writeNDEF(message(20))
        let rewrites = seenAgain.current.filter { $0.command[1] == 0xD6 }
        #expect(rewrites.first?.command[3] == 5)
        #expect(rewrites.first.map { Array($0.command[5...8]) } == [0x34, 0x03, 0x00, m[0]])
        #expect(rewrites.last?.command[3] == 5)
        #expect(second.contents[21...22] == [0x03, 20])
    }

    @Test("3-byte TLV lengths for messages of 255 bytes and more")
    func longLength() throws {
        let (t, model, _) = try tag(.ntag215)
        let m = message(400)
        try t.writeNDEF(m)
        #expect(Array(model.contents[16..<20]) == [0x03, 0xFF, 0x01, 0x90])
        #expect(try t.readNDEF() == m)
        let (again, _, _) = try tag(.ntag215, memory: model.contents)
        #expect(try again.readNDEF() == m)
    }

    @Test("memory control TLV: reserved bytes inside the message are skipped on read and write")
    func reservedBytes() throws {
        var image = Type2TagModel(chip: .ntag213).contents
        // Memory control TLV reserving 4 bytes at absolute address 32 (page 8), then an empty NDEF TLV.
        // Position = PageAddr 8 × 2^2 + ByteOffset 0 = 32.
        let tlvs: [UInt8] = [0x02, 0x03, 0x80, 0x04, 0x02, 0x03, 0x00, 0xFE]
        for i in 16..<160 { image[i] = 0 }
        for (i, b) in tlvs.enumerated() { image[16 + i] = b }
        for i in 32..<36 { image[i] = 0xEE }
        let (t, model, _) = try tag(.ntag213, memory: image)
        #expect(t.capacity == 144 - 5 - 4 - 2)   // memory control TLV, reserved bytes, NDEF header
        let m = message(40)
        try t.writeNDEF(m)
        #expect(Array(model.contents[32..<36]) == [0xEE, 0xEE, 0xEE, 0xEE])
        #expect(try t.readNDEF() == m)
        let (fresh, _, _) = try tag(.ntag213, memory: model.contents)
        #expect(try fresh.readNDEF() == m)
    }

    @Test("read-only CC, unsupported version, unformatted, lying TLV lengths")
    func refusals() throws {
        var ro = Type2TagModel(chip: .ntag213).contents
        ro[15] = 0x0F
        let (t, _, _) = try tag(.ntag213, memory: ro)
        #expect(t.status == .readOnly)
        #expect(throws: TagError.self) { try t.writeNDEF(self.message(10)) }

        var v2 = Type2TagModel(chip: .ntag213).contents
        v2[13] = 0x20
        do { _ = try tag(.ntag213, memory: v2); Issue.record("accepted 2.0") } catch let e as TagError {
            #expect(e.kind == .unsupportedVersion)
            #expect(e.message.contains("2.0"))
        }
        var blank = Type2TagModel(chip: .ntag213).contents
        blank[12] = 0
        do { _ = try tag(.ntag213, memory: blank); Issue.record("accepted a blank CC") } catch let e as TagError {
            #expect(e.kind == .notNDEF)
        }
        var lying = Type2TagModel(chip: .ntag213).contents
        for (i, b) in [UInt8](arrayLiteral: 0x03, 0xFF, 0x10, 0x00).enumerated() { lying[21 + i] = b }
        do { _ = try tag(.ntag213, memory: lying); Issue.record("accepted a 4096-byte TLV") } catch let e as TagError {
            #expect(e.kind == .lengthLies)
        }
        // A CC claiming 2040 bytes on a 64-byte tag: reads wrap like the chip's and stay bounded
        // by the CC (at most 2 KiB); a write is refused (the wrapped "lock bytes" read as set) or
        // fails cleanly at the first page past the real memory.
        var bigCC = Type2TagModel(chip: .ultralight).contents
        bigCC[14] = 0xFF
        let (liar, _, _) = try tag(.ultralight, memory: bigCC)
        #expect(liar.capacity == 2040 - 4)
        let before = liar.image
        do { try liar.writeNDEF(message(200)); Issue.record("wrote past the tag") } catch let e as TagError {
            // Every page to change is read first: the pages past the chip's end fail that read.
            #expect(e.kind == .readFailed, "\(e)")
        }
        #expect(liar.image.prefix(64) == before.prefix(64))
    }

    @Test("a full NTAG216 message is read in the minimum number of 16-byte reads")
    func fullRead() throws {
        let (t, model, _) = try tag(.ntag216)
        let m = message(t.capacity)
        try t.writeNDEF(m)
        let seen = Locked([Exchange]())
        let t2 = try Type2Tag.detect(APDUTransport(channel: EmulatedChannel(card: model)) { e in seen.withLock { $0.append(e) } }, atr: model.atr)
        #expect(try t2.readNDEF() == m)
        let reads = seen.current.filter { $0.command[1] == 0xB0 }.count
        // Pages 0-3, then the data area up to the message end: 5 (lock TLV) + 4 (TLV header) + 863
        // = 872 bytes, the whole CC data area; 888 bytes in 16-byte reads: 56.
        let minimum = 1 + (5 + 4 + m.count + 15) / 16
        #expect(minimum == 56)
        #expect(reads == minimum)
    }

    @Test("lock: CC 0F, dynamic and static lock bits; writes refused afterwards")
    func lock() throws {
        let (t, model, _) = try tag(.ntag213)
        try t.writeNDEF(message(20))
        let report = try t.makeReadOnly()
        #expect(report.refusesWrites && report.state.isFullyLocked)
        #expect(report.done == ["set the CC write access to 0F", "set the dynamic lock bits (page 40)", "set the static lock bytes"])
        #expect(model.contents[15] == 0x0F)
        #expect(model.contents[10...11] == [0xFF, 0xFF])
        // The lock control TLV names 12 bits at byte 160 (page 28h): FF 0F; byte 2 (block-locking
        // bits) and byte 3 (RFUI, BD as shipped) are untouched.
        #expect(model.contents[160...163] == [0xFF, 0x0F, 0x00, 0xBD])
        #expect(t.status == .readOnly)
        #expect(try t.readNDEF() == message(20))
    }
}
