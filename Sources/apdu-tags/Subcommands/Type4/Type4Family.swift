// Type 4 tags in the CLI: `apdu emulate type4` (and the old `--type4`); the NDEF commands serve
// every family.
import APDUCommandLine
import ArgumentParser
import FoundationEssentials
import VirtualCard

struct Type4Family: EmulatedFamily {
    static let choosingFlags = ["--type4"]
    static var emulateForm: any EmulateForm.Type { EmulateType4.self }

    @Flag(help: "Emulate an NFC Forum Type 4 tag (with --ndef, --mle, --mlc, --file-size, --mapping, --read-only).")
    var type4 = false

    @OptionGroup var tag: Type4TagOptions

    var chosenBy: String? { type4 ? "--type4" : nil }

    func emulatedCard(shared: EmulationOptions) throws -> (card: any EmulatedCard, description: String) {
        try tag.card(host: shared.hostBehaviour)
    }
}

/// The Type 4 tag's file, its sizes and its access: `apdu emulate type4`'s options (and the old
/// `--type4`'s, under the same names).
struct Type4TagOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The NDEF message to hold (raw or hex file); changes are saved back with --save.", valueName: "file"))
    var ndef: String?

    @Flag(help: "Write the NDEF message back to --ndef after every change.")
    var save = false

    @Option(help: "MLe, the largest R-APDU data.")
    var mle = 0xFF

    @Option(help: "MLc, the largest C-APDU data.")
    var mlc = 0xFF

    @Option(help: "The NDEF file's size, NLEN included.")
    var fileSize = 2048

    @Option(help: "Mapping version 2.0 or 3.0 (3.0 uses the extended file TLV when the file is 64 KiB or more).")
    var mapping = "2.0"

    @Flag(help: "Write access FF (read-only).")
    var readOnly = false

    func validate() throws {
        if !["2.0", "3.0"].contains(mapping) { throw ValidationError("--mapping must be 2.0 or 3.0") }
        if !(15...65535).contains(mle) { throw ValidationError("--mle must be 15-65535") }
        if !(1...65535).contains(mlc) { throw ValidationError("--mlc must be 1-65535") }
        if !(5...16_777_216).contains(fileSize) { throw ValidationError("--file-size must be 5-16777216") }
        if fileSize > 0xFFFE && mapping != "3.0" { throw ValidationError("--file-size above 65534 needs --mapping 3.0") }
        if save && ndef == nil { throw ValidationError("--save needs --ndef FILE") }
    }

    /// The tag in an ISO 7816 host with `host`'s T=0 and Le behaviour, and the start line's description.
    func card(host: HostBehaviour) throws -> (card: any EmulatedCard, description: String) {
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
        return (ApplicationHost(atr: Type4TagModel.contactlessATR, applications: [tag], behaviour: host,
                                uid: [0x04, 0x52, 0x1A, 0xB2, 0x6F, 0x61, 0x80]),
                "Type 4 tag (mapping \(mapping), \(message.count)-byte message, MLe \(mle), MLc \(mlc))")
    }
}
