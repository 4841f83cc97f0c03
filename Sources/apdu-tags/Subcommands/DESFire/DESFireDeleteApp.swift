// `apdu desfire delete-app`: delete a DESFire application, confirmed.
import APDUCommandLine
import ArgumentParser
import ISO7816
import NFCTags

extension APDUCommand {
    struct DESFireDeleteApp: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "delete-app",
            abstract: "Delete a DESFire application with its files and keys, for good (needs --yes).",
            discussion: """
                With the card master key (--key 0:TYPE:HEX, --app 000000, the default) or the application's own master key \
                (--app AID --key 0:TYPE:HEX). One command: the application is gone afterwards or nothing changed.
                """)

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions
        @OptionGroup var appOption: DESFireAppOption
        @OptionGroup var keyOptions: DESFireKeyOptions

        @Option(help: ArgumentHelp("The application to delete: 6 hex digits.", valueName: "aid"))
        var aid: String

        @Flag(help: "Confirm: the application's data cannot be brought back.")
        var yes = false

        func validate() throws {
            guard let id = DESFireApplicationID(hex: aid), id != .picc else { throw ValidationError("--aid: an application's 6 hex digits (not 000000)") }
        }

        func run() throws {
            try reportingDESFireFailures {
                guard let target = DESFireApplicationID(hex: aid) else { throw Failure(.usage, "--aid: 6 hex digits") }
                guard yes else { throw Failure(.refused, "deleting application \(target) destroys its files and keys for good; run again with --yes; nothing was sent") }
                let at = try appOption.aid()
                let key = try keyOptions.resolved()
                let reader = try withDESFire(readerOptions, traceOptions) { reader, card in
                    try card.selectApplication(at)
                    if let key { try card.authenticate(keyNumber: key.number, key: key.key, scheme: keyOptions.auth) }
                    try card.atomically("DeleteApplication \(target)") { try card.deleteApplication(target, confirmed: yes) }
                    return reader
                }
                if output.json {
                    Terminal.print(JSON.object([("reader", .string(reader)), ("deleted", .string(target.description))]).serialized)
                } else {
                    Terminal.print("\(Terminal.safe(reader)): deleted application \(target)")
                }
            }
        }
    }
}
