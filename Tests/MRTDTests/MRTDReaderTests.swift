import CardCrypto
import ISO7816
@testable import MRTD
import Testing

@Suite("MRTDReader: access control and reading")
struct MRTDReaderTests {
    static let key = try! MRTDAccessKey.mrz(documentNumber: "L898902C", dateOfBirth: "690806", dateOfExpiry: "940623")

    /// A data group of `count` bytes: tag, long-form length, a pattern.
    static func file(tag: UInt8, count: Int) -> [UInt8] {
        let body = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        return [tag] + BERTLV.encodeLength(body.count) + body
    }

    static func chip() -> TestPassportChip {
        let chip = TestPassportChip(key: key)
        chip.appFiles = [0x011E: h("60145F0104303130365F36063034303030305C026175"), 0x0101: file(tag: 0x61, count: 91),
                         0x0102: file(tag: 0x75, count: 20_000), 0x010E: file(tag: 0x6E, count: 300), 0x010B: file(tag: 0x6B, count: 40_000)]
        chip.eacProtected = [0x0103]
        return chip
    }

    static func reader(_ chip: TestPassportChip, _ configure: (inout MRTDReader.Options) -> Void = { _ in }) -> MRTDReader {
        var options = MRTDReader.Options()
        configure(&options)
        return MRTDReader(transport: APDUTransport(channel: chip), options: options)
    }

    @Test("auto on a BAC-only chip: no EF.CardAccess, BAC, then every file whole; DG3 protected, DG5 absent")
    func bacOnly() throws {
        let chip = Self.chip()
        let reader = Self.reader(chip)
        let access = try reader.establishAccess(.auto, key: Self.key)
        #expect(access.usedBAC && !access.fellBackToBAC && access.pace == nil)
        #expect(try reader.readFile(.com) == .read(chip.appFiles[0x011E]!))
        #expect(try reader.readFile(.dataGroup(1)!) == .read(chip.appFiles[0x0101]!))
        #expect(try reader.readFile(.dataGroup(2)!) == .read(chip.appFiles[0x0102]!))
        #expect(try reader.readFile(.dataGroup(3)!) == .protected(.securityStatusNotSatisfied))
        #expect(try reader.readFile(.dataGroup(5)!) == .notFound)
        #expect(reader.statistics.exchanges == chip.exchanges)
    }

    @Test("short APDUs: 256 refused with a protected 67 00, then 224 learned once for the connection")
    func ladder() throws {
        let chip = Self.chip()
        chip.maximumRead = 224
        let reader = Self.reader(chip)
        _ = try reader.establishAccess(.bac, key: Self.key)
        let before = chip.exchanges
        #expect(try reader.readFile(.dataGroup(2)!) == .read(chip.appFiles[0x0102]!))
        // 20 004 bytes at 224 a read: 90 reads, plus the one refused size.
        #expect(chip.exchanges - before == 91)
        #expect(reader.currentReadSize == 224)
        let again = chip.exchanges
        #expect(try reader.readFile(.dataGroup(14)!) == .read(chip.appFiles[0x010E]!))
        #expect(chip.exchanges - again == 2)
    }

    @Test("a bare 67 00 to an oversized protected READ (gmrtd #457): the chip is opened again and the read goes on; the size is learned once")
    func bareWrongLength() throws {
        let chip = Self.chip()
        chip.maximumRead = 160
        chip.bareWrongLength = true
        let reader = Self.reader(chip)
        _ = try reader.establishAccess(.bac, key: Self.key)
        #expect(try reader.readFile(.dataGroup(14)!) == .read(chip.appFiles[0x010E]!))
        #expect(reader.currentReadSize == 160)
        // 256, 224 and 192 refused bare: each ends the session (nothing authenticates a bare
        // answer), and BAC runs again before the next read.
        #expect(reader.statistics.sessionRestarts == 3)
        #expect(try reader.readFile(.dataGroup(1)!) == .read(chip.appFiles[0x0101]!))
        #expect(reader.statistics.sessionRestarts == 3)
    }

