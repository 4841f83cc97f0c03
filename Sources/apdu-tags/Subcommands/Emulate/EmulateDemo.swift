// `apdu emulate demo`: the ISO 7816 demo card (application F0617064750 1).
import ArgumentParser
import VirtualCard

struct EmulateDemo: EmulateForm {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "An ISO 7816 card with the demo application F06170647501 (ECHO, GET DATA, a PIN): what 'apdu emulate' alone serves.")

    @OptionGroup var host: HostBehaviourOptions
    @OptionGroup var connection: EmulatorConnection

    func emulatedCard() throws -> (card: any EmulatedCard, description: String) {
        (ApplicationHost(applications: [DemoApplication()], behaviour: host.behaviour),
         "demo card (application \(DemoApplication.defaultAID.hexString))")
    }
}
