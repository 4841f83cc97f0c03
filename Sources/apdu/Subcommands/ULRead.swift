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
            guard parts.count == 2 || parts.count == 1, let a = Int(parts[0]), let b = Int(parts.last!), a >= 0, b >= a, b <= 255 else {
                throw ValidationError("--pages: '\(Terminal.safe(pages))' is not a page range like 4-39 (0-255)")
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
                var bytes: [Int: [UInt8]] = [:]
                var dataPages = 12
                // One transaction: the pages all come from one moment of the tag.
                try card.withTransaction {
                    gate.proceed()
                    let head = try transport.send(CommandAPDU(cla: 0xFF, ins: 0xB0, p1: 0, p2: 0, ne: 16))
                    guard head.statusWord == .success, head.data.count == 16 else {
                        throw Failure(.ioError, "cannot read pages 0-3: \(head.statusWord) (\(head.statusWord.meaning.text))")
                    }
                    dataPages = head.data[12] == 0xE1 ? Int(head.data[14]) * 2 : 12
                    let total = 4 + dataPages + (dataPages > 12 ? 5 : 0)
                    let wanted = try range() ?? 0...(total - 1)
                    var page = wanted.lowerBound
                    while page <= wanted.upperBound {
                        let r = try transport.send(CommandAPDU(cla: 0xFF, ins: 0xB0, p1: 0, p2: UInt8(page), ne: 16))
                        guard r.statusWord == .success else {
                            if bytes.isEmpty { throw Failure(.unexpected, "page \(page) cannot be read: \(r.statusWord) (\(r.statusWord.meaning.text))") }
                            break
                        }
                        for i in 0..<4 where page + i <= wanted.upperBound { bytes[page + i] = Array(r.data[(i * 4)..<(i * 4 + 4)]) }
                        page += 4
                    }
                }
                try? card.disconnect()
                let rows = bytes.keys.sorted().map { p -> (Int, [UInt8], String) in (p, bytes[p]!, role(p, dataPages: dataPages)) }
                if output.json {
                    Terminal.print(JSON.object([
                        ("reader", .string(reader)),
                        ("pages", .array(rows.map { .object([("page", .int($0.0)), ("hex", .hex($0.1)), ("role", .string($0.2))]) })),
                    ]).serialized)
                } else {
                    for (p, b, r) in rows {
                        Terminal.print(String(format: "%3d  ", p) + Hex.encode(b, separator: " ") + "  |" + Terminal.ascii(b) + "|  " + r)
                    }
                }
            }
        }

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
