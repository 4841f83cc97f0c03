// `apdu send --scp 02|03`: the APDUs of the command line sent through a GlobalPlatform secure
// channel with the card's Security Domain (issue 52: the channel is a CardChannel, so any APDU can
// go through it). `send` is a core command of `apdu`, which knows no GlobalPlatform: with `--scp`
// on its line, `apdu` hands the command to `apdu-tags` (`Send.asksForSecureChannel`), and this
// command, named `send` too, takes it with the key options of `apdu gp`.
import APDUCommandLine
import ArgumentParser
import GlobalPlatform
import ISO7816

extension APDUCommand {
    struct SendSecureChannel: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "send",
            abstract: "Send APDUs through a GlobalPlatform secure channel (SCP02 or SCP03) and explain each status word.",
            discussion: """
                Selects the card's Issuer Security Domain, reads its key information and card recognition data, \
                sends INITIALIZE UPDATE and checks the card's cryptogram before EXTERNAL AUTHENTICATE, the only step \
                the card counts: a wrong key stops there (exit 1) with the card's counter untouched, and nothing is \
                retried. Then each APDU is wrapped at the session's level (C-MAC, C-DECRYPTION) and each answer \
                unwrapped (R-MAC checked, R-ENCRYPTION deciphered); both are printed in the clear, as apdu send prints \
                them. A SELECT allowlist applies to these clear APDUs, checked before connecting. Keys never appear \
                in the output, JSON, traces or recordings. Exit codes: 0 done; 1 wrong keys, a key version the card \
                does not hold, a locked card, or an answer outside --expect; 74 an answer whose R-MAC does not check \
                out, or the card removed; 77 a protocol or level the card does not offer, or a SELECT the allowlist \
                refuses; 69 no reader or card; 64 usage. See docs/globalplatform.md.
                """)

        @Option(help: ArgumentHelp("The secure channel protocol: 02 (SCP02, 3DES) or 03 (SCP03, AES).", valueName: "02|03"))
        var scp: String

        @OptionGroup var keys: GPKeyOptions
        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions
        @OptionGroup var allowlist: AllowlistOptions

        @Option(help: ArgumentHelp("Status words that count as success (comma-separated, e.g. 9000,6283); any other exits 1.", valueName: "SW,..."))
        var expect: String?

        @Argument(help: ArgumentHelp("Command APDUs in hex, in the clear (the secure channel wraps them).", valueName: "hex"))
        var apdus: [String] = []

        /// The APDUs in order, those set aside before the parser ran included (`LongArgumentLists`).
        private var allAPDUs: [String] { LongArgumentLists.sendTail.isEmpty ? apdus : apdus + LongArgumentLists.sendTail }

        var protocolVersion: UInt8? {
            switch scp {
            case "02", "2": return 2
            case "03", "3": return 3
            default: return nil
            }
        }

        func validate() throws {
            guard let version = protocolVersion else { throw ValidationError("--scp is 02 or 03") }
            if version == 2 {
                for (name, value) in [("--key", keys.choice.key), ("--enc", keys.choice.enc), ("--mac", keys.choice.mac), ("--dek", keys.choice.dek)] {
                    if let value, (try? Hex.decode(value))?.count != 16 { throw ValidationError("\(name): SCP02 keys are 16-byte triple DES keys") }
                }
                if keys.choice.diversify == .kdf3 { throw ValidationError("--diversify kdf3 is SCP03's; SCP02 takes emv or visa2") }
            }
            let apdus = allAPDUs
            if apdus.isEmpty { throw ValidationError("give at least one APDU in hex") }
            for (i, text) in apdus.enumerated() {
                do { _ = try CommandAPDU(hex: text) } catch {
                    throw ValidationError("APDU \(i + 1) ('\(Terminal.safe(text))'): \(error)")
                }
            }
            _ = try parseExpectedWords(expect)
        }

        func run() throws {
            try reportingFailures {
                let commands = try allAPDUs.map { try CommandAPDU(hex: $0) }
                let expected = try parseExpectedWords(expect)
                // The clear APDUs against the allowlist, the whole batch before connecting: a wrapped
                // SELECT's data is enciphered or carries a MAC, so it is judged here, in the clear.
                if let policy = try allowlist.policy() {
                    for (i, command) in commands.enumerated() {
                        if let aid = policy.refusal(for: command) {
                            throw Failure(.refused, "APDU \(i + 1): SELECT of AID \(aid.hexString) refused: not in the allowlist")
                        }
                    }
                }
                let json = output.json, showSecrets = traceOptions.showSecrets
                var exchanges: [JSON] = []
                var unexpected: (Int, StatusWord)?
                var lines = ExchangeLines(showSecrets: showSecrets)
                let (reader, session): (String, (scp: SecureChannelProtocol, level: SecurityLevel, keyVersion: UInt8)) = try withCardManager(readerOptions, traceOptions) { name, manager in
                    try manager.authenticate(keys: keys.staticKeys, level: keys.securityLevel, protocolVersion: protocolVersion)
                    guard let channel = manager.secureChannel else { throw Failure(.unexpected, "the secure channel did not open") }
                    let session = (scp: channel.session.scp, level: channel.level, keyVersion: channel.cardAnswer.keyVersion)
                    if !json {
                        Terminal.print("secure channel: \(session.scp), \(session.level), key version \(hexByte(session.keyVersion))")
                    }
                    for (i, command) in commands.enumerated() {
                        let response = try channel.send(command)
                        let encoded = command.bytes
                        if json {
                            let shown = Redaction.hex(encoded, showSecrets: showSecrets, separator: "")
                            exchanges.append(ExchangeJSON.make(command: shown, redacted: shown != encoded.hexString, response: response))
                        } else {
                            lines.print(command: encoded, response: response)
                        }
                        if let expected, !expected.contains(response.statusWord), unexpected == nil { unexpected = (i + 1, response.statusWord) }
                    }
                    return (name, session)
                }
                if json {
                    Terminal.print(JSON.object([
                        ("reader", .string(reader)), ("scp", .int(Int(session.scp.version))), ("i", .hex([session.scp.i])),
                        ("securityLevel", .hex([session.level.rawValue])), ("keyVersion", .hex([session.keyVersion])),
                        ("exchanges", .array(exchanges)),
                    ]).serialized)
                }
                if let (index, sw) = unexpected {
                    let wanted = (expected ?? []).map(\.description).joined(separator: " or ")
                    throw Failure(.unexpected, "APDU \(index) answered \(sw) (\(sw.meaning.text)); expected \(wanted)")
                }
            }
        }

        private func hexByte(_ byte: UInt8) -> String { Hex.encode([byte], separator: "") }
    }
}
