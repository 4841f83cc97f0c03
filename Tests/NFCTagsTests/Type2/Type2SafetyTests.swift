import ISO7816
import NFCTags
import Testing
import TestSupport
import VirtualCard

/// The Type 2 failures issue 12 reproduced, one test each, against the chip-faithful emulator.
@Suite("Type 2 do-no-harm: partly locked, passwords, lock positions, pages past 255, hostile tags")
struct Type2SafetyTests {
    /// Chips that answer GET_VERSION through a transparent reader, where it proves them (lock
    /// pages and AUTH0 are interpreted only on proof); the others through storage pseudo-APDUs.
    func detect(_ model: Type2TagModel, tolerant: Bool = false) throws -> Type2Tag {
        guard model.chip.version != nil else {
            return try Type2Tag.detect(APDUTransport(channel: EmulatedChannel(card: model)), atr: model.atr, tolerant: tolerant)
        }
        let transport = APDUTransport(channel: EmulatedChannel(card: ContactlessReader(.transparent, tag: model)))
        return try Type2Tag.detect(transport, atr: model.atr, tolerant: tolerant, commands: TagCommandChannel(transport: transport, dialect: .transparent))
    }

    func holding(_ chip: Type2TagModel.Chip, _ message: [UInt8]) throws -> Type2TagModel {
        let model = Type2TagModel(chip: chip)
        try detect(model).writeNDEF(message)
        return model
    }

    /// A tag through a storage-only reader: no GET_VERSION, nothing proves the chip.
    func storage(_ model: Type2TagModel) throws -> Type2Tag {
        try Type2Tag.detect(APDUTransport(channel: EmulatedChannel(card: model)), atr: model.atr)
    }

    /// The end of the chip's user memory (its first lock or configuration page), from the
    /// emulator's datasheet table.
    static func userMemoryEnd(_ chip: Type2TagModel.Chip) -> Int {
        (chip.lockBytesInDataArea ? nil : chip.dynamicLockPage).map { $0 * 4 } ?? chip.passwords.map { $0.firstConfigPage * 4 } ?? chip.pages * 4
    }

    /// `chip` with its CC's size byte set to `ccSize` and an empty NDEF TLV (no lock control TLV).
    func reformatted(_ chip: Type2TagModel.Chip, ccSize: UInt8) -> [UInt8] {
        var image = Type2TagModel.factoryImage(chip: chip)
        image[14] = ccSize
        // Only user memory is cleared: a CC larger than the chip's user memory (an NTAG212 with a
        // 144-byte CC) must not clear its real lock and configuration pages.
        for i in 16..<min(16 + Int(ccSize) * 8, Self.userMemoryEnd(chip)) { image[i] = 0 }
        image.replaceSubrange(16..<19, with: [0x03, 0x00, 0xFE])
        return image
    }

    @Test("the guesses of issue 25 behind a storage reader: a CC size names no chip, reads no AUTH0, refuses nothing, places no lock bit",
          arguments: [(Type2TagModel.Chip.ntag215, UInt8(0x12)), (.ntag216, 0x12), (.ntag212, 0x12), (.ntag213, 0x06), (.ntag215, 0x06), (.ultralightC, 0x06), (.ultralightC, 0x12)])
    func noGuesses(_ chip: Type2TagModel.Chip, _ ccSize: UInt8) throws {
        var image = reformatted(chip, ccSize: ccSize)
        // Where the old guess looked (an NTAG210 for a 48-byte CC, an NTAG213 for 144 bytes), user
        // memory of this chip that would read as AUTH0 = 0 (every page protected) and as every
        // dynamic lock bit set at the NFC Forum default position.
        let guessedAUTH0 = ccSize == 0x06 ? 0x10 : 0x29, defaultLock = 4 + Int(ccSize) * 2
        if guessedAUTH0 * 4 + 4 <= Self.userMemoryEnd(chip) { image[guessedAUTH0 * 4 + 3] = 0x00 }
        if ccSize > 0x06, defaultLock * 4 + 4 <= Self.userMemoryEnd(chip) { image.replaceSubrange((defaultLock * 4)..<(defaultLock * 4 + 2), with: [0xFF, 0xFF]) }
        let model = Type2TagModel(chip: chip, memory: image)
        let tag = try storage(model)
        #expect(tag.chip.chip == nil && tag.chip.name.contains("not proven") || tag.chip.name == "unknown Type 2 chip", "\(chip.name): \(tag.chip.name)")
        #expect(tag.status == .readWrite, "\(chip.name) CC \(ccSize): \(tag.status)")
        let state = try tag.readLockState()
        #expect(state.password == .unknown("the chip is not proven, so no page is read as its configuration"))
        #expect(state.lockedPages.allSatisfy { $0 < 16 }, "\(chip.name): \(state.lockedPages)")
        // A write within the data area goes ahead, and the tag's own answers decide.
        let message = patternMessage(min(tag.capacity, 30), seed: 4)
        try tag.writeNDEF(message)
        #expect(ReferenceType2.read(model.contents) == .message(message))
        // The lock: the data area past 48 bytes has no lock bytes anyone proved, so nothing is written.
        let before = model.contents
        if ccSize > 0x06 {
            #expect(throws: TagError.self) { try storage(model).makeReadOnly() }
            #expect(model.contents == before, "\(chip.name): a refused lock wrote")
        }
    }

