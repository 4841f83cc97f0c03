// `apdu emulate type3 CHIP`: a Type 3 (FeliCa) tag behind a PC/SC reader.
import ArgumentParser
import VirtualCard

struct EmulateType3: EmulateForm {
    static let configuration = CommandConfiguration(
        commandName: "type3",
        abstract: "A Type 3 (FeliCa) tag behind a PC/SC reader.",
        discussion: "apdu emulate type3 felica-lite-s. The old form: apdu emulate --type3 CHIP.")

    @Argument(help: ArgumentHelp("felica-lite-s or felica-standard.", valueName: "chip"))
    var chip: String

    @Option(help: ArgumentHelp("The reader around the tag: transparent (PC/SC Part 3; the default) or acr122u.", valueName: "model"))
    var readerModel: ContactlessReader.Dialect?

    @OptionGroup var connection: EmulatorConnection

    func validate() throws { try Type3Family.check(chip: chip, chipOption: "type3 chip") }

    func emulatedCard() throws -> (card: any EmulatedCard, description: String) {
        Type3Family.card(chip: chip, readerModel: readerModel)
    }
}
