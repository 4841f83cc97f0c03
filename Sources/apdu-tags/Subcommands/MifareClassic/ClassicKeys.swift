// `apdu classic keys`: which keys open each sector, as key A and as key B.
import APDUCommandLine
import ArgumentParser
import ISO7816
import NFCTags
import TagReader

extension APDUCommand {
    struct ClassicKeys: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "keys",
            abstract: "Find which keys open each sector of a MIFARE Classic card, as key A and as key B.",
            discussion: """
                Tries the keys given (--key, --key-file, $APDU_MIFARE_KEYS) and the well-known public keys (factory \
                FFFFFFFFFFFF, MAD A0A1A2A3A4A5, NDEF D3F7D3F7D3F7) on every sector, and says sector by sector which \
                one opens it as key A and as key B, with what the access bits let each do. Keys are named by where \
                they came from, never printed. Exit 1 when some sector opens with none.
                """)

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions
        @OptionGroup var keys: ClassicKeyOptions

        func run() throws {
            try reportingFailures {
                let candidates = try keys.candidates()
                guard !candidates.isEmpty else { throw Failure(.usage, "no keys to try: give --key or --key-file, or drop --no-public-keys") }
                let (reader, layout, found) = try MifareClassicSession.run(reader: readerOptions.requestedReader, wait: readerOptions.waitDuration,
                                                                            observer: traceOptions.observer, keySlot: keys.keySlot) { reader, card, _ in
                    let progress = Progress("trying \(candidates.count) keys on", output: output, trace: traceOptions)
                    defer { progress.finish() }
                    return (reader, card.layout, try card.findKeys(candidates) { progress.update($0 + 1, of: card.layout.sectorCount, "sector \($0)") })
                }
                if output.json {
                    Terminal.print(JSON.object([("reader", .string(reader)), ("card", .string(layout.description)), ("keysTried", .int(candidates.count)),
                                                ("sectors", .array(found.map { s in
                                                    .object([("sector", .int(s.sector)), ("keyA", .optional(s.keyA)), ("keyB", .optional(s.keyB)),
                                                             ("access", ClassicRender.accessJSON(s.access, layout: layout, sector: s.sector))])
                                                }))]).serialized)
                } else {
                    Terminal.print("\(layout): \(candidates.count) keys tried on \(layout.sectorCount) sectors")
                    for s in found {
                        var line = "sector \(s.sector < 10 ? " " : "")\(s.sector)  key A: \(Terminal.safe(s.keyA ?? "-"))  key B: \(Terminal.safe(s.keyB ?? "-"))"
                        if let a = s.access {
                            line += "  (data: \(MifareClassicAccessBits.words(data: a.conditions[0])); \(a.keyBReadable ? "key B is readable, so it opens nothing" : "trailer: \(MifareClassicAccessBits.words(trailer: a.conditions[3]))"))"
                        }
                        Terminal.print(line)
                    }
                }
                if found.contains(where: { $0.keyA == nil && $0.keyB == nil }) { throw ExitCode(ExitStatus.unexpected.rawValue) }
            }
        }
    }
}
