// `apdu ntag424 change-key`: one of the five AES keys changed, optionally diversified, then
// proved by authenticating with it.
import APDUCommandLine
import ArgumentParser
import ISO7816
import NFCTags
import SUN

extension APDUCommand {
    struct NTAG424ChangeKey: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "change-key",
            abstract: "Change one of an NTAG 424 DNA's five AES keys, then prove the new key by authenticating with it.",
            discussion: """
                Authenticates with key 0 (--auth-key-file, default $APDU_NTAG424_KEY; for key 0 itself, the old key). Keys 1-4 \
                are sent as new XOR old with the new key's CRC32, so a wrong old key is refused by the tag and nothing changes. \
                Change key 0 last, after the others are confirmed: a lost key 0 locks the tag's configuration for good, so \
                changing it needs --yes. Keys come from files (32 hex digits) and are never printed; traces show them as **. \
                With --diversify SYSTEM-ID the new key file holds a master key, and the key written is this tag's own, \
                diversified by NXP AN10922 from the master key and M = UID ‖ SYSTEM-ID (the UID read from the tag with \
                GetCardUID): what apdu-sun-server's fileReadMasterKey groups expect (docs/sun-service.md).
                """)

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions

        @Option(help: ArgumentHelp("The key to change, 0-4.", valueName: "n"))
        var keyNumber: UInt8

        @Option(help: ArgumentHelp("File holding the key's current value.", valueName: "file"))
        var oldKeyFile: String

        @Option(help: ArgumentHelp("File holding the new value.", valueName: "file"))
        var newKeyFile: String

        @Option(help: ArgumentHelp("File holding key 0, to authenticate (not for --key-number 0). Default: $APDU_NTAG424_KEY.", valueName: "file"))
        var authKeyFile: String?

        @Option(help: ArgumentHelp("The new key's version byte.", valueName: "n"))
        var keyVersion: UInt8 = 1

        @Option(help: ArgumentHelp("Write this tag's AN10922-diversified key: --new-key-file holds the master key, M = UID ‖ this system identifier (hex, 0-24 bytes; '' for none).", valueName: "hex"))
        var diversify: String?

        @Flag(help: "Confirm a change of key 0 (the application master key).")
        var yes = false

        func validate() throws {
            guard keyNumber < 5 else { throw ValidationError("--key-number is 0-4") }
            if keyNumber == 0 && authKeyFile != nil { throw ValidationError("key 0 authenticates with its own old value: leave --auth-key-file out") }
        }

        func run() throws {
            try reportingFailures {
                guard keyNumber != 0 || yes else {
                    throw Failure(.refused, "changing key 0 (the application master key) cannot be undone without the new key; run again with --yes once keys 1-4 are set and confirmed")
                }
                let old = try aesKey(file: oldKeyFile, option: "--old-key-file", environment: "APDU_NTAG424_OLD_KEY")
                let newOrMaster = try aesKey(file: newKeyFile, option: "--new-key-file", environment: "APDU_NTAG424_NEW_KEY")
                var systemIdentifier: [UInt8]?
                if let diversify {
                    guard let bytes = try? Hex.decode(diversify, allowEmpty: true), bytes.count <= 24 else {
                        throw Failure(.usage, "--diversify: a system identifier is 0 to 24 bytes of hex")
                    }
                    systemIdentifier = bytes
                }
                let auth = keyNumber == 0 ? old : try aesKey(file: authKeyFile, option: "--auth-key-file", environment: "APDU_NTAG424_KEY")
                let (reader, confirmed, contradicted) = try withNTAG424(readerOptions, traceOptions) { reader, _, _, tag in
                    try tag.authenticate(keyNumber: 0, key: auth)
                    var new = newOrMaster
                    if let systemIdentifier {
                        // The real UID, also under random ID: GetCardUID in the authenticated session.
                        let uid = try tag.cardUID()
                        new = try AN10922.diversify(masterKey: newOrMaster, input: uid + systemIdentifier)
                    }
                    // After an error answer the library tries the new key: a change it proves is done.
                    let change = try tag.changeKey(keyNumber, to: new, from: old, version: keyVersion)
                    // The new key proves itself: an authentication with it.
                    do { try tag.authenticate(keyNumber: keyNumber, key: new) } catch {
                        throw Failure(.unexpected, "the tag acknowledged the change of key \(keyNumber) but does not authenticate with the new key: \(Failure(error).message)")
                    }
                    return (reader, true, change.answerContradicted)
                }
                if output.json {
                    Terminal.print(JSON.object([("reader", .string(reader)), ("key", .int(Int(keyNumber))), ("version", .int(Int(keyVersion))), ("confirmed", .bool(confirmed)),
                                                ("answerContradicted", .optional(contradicted))]).serialized)
                } else {
                    Terminal.print("\(Terminal.safe(reader)): key \(keyNumber) changed (version \(keyVersion)) and confirmed by an authentication with it")
                    if let contradicted {
                        Terminal.print("  note: the answer to ChangeKey was an error (\(Terminal.safe(contradicted))), yet the tag authenticates with the new key: something between it and us changed the answer")
                    }
                }
            }
        }
    }
}
