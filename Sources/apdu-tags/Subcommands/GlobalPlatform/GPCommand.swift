// GlobalPlatform card management in the CLI: `apdu gp info | list | delete | lock | unlock |
// card-lock`. The GlobalPlatform module does the work; these commands parse, call it and print.
import APDUCommandLine
import ArgumentParser
import CardReaders
import GlobalPlatform
import ISO7816
import PCSC

extension Diversification: ExpressibleByArgument {}

extension APDUCommand {
    /// `apdu gp …`: GlobalPlatform card management (Java Cards and their Security Domains).
    struct GPCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "gp",
            abstract: "GlobalPlatform card management: card information, the registry, delete, lock; never a card locked by a wrong key.",
            discussion: """
                A card counts failed mutual authentications and locks its Security Domain for good after a handful. \
                These commands check the card's cryptogram in INITIALIZE UPDATE's answer before EXTERNAL AUTHENTICATE, \
                the only step the card counts: a wrong key stops there, with the counter untouched. A key version the \
                card does not list is refused before INITIALIZE UPDATE, nothing is ever retried, and the well-known test \
                keys are used only with --test-keys. Exit codes: 0 done; 1 wrong keys, a key version the card does not \
                hold, a locked card, or the card refused a command; 74 an answer that does not parse or a response MAC \
                that does not check out, or the card was removed; 69 no reader or card; 77 refused by policy (the ISD's \
                deletion, a package with instances without --deps, card-lock without --yes); 64 usage. See \
                docs/globalplatform.md.
                """,
            subcommands: [GPInfo.self, GPList.self, GPInstall.self, GPDelete.self, GPLock.self, GPUnlock.self, GPCardLock.self, GPPutKey.self])
    }
}

/// The keys of a Security Domain for a command that authenticates: one of --key,
/// --enc/--mac/--dek and --test-keys is required (never defaulted, never printed).
struct GPKeyOptions: ParsableArguments {
    @OptionGroup var choice: GPKeyChoice

    func validate() throws {
        try choice.validate()
        guard choice.given else { throw ValidationError("no keys: give --key, --enc/--mac/--dek, or --test-keys (the well-known 40..4F keys)") }
    }

    var staticKeys: StaticKeys { choice.staticKeys }
    var securityLevel: SecurityLevel? { choice.securityLevel }
}

/// The key options as given, checked for form; `GPKeyOptions` requires them, `gp info` takes
/// them when given (to read what only a secure channel tells).
struct GPKeyChoice: ParsableArguments {
    @Option(help: ArgumentHelp("One master key for ENC, MAC and DEK, in hex (16 bytes 3DES; 16/24/32 AES).", valueName: "hex"))
    var key: String?

    @Option(help: ArgumentHelp("The ENC key, in hex (with --mac and --dek).", valueName: "hex"))
    var enc: String?
    @Option(help: ArgumentHelp("The MAC key, in hex.", valueName: "hex"))
    var mac: String?
    @Option(help: ArgumentHelp("The DEK, in hex.", valueName: "hex"))
    var dek: String?

    @Option(help: ArgumentHelp("The key version to use, in hex (default: the card's default set).", valueName: "hex"))
    var keyVersion: String?

    @Option(help: ArgumentHelp("How the card's keys derive from the master key: none, emv (EMV CPS 1.1), visa2, kdf3.", valueName: "method"))
    var diversify: Diversification = .none

    @Flag(help: "Use the well-known test keys 40..4F (never tried unless asked for).")
    var testKeys = false

    @Option(help: ArgumentHelp("The security level, in hex (01 C-MAC, 03 +C-DECRYPTION, 13 +R-MAC, 33 +R-ENCRYPTION); default: the highest the card offers.",
                               valueName: "hex"))
    var level: String?

    /// Whether any key option was given.
    var given: Bool { key != nil || enc != nil || mac != nil || dek != nil || testKeys }

    func validate() throws {
        let given = [key != nil, enc != nil || mac != nil || dek != nil, testKeys].filter { $0 }.count
        guard given <= 1 else { throw ValidationError("give one of --key, --enc/--mac/--dek and --test-keys") }
        if given == 1, key == nil, !testKeys, enc == nil || mac == nil || dek == nil { throw ValidationError("--enc, --mac and --dek go together") }
        if given == 0, keyVersion != nil || level != nil || diversify != .none {
            throw ValidationError("--key-version, --diversify and --level go with keys: give --key, --enc/--mac/--dek, or --test-keys")
        }
        for (name, value) in [("--key", key), ("--enc", enc), ("--mac", mac), ("--dek", dek)] {
            if let value, (try? Hex.decode(value)).map({ [16, 24, 32].contains($0.count) }) != true {
                throw ValidationError("\(name) must be 16, 24 or 32 bytes in hex")
            }
        }
        if let keyVersion, (try? Hex.decode(keyVersion))?.count != 1 { throw ValidationError("--key-version is one byte in hex") }
        if let level {
            guard let byte = (try? Hex.decode(level)).flatMap({ $0.count == 1 ? $0[0] : nil }), SecurityLevel(rawValue: byte).isValid,
                  SecurityLevel(rawValue: byte).contains(.cMAC) else {
                throw ValidationError("--level is one of 01, 03, 11, 13, 31, 33 (C-MAC always; R-ENCRYPTION needs R-MAC)")
            }
        }
    }

    var staticKeys: StaticKeys {
        let version = keyVersion.flatMap { try? Hex.decode($0) }?.first ?? 0
        if testKeys { return StaticKeys(master: Array(0x40...0x4F), version: version, diversification: diversify) }
        if let key, let bytes = try? Hex.decode(key) { return StaticKeys(master: bytes, version: version, diversification: diversify) }
        return StaticKeys(enc: (try? Hex.decode(enc ?? "")) ?? [], mac: (try? Hex.decode(mac ?? "")) ?? [], dek: (try? Hex.decode(dek ?? "")) ?? [],
                          version: version, diversification: diversify)
    }

    var securityLevel: SecurityLevel? { level.flatMap { try? Hex.decode($0) }.map { SecurityLevel(rawValue: $0[0]) } }
}

/// Connects to the card, runs `body` with its card manager in one transaction (the trace and
/// recording observe it) and turns the module's errors into exit codes.
func withCardManager<T>(_ readerOptions: ReaderOptions, _ trace: TraceOptions, _ body: (_ reader: String, _ manager: CardManager) throws -> T) throws -> T {
    do {
        return try readerOptions.withCard(transaction: true) { name, card in
            try body(name, CardManager(transport: APDUTransport(channel: PCSCChannel(card: card), observer: trace.observer)))
        }
    } catch let e as GlobalPlatformError {
        throw e.failure
    }
}

extension GlobalPlatformError {
    var failure: Failure {
        switch kind {
        case .wrongKeys, .keyVersionNotHeld, .locked, .authenticationRefused, .refused: return Failure(.unexpected, message)
        case .malformed, .interrupted: return Failure(.ioError, message)
        case .policy: return Failure(.refused, message)
        }
    }
}

/// "A0000001510000", or an error naming the option.
func parseAID(_ text: String, _ option: String) throws -> [UInt8] {
    guard let aid = try? Hex.decode(text), (5...16).contains(aid.count) else { throw ValidationError("\(option) is an AID of 5 to 16 bytes in hex") }
    return aid
}
