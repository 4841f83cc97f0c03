// Type 5 tags in the CLI: `apdu emulate --type5` and the `apdu iso15693` group.
import APDUCommandLine
import ArgumentParser
import VirtualCard

struct Type5Family: EmulatedFamily {
    static var commands: (any ParsableCommand.Type)? { APDUCommand.ISO15693Command.self }
    static let choosingFlags = ["--type5"]
    static let takesReaderModel = true
    static var emulateForm: any EmulateForm.Type { EmulateType5.self }

    @Option(help: ArgumentHelp("Emulate a Type 5 (ISO 15693) tag: icode-slix, st25dv64k, tagit (behind --reader-model transparent unless storage is given).", valueName: "chip"))
    var type5: String?

    var chosenBy: String? { type5 == nil ? nil : "--type5" }

    func validate(shared: EmulationOptions) throws {
        if let type5 { try Self.check(chip: type5, chipOption: "--type5 chip", readerModel: shared.readerModel) }
    }

    func emulatedCard(shared: EmulationOptions) throws -> (card: any EmulatedCard, description: String) {
        Self.card(chip: type5 ?? "", readerModel: shared.readerModel)
    }

    /// Checks a chip name and its reader (`apdu emulate type5` and the old `--type5`).
    static func check(chip: String, chipOption: String, readerModel: ContactlessReader.Dialect?) throws {
        if ISO15693TagModel.Chip.all[chip] == nil {
            throw ValidationError("unknown \(chipOption) '\(chip)'; known: \(ISO15693TagModel.Chip.all.keys.sorted().joined(separator: ", "))")
        }
        if readerModel == .acr122u { throw ValidationError("type 5: the ACR122U (PN532) has no ISO 15693; use --reader-model transparent or storage") }
    }

    /// The tag behind its reader, and the start line's description.
    static func card(chip name: String, readerModel: ContactlessReader.Dialect?) -> (card: any EmulatedCard, description: String) {
        let chip = ISO15693TagModel.Chip.all[name]!
        // A reader model given on the command line counts; the default is a transparent reader.
        let dialect = readerModel ?? .transparent
        return (ContactlessReader(dialect, tag: ISO15693TagModel(chip: chip)),
                "\(chip.name) (Type 5, \(chip.blocks) blocks of \(chip.blockSize) bytes) behind a \(dialect.rawValue) reader")
    }
}
