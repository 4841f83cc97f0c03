// Type 2 tags in the CLI: `apdu emulate --type2` and the `apdu ultralight` group.
import APDUCommandLine
import ArgumentParser
import FoundationEssentials
import ISO7816
import VirtualCard

struct Type2Family: EmulatedFamily {
    static var commands: (any ParsableCommand.Type)? { APDUCommand.Ultralight.self }
    static let choosingFlags = ["--type2"]
    static let takesReaderModel = true
    static var legacyCommands: [any ParsableCommand.Type] { APDUCommand.Ultralight.legacy }
    static var emulateForm: any EmulateForm.Type { EmulateType2.self }

    @Option(help: ArgumentHelp("Emulate a Type 2 tag behind a PC/SC reader: ntag213, ntag215, ntag216, ultralight, ultralight-c.", valueName: "chip"))
    var type2: String?

    @Option(help: ArgumentHelp("Type 2: the tag's 7-byte UID in hex.", valueName: "hex"))
    var uid: String?

    @Option(help: ArgumentHelp("Type 2: the 32-byte originality signature READ_SIG returns (default: zeros, an unsigned chip).", valueName: "hex"))
    var signature: String?

    var chosenBy: String? { type2 == nil ? nil : "--type2" }

    func validate(shared: EmulationOptions) throws {
        if type2 == nil && (uid != nil || signature != nil) { throw ValidationError("--uid and --signature are for --type2") }
        try Self.check(chip: type2, chipOption: "--type2 chip", uid: uid, signature: signature)
    }

    func emulatedCard(shared: EmulationOptions) throws -> (card: any EmulatedCard, description: String) {
        try Self.card(chip: type2 ?? "", uid: uid, signature: signature, memory: shared.memory, readerModel: shared.readerModel)
    }

    /// Checks a chip name, UID and signature (`apdu emulate type2` and the old `--type2`).
    static func check(chip: String?, chipOption: String, uid: String?, signature: String?) throws {
        if let uid, (try? Hex.decode(uid))?.count != 7 { throw ValidationError("--uid must be 7 bytes in hex") }
        if let signature, (try? Hex.decode(signature))?.count != 32 { throw ValidationError("--signature must be 32 bytes in hex") }
        if let chip, Type2TagModel.Chip.all[chip] == nil {
            throw ValidationError("unknown \(chipOption) '\(chip)'; known: \(Type2TagModel.Chip.all.keys.sorted().joined(separator: ", "))")
        }
    }

    /// The tag behind its reader, and the start line's description.
    static func card(chip name: String, uid: String?, signature: String?, memory: String?,
                     readerModel: ContactlessReader.Dialect?) throws -> (card: any EmulatedCard, description: String) {
        let chip = Type2TagModel.Chip.all[name]!
        var image: [UInt8]?
        if let memory, FileManager.default.fileExists(atPath: memory) {
            image = try readMessageFile(memory, option: "--memory")
        }
        let tag = Type2TagModel(chip: chip, uid: try uid.map { try Hex.decode($0) } ?? [0x04, 0xA1, 0xB2, 0xC3, 0xD4, 0xE5, 0x80], memory: image,
                                signature: try signature.map { try Hex.decode($0) } ?? [UInt8](repeating: 0, count: 32))
        if let memory {
            tag.onChange = { saveMemoryImage($0, to: memory, bytesPerLine: 4) }
        }
        let dialect = readerModel ?? .storageOnly
        return (dialect == .storageOnly ? tag : ContactlessReader(dialect, tag: tag),
                "\(chip.name) (Type 2, \(chip.pages) pages) behind a \(dialect.rawValue) reader")
    }
}
