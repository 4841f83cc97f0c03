// Type 3 tags in the CLI: `apdu emulate --type3` and the `apdu felica` group.
import APDUCommandLine
import ArgumentParser
import VirtualCard

struct Type3Family: EmulatedFamily {
    static var commands: (any ParsableCommand.Type)? { APDUCommand.FeliCaCommand.self }
    static let choosingFlags = ["--type3"]
    static let takesReaderModel = true

    @Option(help: ArgumentHelp("Emulate a Type 3 (FeliCa) tag: felica-lite-s, felica-standard (behind --reader-model transparent or acr122u).", valueName: "chip"))
    var type3: String?

    var chosenBy: String? { type3 == nil ? nil : "--type3" }

    func validate(shared: EmulationOptions) throws {
        if let type3, FeliCaTagModel.Chip.all[type3] == nil {
            throw ValidationError("unknown --type3 chip '\(type3)'; known: \(FeliCaTagModel.Chip.all.keys.sorted().joined(separator: ", "))")
        }
    }

    func emulatedCard(shared: EmulationOptions) throws -> (card: any EmulatedCard, description: String) {
        let chip = FeliCaTagModel.Chip.all[type3 ?? ""]!
        let dialect = shared.readerModel ?? .transparent
        return (ContactlessReader(dialect, tag: FeliCaTagModel(chip: chip)),
                "\(chip.name) (Type 3, \(chip.userBlocks) user blocks) behind a \(dialect.rawValue) reader")
    }
}
