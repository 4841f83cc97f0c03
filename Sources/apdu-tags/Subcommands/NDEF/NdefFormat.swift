// `apdu ndef-format`: a factory-fresh MIFARE Classic card formatted for NDEF.
import APDUCommandLine
import ArgumentParser
import ISO7816
import NFCTags
import PCSC
import TagReader

extension APDUCommand {
    struct NdefFormat: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ndef-format",
            abstract: "Format a factory-fresh MIFARE Classic card for NDEF (MAD and NFC Forum sectors, an empty message).",
            discussion: """
                Every sector must open with the factory key A FFFFFFFFFFFF, have the transport access bits and hold no \
                data; that is checked before anything is written. Then the NDEF sectors get key A D3F7D3F7D3F7, access \
                bits 7F 07 88 and GPB 40, the MAD sector(s) key A A0A1A2A3A4A5 and 78 77 88, MAD1 (and MAD2 on 4K) with \
                their CRC, and sector 0's trailer last: until then the card reads as unformatted. Key B stays as it was \
                (it unformats or locks the card later). A format cut short is finished by running it again.
                """)

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions

        @Flag(help: "Format a MIFARE DESFire EV1 or later instead (NXP AN11004; card master key from $APDU_DESFIRE_KEY when needed).")
        var desfire = false

        func run() throws {
            if desfire { return try DESFireNDEFFormatting.run(readerOptions, output, traceOptions) }
            try reportingFailures {
                let (reader, layout, report) = try MifareClassicSession.run(reader: readerOptions.requestedReader, wait: readerOptions.waitDuration,
                                                                             observer: traceOptions.observer) { reader, card, uid in
                    do {
                        return (reader, card.layout, try MifareClassicNDEFTag.format(card.transport, atr: [], uid: uid, layout: card.layout))
                    } catch let e as LockInterrupted {
                        let done = e.done.isEmpty ? "no sector was changed yet" : "formatted so far: \(e.done.joined(separator: ", "))"
                        throw Failure(Failure.status(of: e.underlying), "\(Failure.reason(e.underlying)) while trying to \(e.step); \(done); the card reads as unformatted until sector 0 is done: finish with: apdu ndef-format -r \(Terminal.shellQuoted(reader))")
                    }
                }
                if output.json {
                    Terminal.print(JSON.object([("reader", .string(reader)), ("card", .string(layout.description)), ("madVersion", .int(report.madVersion)),
                                                ("formatted", .array(report.formatted.map(JSON.int))), ("alreadyDone", .array(report.alreadyDone.map(JSON.int))),
                                                ("capacity", .int(report.capacity))]).serialized)
                } else if report.formatted.isEmpty {
                    Terminal.print("the \(layout) is NFC Forum formatted already (MAD\(report.madVersion), \(report.capacity) bytes of NDEF); nothing was written")
                } else {
                    Terminal.print("formatted the \(layout): MAD\(report.madVersion), \(report.formatted.count) sectors written\(report.alreadyDone.isEmpty ? "" : " (\(report.alreadyDone.count) done before)"), an empty NDEF message of up to \(report.capacity) bytes")
                }
            }
        }
    }
}
