import ArgumentParser
import Dispatch
import FoundationEssentials
import Glibc
import ISO7816
import NFCTags
import VirtualCard

extension ContactlessReader.Dialect: ExpressibleByArgument {}
extension MifareClassicModel.Chip: ExpressibleByArgument {}

/// Saves a Classic card's memory to a hex file (16 bytes a line) after every command that changed it.
final class ChangeSaver: @unchecked Sendable {
    let tag: MifareClassicModel
    let path: String
    private var last: [UInt8]
    init(tag: MifareClassicModel, path: String) {
        self.tag = tag
        self.path = path
        last = tag.contents
    }

    func wrapping(_ card: any EmulatedCard) -> any EmulatedCard { Saving(inner: card, saver: self) }

    func saveIfChanged() {
        let now = tag.contents
        guard now != last else { return }
        last = now
        let lines = stride(from: 0, to: now.count, by: 16).map { Hex.encode(now[$0..<min($0 + 16, now.count)], separator: " ") }
        try? (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
    }

    final class Saving: EmulatedCard, @unchecked Sendable {
        let inner: any EmulatedCard
        let saver: ChangeSaver
        init(inner: any EmulatedCard, saver: ChangeSaver) {
            self.inner = inner
            self.saver = saver
        }
        var atr: [UInt8] { inner.atr }
        func reset() { inner.reset() }
        func process(_ apdu: [UInt8]) -> [UInt8] {
            defer { saver.saveIfChanged() }
            return inner.process(apdu)
        }
    }
}

extension APDUCommand {
    struct Emulate: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "emulate",
            abstract: "Put an emulated card into a vpcd virtual reader slot until interrupted.",
            discussion: """
                Cards: 'demo' (an ISO 7816 card with the demo application F0617064750 1), or a \
                command→response table with --script FILE (see docs/testing-without-hardware.md).
                """)

        @Option(help: "vpcd slot port (the reader.conf CHANNELID, +1 for the second slot).")
        var port: UInt16 = 35963

        @Option(help: "Host where pcscd's vpcd listens.")
        var host = "127.0.0.1"

        @Option(help: "Card model: demo.")
        var card = "demo"

        @Option(help: ArgumentHelp("Answer from a command→response table instead of a model.", valueName: "file"))
        var script: String?

        @Flag(help: "T=0 behaviour: answer data with 61xx and serve it by GET RESPONSE.")
        var getResponse = false

        @Flag(help: "Refuse GET RESPONSE whose CLA differs from the original command's.")
        var strictGetResponseCla = false

        @Flag(help: "Answer 6Cxx when Le does not match the data available.")
        var wrongLe = false

        @Option(help: ArgumentHelp("Fault: pull the card instead of answering APDU N+1.", valueName: "N"))
        var removeAfter: Int?

        @Option(help: ArgumentHelp("Fault: delay every answer by this many milliseconds.", valueName: "ms"))
        var delayMs: Int?

        @Option(help: ArgumentHelp("Fault: answer every APDU with these bytes.", valueName: "hex"))
        var garbage: String?

        @Flag(help: "End when pcscd closes the connection instead of reconnecting.")
        var once = false

        @Flag(help: "Emulate an NFC Forum Type 4 tag (with --ndef, --mle, --mlc, --file-size, --mapping, --read-only).")
        var type4 = false

        @Flag(help: "Emulate an NTAG 424 DNA as shipped (all-zero keys, empty NDEF file): EV2, secure messaging, SDM.")
        var ntag424 = false

        @Option(help: ArgumentHelp("Type 4: the NDEF message to hold (raw or hex file); changes are saved back with --save.", valueName: "file"))
        var ndef: String?

        @Flag(help: "Type 4: write the NDEF message back to --ndef after every change.")
        var save = false

        @Option(help: "Type 4: MLe, the largest R-APDU data.")
        var mle = 0xFF

        @Option(help: "Type 4: MLc, the largest C-APDU data.")
        var mlc = 0xFF

        @Option(help: "Type 4: NDEF file size, NLEN included.")
        var fileSize = 2048

        @Option(help: "Type 4: mapping version 2.0 or 3.0 (3.0 uses the extended file TLV when the file is 64 KiB or more).")
        var mapping = "2.0"

        @Flag(help: "Type 4: write access FF (read-only).")
        var readOnly = false

