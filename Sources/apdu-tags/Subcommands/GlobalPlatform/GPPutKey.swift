// `apdu gp put-key`: a new key set, or a replacement, with the card's check values compared.
import APDUCommandLine
import ArgumentParser
import GlobalPlatform
import ISO7816

extension APDUCommand {
    struct GPPutKey: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "put-key",
            abstract: "Write a key set (3DES under SCP02, AES under SCP03): new, or replacing the one authenticated with (--replace).",
            discussion: """
                The keys travel enciphered under the DEK, inside the secure channel; the card answers their check \
                values, which must be ours. A PUT KEY cut before its answer leaves the old keys or the new ones: the \
                error says which when the card can still be asked (its cryptogram only, nothing counted), else names \
                the command that tells. Keys and key data never appear in output, traces or recordings.
                """)

        @Option(help: ArgumentHelp("The new master key (ENC = MAC = DEK), in hex.", valueName: "hex"))
        var newKey: String

        @Option(help: ArgumentHelp("The new key version, in hex (01-7F).", valueName: "hex"))
        var newVersion: String

        @Flag(help: "Replace the key set authenticated with (default: add a new set).")
        var replace = false

        @OptionGroup var keys: GPKeyOptions
        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var traceOptions: TraceOptions

        func validate() throws {
            if (try? Hex.decode(newKey)).map({ [16, 24, 32].contains($0.count) }) != true { throw ValidationError("--new-key must be 16, 24 or 32 bytes in hex") }
            if (try? Hex.decode(newVersion)).map({ $0.count == 1 && (1...0x7F).contains($0[0]) }) != true { throw ValidationError("--new-version is one byte, 01 to 7F") }
        }

        func run() throws {
            try reportingFailures {
                let key = try Hex.decode(newKey)
                let version = try Hex.decode(newVersion)[0]
                let (reader, checks): (String, [[UInt8]]) = try withCardManager(readerOptions, traceOptions) { name, manager in
                    try manager.authenticate(keys: keys.staticKeys, level: keys.securityLevel)
                    let current = manager.secureChannel?.cardAnswer.keyVersion
                    return (name, try manager.putKey(StaticKeys(master: key, version: version), replacing: replace ? current : nil))
                }
                Terminal.print("\(Terminal.safe(reader)): key set \(Hex.encode([version])) written; check values \(checks.map(\.hexString).joined(separator: " "))")
            }
        }
    }
}
