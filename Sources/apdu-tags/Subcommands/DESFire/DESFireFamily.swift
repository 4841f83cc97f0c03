// MIFARE DESFire in the CLI: `apdu emulate --desfire`.
import APDUCommandLine
import ArgumentParser
import FoundationEssentials
import VirtualCard

extension DESFireCard.Generation: ExpressibleByArgument {}
extension DESFireCard.Hostile: ExpressibleByArgument {}

struct DESFireFamily: EmulatedFamily {
    static var commands: (any ParsableCommand.Type)? { APDUCommand.DESFire.self }
    static let choosingFlags = ["--desfire"]
    static var emulateForm: any EmulateForm.Type { EmulateDESFire.self }

    /// What the emulated card holds when it starts.
    enum Preset: String, CaseIterable, ExpressibleByArgument {
        /// As shipped: PICC master key DES zeros, no applications.
        case factory
        /// A transit-like card: an application whose files are read without keys.
        case transit
        /// Formatted as an NFC Forum Type 4 tag (NXP AN11004), with an empty message.
        case ndef
    }

    @Option(help: ArgumentHelp("Emulate a MIFARE DESFire card: factory (master key DES zeros), transit (freely readable files), ndef (an AN11004 Type 4 tag).", valueName: "preset"))
    var desfire: Preset?

    @Option(help: ArgumentHelp("--desfire: the chip generation, ev1, ev2 or ev3 (default ev1).", valueName: "generation"))
    var desfireGeneration: DESFireCard.Generation?

    @Option(help: ArgumentHelp("--desfire: load the card from this JSON image and save every change back to it.", valueName: "file"))
    var desfireImage: String?

    var chosenBy: String? { desfire == nil ? nil : "--desfire" }

    func validate(shared: EmulationOptions) throws {
        if desfire == nil && (desfireGeneration != nil || desfireImage != nil) {
            throw ValidationError("--desfire-generation and --desfire-image are for --desfire")
        }
    }

    func emulatedCard(shared: EmulationOptions) throws -> (card: any EmulatedCard, description: String) {
        try Self.card(preset: desfire ?? .factory, generation: desfireGeneration, imageFile: desfireImage, imageOption: "--desfire-image")
    }

    /// The card, from a preset or an image file, and the start line's description.
    static func card(preset: Preset, generation: DESFireCard.Generation?, imageFile desfireImage: String?,
                     imageOption: String, hostile: DESFireCard.Hostile? = nil) throws -> (card: any EmulatedCard, description: String) {
        let chip = DESFireCard.Chip(generation: generation ?? .ev1)
        var image: DESFireCard.Image
        switch preset {
        case .factory: image = .factory(chip)
        case .transit: image = .transit(chip)
        case .ndef: image = .ndef(chip)
        }
        if let path = desfireImage, let bytes = FileManager.default.contents(atPath: path) {
            do { image = try DESFireCard.Image(decoding: [UInt8](bytes)) } catch { throw Failure(.badData, "\(imageOption) \(path): \(error)") }
        }
        let card = DESFireCard(image: image, hostile: hostile)
        if let path = desfireImage {
            card.onChange = { image in try? Data(image.encoded()).write(to: URL(fileURLWithPath: path), options: .atomic) }
        }
        return (card, "MIFARE DESFire \(image.chip.generation) (\(preset.rawValue)\(desfireImage.map { ", image \($0)" } ?? "")\(hostile.map { ", hostile: \($0.rawValue)" } ?? ""))")
    }
}
