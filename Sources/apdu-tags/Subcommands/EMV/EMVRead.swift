// `apdu emv read`: one application read and authenticated offline, private data masked.
import APDUCommandLine
import ArgumentParser
import EMV
import FoundationEssentials
import ISO7816

extension APDUCommand {
    struct EMVRead: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "read",
            abstract: "Read a payment card: the application's data, counters, log and offline data authentication.",
            discussion: """
                Selects the highest-priority application (or --aid), sends one GET PROCESSING OPTIONS with neutral \
                values (amount 0, today's date, a random unpredictable number; country and currency from the options, \
                else the card's, else 0840), reads the AFL's records, GET DATA for the ATC, last online ATC, PIN tries \
                and log format, and the log. Offline data authentication: SDA, DDA (one INTERNAL AUTHENTICATE) or Visa \
                fDDA, under the built-in CA keys and --ca-keys; CDA is reported as offered, not verified (it needs \
                GENERATE AC, which is never sent).
                """)

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions

        @Option(help: ArgumentHelp("The application to read, in hex (default: the card's highest priority).", valueName: "hex"))
        var aid: String?

        @Flag(help: "Show the full PAN, the cardholder name and the track data.")
        var showPan = false

        @Option(help: ArgumentHelp("More CA public keys, in proxmark3's capk.txt line format.", valueName: "file"))
        var caKeys: String?

        @Option(help: ArgumentHelp("Terminal country code for the PDOL, 3 digits (ISO 3166 numeric).", valueName: "nnn"))
        var country: String?

        @Option(help: ArgumentHelp("Transaction currency code for the PDOL, 3 digits (ISO 4217 numeric).", valueName: "nnn"))
        var currency: String?

        func validate() throws {
            if let aid, (try? Hex.decode(aid)).map({ (5...16).contains($0.count) }) != true { throw ValidationError("--aid must be 5-16 bytes in hex") }
            for (name, value) in [("--country", country), ("--currency", currency)] {
                if let value, value.count != 3 || !value.allSatisfy(\.isNumber) { throw ValidationError("\(name) must be 3 digits, e.g. 978") }
            }
        }

        static func code(_ digits: String?) -> [UInt8]? {
            digits.map { d in let n = Int(d)!; return [UInt8(n / 100), UInt8((n / 10 % 10) << 4 | n % 10)] }
        }

        func keys() throws -> CAPublicKeys {
            var keys = CAPublicKeys.builtIn
            guard let caKeys else { return keys }
            guard let text = try? String(contentsOfFile: caKeys, encoding: .utf8) else { throw Failure(.badData, "--ca-keys \(Terminal.safe(caKeys)): cannot read the file") }
            do { keys.add(try CAPublicKeys.parse(capkFile: text)) } catch { throw Failure(.badData, "--ca-keys \(Terminal.safe(caKeys)): \(error.message)") }
            return keys
        }

        func run() throws {
            try reportingFailures {
                let terminal = TerminalData(country: Self.code(country), currency: Self.code(currency), date: emvToday())
                let keys = try keys()
                let (reader, read, exchanges) = try withPaymentCard(readerOptions, traceOptions, caKeys: keys, terminal: terminal) { name, card in
                    (name, try card.read(aid: aid.map { try! Hex.decode($0) }), card.exchanges)
                }
                let view = EMVRender(read: read, showPAN: showPan)
                if output.json {
                    Terminal.print(JSON.object([("reader", .string(reader))] + view.json + [("exchanges", .int(exchanges))]).serialized)
                } else {
                    Terminal.print("\(Terminal.safe(reader)):")
                    for line in view.lines { Terminal.print(line) }
                }
                if read.oda.result == .failed {
                    throw Failure(.badData, "offline data authentication (\(read.oda.method.rawValue)) failed: \(read.oda.reason ?? "")")
                }
                // Unproven is not failed: nothing was found wrong, but the proof the card offers
                // could not be done (exit 1, as a lock nothing proves; docs/emv.md).
                if read.oda.result == .unknownCAIndex {
                    throw Failure(.unexpected, "offline data authentication (\(read.oda.method.rawValue)) unproven: \(read.oda.reason ?? "")")
                }
            }
        }
    }
}
