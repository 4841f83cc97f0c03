// `apdu ntag424 sdm`: Secure Unique NFC provisioned from a URL template.
import APDUCommandLine
import ArgumentParser
import ISO7816
import NDEF
import NFCTags
import SUN
import TagReader

extension APDUCommand {
    struct NTAG424SDM: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sdm",
            abstract: "Provision Secure Unique NFC: write a URL template and enable SDM so every tap serves a fresh, verifiable URL.",
            discussion: """
                Placeholders: {picc} (encrypted UID and read counter, 32 hex digits), or {uid} and {ctr} in the clear; {mac} \
                (always); {file} (--file-data, 16 bytes or a multiple, served encrypted; the MAC covers the text from {file} \
                to {mac}). They go anywhere after the host and before a '#', and every offset comes from where they stand: \
                'https://example.com/t?e={picc}&c={mac}', 'https://example.com/t?uid={uid}&ctr={ctr}&c={mac}', \
                'https://example.com/t?e={picc}&enc={file}&c={mac}', the bulk 'https://example.com/t?e={picc}{file}{mac}', \
                path segments 'https://t.example/{picc}/{mac}' or 'https://t.example/{picc}{mac}'. \
                Before anything is written, the chip's originality signature (Read_Sig, NXP's ECDSA over the UID) is read in \
                the authenticated session and checked; --require-genuine refuses a chip it does not verify for. \
                The URL is written with the Type 4 procedure (old, empty or new message at any moment; the old one backed up), \
                then ChangeFileSettings enables SDM in one command. The NDEF file stays readable without a key (background \
                reading). The file's change key comes from --key-file or $APDU_NTAG424_KEY and is never printed. \
                --tamper (NTAG 424 DNA TagTamper only; refused, exit 1, on any other chip, before anything is written) \
                mirrors the tamper loop's two status letters (permanent, current: C closed, O open): 'file' at the start \
                of the plain {file} data (encrypted and MACed with it, as sdm-backend reads it), 'file:N' at byte N, or \
                'clear' where the template puts {tt} (before {mac}, inside the MAC input).
                """)

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions

        @Option(help: ArgumentHelp("The URL template with placeholders.", valueName: "template"))
        var url: String

        @Option(help: ArgumentHelp("File holding the NDEF file's change key (key 0 as shipped). Default: $APDU_NTAG424_KEY.", valueName: "file"))
        var keyFile: String?

        @Option(help: ArgumentHelp("The key that encrypts the PICC data (SDMMetaReadKey), 0-4.", valueName: "n"))
        var metaReadKey: UInt8 = 2

        @Option(help: ArgumentHelp("The key of the MAC and the file data (SDMFileReadKey), 0-4.", valueName: "n"))
        var fileReadKey: UInt8 = 2

        @Option(help: ArgumentHelp("Stop serving SUN URLs after this many reads (SDMReadCtrLimit).", valueName: "n"))
        var counterLimit: Int?

        @Option(help: ArgumentHelp("With {file}: the text the tag serves encrypted, 16 characters or a multiple of 16.", valueName: "text"))
        var fileData: String?

        @Option(help: ArgumentHelp("NTAG 424 DNA TagTamper: mirror the tamper status 'file' (first two bytes of the {file} data), 'file:N', or 'clear' (at {tt}).", valueName: "placement"))
        var tamper: String?

        var tamperPlacement: SUNTamperPlacement? {
            guard let tamper else { return nil }
            if tamper == "clear" { return .clear }
            if tamper == "file" { return .fileData(offset: 0) }
            if tamper.hasPrefix("file:"), let n = Int(tamper.dropFirst(5)), (0...254).contains(n) { return .fileData(offset: n) }
            return nil
        }

        @Flag(help: "Refuse, before anything is written, a chip whose NXP originality signature does not verify.")
        var requireGenuine = false

        @Flag(help: "Do not mirror the read counter: the URL still verifies, but a replay can no longer be told from a tap.")
        var noCounter = false

        func validate() throws {
            if tamper != nil, tamperPlacement == nil { throw ValidationError("--tamper: file, file:N (0-254) or clear") }
            guard metaReadKey < 5, fileReadKey < 5 else { throw ValidationError("--meta-read-key and --file-read-key are key numbers 0-4") }
            if let counterLimit, !(1...0xFF_FFFF).contains(counterLimit) { throw ValidationError("--counter-limit is 1-16777215") }
            if let fileData, fileData.utf8.isEmpty || fileData.utf8.count % 16 != 0 {
                throw ValidationError("--file-data is 16 characters (ASCII) or a multiple of 16, not \(fileData.utf8.count)")
            }
            do { _ = try plan() } catch let e as NTAG424Error { throw ValidationError("--url: \(e.message)") }
        }

        func plan() throws -> SUNURLTemplate {
            try SUNURLTemplate(url, metaReadKey: metaReadKey, fileReadKey: fileReadKey, fileData: fileData.map { Array($0.utf8) }, counterLimit: counterLimit,
                               mirrorsCounter: !noCounter, tamper: tamperPlacement)
        }

        func run() throws {
            try reportingFailures {
                let plan = try plan()
                let key = try aesKey(file: keyFile, option: "--key-file", environment: "APDU_NTAG424_KEY")
                let template = try SUNTemplate(url: url)
                let outcome = try withNTAG424(readerOptions, traceOptions) { reader, _, _, tag in
                    var backupPath: String?
                    let restore = { (path: String) in "apdu ndef-write -r \(Terminal.shellQuoted(reader)) --restore \(Terminal.shellQuoted(path))" }
                    do {
                        let result = try tag.provisionSDM(plan, key: key, requireGenuine: requireGenuine) { backup in
                            backupPath = try DirectoryBackupStore.standard.save(backup, reader: reader)
                        }
                        _ = try SUNMessage(url: result.served, template: template)
                        return (reader, result.served, plan.settings, backupPath, result.originality)
                    } catch let e as SDMProvisioningInterrupted {
                        let f = Failure(e.underlying)
                        let back = backupPath.map { "put the previous message back with: \(restore($0))" }
                        switch e.stage {
                        case .pausingSDM:
                            throw Failure(f.status, "\(f.message) while turning the old SDM off; the tag holds its previous URL, with SDM on or off: run this command again to finish")
                        case let .writingURL(state):
                            throw Failure(f.status, "\(f.message) while writing the URL; \(state.words(old: "the previous message", new: "the new URL")), SDM settings unchanged" + (back.map { "; \($0)" } ?? ""))
                        case .enablingSDM:
                            throw Failure(f.status, "\(f.message) while enabling SDM; the tag holds the new URL with its previous file settings or the new ones: run this command again to finish" + (back.map { ", or \($0)" } ?? ""))
                        case .checking:
                            throw Failure(f.status, "\(f.message) after SDM was enabled: check what the tag serves with apdu ndef-read -r \(Terminal.shellQuoted(reader))")
                        }
                    }
                }
                if output.json {
                    Terminal.print(JSON.object([
                        ("reader", .string(outcome.0)), ("served", .string(outcome.1)), ("backup", JSON.optional(outcome.3)),
                        ("sdm", NTAG424Info.sdmJSON(outcome.2)), ("originality", outcome.4.json),
                    ]).serialized)
                } else {
                    Terminal.print("\(Terminal.safe(outcome.0)): SDM enabled (the file's settings read back in the session); the tag now serves, read in the clear as a phone reads it")
                    Terminal.print("  \(Terminal.safe(outcome.1))")
                    Terminal.print("originality signature over UID \(outcome.4.uid.hexString): \(outcome.4.verdict)")
                    if let backup = outcome.3 { Terminal.print("backup of the previous message: \(backup)") }
                }
            }
        }
    }
}
