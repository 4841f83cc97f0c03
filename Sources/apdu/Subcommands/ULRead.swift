import ArgumentParser
import Foundation
import ISO7816
import NFCTags
import PCSC

extension APDUCommand {
    struct ULRead: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ul-read",
            abstract: "Dump the pages of a MIFARE Ultralight / NTAG (Type 2) tag with their roles.")

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions

        @Option(help: ArgumentHelp("Pages to dump, e.g. 4-39 (default: the whole tag as its CC describes it).", valueName: "A-B"))
        var pages: String?

        func range() throws -> ClosedRange<Int>? {
            guard let pages else { return nil }
            let parts = pages.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 2 || parts.count == 1, let a = Int(parts[0]), let b = Int(parts.last!), a >= 0, b >= a else {
                throw ValidationError("--pages: '\(Terminal.safe(pages))' is not a page range like 4-39")
            }
            guard b < Type2Tag.addressablePages else {
                throw ValidationError("--pages: page \(b) is past 255, the last page PC/SC storage READ BINARY can address")
            }
            return a...b
        }

        func validate() throws { _ = try range() }

        func run() throws {
            try reportingFailures {
                let selection = try ReaderSelection()
                let reader = try selection.chooseReaderWithCard(readerOptions.requestedReader, wait: readerOptions.waitDuration)
                let (card, gate) = try selection.connectWatched(reader, wait: readerOptions.waitDuration)
                defer { gate.standDown() }
                let atr = (try? card.status().atr) ?? []
                guard Type2Tag.isType2(atr: atr) else {
                    throw Failure(.unexpected, "not a MIFARE Ultralight / NTAG tag (the ATR is not a PC/SC Part 3 Ultralight-family storage card)")
                }
                let transport = APDUTransport(channel: PCSCChannel(card: card), observer: traceOptions.observer)
                var bytes: [Int: [UInt8]?] = [:]
                var dataPages = 12
                var chip: Type2Chip?
                var note: String?
                // One transaction: the pages all come from one moment of the tag.
                try card.withTransaction {
                    gate.proceed()
                    let tag = Type2Tag(transport: transport, uid: nil)
                    let head: [UInt8]
                    do { head = try tag.dump(pages: 0...3).compactMap(\.bytes).flatMap { $0 } } catch let e as TagError { throw Failure(.ioError, "cannot read pages 0-3: \(e.message)") }
                    guard head.count == 16 else { throw Failure(.ioError, "cannot read pages 0-3: the tag refused") }
                    dataPages = head[12] == 0xE1 ? Int(head[14]) * 2 : 12
                    // The chip, where the evidence names one, says where its lock and configuration
                    // pages really are (NTAG215/216 keep user pages past the CC's data area).
                    chip = (try? Type2Tag.detect(transport, atr: atr, tolerant: true))?.chip.chip
                    let total = chip?.pages ?? 4 + dataPages + (dataPages > 12 ? 5 : 0)
                    var wanted = try range() ?? 0...(total - 1)
                    if wanted.upperBound >= Type2Tag.addressablePages {
                        note = "pages \(Type2Tag.addressablePages)-\(wanted.upperBound) not shown: PC/SC storage READ BINARY addresses pages 0-255 (larger tags need SECTOR_SELECT)"
                        wanted = wanted.lowerBound...(Type2Tag.addressablePages - 1)
                    }
                    do {
                        for (page, data) in try tag.dump(pages: wanted) { bytes[page] = data }
                    } catch let e as TagError { throw e.failure }
                    if !bytes.values.contains(where: { $0 != nil }) { throw Failure(.unexpected, "the tag refused every page of \(wanted.lowerBound)-\(wanted.upperBound)") }
                }
                try? card.disconnect()
                let rows = bytes.keys.sorted().map { p -> (Int, [UInt8]?, String) in
                    (p, bytes[p]!, chip?.role(ofPage: p, dataAreaEnd: 16 + dataPages * 4) ?? role(p, dataPages: dataPages))
                }
                if output.json {
                    Terminal.print(JSON.object([
                        ("reader", .string(reader)),
                        ("pages", .array(rows.map { .object([("page", .int($0.0)), ("hex", $0.1.map { .hex($0) } ?? .null), ("role", .string($0.2))]) })),
                        ("note", note.map(JSON.string) ?? .null),
                    ]).serialized)
                } else {
                    for (p, b, r) in rows {
                        let shown = b.map { Hex.encode($0, separator: " ") + "  |" + Terminal.ascii($0) + "|" } ?? "-- -- -- --  |refused|"
                        Terminal.print(String(format: "%3d  ", p) + shown + "  " + r)
                    }
                    if let note { Terminal.error(note) }
                }
            }
        }

        /// Roles for a chip the evidence does not name: the NFC Forum's default layout.
        func role(_ page: Int, dataPages: Int) -> String {
            switch page {
            case 0, 1: return "UID"
            case 2: return "UID/internal/static lock"
            case 3: return "CC"
            case 4..<(4 + dataPages): return "data"
            case 4 + dataPages: return dataPages > 12 ? "dynamic lock" : "beyond data area"
            default: return dataPages > 12 ? "config" : "beyond data area"
            }
        }
    }
}