    @Test("the NFC Forum test layouts with a lock control TLV and a memory control TLV (144-byte data area) read and write behind a storage reader")
    func forumLayouts() throws {
        for tlvs: [UInt8] in [[0x01, 0x03, 0xA0, 0x10, 0x44], [0x02, 0x03, 0x80, 0x04, 0x03], [0x01, 0x03, 0xA0, 0x10, 0x44, 0x02, 0x03, 0x80, 0x04, 0x03]] {
            var image = reformatted(.ntag213, ccSize: 0x12)
            image.replaceSubrange(16..<(16 + tlvs.count + 3), with: tlvs + [0x03, 0x00, 0xFE])
            let model = Type2TagModel(chip: .ntag213, memory: image)
            let tag = try storage(model)
            #expect(tag.status == .readWrite, "\(tlvs.hexString)")
            let message = patternMessage(60, seed: 7)
            try tag.writeNDEF(message)
            #expect(ReferenceType2.read(model.contents) == .message(message), "\(tlvs.hexString)")
            #expect(try storage(model).readNDEF() == message)
        }
    }

    @Test("NTAG215 with its first pages locked: readOnly, and a write is refused before anything changes")
    func firstPagesLocked() throws {
        let model = try holding(.ntag215, patternMessage(100, seed: 1))
        var image = model.contents
        image[10] |= 0xF0                                       // L4-L7: pages 4-7 read-only
        model.setContents(image)
        let tag = try detect(model)
        #expect(tag.status == .readOnly)
        #expect(try tag.readLockState().lockedPages.starts(with: [4, 5, 6, 7]))
        #expect(throws: TagError.self) { try tag.writeNDEF(patternMessage(20, seed: 2)) }
        #expect(model.contents == image)
    }

    @Test("dynamic lock bits: a message in the unlocked pages is written; one reaching a locked page is refused untouched")
    func dynamicLocked() throws {
        let model = try holding(.ntag215, patternMessage(10, seed: 1))
        var image = model.contents
        image[0x82 * 4] = 0x02                                  // NTAG215 bit 1: pages 32-47
        model.setContents(image)
        let small = patternMessage(40, seed: 2)                 // pages 4-15
        try detect(model).writeNDEF(small)
        #expect(ReferenceType2.read(model.contents) == .message(small))
        let before = model.contents
        do {
            try detect(model).writeNDEF(patternMessage(200, seed: 3))
            Issue.record("wrote over locked pages")
        } catch let e as TagError {
            #expect(e.kind == .readOnly && e.message.contains("page 32") && e.message.contains("nothing was written"), "\(e)")
        }
        #expect(model.contents == before)
    }

    @Test("locked pages whose bytes do not change are no obstacle")
    func lockedButUnchanged() throws {
        let old = patternMessage(60, seed: 1)
        let model = try holding(.ntag213, old)
        var image = model.contents
        image[11] |= 0x03                                       // L8, L9: pages 8-9 read-only
        model.setContents(image)
        var new = old
        new[50] ^= 0xFF                                         // changes page 17 only, besides the length
        let tag = try detect(model)
        #expect(tag.status == .readWrite)
        try tag.writeNDEF(new)
        #expect(ReferenceType2.read(model.contents) == .message(new))
        #expect(model.contents[32..<40] == image[32..<40])
    }