        @Option(help: ArgumentHelp("Emulate a Type 2 tag behind a PC/SC reader: ntag213, ntag215, ntag216, ultralight, ultralight-c.", valueName: "chip"))
        var type2: String?

        @Option(help: ArgumentHelp("Type 2 and --classic: load the memory image from this hex file and save every change back to it.", valueName: "file"))
        var memory: String?

        @Option(help: ArgumentHelp("The reader around a --type2/3/5 tag: storage (pseudo-APDUs only; Type 2's default), transparent (PC/SC Part 3 transparent exchange; Types 5 and 3's default) or acr122u.", valueName: "model"))
        var readerModel: ContactlessReader.Dialect?

        @Option(help: ArgumentHelp("Type 2: the tag's 7-byte UID in hex.", valueName: "hex"))
        var uid: String?

        @Option(help: ArgumentHelp("Type 2: the 32-byte originality signature READ_SIG returns (default: zeros, an unsigned chip).", valueName: "hex"))
        var signature: String?

        @Option(help: ArgumentHelp("Emulate a Type 5 (ISO 15693) tag: icode-slix, st25dv64k, tagit (behind --reader-model transparent unless storage is given).", valueName: "chip"))
        var type5: String?

        @Option(help: ArgumentHelp("Emulate a Type 3 (FeliCa) tag: felica-lite-s, felica-standard (behind --reader-model transparent or acr122u).", valueName: "chip"))
        var type3: String?

        @Option(help: ArgumentHelp("Emulate a MIFARE Classic card behind a storage reader: mini, classic-1k, classic-4k, plus-2k, plus-4k (factory-fresh; with --memory, that image).", valueName: "chip"))
        var classic: MifareClassicModel.Chip?

        @Option(help: ArgumentHelp("Answer from a recording made with --record (its ATR, its responses).", valueName: "file"))
        var replay: String?

        @Option(help: ArgumentHelp("--replay: strict (the recorded commands in the recorded order; anything else gets 6F00) or by-command (any recorded command, its responses in turn).", valueName: "order"))
        var replayOrder: ReplayCard.Order = .strict

        @Flag(help: "--classic: start NFC Forum formatted (MAD and NDEF sectors, an empty message) instead of factory-fresh.")
        var formatted = false

        func validate() throws {
            if classic == nil && formatted { throw ValidationError("--formatted is for --classic") }
            if classic != nil && (readerModel ?? .storageOnly) != .storageOnly { throw ValidationError("--classic: the card sits behind a storage reader (its Part 3 pseudo-APDUs); --reader-model is not for it") }
            if [classic != nil, type2 != nil, type4, ntag424, type5 != nil, type3 != nil, replay != nil, script != nil].filter({ $0 }).count > 1 {
                throw ValidationError("--classic, --type2, --type3, --type4, --ntag424, --type5, --replay and --script exclude each other")
            }
            if let uid, (try? Hex.decode(uid))?.count != 7 { throw ValidationError("--uid must be 7 bytes in hex") }
            if let signature, (try? Hex.decode(signature))?.count != 32 { throw ValidationError("--signature must be 32 bytes in hex") }
            if type2 == nil && (uid != nil || signature != nil) {
                throw ValidationError("--uid and --signature are for --type2")
            }
            if type2 == nil && type5 == nil && type3 == nil && classic == nil && readerModel != nil {
                throw ValidationError("--reader-model is for --type2, --type5 and --type3")
            }
            if [type2 != nil, type4, type5 != nil, type3 != nil].filter({ $0 }).count > 1 {
                throw ValidationError("--type2, --type3, --type4 and --type5 exclude each other")
            }
            if let type5, ISO15693TagModel.Chip.all[type5] == nil {
                throw ValidationError("unknown --type5 chip '\(type5)'; known: \(ISO15693TagModel.Chip.all.keys.sorted().joined(separator: ", "))")
            }
            if let type3, FeliCaTagModel.Chip.all[type3] == nil {
                throw ValidationError("unknown --type3 chip '\(type3)'; known: \(FeliCaTagModel.Chip.all.keys.sorted().joined(separator: ", "))")
            }
            if type5 != nil && readerModel == .acr122u { throw ValidationError("--type5: the ACR122U (PN532) has no ISO 15693; use --reader-model transparent or storage") }
            if port == 0 { throw ValidationError("--port must be 1-65535") }
            if card != "demo" && script == nil { throw ValidationError("unknown --card '\(card)'; known: demo") }
            if !["2.0", "3.0"].contains(mapping) { throw ValidationError("--mapping must be 2.0 or 3.0") }
            if !(15...65535).contains(mle) { throw ValidationError("--mle must be 15-65535") }
            if !(1...65535).contains(mlc) { throw ValidationError("--mlc must be 1-65535") }
            if !(5...16_777_216).contains(fileSize) { throw ValidationError("--file-size must be 5-16777216") }
            if fileSize > 0xFFFE && mapping != "3.0" { throw ValidationError("--file-size above 65534 needs --mapping 3.0") }
            if save && ndef == nil { throw ValidationError("--save needs --ndef FILE") }
            if let type2, Type2TagModel.Chip.all[type2] == nil {
                throw ValidationError("unknown --type2 chip '\(type2)'; known: \(Type2TagModel.Chip.all.keys.sorted().joined(separator: ", "))")
            }
            if let n = removeAfter, n < 0 { throw ValidationError("--remove-after must be 0 or more") }
            if let d = delayMs, d < 0 || d > 600_000 { throw ValidationError("--delay-ms must be 0-600000") }
            if let garbage { do { _ = try Hex.decode(garbage, allowEmpty: true) } catch { throw ValidationError("--garbage: \(error)") } }
            if let script, !FileManager.default.isReadableFile(atPath: script) {
                throw ValidationError("--script: cannot read '\(script)'")
            }
        }

