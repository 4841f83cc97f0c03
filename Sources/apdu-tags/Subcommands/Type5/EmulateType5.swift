// `apdu emulate type5 CHIP`: a Type 5 (ISO 15693) tag behind a PC/SC reader.
import ArgumentParser
import VirtualCard

struct EmulateType5: EmulateForm {
    static let configuration = CommandConfiguration(
        commandName: "type5",
        abstract: "A Type 5 (ISO 15693) tag behind a PC/SC reader.",
        discussion: "apdu emulate type5 icode-slix. The old form: apdu emulate --type5 CHIP.")

    @Argument(help: ArgumentHelp("icode-slix, st25dv64k or tagit.", valueName: "chip"))
    var chip: String

    @Option(help: ArgumentHelp("The reader around the tag: transparent (PC/SC Part 3; the default) or storage.", valueName: "model"))
    var readerModel: ContactlessReader.Dialect?

    @OptionGroup var connection: EmulatorConnection

    func validate() throws { try Type5Family.check(chip: chip, chipOption: "type5 chip", readerModel: readerModel) }

    func emulatedCard() throws -> (card: any EmulatedCard, description: String) {
        Type5Family.card(chip: chip, readerModel: readerModel)
    }
}