    @Test("the page holding the length is locked: even a same-length rewrite (body pages only) is refused before any write")
    func lockedLengthPage() throws {
        let old = patternMessage(60, seed: 1)
        let model = try holding(.ntag213, old)
        var image = model.contents
        image[10] |= 0x20                                       // L5: page 5 holds the NDEF TLV's length
        model.setContents(image)
        var new = old
        new[40] ^= 0xFF
        do { try detect(model).writeNDEF(new); Issue.record("wrote with the length page locked") } catch let e as TagError {
            #expect(e.kind == .readOnly && e.message.contains("page 5") && e.message.contains("nothing was written"), "\(e)")
        }
        #expect(model.contents == image)
    }

    @Test("the configuration pages at the very end of memory: a READ rolling over there is not mistaken for a password",
          arguments: [Type2TagModel.Chip.ntag213, .ntag215, .ntag216, .ntag212, .ultralightEV1b, .ntag210])
    func configAtTheEnd(chip: Type2TagModel.Chip) throws {
        let tag = try detect(Type2TagModel(chip: chip))
        #expect(try tag.readLockState().password == .disabled, "\(chip.name)")
        #expect(tag.chip.name == chip.name)
    }

    @Test("AUTH0 write protection: writes below AUTH0 work, writes reaching it are refused untouched")
    func writeProtected() throws {
        let model = try holding(.ntag213, patternMessage(10, seed: 1))
        var image = model.contents
        image[0x29 * 4 + 3] = 0x10                              // AUTH0 = 10h, PROT 0
        model.setContents(image)
        let tag = try detect(model)
        #expect(try tag.readLockState().password == .protects(fromPage: 0x10, reads: false))
        try tag.writeNDEF(patternMessage(30, seed: 2))
        let before = model.contents
        #expect(throws: TagError.self) { try detect(model).writeNDEF(patternMessage(100, seed: 3)) }
        #expect(model.contents == before)
    }

    @Test("AUTH0 read protection: a message running into protected pages fails to read; it is never read as rolled-over bytes")
    func readProtected() throws {
        let message = patternMessage(100, seed: 1)
        let model = try holding(.ntag213, message)
        var image = model.contents
        image[0x2A * 4] = 0x80                                  // PROT
        image[0x29 * 4 + 3] = 0x0E                              // AUTH0 = 0Eh: pages 14 on
        model.setContents(image)
        // The READ that would roll over at AUTH0 is caught where it happens: in detection.
        do {
            let tag = try detect(model)
            _ = try tag.readNDEF()
            Issue.record("read a message that runs into read-protected pages")
        } catch let e as TagError {
            #expect(e.kind == .readFailed && e.message.contains("page 14"), "\(e)")
        }
        #expect(throws: TagError.self) { try detect(model).writeNDEF(patternMessage(20, seed: 2)) }
        #expect(model.contents == image)
        // ndef-status still sees the tag (tolerant detection) and says why the message is unreadable.
        let tolerant = try detect(model, tolerant: true)
        #expect(throws: TagError.self) { try tolerant.readNDEF() }
        // Its configuration pages lie past AUTH0 too: the password state is unknown, and said so.
        guard case .unknown = try tolerant.readLockState().password else { Issue.record("password state should be unknown"); return }
    }

    @Test("NTAG215/216 lock: the lock bits go to 82h / E2h; the user pages after the CC's data area stay as they were",
          arguments: [(Type2TagModel.Chip.ntag215, 0x80, 0x82), (.ntag216, 0xDE, 0xE2)])
    func lockPosition(chip: Type2TagModel.Chip, userPage: Int, lockPage: Int) throws {
        let model = try holding(chip, patternMessage(50, seed: 1))
        var image = model.contents
        for i in (userPage * 4)..<(lockPage * 4) { image[i] = 0xA5 }  // user data the CC does not cover
        model.setContents(image)
        let report = try detect(model).makeReadOnly()
        #expect(report.refusesWrites)
        #expect(model.contents[(userPage * 4)..<(lockPage * 4)].allSatisfy { $0 == 0xA5 })
        #expect(model.contents[lockPage * 4] == 0xFF)
        #expect(ReferenceType2.read(model.contents) == .message(patternMessage(50, seed: 1)))
    }

