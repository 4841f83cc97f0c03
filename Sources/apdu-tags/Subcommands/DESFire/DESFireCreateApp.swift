// `apdu desfire create-app`: create a DESFire application.
import APDUCommandLine
import ArgumentParser
import ISO7816
import NFCTags

extension APDUCommand {
    struct DESFireCreateApp: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create-app",
            abstract: "Create a DESFire application: its AID, number and type of keys, key settings, optionally ISO names.",
            discussion: """
                One CreateApplication command: the application exists afterwards or nothing changed. Its keys are the \
                factory zero keys of their type until changed (apdu desfire change-key). --key 0:TYPE:HEX authenticates with \
                the card master key first (needed unless the card lets anyone create applications).
                """)

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions
        @OptionGroup var keyOptions: DESFireKeyOptions

        @Option(help: ArgumentHelp("The new application's AID: 6 hex digits.", valueName: "aid"))
        var aid: String

        @Option(help: ArgumentHelp("How many keys, 1-14.", valueName: "n"))
        var keys: Int = 1

        @Option(help: ArgumentHelp("The keys' type: des (DES and 2K3DES), 3k3des or aes.", valueName: "type"))
        var keyType: String = "aes"

        @Option(help: ArgumentHelp("Key settings (hex; default 0F: everything free and changeable, key 0 changes keys).", valueName: "hex"))
        var settings: String = "0F"

        @Option(help: ArgumentHelp("ISO file identifier of the application (4 hex digits), with --df-name.", valueName: "hex"))
        var isoFid: String?

        @Option(help: ArgumentHelp("ISO DF name, 1-16 bytes of hex (what ISO SELECT finds it by).", valueName: "hex"))
        var dfName: String?

        func spec() throws -> DESFireApplicationSpec {
            guard let id = DESFireApplicationID(hex: aid) else { throw ValidationError("--aid: 6 hex digits, not '\(aid)'") }
            let family: DESFireKeyFamily
            switch keyType.lowercased() {
            case "des", "2k3des": family = .des
            case "3k3des": family = .tdes3
            case "aes": family = .aes
            default: throw ValidationError("--key-type is des, 3k3des or aes")
            }
            guard let s = try? Hex.decode(settings), s.count == 1 else { throw ValidationError("--settings is one byte of hex") }
            var iso: UInt16?
            if let isoFid {
                guard let b = try? Hex.decode(isoFid), b.count == 2 else { throw ValidationError("--iso-fid is 4 hex digits") }
                iso = UInt16(b[0]) << 8 | UInt16(b[1])
            }
            let spec = DESFireApplicationSpec(aid: id, settings: DESFireKeySettings(rawValue: s[0]), keyCount: keys, family: family,
                                              isoFileID: iso, dfName: try dfName.map { try hexArgument($0, option: "--df-name") })
            do { try spec.validate() } catch { throw ValidationError(error.message) }
            return spec
        }

        func validate() throws { _ = try spec() }

        func run() throws {
            try reportingDESFireFailures {
                let spec = try self.spec()
                let key = try keyOptions.resolved()
                let reader = try withDESFire(readerOptions, traceOptions) { reader, card in
                    try card.selectApplication(.picc)
                    if let key { try card.authenticate(keyNumber: key.number, key: key.key, scheme: keyOptions.auth) }
                    try card.atomically("CreateApplication \(spec.aid)") { try card.createApplication(spec) }
                    return reader
                }
                if output.json {
                    Terminal.print(JSON.object([("reader", .string(reader)), ("aid", .string(spec.aid.description)), ("keys", .int(spec.keyCount)),
                                                ("keyType", .string(spec.family.description)), ("keySettings", .hex([spec.settings.rawValue]))]).serialized)
                } else {
                    Terminal.print("\(Terminal.safe(reader)): created application \(spec.aid) with \(spec.keyCount) \(spec.family) key\(spec.keyCount == 1 ? "" : "s") (factory zero keys; change them with 'apdu desfire change-key')")
                }
            }
        }
    }
}
