// `apdu gp card-lock --yes`: the whole card to CARD_LOCKED.
import APDUCommandLine
import ArgumentParser
import GlobalPlatform
import ISO7816

extension APDUCommand {
    struct GPCardLock: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "card-lock",
            abstract: "Lock the card (CARD_LOCKED): only the ISD answers SELECT until it is unlocked with the keys.",
            discussion: "Needs --yes: without it the command refuses (exit 77) and sends nothing.")

        @Flag(help: "Confirm locking the card.")
        var yes = false

        @OptionGroup var keys: GPKeyOptions
        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var traceOptions: TraceOptions

        func run() throws {
            try reportingFailures {
                guard yes else { throw Failure(.refused, "card-lock locks the whole card: add --yes to do it") }
                let (reader, authenticated) = try withCardManager(readerOptions, traceOptions) { name, manager in
                    try manager.authenticate(keys: keys.staticKeys, level: keys.securityLevel)
                    try manager.lockCard()
                    return (name, manager.answersAuthenticated)
                }
                Terminal.print("\(Terminal.safe(reader)): card locked (CARD_LOCKED) \(confirmationNote(authenticated))")
            }
        }
    }
}
