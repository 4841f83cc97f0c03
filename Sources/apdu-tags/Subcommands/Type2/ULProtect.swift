// `apdu ultralight protect`: an NTAG21x or Ultralight EV1 password set and pages protected;
// and the report protect and unprotect share.
import APDUCommandLine
import ArgumentParser
import Dispatch
import FoundationEssentials
import Glibc
import ISO7816
import NFCTags
import TagReader

extension APDUCommand {
    struct ULProtect: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "protect",
            abstract: "Set an NTAG21x / Ultralight EV1 password and protect pages from --from-page on.",
            discussion: """
                The password and PACK pages are written first, then ACCESS (PROT), then AUTH0 last: a tag pulled \
                before the end is protected as it was before, never by a password nobody knows. The new password is \
                then checked with PWD_AUTH. A tag already protected needs its current password (--password-file). \
                Needs a reader with a raw tag-command path.
                """)

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions
        @OptionGroup var tagAccess: TagAccessOptions

        @Option(help: ArgumentHelp("File with the new password (8 hex digits) and optionally its PACK (4 hex digits). Default: $APDU_TAG_NEW_PASSWORD.", valueName: "file"))
        var newPasswordFile: String?

        @Option(help: ArgumentHelp("The first page to protect (AUTH0).", valueName: "page"))
        var fromPage = 4

        @Flag(help: "Protect reads too (PROT), not only writes.")
        var reads = false

        func newPassword() throws -> Type2Password {
            guard let new = try TagAccessOptions.load(file: newPasswordFile, option: "--new-password-file", environment: "APDU_TAG_NEW_PASSWORD") else {
                throw Failure(.usage, "give the new password with --new-password-file FILE or APDU_TAG_NEW_PASSWORD")
            }
            return new
        }

        func run() throws {
            try reportingFailures {
                let new = try newPassword()
                let (reader, report) = try readerOptions.withTag(trace: traceOptions, access: tagAccess) { t in
                    guard let tag = t.tag as? Type2Tag else { throw Failure(.unexpected, "not a Type 2 tag: passwords are an NTAG21x / Ultralight EV1 feature") }
                    return (t.reader, try tag.protect(with: new, fromPage: fromPage, reads: reads))
                }
                printProtection(reader: reader, report, json: output.json)
            }
        }
    }
}

/// The outcome of ultralight protect / unprotect, as text or JSON (never the password).
func printProtection(reader: String, _ report: Type2ProtectionReport, json: Bool) {
    if json {
        Terminal.print(JSON.object([("reader", .string(reader)), ("auth0", .int(report.auth0)), ("protected", .bool(report.auth0 < 0xFF)),
                                    ("readsProtected", .bool(report.readsProtected)), ("passwordChecked", .bool(report.pack != nil))]).serialized)
    } else if report.auth0 < 0xFF {
        Terminal.print("protected pages \(report.auth0) on (\(report.readsProtected ? "reads and writes" : "writes")) on \(Terminal.safe(reader)); the new password was checked with PWD_AUTH")
    } else {
        Terminal.print("password protection off on \(Terminal.safe(reader)) (AUTH0 FF, PROT cleared)")
    }
}
