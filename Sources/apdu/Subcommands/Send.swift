import ArgumentParser
import ISO7816
import PCSC

extension APDUCommand {
    struct Send: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send APDUs in order on one connection and explain each status word.",
            discussion: "Hex may use either case, spaces or colons: apdu send '00 A4 04 00 07 A0000000031010'")

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions

        @Option(help: ArgumentHelp("Status words that count as success (comma-separated, e.g. 9000,6283); any other exits 1.", valueName: "SW,..."))
        var expect: String?

        @Argument(help: ArgumentHelp("Command APDUs in hex.", valueName: "hex"))
        var apdus: [String]

        func validate() throws {
            if apdus.isEmpty { throw ValidationError("give at least one APDU in hex") }
            for (i, text) in apdus.enumerated() {
                do { _ = try CommandAPDU(hex: text) } catch {
                    throw ValidationError("APDU \(i + 1) ('\(Terminal.safe(text))'): \(error)")
                }
            }
            _ = try expectedWords()
        }

        func expectedWords() throws -> [StatusWord]? {
            guard let expect else { return nil }
            return try expect.split(separator: ",").map { part in
                guard let sw = StatusWord(hex: part.trimmingCharacters(in: .whitespaces)) else {
                    throw ValidationError("--expect: '\(Terminal.safe(String(part)))' is not a status word like 9000")
                }
                return sw
            }
        }

        func run() throws {
            try reportingFailures {
                let commands = try apdus.map { try CommandAPDU(hex: $0) }
                let expected = try expectedWords()
                let context = try Context()
                let reader = try ReaderSelection(context: context).chooseReaderWithCard(readerOptions.requestedReader, wait: readerOptions.waitDuration)
                let card = try context.connect(reader: reader)
                var exchanges: [JSON] = []
                var unexpected: (Int, StatusWord)?
                try card.withTransaction {
                    for (i, command) in commands.enumerated() {
                        let raw = try card.transmit(command.bytes)
                        let response: ResponseAPDU
                        do { response = try ResponseAPDU(bytes: raw) } catch {
                            throw Failure(.ioError, "APDU \(i + 1): \(error)")
                        }
                        let sw = response.statusWord
                        let meaning = sw.meaning
                        if output.json {
                            exchanges.append(.object([
                                ("command", .hex(command.bytes)),
                                ("response", .hex(raw)),
                                ("data", .hex(response.data)),
                                ("sw", .string(sw.description)),
                                ("category", .string(meaning.category.rawValue)),
                                ("meaning", .string(meaning.text)),
                            ]))
                        } else {
                            Terminal.print("> " + Hex.encode(command.bytes, separator: " "))
                            let data = response.data.isEmpty ? "" : Hex.encode(response.data, separator: " ") + " "
                            Terminal.print("< " + data + Hex.encode([sw.sw1, sw.sw2], separator: " ") + "  (\(sw): \(meaning.text))")
                        }
                        if let expected, !expected.contains(sw), unexpected == nil {
                            unexpected = (i + 1, sw)
                        }
                    }
                }
                try? card.disconnect()
                if output.json {
                    Terminal.print(JSON.object([("reader", .string(reader)), ("exchanges", .array(exchanges))]).serialized)
                }
                if let (index, sw) = unexpected {
                    let wanted = (expected ?? []).map(\.description).joined(separator: " or ")
                    throw Failure(.unexpected, "APDU \(index) answered \(sw) (\(sw.meaning.text)); expected \(wanted)")
                }
            }
        }
    }
}
