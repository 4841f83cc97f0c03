// `apdu ndef encode`: an NDEF message built from record options, printed as hex or raw bytes.
import ArgumentParser
import Dispatch
import FoundationEssentials
import Glibc
import ISO7816
import NDEF

extension APDUCommand {
    package struct NdefEncode: ParsableCommand {
        package init() {}
        package static let configuration = CommandConfiguration(
            commandName: "encode",
            abstract: "Build an NDEF message; print it as hex (or raw bytes with --binary).",
            discussion: NDEFBuilder.help + """


                Example: apdu ndef encode --uri https://example.com --text "Hello" --lang en
                Warns on stderr when iPhones would not act on the message in background reading.
                """)

        @Flag(help: "Write raw bytes instead of hex (not to a terminal).")
        package var binary = false

        @Option(help: ArgumentHelp("Split payloads longer than this into chunks.", valueName: "bytes"))
        package var chunkSize: Int?

        @Argument(parsing: .allUnrecognized, help: ArgumentHelp("Record options (see above).", valueName: "records"))
        package var items: [String] = []

        package func validate() throws {
            if let chunkSize, chunkSize < 1 { throw ValidationError("--chunk-size must be 1 or more") }
            if items.isEmpty { throw ValidationError("give at least one record, e.g. --uri https://example.com") }
            do { _ = try NDEFBuilder.build(items) } catch let p as NDEFBuilder.Problem where !p.isBadData {
                throw ValidationError(p.message)
            } catch {}
            if binary && isatty(STDOUT_FILENO) == 1 {
                throw ValidationError("--binary writes raw bytes: redirect it to a file or a pipe")
            }
        }

        package func run() throws {
            try reportingFailures {
                let records: [NDEFRecord]
                do { records = try NDEFBuilder.build(items) } catch let p as NDEFBuilder.Problem {
                    throw Failure(p.isBadData ? .badData : .usage, p.message)
                }
                let message = NDEFMessage(records: records)
                let bytes: [UInt8]
                do { bytes = try message.encoded(chunkSize: chunkSize) } catch { throw Failure(.badData, "\(error)") }
                let verdict = BackgroundReadingVerdict(message: message)
                if !verdict.eligible {
                    Terminal.warning("iPhones will not act on this message in background reading: \(verdict.reason)")
                }
                if binary {
                    Terminal.write(bytes)
                } else {
                    Terminal.print(bytes.hexString)
                }
            }
        }
    }
}
