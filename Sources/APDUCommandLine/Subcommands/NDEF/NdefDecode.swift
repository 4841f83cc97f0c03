// `apdu ndef decode`: an NDEF message decoded from hex, a file or standard input.
import ArgumentParser
import Dispatch
import FoundationEssentials
import Glibc
import ISO7816
import NDEF

extension APDUCommand {
    package struct NdefDecode: ParsableCommand {
        package init() {}
        package static let configuration = CommandConfiguration(
            commandName: "decode",
            abstract: "Decode an NDEF message from hex, a file or standard input.",
            discussion: "A file or standard input is read as raw bytes, or as hex when it is all hex text.")

        @OptionGroup package var output: OutputOptions

        @Option(help: ArgumentHelp("Read the message from this file (raw bytes or hex text).", valueName: "file"))
        package var file: String?

        @Flag(help: "Decode what can be decoded of a damaged message and say what was skipped.")
        package var relaxed = false

        @Argument(help: ArgumentHelp("The message in hex (may be split over several arguments), or - for standard input.", valueName: "hex"))
        package var hexParts: [String] = []

        package var hex: String? { hexParts.isEmpty ? nil : hexParts.joined(separator: " ") }

        package func validate() throws {
            if hex != nil && file != nil { throw ValidationError("give the message as HEX, --file or -, not several") }
            if hex == nil && file == nil { throw ValidationError("give the message as HEX, --file FILE, or - for standard input") }
            if let hex, hex != "-" {
                do { _ = try Hex.decode(hex) } catch { throw ValidationError("message: \(error)") }
            }
        }

        package func input() throws -> [UInt8] {
            if let hex, hex != "-" { return try Hex.decode(hex) }
            if let file { return try readMessageFile(file, option: "--file") }
            guard let input = StandardStream.standardInput.readToEnd() else { throw Failure(.usage, "cannot read the message from standard input") }
            return rawOrHex(input)
        }

        package func run() throws {
            try reportingFailures {
                let bytes = try input()
                let message: NDEFMessage
                var skipped: [NDEFMessage.Skipped] = []
                if relaxed {
                    (message, skipped) = NDEFMessage.decodeRelaxed(bytes)
                } else {
                    do { message = try NDEFMessage(decoding: bytes) } catch {
                        throw Failure(.badData, "\(error) (use --relaxed to decode what can be)")
                    }
                }
                let verdict = BackgroundReadingVerdict(message: message)
                if output.json {
                    var doc: [(String, JSON)] = [
                        ("length", .int(bytes.count)),
                        ("message", NDEFRender.messageJSON(message, bytes: bytes, strict: !relaxed)),
                        ("backgroundReading", NDEFRender.verdictJSON(verdict)),
                    ]
                    if relaxed { doc.append(("skipped", .array(skipped.map { .object([("offset", .int($0.offset)), ("what", .string($0.what))]) }))) }
                    Terminal.print(JSON.object(doc).serialized)
                    return
                }
                Terminal.print("NDEF message: \(message.records.count) record\(message.records.count == 1 ? "" : "s"), \(bytes.count) bytes")
                for line in message.displayLines(strict: !relaxed) { Terminal.print(line) }
                for s in skipped { Terminal.print("skipped: \(Terminal.safe(s.description))") }
                Terminal.print(verdict.displayLine)
            }
        }
    }
}
