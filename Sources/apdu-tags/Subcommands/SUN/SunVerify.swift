// The `apdu sun` group and `apdu sun verify`: a SUN URL verified offline, with an optional
// replay counter store.
import APDUCommandLine
import ArgumentParser
import FoundationEssentials
import ISO7816
import SUN
import SUNStore

extension APDUCommand {
    /// `apdu sun …`: Secure Unique NFC (NTAG 424 DNA SDM) messages, offline.
    struct Sun: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sun",
            abstract: "Verify the URLs NTAG 424 DNA tags serve with Secure Dynamic Messaging (SUN), offline.",
            subcommands: [SunVerify.self, SunCheckToken.self])
    }

    struct SunVerify: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify",
            abstract: "Verify a SUN URL: decrypt the UID and read counter, check the MAC, decrypt the file data.",
            discussion: """
                Recognises e / picc_data (encrypted PICC data, AES or LRP), c / cmac / m (the MAC), enc (encrypted \
                file data), uid + ctr (plain mirroring). --template URL (as given to ntag424 sdm --url) reads a tap of \
                any shape where its placeholders stand: other parameter names, the bulk ?e={picc}{file}{mac}, path \
                segments /{picc}/{mac} or /{picc}{mac}, mixed with fixed parameters. Keys come from files (32 hex \
                digits, '#' comments, LF or CRLF) or $APDU_SDM_META_KEY / $APDU_SDM_FILE_KEY, and are never printed. \
                Exit 0 valid, 1 invalid (MAC, replay, unsupported PICC data), 65 the URL carries no SUN message, \
                64 usage, 74 the counter store cannot be used.
                """)

        @OptionGroup var output: OutputOptions

        @Argument(help: ArgumentHelp("The URL the tag served (quote it for the shell).", valueName: "url"))
        var url: String

        @Option(help: ArgumentHelp("File holding SDMMetaReadKey (decrypts the PICC data). Default: $APDU_SDM_META_KEY.", valueName: "file"))
        var metaKeyFile: String?

        @Option(help: ArgumentHelp("File holding SDMFileReadKey (the MAC and the file data). Default: $APDU_SDM_FILE_KEY.", valueName: "file"))
        var fileKeyFile: String?

        @Option(help: ArgumentHelp("The template URL the tag was provisioned with, e.g. 'https://x.example/t?p={picc}&f={file}&s={mac}' or 'https://x.example/{picc}/{mac}'.", valueName: "url"))
        var template: String?

        @Option(help: ArgumentHelp("Where the tag mirrors its TagTamper status: 'file' (the first two bytes of the decrypted file data, as sdm-backend reads them), 'file:N' (byte N), or 'clear' (the tt parameter, inside the MAC input).", valueName: "placement"))
        var tamper: String?

        var tamperPlacement: SUNTamperPlacement? {
            guard let tamper else { return nil }
            if tamper == "clear" { return .clear }
            if tamper == "file" { return .fileData(offset: 0) }
            if tamper.hasPrefix("file:"), let n = Int(tamper.dropFirst(5)), (0...254).contains(n) { return .fileData(offset: n) }
            return nil
        }

        @Option(help: ArgumentHelp("Refuse replays: the last counter of each UID is kept in this SQLite file (created on first use).", valueName: "file"))
        var counterStore: String?

        func validate() throws {
            if tamper != nil, tamperPlacement == nil { throw ValidationError("--tamper: file, file:N (0-254) or clear") }
            if let template { do { _ = try SUNTemplate(url: template) } catch { throw ValidationError("--template: \(error.message)") } }
        }

        func run() throws {
            try reportingFailures {
                let keys: SDMKeys
                do {
                    keys = try SDMKeys(metaRead: try aesKey(file: metaKeyFile, option: "--meta-key-file", environment: "APDU_SDM_META_KEY"),
                                       fileRead: try aesKey(file: fileKeyFile, option: "--file-key-file", environment: "APDU_SDM_FILE_KEY"))
                } catch let e as SUNError { throw Failure(.usage, e.message) }
                let message: SUNMessage
                do { message = try SUNMessage(url: url, template: template.map { try SUNTemplate(url: $0) } ?? .common) } catch let e as SUNError {
                    report(nil, error: e)
                    throw Failure(.badData, e.message)
                }
                do {
                    let result: SUNResult
                    if let counterStore {
                        let store: SQLiteCounterStore
                        do { store = try SQLiteCounterStore(path: counterStore) } catch let e as CounterStoreError { throw Failure(.ioError, e.message) }
                        do { result = try message.verify(keys: keys, store: store, tamper: tamperPlacement) } catch let e as CounterStoreError { throw Failure(.ioError, e.message) }
                    } else {
                        result = try message.verify(keys: keys, tamper: tamperPlacement)
                    }
                    report(result, error: nil)
                } catch let e as SUNError {
                    report(nil, error: e)
                    throw Failure(.unexpected, e.message)
                }
            }
        }

        func report(_ result: SUNResult?, error: SUNError?) {
            if output.json {
                Terminal.print(JSON.object([
                    ("valid", .bool(result != nil)), ("uid", result.map { .hex($0.uid) } ?? .null), ("counter", result?.counter.map(JSON.int) ?? .null),
                    ("fileData", result?.fileData.map { .hex($0) } ?? .null), ("encryption", result.map { .string($0.encryption.rawValue) } ?? .null),
                    ("tamper", result?.tamper.map { .object([("permanent", .string($0.permanent.name)), ("current", .string($0.current.name)), ("seal", .string($0.seal.rawValue))]) } ?? .null),
                    ("reason", error.map { .string($0.message) } ?? .null), ("error", error.map { .string($0.kind.rawValue) } ?? .null),
                ]).serialized)
                return
            }
            guard let result else { return }
            Terminal.print("valid: UID \(result.uid.hexString)" + (result.counter.map { ", read counter \($0)" } ?? "") + " (\(result.encryption.rawValue))")
            if let t = result.tamper {
                let letters = String(decoding: t.bytes.map { $0 >= 0x20 && $0 < 0x7F ? $0 : 0x3F }, as: UTF8.self)
                Terminal.print("TagTamper: \(letters) (\(t.seal == .intact ? "seal intact" : t.seal == .open ? "seal opened" : t.seal == .reclosed ? "seal opened, closed again" : t.seal == .notEnabled ? "not enabled" : "unknown status"))")
            }
            if let data = result.fileData { Terminal.print("file data: \(Hex.encode(data, separator: " "))  |\(Terminal.ascii(data))|") }
        }
    }
}
