// `apdu emulate desfire [PRESET]`: a MIFARE DESFire card.
import ArgumentParser
import VirtualCard

struct EmulateDESFire: EmulateForm {
    static let configuration = CommandConfiguration(
        commandName: "desfire",
        abstract: "A MIFARE DESFire card (EV1, EV2 or EV3): factory, transit or NFC Forum formatted.",
        discussion: "apdu emulate desfire transit --generation ev2. The old form: apdu emulate --desfire PRESET.")

    @Argument(help: ArgumentHelp("factory (master key DES zeros, no applications; the default), transit (freely readable files) or ndef (an AN11004 Type 4 tag).", valueName: "preset"))
    var preset: DESFireFamily.Preset = .factory

    @Option(help: ArgumentHelp("The chip generation: ev1 (the default), ev2 or ev3.", valueName: "generation"))
    var generation: DESFireCard.Generation?

    @Option(help: ArgumentHelp("Load the card from this JSON image and save every change back to it.", valueName: "file"))
    var image: String?

    @Option(help: ArgumentHelp("A hostile variant, for tests: \(DESFireCard.Hostile.allCases.map(\.rawValue).joined(separator: ", ")).", valueName: "name"))
    var hostile: DESFireCard.Hostile?

    @OptionGroup var connection: EmulatorConnection

    func emulatedCard() throws -> (card: any EmulatedCard, description: String) {
        try DESFireFamily.card(preset: preset, generation: generation, imageFile: image, imageOption: "--image", hostile: hostile)
    }
}
