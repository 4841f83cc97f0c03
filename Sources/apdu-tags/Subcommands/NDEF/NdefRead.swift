// `apdu ndef-read`: a tag's NDEF message read and decoded; its output is shared with
// `watch --ndef`.
import APDUCommandLine
import ArgumentParser
import ISO7816
import NDEF
import NFCTags
import PCSC
import TagReader

extension APDUCommand {
    struct NdefRead: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ndef-read",
            abstract: "Read the NDEF message of a tag (Type 2, 3, 4 or 5) and decode it.")

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions
        @OptionGroup var tagAccess: TagAccessOptions

        @Flag(help: "Print the message bytes as hex only.")
        var raw = false

        func run() throws {
            try reportingFailures {
                let (view, message) = try readerOptions.withTag(trace: traceOptions, access: tagAccess) { t in
                    do { return (TagView(t), try t.tag.readNDEF()) } catch let e as TagError where e.kind == .interrupted {
                        throw Failure(.badData, "\(e.message); \(tagAccess.interruptedAdvice(reader: t.reader, kind: t.tag.kind, uid: t.tag.uid))")
                    }
                }
                if raw {
                    Terminal.print(message.hexString)
                    return
                }
                try render(view, message: message, output: output)
            }
        }
    }
}

/// The ndef-read output, shared with `watch --ndef`.
func ndefReadJSON(_ view: TagView, message: [UInt8]) -> (JSON, NDEFMessage?, NDEFError?) {
    var decoded: NDEFMessage?
    var decodeError: NDEFError?
    if !message.isEmpty {
        do { decoded = try NDEFMessage(decoding: message) } catch { decodeError = error }
    }
    var members: [(String, JSON)] = [
        ("reader", .string(view.reader)), ("tag", view.json),
        ("status", .string(view.status.rawValue)), ("capacity", .int(view.capacity)), ("length", .int(message.count)),
    ]
    if let decoded {
        members.append(("message", NDEFRender.messageJSON(decoded, bytes: message, strict: true)))
        members.append(("backgroundReading", NDEFRender.verdictJSON(BackgroundReadingVerdict(message: decoded))))
    } else {
        members.append(("message", .object([("hex", .hex(message)), ("records", .array([]))])))
        if let decodeError { members.append(("error", .string(decodeError.description))) }
        members.append(("backgroundReading", NDEFRender.verdictJSON(BackgroundReadingVerdict(message: NDEFMessage(records: [])))))
    }
    return (.object(members), decoded, decodeError)
}

func render(_ view: TagView, message: [UInt8], output: OutputOptions) throws {
    let (json, decoded, decodeError) = ndefReadJSON(view, message: message)
    if output.json {
        Terminal.print(json.serialized)
    } else {
        Terminal.print("\(Terminal.safe(view.reader)): \(view.description), \(view.status.rawValue), \(message.count) of \(view.capacity) bytes used")
        if message.isEmpty { Terminal.print("(empty: no NDEF message)") }
        if let decoded {
            for line in decoded.displayLines(strict: true) { Terminal.print(line) }
            Terminal.print(BackgroundReadingVerdict(message: decoded).displayLine)
        }
    }
    if let decodeError {
        throw Failure(.badData, "the tag's NDEF message is malformed: \(decodeError) (apdu ndef-read --raw | apdu ndef decode --relaxed - shows what can be read)")
    }
}
