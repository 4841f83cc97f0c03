// `apdu gp unlock AID`: SET STATUS back from LOCKED.
import APDUCommandLine
import ArgumentParser
import GlobalPlatform
import ISO7816

extension APDUCommand {
    struct GPUnlock: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "unlock", abstract: "Unlock an application or security domain.")

        @Argument(help: ArgumentHelp("The AID, in hex.", valueName: "aid"))
        var aid: String

        @OptionGroup var keys: GPKeyOptions
        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var traceOptions: TraceOptions

        func validate() throws { _ = try parseAID(aid, "the AID") }

        func run() throws {
            try setLockState(locked: false, aid: aid, keys: keys, readerOptions: readerOptions, traceOptions: traceOptions)
        }
    }
}
