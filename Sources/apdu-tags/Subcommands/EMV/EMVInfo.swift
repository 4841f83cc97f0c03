// `apdu emv info`: the payment applications on a card, found by SELECT alone.
import APDUCommandLine
import ArgumentParser
import EMV
import ISO7816

extension APDUCommand {
    struct EMVInfo: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "info",
            abstract: "List a payment card's applications (PPSE, else PSE, else known AIDs): AID, label, preferred name, priority, kernel.",
            discussion: "Sends SELECT and the PSE's READ RECORDs only: no GET PROCESSING OPTIONS, so the card's transaction counter does not move.")

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions

        func run() throws {
            try reportingFailures {
                let (reader, apps, exchanges) = try withPaymentCard(readerOptions, traceOptions, terminal: TerminalData(date: emvToday())) { name, card in
                    (name, try card.applications(), card.exchanges)
                }
                if output.json {
                    Terminal.print(JSON.object([("reader", .string(reader)), ("applications", .array(apps.map(Self.json))), ("exchanges", .int(exchanges))]).serialized)
                    return
                }
                Terminal.print("\(Terminal.safe(reader)): \(apps.count) payment application\(apps.count == 1 ? "" : "s") (from the \(apps.first?.source.rawValue ?? "-"))")
                for app in apps {
                    var line = "  \(app.aid.hexString)  \(Terminal.safe(app.label ?? "(no label)"))"
                    if let p = app.preferredName { line += " / \(Terminal.safe(p))" }
                    if let p = app.priority { line += ", priority \(p)" }
                    if let k = app.kernel { line += ", kernel \(k)" }
                    if app.blocked { line += ", BLOCKED (62 83)" }
                    Terminal.print(line)
                }
            }
        }

        static func json(_ app: PaymentApplication) -> JSON {
            .object([("aid", .hex(app.aid)), ("label", .optional(app.label)), ("preferredName", .optional(app.preferredName)),
                     ("priority", app.priority.map(JSON.int) ?? .null), ("kernel", .optional(app.kernel?.rawValue)),
                     ("kernelIdentifier", app.kernelIdentifier.map { .hex($0) } ?? .null), ("source", .string(app.source.rawValue)),
                     ("blocked", .bool(app.blocked))])
        }
    }
}
