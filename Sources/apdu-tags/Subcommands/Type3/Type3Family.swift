// Type 3 tags in the CLI: `apdu emulate --type3` and the `apdu felica` group.
import APDUCommandLine
import ArgumentParser
import VirtualCard

struct Type3Family: EmulatedFamily {
    static var commands: (any ParsableCommand.Type)? { APDUCommand.FeliCaCommand.self }
    static let choosingFlags = ["--type3"]
    static let takesReaderModel = true
    static var emulateForm: any EmulateForm.Type { EmulateType3.self }

    @Option(help: ArgumentHelp("Emulate a Type 3 (FeliCa) tag: felica-lite-s, felica-standard (behind --reader-model transparent or acr122u).", valueName: "chip"))
    var type3: String?

    var chosenBy: String? { type3 == nil ? nil : "--type3" }

    func validate(shared: EmulationOptions) throws {
        if let type3 { try Self.check(chip: type3, chipOption: "--type3 chip") }
    }

    func emulatedCard(shared: EmulationOptions) throws -> (card: any EmulatedCard, description: String) {
        Self.card(chip: type3 ?? "", readerModel: shared.readerModel)
    }

    /// Checks a chip name (`apdu emulate type3` and the old `--type3`).
    static func check(chip: String, chipOption: String) throws {
        if FeliCaTagModel.Chip.all[chip] == nil {
            throw ValidationError("unknown \(chipOption) '\(chip)'; known: \(FeliCaTagModel.Chip.all.keys.sorted().joined(separator: ", "))")
        }
    }

    /// The tag behind its reader, and the start line's description.
    static func card(chip name: String, readerModel: ContactlessReader.Dialect?) -> (card: any EmulatedCard, description: String) {
        let chip = FeliCaTagModel.Chip.all[name]!
        let dialect = readerModel ?? .transparent
        return (ContactlessReader(dialect, tag: FeliCaTagModel(chip: chip)),
                "\(chip.name) (Type 3, \(chip.userBlocks) user blocks) behind a \(dialect.rawValue) reader")
    }
}