    @Test("a lock control TLV pointing outside the tag: a clear error before any write, no trap")
    func lockTLVOutside() throws {
        var image = Type2TagModel.factoryImage(chip: .ntag213)
        for (i, b) in [UInt8](arrayLiteral: 0x01, 0x03, 0xF0, 0x10, 0x4F, 0x03, 0x00, 0xFE).enumerated() { image[16 + i] = b }  // 15 << 15
        let model = Type2TagModel(chip: .ntag213, memory: image)
        do {
            _ = try detect(model).makeReadOnly()
            Issue.record("locked a tag whose lock bytes are nowhere")
        } catch let e as TagError {
            #expect(e.message.contains("outside the tag's memory") && e.message.contains("nothing was written"), "\(e)")
        }
        #expect(model.contents == image)
    }

    @Test("an interrupted lock reads as partly locked (not simply read-only), and locking again finishes it")
    func interruptedLock() throws {
        let model = try holding(.ntag213, patternMessage(20, seed: 1))
        var image = model.contents
        image[15] = 0x0F                                        // CC read-only, lock bits clear
        model.setContents(image)
        let tag = try detect(model)
        let state = try tag.readLockState()
        #expect(tag.status == .readOnly && state.isPartlyLocked && !state.isFullyLocked)
        let report = try tag.makeReadOnly()
        #expect(report.alreadyDone == ["CC write access 0F"])
        #expect(report.refusesWrites && report.state.isFullyLocked)
    }

    @Test("a data area past page 255: reads and writes that would need it are refused, never wrapped; reachable capacity is honest")
    func pastPage255() throws {
        let model = Type2TagModel(chip: .twoSectorT2T)
        let tag = try detect(model)
        #expect(tag.capacity > tag.reachableCapacity)
        // Pages 4-255, less the lock control TLV, the 2 lock bytes it reserves at 960, the 3-byte NDEF header.
        #expect(tag.reachableCapacity == 1024 - 16 - 5 - 2 - 4)
        let before = model.contents
        do {
            try tag.writeNDEF(patternMessage(tag.reachableCapacity + 1, seed: 1))
            Issue.record("wrote past page 255")
        } catch let e as TagError {
            #expect(e.kind == .beyondReach && e.message.contains("255"), "\(e)")
        }
        #expect(model.contents == before)
        // A message another device wrote past page 255: the read refuses instead of wrapping.
        var image = before
        for (i, b) in [UInt8](arrayLiteral: 0x03, 0xFF, 0x04, 0x00).enumerated() { image[21 + i] = b }
        model.setContents(image)
        #expect(throws: TagError.self) { try detect(model).readNDEF() }
        #expect(throws: TagError.self) { try detect(model).dump(pages: 250...260) }
    }

    @Test("a dump across a read-protected page shows the refused pages as refused, never the rolled-over pages 0-3")
    func dumpAcrossAUTH0() throws {
        let model = try holding(.ntag213, patternMessage(100, seed: 1))
        var image = model.contents
        image[0x2A * 4] = 0x80                                  // PROT
        image[0x29 * 4 + 3] = 0x0E                              // AUTH0 = 0Eh
        model.setContents(image)
        let rows = try Type2Tag(transport: APDUTransport(channel: EmulatedChannel(card: model)), uid: nil).dump(pages: 12...17)
        #expect(rows.map(\.page) == Array(12...17))
        #expect(rows[0].bytes == Array(image[48..<52]) && rows[1].bytes == Array(image[52..<56]))
        #expect(rows[2...].allSatisfy { $0.bytes == nil }, "\(rows)")
    }

    @Test("page roles come from the chip: NTAG215's pages after the CC's data area are user memory, its lock page is 82h")
    func roles() {
        let ntag215 = Type2Chip.ntag215, end = 16 + 496
        #expect(ntag215.role(ofPage: 0x7F, dataAreaEnd: end) == "data")
        #expect(ntag215.role(ofPage: 0x80, dataAreaEnd: end) == "user memory outside the CC's data area")
        #expect(ntag215.role(ofPage: 0x82, dataAreaEnd: end) == "dynamic lock")
        #expect(ntag215.role(ofPage: 0x83, dataAreaEnd: end) == "config (CFG0, AUTH0)")
        #expect(ntag215.role(ofPage: 0x85, dataAreaEnd: end) == "PWD (reads as 00)")
        #expect(ntag215.role(ofPage: 0x86, dataAreaEnd: end) == "PACK (reads as 00)")
        #expect(ntag215.role(ofPage: 0x87, dataAreaEnd: end) == "beyond the chip")
        #expect(Type2Chip.ntag213.role(ofPage: 0x28, dataAreaEnd: 160) == "dynamic lock")
    }

