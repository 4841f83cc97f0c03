// `apdu watch`: reader and card events as they happen, and with `--ndef` each tag's message.
import APDUCommandLine
import ArgumentParser
import Dispatch
import FoundationEssentials
import Glibc
import ISO7816
import NDEF
import NFCTags
import PCSC
import TagReader

extension APDUCommand {
    struct Watch: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "watch",
            abstract: "Print reader and card events as they happen, until interrupted.",
            discussion: "Survives readers unplugged and pcscd restarts (reconnecting with backoff). With --json, one object per line.")

        @OptionGroup var output: OutputOptions

        @Option(help: ArgumentHelp("Stop after this many events (for scripts).", valueName: "n"))
        var count: Int?

        @Flag(help: "Read the NDEF message of every tag presented and print it (the desktop counterpart of iPhone background reading).")
        var ndef = false

        @OptionGroup var traceOptions: TraceOptions

        @Option(name: [.customShort("r"), .long], help: ArgumentHelp("Only the readers whose name contains this text (events and --ndef reads).", valueName: "name"))
        var reader: String?

        @Option(help: ArgumentHelp("Card-name list for ATRs.", valueName: "file"))
        var smartcardList = "/usr/share/pcsc/smartcard_list.txt"

        func validate() throws {
            if let count, count < 1 { throw ValidationError("--count must be 1 or more") }
        }

        func run() throws {
            restoreTerminationSignals()
            let names = try? String(contentsOfFile: smartcardList, encoding: .utf8)
            var emitted = 0
            func emit(_ event: String, _ reader: String?, _ atr: [UInt8]? = nil, _ detail: String? = nil) {
                var cardName: String?
                if let atr, let names { cardName = ATR.names(forHex: atr.hexString, list: names).first }
                if output.json {
                    var m: [(String, JSON)] = [("event", .string(event)), ("time", .string(Date.now.formatted(.iso8601)))]
                    if let reader { m.append(("reader", .string(reader))) }
                    if let atr { m.append(("atr", .hex(atr))) }
                    if let cardName { m.append(("name", .string(cardName))) }
                    if let detail { m.append(("detail", .string(detail))) }
                    Terminal.print(JSON.object(m).serialized)
                } else {
                    var line = event
                    if let reader { line += "  \(Terminal.safe(reader))" }
                    if let atr { line += "  ATR \(Hex.encode(atr, separator: " "))" }
                    if let cardName { line += "  (\(Terminal.safe(cardName)))" }
                    if let detail { line += "  \(Terminal.safe(detail))" }
                    Terminal.print(line)
                }
                emitted += 1
            }
            func done() -> Bool { count.map { emitted >= $0 } ?? false }
            func readTag(_ reader: String, _ atr: [UInt8]) {
                guard ndef, !done() else { return }
                do {
                    let card = try Context().connect(reader: reader)
                    defer { try? card.disconnect() }
                    let (view, message) = try TagTransaction.run(card: card, atr: atr, observer: traceOptions.observer) { t in
                        (TagView(t), try t.tag.readNDEF())
                    }
                    let (json, decoded, decodeError) = ndefReadJSON(view, message: message)
                    if output.json {
                        guard case var .object(members) = json else { return }
                        members.insert(("event", .string("ndef")), at: 0)
                        Terminal.print(JSON.object(members).serialized)
                    } else {
                        Terminal.print("ndef  \(Terminal.safe(reader))  \(message.count) bytes")
                        if let decoded {
                            for line in decoded.displayLines(strict: true) { Terminal.print("  " + line) }
                            Terminal.print("  " + BackgroundReadingVerdict(message: decoded).displayLine)
                        }
                        if let decodeError { Terminal.print("  malformed: \(Terminal.safe(decodeError.description))") }
                    }
                } catch {
                    emit("ndef-error", reader, nil, Failure(error).message)
                    return
                }
                emitted += 1
            }
            try reportingFailures {
                try ReaderMonitor().run { event in
                    // Another reader's event is not printed, and its tag is not touched.
                    if let wanted = reader, let name = event.reader, !name.contains(wanted) { return true }
                    switch event {
                    case let .readerAdded(reader): emit("reader-added", reader)
                    case let .readerRemoved(reader): emit("reader-removed", reader)
                    case let .cardPresent(reader, atr):
                        emit("card-present", reader, atr)
                        readTag(reader, atr)
                    case let .cardInserted(reader, atr):
                        emit("card-inserted", reader, atr)
                        readTag(reader, atr)
                    case let .cardRemoved(reader): emit("card-removed", reader)
                    case let .serviceDown(detail): emit("service-down", nil, nil, detail)
                    case .serviceUp: emit("service-up", nil, nil, "connected to pcscd again")
                    }
                    return !done()
                }
            }
        }
    }
}
