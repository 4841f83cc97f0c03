// `apdu ultralight unprotect`: NTAG21x or Ultralight EV1 password protection turned off.
import APDUCommandLine
import ArgumentParser
import NFCTags
import TagReader

extension APDUCommand {
    struct ULUnprotect: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "unprotect",
            abstract: "Turn NTAG21x / Ultralight EV1 password protection off (AUTH0 first, then PROT).",
            discussion: "Needs the current password (--password-file or $APDU_TAG_PASSWORD) and a reader with a raw tag-command path.")

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions
        @OptionGroup var tagAccess: TagAccessOptions

        func run() throws {
            try reportingFailures {
                let (reader, report) = try readerOptions.withTag(trace: traceOptions, access: tagAccess) { t in
                    guard let tag = t.tag as? Type2Tag else { throw Failure(.unexpected, "not a Type 2 tag: passwords are an NTAG21x / Ultralight EV1 feature") }
                    return (t.reader, try tag.unprotect())
                }
                printProtection(reader: reader, report, json: output.json)
            }
        }
    }
}
