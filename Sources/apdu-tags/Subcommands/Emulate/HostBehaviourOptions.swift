// How an emulated ISO 7816 card (the demo card, a Type 4 tag) hands out its answers.
import ArgumentParser
import VirtualCard

/// T=0 and Le behaviours of the ISO 7816 cards the emulator hosts.
struct HostBehaviourOptions: ParsableArguments {
    @Flag(help: "T=0 behaviour: answer data with 61xx and serve it by GET RESPONSE.")
    var getResponse = false

    @Flag(help: "Refuse GET RESPONSE whose CLA differs from the original command's.")
    var strictGetResponseCla = false

    @Flag(help: "Answer 6Cxx when Le does not match the data available.")
    var wrongLe = false

    var behaviour: HostBehaviour {
        var behaviour = HostBehaviour()
        behaviour.usesGetResponse = getResponse
        behaviour.requiresGetResponseCLA = strictGetResponseCla
        behaviour.answersWrongLe = wrongLe
        return behaviour
    }
}
