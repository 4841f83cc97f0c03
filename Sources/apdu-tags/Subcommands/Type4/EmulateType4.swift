// `apdu emulate type4`: an NFC Forum Type 4 tag in an ISO 7816 host.
import ArgumentParser
import VirtualCard

struct EmulateType4: EmulateForm {
    static let configuration = CommandConfiguration(
        commandName: "type4",
        abstract: "An NFC Forum Type 4 tag (the NDEF application, its CC and NDEF files).",
        discussion: "apdu emulate type4 --ndef message.bin --save. The old form: apdu emulate --type4.")

    @OptionGroup var tag: Type4TagOptions
    @OptionGroup var host: HostBehaviourOptions
    @OptionGroup var connection: EmulatorConnection

    func emulatedCard() throws -> (card: any EmulatedCard, description: String) { try tag.card(host: host.behaviour) }
}
