// `apdu emulate ntag424`: an NTAG 424 DNA as shipped.
import ArgumentParser
import VirtualCard

struct EmulateNTAG424: EmulateForm {
    static let configuration = CommandConfiguration(
        commandName: "ntag424",
        abstract: "An NTAG 424 DNA as shipped (all-zero keys, empty NDEF file): EV2, secure messaging, SDM.",
        discussion: "The old form: apdu emulate --ntag424.")

    @OptionGroup var connection: EmulatorConnection

    @Flag(help: "An NTAG 424 DNA TagTamper (GetVersion subtype 08, GetTTStatus, the status mirrored by SDM), its loop closed.")
    var tagTamper = false

    @Option(help: ArgumentHelp("A hostile variant, for tests: \(NTAG424TagModel.Hostile.allCases.map(\.rawValue).joined(separator: ", ")) (the change answered with its MAC and dropped).", valueName: "name"))
    var hostile: NTAG424TagModel.Hostile?

    func emulatedCard() throws -> (card: any EmulatedCard, description: String) { NTAG424Family.card(tagTamper: tagTamper, hostile: hostile) }
}
