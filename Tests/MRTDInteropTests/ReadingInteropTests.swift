import ISO7816
import MRTD
import Testing
import VirtualCard

@Suite("MRTD reader × emulated chip: read sizes, faults, files")
struct ReadingInteropTests {
    struct Form: CustomTestStringConvertible, Sendable {
        let name: String
        /// The reader (PC/SC side) carries extended APDUs.
        let readerExtended: Bool
        let chip: @Sendable (inout MRTDChip.Configuration) -> Void
        /// The most plain bytes one answer of this chip carries under AES secure messaging.
        let largestServed: Int
        var testDescription: String { name }
    }

    static let forms: [Form] = [
        Form(name: "extended length on both sides", readerExtended: true, chip: { _ in }, largestServed: 65536),
        Form(name: "a reader without extended length", readerExtended: false, chip: { _ in }, largestServed: 223),
        Form(name: "a chip without extended length", readerExtended: true, chip: { $0.extendedLength = false }, largestServed: 223),
        Form(name: "a chip refusing more than 192 bytes (protected 67 00)", readerExtended: false, chip: { $0.largestLe = 192 }, largestServed: 192),
        Form(name: "a chip refusing more than 192 bytes (bare 67 00, gmrtd #457)", readerExtended: false,
             chip: { $0.largestLe = 192; $0.oversizedLe = .unprotected }, largestServed: 192),
        Form(name: "a chip refusing more than 4096 bytes, extended", readerExtended: true, chip: { $0.largestLe = 4096 }, largestServed: 4096),
        Form(name: "a chip answering 90 00 at the end of a file (no 62 82)", readerExtended: false, chip: { $0.endOfFileWarning = false }, largestServed: 223),
    ]

    @Test("every file whole, at most one exchange per file above the minimum for the largest size the chip serves", arguments: forms)
    func readForms(_ form: Form) throws {
        let specimen = Specimens.standard
        let rig = Rig(specimen, form.chip, readerExtendedLength: form.readerExtended)
        _ = try rig.reader.readCardAccess()
        _ = try? rig.reader.readATRInfo()
        _ = try rig.reader.establishAccess(.auto, key: specimen.mrzKey)
        var report: [String] = []
        for name in ["EF.COM", "EF.SOD", "DG1", "DG2", "DG11", "DG12", "DG14", "DG15"] {
            let file = name == "EF.COM" ? MRTDFile.com : name == "EF.SOD" ? .sod : MRTDFile.dataGroup(Int(name.dropFirst(2))!)!
            let before = rig.reader.statistics.exchanges
            let content = try rig.reader.readFile(file)
            let used = rig.reader.statistics.exchanges - before
            let length = specimen.bytes(name)?.count ?? 0
            #expect(content == .read(specimen.bytes(name) ?? []), "\(name)")
            let minimum = (length + form.largestServed - 1) / form.largestServed
            report.append("\(name) \(length) B: \(used) (minimum \(minimum))")
            // One more than the minimum at most: the size ladder's one refusal on the connection.
            #expect(used <= minimum + 1, "\(name): \(used) exchanges for \(length) bytes, minimum \(minimum)")
        }
        #expect(rig.reader.statistics.sessionRestarts == 0)
        print("\(form.name): \(report.joined(separator: "; "))")
    }

    @Test("a 2048-bit DH PACE without extended length: a clear error, never a wrong APDU")
    func dh2048Short() throws {
        let specimen = Specimens.named("pace genericDH AES-256 id 2 short") { $0.pace = [.init(mapping: .genericDH, cipher: .aes256, parameterID: 2)] }
        #expect { try Rig(specimen, { $0.extendedLength = false }, readerExtendedLength: false).reader.readDocument(key: specimen.mrzKey) } throws: {
            ($0 as? MRTDProtocolError)?.kind == .unsupported
        }
    }

    @Test("RSA-2048 active authentication without extended length: not verified (it does not fit), never failed")
    func bigSignatureShort() throws {
        let specimen = Specimens.named("aa rsa 2048 short") { $0.activeAuthentication = .rsa(bits: 2048); $0.chipAuthentication = nil }
        let read = try Rig(specimen, { $0.extendedLength = false }, readerExtendedLength: false).reader.readDocument(key: specimen.mrzKey)
        #expect(read.activeAuthentication.status == .notVerified, "\(read.activeAuthentication)")
        let extended = try Rig(specimen).reader.readDocument(key: specimen.mrzKey)
        #expect(extended.activeAuthentication.status == .verified, "\(extended.activeAuthentication)")
    }

    @Test("an answer altered in transit: its MAC fails, the chip's session ends, access control runs again and the read completes")
    func alteredAnswer() throws {
        let specimen = Specimens.standard
        let chip = MRTDChip(document: specimen.document)
        let channel = FlippingChannel(card: chip)
        let reader = MRTDReader(transport: APDUTransport(channel: channel))
        _ = try reader.establishAccess(.pace, key: specimen.mrzKey)
        // Flip a bit in the cryptogram of DG2's first answer.
        channel.flipNextLongAnswer = true
        #expect(try reader.readFile(.dataGroup(2)!) == .read(specimen.bytes("DG2")!))
        #expect(channel.flipped == 1)
        #expect(reader.statistics.sessionRestarts == 1)
        #expect(try reader.readFile(.dataGroup(1)!) == .read(specimen.bytes("DG1")!))
    }

    @Test("EF.DIR and EF.ATR/INFO at MF level, by short EF identifier (ISO 7816-4: EF.DIR is SFI 1E)")
    func masterFileFiles() throws {
        var document = Specimens.standard.document
        // One application template: the eMRTD AID.
        let dir: [UInt8] = [0x61, 0x09, 0x4F, 0x07, 0xA0, 0x00, 0x00, 0x02, 0x47, 0x10, 0x01]
        document.files[.dir] = dir
        let rig = Rig(document: document)
        #expect(try rig.reader.readDirectory() == dir)
        // Found by its short identifier, without a SELECT.
        #expect(!rig.log.instructions.contains(0xA4))
        #expect(try rig.reader.readATRInfo() != nil)
        #expect(rig.reader.options.chipSupportsExtendedLength == true)
    }
}

/// A channel into an emulated card that can flip a bit of one answer on the way back.
final class FlippingChannel: CardChannel {
    let card: any EmulatedCard
    var flipNextLongAnswer = false
    private(set) var flipped = 0
    init(card: any EmulatedCard) {
        self.card = card
        card.reset()
    }
    var supportsExtendedLength: Bool { true }
    func transmit(_ command: [UInt8]) throws -> [UInt8] {
        var answer = card.process(command)
        if flipNextLongAnswer, answer.count > 100 {
            answer[20] ^= 0x01
            flipNextLongAnswer = false
            flipped += 1
        }
        return answer
    }
}
