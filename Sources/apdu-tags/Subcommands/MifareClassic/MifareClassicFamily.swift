// MIFARE Classic in the CLI: `apdu emulate --classic` and the `apdu classic` group.
import APDUCommandLine
import ArgumentParser
import FoundationEssentials
import ISO7816
import NFCTags
import VirtualCard

extension MifareClassicModel.Chip: ExpressibleByArgument {}

struct MifareClassicFamily: EmulatedFamily {
    static var commands: (any ParsableCommand.Type)? { APDUCommand.Classic.self }
    static let choosingFlags = ["--classic"]
    static let takesReaderModel = true
    static var legacyCommands: [any ParsableCommand.Type] { APDUCommand.Classic.legacy }
    static var emulateForm: any EmulateForm.Type { EmulateClassic.self }

    @Option(help: ArgumentHelp("Emulate a MIFARE Classic card behind a storage reader: mini, classic-1k, classic-4k, plus-2k, plus-4k (factory-fresh; with --memory, that image).", valueName: "chip"))
    var classic: MifareClassicModel.Chip?

    @Flag(help: "--classic: start NFC Forum formatted (MAD and NDEF sectors, an empty message) instead of factory-fresh.")
    var formatted = false

    var chosenBy: String? { classic == nil ? nil : "--classic" }

    func validate(shared: EmulationOptions) throws {
        if classic == nil && formatted { throw ValidationError("--formatted is for --classic") }
        if classic != nil && (shared.readerModel ?? .storageOnly) != .storageOnly {
            throw ValidationError("--classic: the card sits behind a storage reader (its Part 3 pseudo-APDUs); --reader-model is not for it")
        }
    }

    func emulatedCard(shared: EmulationOptions) throws -> (card: any EmulatedCard, description: String) {
        try Self.card(chip: classic!, formatted: formatted, memory: shared.memory)
    }

    /// The card behind a storage reader, and the start line's description.
    static func card(chip: MifareClassicModel.Chip, formatted: Bool, memory: String?) throws -> (card: any EmulatedCard, description: String) {
        var image: [UInt8]?
        if let memory, FileManager.default.fileExists(atPath: memory) {
            image = try readMessageFile(memory, option: "--memory")
            let size = MifareClassicModel(chip).contents.count
            guard image!.count == size else { throw Failure(.badData, "--memory: a \(chip.rawValue) image is \(size) bytes, the file holds \(image!.count)") }
        }
        let tag = MifareClassicModel(chip, memory: image)
        if formatted && image == nil {
            _ = try MifareClassicNDEFTag.format(APDUTransport(channel: EmulatedChannel(card: ContactlessReader(.storageOnly, tag: tag))), atr: tag.atr)
        }
        let card = ContactlessReader(.storageOnly, tag: tag)
        let model: any EmulatedCard = memory.map { ChangeSaver(tag: tag, path: $0).wrapping(card) } ?? card
        return (model, "\(MifareClassicLayout(atr: tag.atr)!) (\(tag.layout.sectorCount) sectors\(formatted ? ", NFC Forum formatted" : ", factory-fresh")) behind a storage reader")
    }
}

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
        saveMemoryImage(now, to: path, bytesPerLine: 16)
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
