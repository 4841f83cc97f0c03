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
                (always); {file} (16 bytes of --file-data, served encrypted). Examples: 'https://example.com/t?e={picc}&c={mac}', \
                'https://example.com/t?uid={uid}&ctr={ctr}&c={mac}', 'https://example.com/t?e={picc}&enc={file}&c={mac}'. \
                The URL is written with the Type 4 procedure (old, empty or new message at any moment; the old one backed up), \
                then ChangeFileSettings enables SDM in one command. The NDEF file stays readable without a key (background \
                reading). The file's change key comes from --key-file or $APDU_NTAG424_KEY and is never printed.
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

        @Option(help: ArgumentHelp("With {file}: the 16 characters the tag serves encrypted.", valueName: "text"))
        var fileData: String?

        func validate() throws {
            guard metaReadKey < 5, fileReadKey < 5 else { throw ValidationError("--meta-read-key and --file-read-key are key numbers 0-4") }
            if let counterLimit, !(1...0xFF_FFFF).contains(counterLimit) { throw ValidationError("--counter-limit is 1-16777215") }
            if let fileData, fileData.utf8.count != 16 { throw ValidationError("--file-data is 16 characters (ASCII), not \(fileData.utf8.count)") }
            do { _ = try plan() } catch let e as NTAG424Error { throw ValidationError("--url: \(e.message)") }
        }

        func plan() throws -> SUNURLTemplate {
            try SUNURLTemplate(url, metaReadKey: metaReadKey, fileReadKey: fileReadKey, fileData: fileData.map { Array($0.utf8) }, counterLimit: counterLimit)
        }

        func run() throws {
            try reportingFailures {
                let plan = try plan()
                let key = try aesKey(file: keyFile, option: "--key-file", environment: "APDU_NTAG424_KEY")
                let template = try SUNTemplate(url: url)
                let outcome = try withNTAG424(readerOptions, traceOptions) { reader, _, transport, tag in
                    let before = try tag.fileSettings(NTAG424Tag.ndefFile)
                    guard case let .key(changeKey) = before.change else {
                        throw Failure(.refused, "the NDEF file's settings can \(before.change == .never ? "never" : "be changed by anyone, which this tool does not leave so; nothing was written, and") be changed")
                    }
                    guard plan.fileContents.count <= before.size else {
                        throw Failure(.badData, "the URL needs \(plan.fileContents.count) bytes; the NDEF file holds \(before.size); nothing was written")
                    }
                    // 0. The key, proved before anything is written (a wrong key changes nothing).
                    try tag.authenticate(keyNumber: changeKey, key: key)
                    // 1. The URL, by the Type 4 procedure: old, empty or new message at every moment.
                    // (Selecting the application for it ends the session; it is opened again after.)
                    var backupPath: String?
                    let restore = { (path: String) in "apdu ndef-write -r \(Terminal.shellQuoted(reader)) --restore \(Terminal.shellQuoted(path))" }
                    do {
                        try Type4Tag.detect(transport).replaceNDEF(with: Array(plan.fileContents.dropFirst(2))) { backup in
                            backupPath = try DirectoryBackupStore.standard.save(backup, reader: reader)
                        }
                    } catch let e as WriteInterrupted {
                        var f = Failure(e)
                        if let backupPath { f.message += "; SDM settings unchanged; restore the previous message with: \(restore(backupPath))" }
                        throw f
                    }
                    // 2. SDM, in one ChangeFileSettings: the old settings or the new ones.
                    guard try NTAG424Tag.detect(transport) != nil else { throw Failure(.ioError, "the tag went away after the write") }
                    var after = before
                    after.read = .free
                    after.sdm = plan.settings
                    do {
                        try tag.authenticate(keyNumber: changeKey, key: key)
                        try tag.changeFileSettings(NTAG424Tag.ndefFile, to: after)
                    } catch {
                        let f = Failure(error)
                        let rerun = "run this command again to finish" + (backupPath.map { ", or put the previous message back with: \(restore($0))" } ?? "")
                        throw Failure(f.status, "\(f.message); the tag holds the new URL with its previous file settings (SDM not enabled): \(rerun)")
                    }
                    // 3. What a phone reads now: the template's shape, a fresh SUN message.
                    let served = try tag.plainRead(length: plan.fileContents.count)
                    let message = try NDEFMessage(decoding: Array(served.dropFirst(2)))
                    guard case let .uri(uri)? = try message.records.first?.content() else {
                        throw Failure(.unexpected, "the tag serves no URI record after provisioning")
                    }
                    _ = try SUNMessage(url: uri, template: template)
                    guard Self.sameShape(uri, plan.uri) else {
                        throw Failure(.unexpected, "the tag serves '\(Terminal.safe(uri))', which does not have the template's shape")
                    }
                    return (reader, uri, plan.settings, backupPath)
                }
                if output.json {
                    Terminal.print(JSON.object([
                        ("reader", .string(outcome.0)), ("served", .string(outcome.1)), ("backup", JSON.optional(outcome.3)),
                        ("sdm", NTAG424Info.sdmJSON(outcome.2)),
                    ]).serialized)
                } else {
                    Terminal.print("\(Terminal.safe(outcome.0)): SDM enabled; the tag now serves")
                    Terminal.print("  \(Terminal.safe(outcome.1))")
                    if let backup = outcome.3 { Terminal.print("backup of the previous message: \(backup)") }
                }
            }
        }

        /// The served URL and the template agree outside the placeholders' characters (hex there).
        static func sameShape(_ served: String, _ planned: String) -> Bool {
            let a = Array(served.utf8), b = Array(planned.utf8)
            guard a.count == b.count else { return false }
            return zip(a, b).allSatisfy { x, y in x == y || (y == UInt8(ascii: "0") && (UInt8(ascii: "0")...UInt8(ascii: "9") ~= x || UInt8(ascii: "A")...UInt8(ascii: "F") ~= x)) }
        }
    }
}