    @Test("a reader answering READ BINARY with fewer than 16 bytes: an error, not a trap")
    func shortAnswer() throws {
        let card = ScriptedCard(rules: [
            ScriptedCard.Rule(pattern: [0xFF, 0xCA], matchesAnyTail: true, response: [0x04, 0x01, 0x02, 0x03, 0x90, 0x00]),
            ScriptedCard.Rule(pattern: [0xFF, 0xB0], matchesAnyTail: true, response: [0xE1, 0x10, 0x06, 0x00, 0x90, 0x00]),
        ])
        let transport = APDUTransport(channel: EmulatedChannel(card: card))
        do { _ = try Type2Tag.detect(transport); Issue.record("accepted a 4-byte READ") } catch let e as TagError {
            #expect(e.kind == .readFailed && e.message.contains("4 bytes, 16 expected"), "\(e)")
        }
        #expect(throws: TagError.self) { try Type2Tag(transport: transport, uid: nil).dump(pages: 0...3) }
    }

    @Test("restore: another tag's backup is refused unless allowed; a lying length is restored over")
    func restoreChecks() throws {
        let old = patternMessage(300, seed: 1)
        let model = try holding(.ntag216, old)
        var backup: TagBackup?
        try detect(model).replaceNDEF(with: patternMessage(10, seed: 2)) { backup = $0 }
        let b = try #require(backup)
        // The length now lies (53,505 bytes, as the old split-length bug left tags).
        var image = model.contents
        image[17] = 0xFF; image[18] = 0xD1; image[19] = 0x01
        model.setContents(image)
        #expect(throws: TagError.self) { try detect(model) }
        let other = Type2TagModel(chip: .ntag216, uid: [0x04, 1, 2, 3, 4, 5, 6], memory: image)
        do { try detect(other, tolerant: true).restore(b); Issue.record("restored onto another tag") } catch let e as TagError {
            #expect(e.kind == .differentTag)
        }
        #expect(other.contents[16..<32] == image[16..<32])
        try detect(model, tolerant: true).restore(b)
        #expect(ReferenceType2.read(model.contents) == .message(old))
        try detect(other, tolerant: true).restore(b, allowingOtherTag: true)
        #expect(ReferenceType2.read(other.contents) == .message(old))
    }

    @Test("overlapping reserved areas count once: a message of exactly the capacity fits and reads back (found by Scripts/stress, seed 3)")
    func overlappingReserved() throws {
        var image = Type2TagModel.factoryImage(chip: .ntag215)
        for i in 16..<512 { image[i] = 0 }
        // Memory control TLVs reserving 52-56 and 51-54, then the NDEF TLV.
        let tlvs: [UInt8] = [0x02, 0x03, 0x34, 0x05, 0x04, 0x02, 0x03, 0x5B, 0x04, 0x03, 0x03, 0x00, 0xFE]
        for (i, b) in tlvs.enumerated() { image[16 + i] = b }
        let model = Type2TagModel(chip: .ntag215, memory: image)
        let tag = try detect(model)
        #expect(tag.capacity == 496 - 10 - 6 - 4)               // two TLVs, 6 reserved bytes (not 9), the 3-byte header
        let message = patternMessage(tag.capacity, seed: 9)
        try tag.writeNDEF(message)
        #expect(try detect(model).readNDEF() == message)
        #expect(ReferenceType2.read(model.contents) == .message(message))
    }

    @Test("the backup text format round-trips, accepts CRLF and a BOM, and names bad lines")
    func backupFormat() throws {
        let b = TagBackup(kind: "type2", uid: [4, 1, 2], capabilityContainer: [0xE1, 0x10, 0x12, 0x00], start: 16, bytes: [3, 0, 0xFE, 0], message: [], reader: "R\u{1B}[31m")
        let text = b.encoded()
        #expect(!text.contains("\u{1B}"))
        var parsed = try TagBackup(parsing: text)
        parsed.reader = b.reader
        #expect(parsed == b)
        let crlf = "\u{FEFF}" + text.replacingOccurrences(of: "\n", with: "\r\n")
        #expect(try TagBackup(parsing: crlf).bytes == b.bytes)
        #expect(TagBackup.isBackup(Array(crlf.utf8)))
        #expect(throws: TagBackup.ParseError.self) { try TagBackup(parsing: text.replacingOccurrences(of: "bytes 0300FE00", with: "bytes 0300F")) }
    }
}
