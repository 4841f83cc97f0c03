// `apdu desfire format`: FormatPICC, confirmed.
import APDUCommandLine
import ArgumentParser
import ISO7816
import NFCTags

extension APDUCommand {
    struct DESFireFormat: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "format",
            abstract: "FormatPICC: erase every application and file of a DESFire, for good (needs --yes and the card master key).",
            discussion: """
                The card master key and its settings stay. One command: the card is empty afterwards or nothing changed. \
                To make the card an NDEF tag afterwards: apdu ndef-format --desfire.
                """)

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions
        @OptionGroup var keyOptions: DESFireKeyOptions

        @Flag(help: "Confirm: every application's data is lost.")
        var yes = false

        func run() throws {
            try reportingDESFireFailures {
                guard yes else { throw Failure(.refused, "formatting erases every application and file on the card; run again with --yes; nothing was sent") }
                guard let key = try keyOptions.resolved() else { throw Failure(.usage, "FormatPICC needs the card master key: --key 0:TYPE:HEX, --key-file or $APDU_DESFIRE_KEY") }
                let reader = try withDESFire(readerOptions, traceOptions) { reader, card in
                    try card.selectApplication(.picc)
                    try card.authenticate(keyNumber: key.number, key: key.key, scheme: keyOptions.auth)
                    try card.atomically("FormatPICC") { try card.formatPICC(confirmed: yes) }
                    return reader
                }
                if output.json {
                    Terminal.print(JSON.object([("reader", .string(reader)), ("formatted", .bool(true))]).serialized)
                } else {
                    Terminal.print("\(Terminal.safe(reader)): formatted: every application and file erased")
                }
            }
        }
    }
}
