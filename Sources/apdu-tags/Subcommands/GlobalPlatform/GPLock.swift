// `apdu gp lock AID`: SET STATUS to LOCKED.
import APDUCommandLine
import ArgumentParser
import GlobalPlatform
import ISO7816

extension APDUCommand {
    struct GPLock: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "lock", abstract: "Lock an application or security domain (it no longer answers SELECT).")

        @Argument(help: ArgumentHelp("The AID, in hex.", valueName: "aid"))
        var aid: String

        @OptionGroup var keys: GPKeyOptions
        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var traceOptions: TraceOptions

        func validate() throws { _ = try parseAID(aid, "the AID") }

        func run() throws {
            try setLockState(locked: true, aid: aid, keys: keys, readerOptions: readerOptions, traceOptions: traceOptions)
        }
    }
}

/// `gp lock` and `gp unlock`: authenticate, SET STATUS, say what was done.
func setLockState(locked: Bool, aid: String, keys: GPKeyOptions, readerOptions: ReaderOptions, traceOptions: TraceOptions) throws {
    try reportingFailures {
        let target = try parseAID(aid, "the AID")
        let (reader, authenticated) = try withCardManager(readerOptions, traceOptions) { name, manager in
            try manager.authenticate(keys: keys.staticKeys, level: keys.securityLevel)
            try manager.setLocked(aid: target, locked)
            return (name, manager.answersAuthenticated)
        }
        Terminal.print("\(Terminal.safe(reader)): \(locked ? "locked" : "unlocked") \(target.hexString) \(confirmationNote(authenticated))")
    }
}

/// What backs a change's report: the registry read again after it, and whether the card's
/// answers carried an R-MAC (below it, a man in the middle could have answered both).
func confirmationNote(_ authenticated: Bool) -> String {
    authenticated ? "(the registry read again shows it; the answers carry an R-MAC)"
        : "(the registry read again shows it; the answers carry no R-MAC at this security level, so a man in the middle could have forged both)"
}
