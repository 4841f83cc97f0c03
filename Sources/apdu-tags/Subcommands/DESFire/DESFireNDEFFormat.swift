// `apdu ndef-format --desfire`: NXP AN11004 on a DESFire.
import APDUCommandLine
import ISO7816
import NFCTags

/// `apdu ndef-format --desfire`: NXP AN11004 on a DESFire (the NDEF application 000001 with its
/// CC and NDEF files), so phones and `apdu ndef-read`/`ndef-write` (the Type 4 procedure) work
/// on it. The card master key, when the card needs it to create applications, comes from
/// $APDU_DESFIRE_KEY (KEYNO:TYPE:HEX).
enum DESFireNDEFFormatting {
    static func run(_ readerOptions: ReaderOptions, _ output: OutputOptions, _ traceOptions: TraceOptions) throws {
        try reportingDESFireFailures {
            let key = try DESFireKeyText.load(file: nil, option: "--key-file", environment: "APDU_DESFIRE_KEY")
                .map { try DESFireKeyText.parse($0, numbered: true, source: "$APDU_DESFIRE_KEY").key }
            let (reader, report) = try withDESFire(readerOptions, traceOptions) { reader, card in (reader, try card.formatForNDEF(piccKey: key)) }
            if output.json {
                Terminal.print(JSON.object([("reader", .string(reader)), ("card", .string("desfire")), ("application", .string(DESFireCard.ndefApplication.description)),
                                            ("done", .array(report.done.map(JSON.string))), ("alreadyDone", .array(report.alreadyDone.map(JSON.string))),
                                            ("capacity", .int(report.capacity))]).serialized)
            } else if report.done.isEmpty {
                Terminal.print("the DESFire is an NDEF tag already (AN11004, \(report.capacity) bytes of NDEF); nothing was written")
            } else {
                Terminal.print("formatted the DESFire for NDEF (NXP AN11004): \(report.done.joined(separator: "; ")); up to \(report.capacity) bytes of NDEF")
            }
        }
    }
}