        func run() throws {
            try reportingFailures {
                let model: any EmulatedCard
                var description: String
                if let type2, let chip = Type2TagModel.Chip.all[type2] {
                    var image: [UInt8]?
                    if let memory, FileManager.default.fileExists(atPath: memory) {
                        image = try readMessageFile(memory, option: "--memory")
                    }
                    let tag = Type2TagModel(chip: chip, uid: try uid.map { try Hex.decode($0) } ?? [0x04, 0xA1, 0xB2, 0xC3, 0xD4, 0xE5, 0x80], memory: image,
                                            signature: try signature.map { try Hex.decode($0) } ?? [UInt8](repeating: 0, count: 32))
                    if let memory {
                        tag.onChange = { bytes in
                            let lines = stride(from: 0, to: bytes.count, by: 4).map { Hex.encode(bytes[$0..<min($0 + 4, bytes.count)], separator: " ") }
                            try? (lines.joined(separator: "\n") + "\n").write(toFile: memory, atomically: true, encoding: .utf8)
                        }
                    }
                    let dialect = readerModel ?? .storageOnly
                    model = dialect == .storageOnly ? tag : ContactlessReader(dialect, tag: tag)
                    description = "\(chip.name) (Type 2, \(chip.pages) pages) behind a \(dialect.rawValue) reader"
                } else if let classic {
                    var image: [UInt8]?
                    if let memory, FileManager.default.fileExists(atPath: memory) {
                        image = try readMessageFile(memory, option: "--memory")
                        let size = MifareClassicModel(classic).contents.count
                        guard image!.count == size else { throw Failure(.badData, "--memory: a \(classic.rawValue) image is \(size) bytes, the file holds \(image!.count)") }
                    }
                    let tag = MifareClassicModel(classic, memory: image)
                    if formatted && image == nil {
                        _ = try MifareClassicNDEFTag.format(APDUTransport(channel: EmulatedChannel(card: ContactlessReader(.storageOnly, tag: tag))), atr: tag.atr)
                    }
                    let card = ContactlessReader(.storageOnly, tag: tag)
                    if let memory {
                        let watcher = ChangeSaver(tag: tag, path: memory)
                        model = watcher.wrapping(card)
                    } else {
                        model = card
                    }
                    description = "\(MifareClassicLayout(atr: tag.atr)!) (\(tag.layout.sectorCount) sectors\(formatted ? ", NFC Forum formatted" : ", factory-fresh")) behind a storage reader"
                } else if let type5, let chip = ISO15693TagModel.Chip.all[type5] {
                    // A reader model given on the command line counts; the default is a transparent reader.
                    let dialect = readerModel ?? .transparent
                    model = ContactlessReader(dialect, tag: ISO15693TagModel(chip: chip))
                    description = "\(chip.name) (Type 5, \(chip.blocks) blocks of \(chip.blockSize) bytes) behind a \(dialect.rawValue) reader"
                } else if let type3, let chip = FeliCaTagModel.Chip.all[type3] {
                    let dialect = readerModel ?? .transparent
                    model = ContactlessReader(dialect, tag: FeliCaTagModel(chip: chip))
                    description = "\(chip.name) (Type 3, \(chip.userBlocks) user blocks) behind a \(dialect.rawValue) reader"
                } else if ntag424 {
                    let tag = NTAG424TagModel()
                    model = ApplicationHost(atr: Type4TagModel.contactlessATR, applications: [tag], uid: tag.uid)
                    description = "NTAG 424 DNA as shipped (UID \(tag.uid.hexString), all-zero keys)"
                } else if type4 {
                    var c = Type4TagModel.Configuration()
                    c.version = mapping == "3.0" ? 0x30 : 0x20
                    c.mle = mle
                    c.mlc = mlc
                    c.fileSize = fileSize
                    c.extendedFile = fileSize > 0xFFFE
                    c.writeAccess = readOnly ? 0xFF : 0x00
                    let message = try ndef.map { try readMessageFile($0, option: "--ndef") } ?? []
                    let tag = Type4TagModel(configuration: c, message: message)
                    if save, let path = ndef {
                        tag.onChange = { [unowned tag] _ in
                            try? Data(tag.message).write(to: URL(fileURLWithPath: path), options: .atomic)
                        }
                    }
                    var behaviour = HostBehaviour()
                    behaviour.usesGetResponse = getResponse
                    behaviour.requiresGetResponseCLA = strictGetResponseCla
                    behaviour.answersWrongLe = wrongLe
                    model = ApplicationHost(atr: Type4TagModel.contactlessATR, applications: [tag], behaviour: behaviour,
                                            uid: [0x04, 0x52, 0x1A, 0xB2, 0x6F, 0x61, 0x80])
                    description = "Type 4 tag (mapping \(mapping), \(message.count)-byte message, MLe \(mle), MLc \(mlc))"
                } else if let replay {
                    guard let bytes = FileManager.default.contents(atPath: replay) else {
                        throw Failure(.usage, "cannot read the recording '\(Terminal.safe(replay))'")
                    }
                    let card: ReplayCard
                    do { card = try ReplayCard(recording: [UInt8](bytes), order: replayOrder) } catch {
                        throw Failure(.badData, "\(Terminal.safe(replay)): \(error)")
                    }
                    model = card
                    description = "the recording \(replay) (\(card.count) exchanges, \(replayOrder.rawValue)\(card.reader.map { ", made on \($0)" } ?? ""))"
                } else if let script {
                    let text: String
                    do { text = try String(contentsOfFile: script, encoding: .utf8) } catch {
                        throw Failure(.badData, "cannot read '\(script)' as UTF-8 text")
                    }
                    do { model = try ScriptedCard(script: text) } catch { throw Failure(.badData, "\(error)") }
                    description = "scripted card from \(script)"
                } else {
                    var behaviour = HostBehaviour()
                    behaviour.usesGetResponse = getResponse
                    behaviour.requiresGetResponseCLA = strictGetResponseCla
                    behaviour.answersWrongLe = wrongLe
                    model = ApplicationHost(applications: [DemoApplication()], behaviour: behaviour)
                    description = "demo card (application \(DemoApplication.defaultAID.hexString))"
                }
                let faults = Faults(
                    removeAfter: removeAfter,
                    delay: delayMs.map { .milliseconds($0) },
                    garbage: try garbage.map { try Hex.decode($0, allowEmpty: true) })
                restoreTerminationSignals()
                let client = VPCDClient(host: host, port: port, card: model, faults: faults, reconnects: !once)
                Terminal.writeError("apdu: emulating \(description) on vpcd \(host):\(port); Ctrl-C removes it\n")
                do { try client.run() } catch {
                    throw Failure(.unavailable, "\(error)")
                }
            }
        }
    }
}

/// A parent may have left SIGINT/SIGTERM blocked (the mask survives exec; some test runners and
/// service managers do this). The emulator must die on them, which closes its socket and so
/// removes the card.
func restoreTerminationSignals() {
    var set = sigset_t()
    sigemptyset(&set)
    for sig in [SIGINT, SIGTERM, SIGHUP] {
        sigaddset(&set, sig)
        signal(sig, SIG_DFL)
    }
    pthread_sigmask(SIG_UNBLOCK, &set, nil)
}

extension ReplayCard.Order: ExpressibleByArgument {}
