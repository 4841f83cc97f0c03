// Type 5 tags in the CLI: `apdu emulate --type5` and the `apdu iso15693` group.
import APDUCommandLine
import ArgumentParser
import VirtualCard

struct Type5Family: EmulatedFamily {
    static var commands: (any ParsableCommand.Type)? { APDUCommand.ISO15693Command.self }
    static let choosingFlags = ["--type5"]
    static let takesReaderModel = true

    @Option(help: ArgumentHelp("Emulate a Type 5 (ISO 15693) tag: icode-slix, st25dv64k, tagit (behind --reader-model transparent unless storage is given).", valueName: "chip"))
    var type5: String?

    var chosenBy: String? { type5 == nil ? nil : "--type5" }

    func validate(shared: EmulationOptions) throws {
        if let type5, ISO15693TagModel.Chip.all[type5] == nil {
            throw ValidationError("unknown --type5 chip '\(type5)'; known: \(ISO15693TagModel.Chip.all.keys.sorted().joined(separator: ", "))")
        }
        if type5 != nil && shared.readerModel == .acr122u { throw ValidationError("--type5: the ACR122U (PN532) has no ISO 15693; use --reader-model transparent or storage") }
    }

    func emulatedCard(shared: EmulationOptions) throws -> (card: any EmulatedCard, description: String) {
        let chip = ISO15693TagModel.Chip.all[type5 ?? ""]!
        // A reader model given on the command line counts; the default is a transparent reader.
        let dialect = shared.readerModel ?? .transparent
        return (ContactlessReader(dialect, tag: ISO15693TagModel(chip: chip)),
                "\(chip.name) (Type 5, \(chip.blocks) blocks of \(chip.blockSize) bytes) behind a \(dialect.rawValue) reader")
    }
}