    @Test("a bare 6A 82 or 69 82 under secure messaging ends the session; the next file is read under new keys")
    func bareRefusalReopens() throws {
        let chip = Self.chip()
        chip.bareErrors = true
        let reader = Self.reader(chip)
        _ = try reader.establishAccess(.bac, key: Self.key)
        #expect(try reader.readFile(.dataGroup(3)!) == .protected(.securityStatusNotSatisfied))
        #expect(!reader.channel.isSecured)
        #expect(try reader.readFile(.dataGroup(1)!) == .read(chip.appFiles[0x0101]!))
        #expect(reader.statistics.sessionRestarts == 1)
        #expect(try reader.readFile(.dataGroup(9)!) == .notFound)
        #expect(try reader.readFile(.dataGroup(14)!) == .read(chip.appFiles[0x010E]!))
        #expect(reader.statistics.sessionRestarts == 2)
    }

    @Test("extended length on both sides: 20 KB in one READ; 40 KB past offset 32767 with B1 and DO 54 when the chip takes 4096")
    func extendedLength() throws {
        let chip = Self.chip()
        chip.supportsExtendedLength = true
        let reader = Self.reader(chip) { $0.chipSupportsExtendedLength = true }
        _ = try reader.establishAccess(.bac, key: Self.key)
        let before = chip.exchanges
        #expect(try reader.readFile(.dataGroup(2)!) == .read(chip.appFiles[0x0102]!))
        #expect(chip.exchanges - before == 1)
        chip.maximumRead = 4096
        #expect(try reader.readFile(.dataGroup(11)!) == .read(chip.appFiles[0x010B]!))
        #expect(chip.log.contains { $0.count > 1 && $0[1] == 0xB1 })
        #expect(reader.currentReadSize == 4096)
    }

    @Test("no extended length unless the chip announced it, however large the reader allows")
    func noExtendedWithoutChip() throws {
        let chip = Self.chip()
        chip.supportsExtendedLength = true
        let reader = Self.reader(chip)
        _ = try reader.establishAccess(.bac, key: Self.key)
        #expect(try reader.readFile(.dataGroup(2)!) == .read(chip.appFiles[0x0102]!))
        #expect(!chip.log.contains { $0.count > 4 && $0[4] == 0 && $0[1] == 0xB0 && $0.count == 7 + 16 })
        #expect(reader.currentReadSize <= 256)
    }

    @Test("a chip answering 67 00 to any Le past the end: small files still read, through a header read")
    func wrongLengthPastEnd() throws {
        let chip = Self.chip()
        chip.wrongLengthPastEnd = true
        chip.appFiles[0x0101] = Self.file(tag: 0x61, count: 40)
        let reader = Self.reader(chip) { $0.readSizes = [256, 128] }
        _ = try reader.establishAccess(.bac, key: Self.key)
        #expect(try reader.readFile(.dataGroup(1)!) == .read(chip.appFiles[0x0101]!))
    }

    @Test("a chip without short EF identifiers: one refusal, then SELECT for every file")
    func noShortIdentifiers() throws {
        let chip = Self.chip()
        chip.supportsShortIdentifiers = false
        let reader = Self.reader(chip)
        _ = try reader.establishAccess(.bac, key: Self.key)
        #expect(try reader.readFile(.dataGroup(1)!) == .read(chip.appFiles[0x0101]!))
        let before = chip.exchanges
        #expect(try reader.readFile(.com) == .read(chip.appFiles[0x011E]!))
        #expect(chip.exchanges - before == 2)
    }

    @Test("69 88 mid-read ends the session; BAC runs again with the same key and the read goes on from where it stopped")
    func sessionRestart() throws {
        let chip = Self.chip()
        chip.maximumRead = 224
        chip.failReadNumber = 5
        let reader = Self.reader(chip)
        _ = try reader.establishAccess(.bac, key: Self.key)
        #expect(try reader.readFile(.dataGroup(2)!) == .read(chip.appFiles[0x0102]!))
        #expect(reader.statistics.sessionRestarts == 1)
    }

    @Test("EF.DIR and EF.CardAccess only when asked, in the clear at MF level")
    func masterFileFiles() throws {
        let chip = Self.chip()
        chip.mfFiles = [0x2F00: h("610A4F08A000000247100001"), 0x011C: h(PACETests.g1CardAccess)]
        let reader = Self.reader(chip)
        #expect(try reader.readDirectory() == h("610A4F08A000000247100001"))
        #expect(try reader.readCardAccess() == h(PACETests.g1CardAccess))
        #expect(reader.cardAccess?.paceInfos.count == 1)
        #expect(chip.exchanges == 2)
    }

