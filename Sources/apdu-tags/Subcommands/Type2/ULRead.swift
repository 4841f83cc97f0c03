// `apdu ultralight read`: a Type 2 tag's pages dumped with their roles.
import APDUCommandLine
import ArgumentParser
import Dispatch
import FoundationEssentials
import Glibc
import ISO7816
import NFCTags
import PCSC
import TagReader

extension APDUCommand {
    struct ULRead: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "read",
            abstract: "Dump the pages of a MIFARE Ultralight / NTAG (Type 2) tag with their roles.")

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions
        @OptionGroup var tagAccess: TagAccessOptions

        @Option(help: ArgumentHelp("Pages to dump, e.g. 4-39 (default: the whole tag as its CC describes it).", valueName: "A-B"))
        var pages: String?

        func range() throws -> ClosedRange<Int>? {
            guard let pages else { return nil }
            let parts = pages.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 2 || parts.count == 1, let a = Int(parts[0]), let b = Int(parts.last!), a >= 0, b >= a else {
                throw ValidationError("--pages: '\(Terminal.safe(pages))' is not a page range like 4-39")
            }
            guard b < Type2Tag.nativeReachablePages else {
                throw ValidationError("--pages: page \(b) is past \(Type2Tag.nativeReachablePages - 1), the last page this tool addresses")
            }
            return a...b
        }

        func validate() throws { _ = try range() }

        func run() throws {
            try reportingFailures {
                let (reader, map) = try readerOptions.withCard(transaction: true) { reader, card in
                    let transport = APDUTransport(channel: PCSCChannel(card: card), observer: traceOptions.observer)
                    let atr = (try? card.status().atr) ?? []
                    let commands = Type2Tag.isType2(atr: atr) ? try TagCommandChannel.open(transport: transport, readerName: reader, override: tagAccess.readerDialect) : nil
                    defer { commands?.endSession() }
                    return (reader, try Type2Tag.pageMap(transport, atr: atr, pages: try range(), commands: commands, password: try tagAccess.password()))
                }
                let note = map.unreachable.map {
                    "pages \($0.lowerBound)-\($0.upperBound) not shown: storage READ BINARY addresses pages 0-255; larger tags need SECTOR_SELECT, through a reader with a raw tag-command path (--reader-dialect)"
                }
                let rows = map.rows.map { ($0.page, $0.bytes, $0.role) }
                if output.json {
                    Terminal.print(JSON.object([
                        ("reader", .string(reader)),
                        ("pages", .array(rows.map { .object([("page", .int($0.0)), ("hex", $0.1.map { .hex($0) } ?? .null), ("role", .string($0.2))]) })),
                        ("note", note.map(JSON.string) ?? .null),
                    ]).serialized)
                } else {
                    for (p, b, r) in rows {
                        let shown = b.map { Hex.encode($0, separator: " ") + "  |" + Terminal.ascii($0) + "|" } ?? "-- -- -- --  |refused|"
                        Terminal.print(Terminal.padded(p, width: 3) + "  " + shown + "  " + r)
                    }
                    if let note { Terminal.error(note) }
                }
            }
        }
    }
}
