// `apdu emulate classic CHIP`: a MIFARE Classic card behind a storage reader.
import ArgumentParser
import VirtualCard

struct EmulateClassic: EmulateForm {
    static let configuration = CommandConfiguration(
        commandName: "classic",
        abstract: "A MIFARE Classic card behind a storage reader (its PC/SC Part 3 pseudo-APDUs).",
        discussion: "apdu emulate classic classic-1k --formatted. The old form: apdu emulate --classic CHIP.")

    @Argument(help: ArgumentHelp("mini, classic-1k, classic-4k, plus-2k or plus-4k.", valueName: "chip"))
    var chip: MifareClassicModel.Chip

    @Flag(help: "Start NFC Forum formatted (MAD and NDEF sectors, an empty message) instead of factory-fresh.")
    var formatted = false

    @Option(help: ArgumentHelp("Load the memory image from this hex file and save every change back to it.", valueName: "file"))
    var memory: String?

    @OptionGroup var connection: EmulatorConnection

    func emulatedCard() throws -> (card: any EmulatedCard, description: String) {
        try MifareClassicFamily.card(chip: chip, formatted: formatted, memory: memory)
    }
}