    @Test("a failed PACE is an error; with the fallback flag BAC runs and the result says so")
    func paceFallback() throws {
        let refused: [(String, String)] = [
            ("00B09C0000", PACETests.g1CardAccess + "9000"),
            ("0022C1A412800A04007F0007020204020283010184010D", "6A80"),
        ]
        let strict = MRTDReader(transport: APDUTransport(channel: ScriptedChip(refused)))
        #expect(throws: MRTDProtocolError.self) { try strict.establishAccess(.auto, key: Self.key) }
        var options = MRTDReader.Options()
        options.allowBACFallback = true
        options.random = BasicAccessControlTests.random
        let chip = ScriptedChip(refused + [("00A4040C07A0000002471001", "9000")] + Array(BasicAccessControlTests.exchanges.prefix(2)))
        let lenient = MRTDReader(transport: APDUTransport(channel: chip), options: options)
        let result = try lenient.establishAccess(.auto, key: Self.key)
        #expect(result.fellBackToBAC && result.paceFailure?.statusWord == .wrongData)
        #expect(chip.finished)
    }

    @Test("auto picks PACE from EF.CardAccess (CAM before GM) and runs it byte for byte (gmrtd's German recording)")
    func autoPACE() throws {
        let script = [("00B09C0000", PACECAMTests.cardAccess + "9000")] + Array(PACECAMTests.exchanges.prefix(5))
        var options = MRTDReader.Options()
        options.random = PACECAMTests.random
        let chip = ScriptedChip(script)
        let reader = MRTDReader(transport: APDUTransport(channel: chip), options: options)
        do {
            _ = try reader.establishAccess(.auto, key: PACECAMTests.key)
        } catch {
            // The recording ends before the protected SELECT of the application.
        }
        #expect(chip.finished)
        #expect(reader.channel.secureMessaging != nil)
    }

    @Test("EF.ATR/INFO announcing extended length turns it on: the 20 KB DG2 in one READ")
    func atrInfo() throws {
        let chip = Self.chip()
        chip.supportsExtendedLength = true
        chip.mfFiles = [0x2F01: h("7F66 08 0202 FFFF 0202 FFFF".replacingSpaces)]
        let reader = Self.reader(chip)
        #expect(try reader.readATRInfo() != nil)
        #expect(reader.options.chipSupportsExtendedLength == true)
        _ = try reader.establishAccess(.bac, key: Self.key)
        let before = chip.exchanges
        #expect(try reader.readFile(.dataGroup(2)!) == .read(chip.appFiles[0x0102]!))
        #expect(chip.exchanges - before == 1)
        reader.learnExtendedLength(historicalBytes: h("80 73 00 00 00".replacingSpaces))
        #expect(reader.options.chipSupportsExtendedLength == false)
    }

    @Test("file lengths from BER-TLV headers: short, long forms, two-byte tags, indefinite")
    func objectLengths() {
        #expect(MRTDReader.objectLength([0x61, 0x5B]) == .known(93))
        #expect(MRTDReader.objectLength([0x75, 0x82, 0x4E, 0x24]) == .known(20008))
        #expect(MRTDReader.objectLength([0x75, 0x82, 0x4E]) == .incomplete)
        #expect(MRTDReader.objectLength([0x7F, 0x61, 0x03]) == .known(6))
        #expect(MRTDReader.objectLength([0x77, 0x80]) == .unknown)
        #expect(MRTDReader.objectLength([0x77, 0x85, 1, 2, 3, 4, 5]) == .unknown)
        #expect(MRTDReader.objectLength([]) == .incomplete)
    }

    @Test("card capabilities: extended length from historical bytes and EF.ATR/INFO")
    func capabilities() {
        #expect(ChipCapabilities.extendedLength(historicalBytes: h("80 31 80 65 B0 85 05 00 11 12 0F FF 82 90 00".replacingSpaces)) == nil)
        #expect(ChipCapabilities.extendedLength(historicalBytes: h("80 73 00 00 40")) == true)
        #expect(ChipCapabilities.extendedLength(historicalBytes: h("80 73 00 00 00")) == false)
        #expect(ChipCapabilities.extendedLength(atrInfo: h("7F66 08 0202 0800 0202 0800"))?.maximumResponse == 0x800)
    }
}

extension String {
    var replacingSpaces: String { String(filter { $0 != " " }) }
}
