import ISO7816
@testable import NFCTags
import Testing
import VirtualCard

/// `Scripts/bench desfire`: the exchanges `info`, `ls` and a 4 KB read in each communication mode
/// take, as the CLI makes them (one connection: GetVersion proves the card, one SELECT per
/// application, at most one authentication), against the minimum the chip's frame size allows:
/// an answer of n bytes needs ceil(n / 59) frames (FSC 64 less PCB, CRC, status). Prints the table
/// and asserts the minimum.
@Suite("DESFire exchange counts: info, ls, a 4 KB file in every mode, at the minimum")
struct DESFireExchangeCountTests {
    static let frame = 59
    static func frames(_ bytes: Int) -> Int { max(1, (bytes + frame - 1) / frame) }

    /// `apdu desfire info`: GetVersion (3 frames: 7, 7 and 14 bytes), SelectApplication 000000,
    /// GetKeySettings, FreeMemory.
    @Test("info: GetVersion's three frames, one SELECT, GetKeySettings, FreeMemory")
    func info() throws {
        let (transport, channel) = desfireTransport(DESFireModel(image: .transit()))
        let card = try #require(try DESFireReader.detect(transport))
        try card.selectApplication(.picc)
        _ = try card.keySettings()
        _ = try card.freeMemory()
        let minimum = 3 + 1 + 1 + 1
        print("desfire bench: info \(channel.exchanges) exchanges (minimum \(minimum))")
        #expect(channel.exchanges == minimum)
    }

    /// `apdu desfire ls` of the transit card: GetVersion, the card's SELECT, GetKeySettings and
    /// GetApplicationIDs, then per application SELECT, GetKeySettings, GetFileIDs and one
    /// GetFileSettings per file (the private application refuses its file list).
    @Test("ls: per application one SELECT, its key settings and file list, one GetFileSettings per file")
    func list() throws {
        let (transport, channel) = desfireTransport(DESFireModel(image: .transit()))
        let card = try #require(try DESFireReader.detect(transport))
        let survey = try card.survey()
        let files = survey.applications.reduce(0) { $0 + ($1.files?.count ?? 0) }
        let minimum = 3 + 3 + survey.applications.count * 3 + files
        print("desfire bench: ls \(channel.exchanges) exchanges for \(survey.applications.count) applications, \(files) files (minimum \(minimum))")
        #expect(channel.exchanges == minimum && files == 5)
    }

    /// A 4 KB standard data file read whole, as `apdu desfire read` reads it: GetVersion, SELECT,
    /// the authentication (none for free access), GetFileSettings, one ReadData whose answer
    /// comes in 59-byte frames. The answer's length per scheme and mode: plain unauthenticated
    /// 4096; EV1 with its 8-byte CMAC (plain and MAC) or enciphered (data ‖ CRC32 ‖ padding,
    /// 4112); legacy MAC 4 bytes, enciphered data ‖ CRC16 ‖ padding (4104); EV2 MAC 8, FULL
    /// padded data ‖ MAC (4120).
    @Test("a 4 KB read in plain, MAC and full under each scheme: ReadData's answer in the fewest 59-byte frames")
    func fourKilobytes() throws {
        let size = 4096
        let cases: [(String, DESFireModel.KeyType, DESFireAuthenticationScheme?, CommMode, answer: Int, auth: Int)] = [
            ("plain, no key", .aes, nil, .plain, 4096, 0),
            ("legacy MAC", .tdes, .legacy, .mac, 4100, 2), ("legacy full", .tdes, .legacy, .full, 4104, 2),
            ("EV1 AES plain", .aes, .aes, .plain, 4104, 2), ("EV1 AES MAC", .aes, .aes, .mac, 4104, 2), ("EV1 AES full", .aes, .aes, .full, 4112, 2),
            ("EV1 3K3DES full", .tdes3, .iso, .full, 4104, 2),
            ("EV2 plain", .aes, .ev2, .plain, 4096, 2), ("EV2 MAC", .aes, .ev2, .mac, 4104, 2), ("EV2 full", .aes, .ev2, .full, 4120, 2),
        ]
        var lines: [String] = []
        for (name, keyType, scheme, mode, answer, auth) in cases {
            let content = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            let access = scheme == nil ? DESFireModel.AccessRights(0xE000) : DESFireModel.AccessRights(0x0000)
            let app = DESFireModel.Application(aid: 0x00F001, keyType: keyType, keyCount: 1, files: [
                DESFireModel.File(number: 1, commMode: DESFireModel.CommMode(rawValue: DESFireFileSettings.commByte(mode))!, access: access, content: .standard(content)),
            ])
            let model = DESFireModel(image: DESFireModel.Image(chip: DESFireModel.Chip(generation: .ev2), applications: [app]))
            let (transport, channel) = desfireTransport(model)
            let card = try #require(try DESFireReader.detect(transport))
            let aid = try #require(DESFireApplicationID(rawValue: 0x00F001))
            try card.selectApplication(aid)
            if let scheme { try card.authenticate(keyNumber: 0, key: .zero(keyType == .tdes ? .des : keyType == .tdes3 ? .tdes3 : .aes), scheme: scheme) }
            let settings = try card.fileSettings(1)
            let before = channel.exchanges
            #expect(try card.contents(1, settings: settings) == .data(content), "\(name)")
            let reads = channel.exchanges - before
            let minimum = 3 + 1 + auth + 1 + Self.frames(answer)
            lines.append("\(name): \(channel.exchanges) exchanges, ReadData \(reads) frames (minimum \(minimum) / \(Self.frames(answer)))")
            #expect(reads == Self.frames(answer) && channel.exchanges == minimum, "\(name): \(reads) frames")
        }
        print("desfire bench: a 4 KB file read whole\n  " + lines.joined(separator: "\n  "))
    }
}
