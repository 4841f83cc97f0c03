// `apdu plus`: the command group, and the connection, keys and error handling its subcommands share.
import APDUCommandLine
import ArgumentParser
import FoundationEssentials
import ISO7816
import NFCTags
import PCSC
import TagReader

extension APDUCommand {
    /// `apdu plus …`: MIFARE Plus S, X, SE, EV1 and EV2 in SL0, SL1 and SL3.
    struct Plus: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "plus",
            abstract: "MIFARE Plus (S, X, SE, EV1, EV2): identify, read and write blocks in SL3 (AES, MACed) or SL1 (as a Classic), personalise SL0 cards.",
            discussion: """
                Keys: --key A:HEX or B:HEX (32 hex digits in SL3, 12 in SL1), --key-file FILE holding that text, or \
                $APDU_MIFARE_PLUS_KEY. Keys are never printed, and WritePerso's data shows as ** in --trace and --record. \
                See docs/mifare-plus.md.
                """,
            subcommands: [PlusInfo.self, PlusRead.self, PlusWrite.self, PlusPersonalize.self])
    }
}

/// The key a read or write authenticates with: `--key A:HEX|B:HEX`, `--key-file`, `$APDU_MIFARE_PLUS_KEY`.
struct PlusKeyOptions: ParsableArguments {
    @Option(help: ArgumentHelp("A:HEX or B:HEX: the sector key (32 hex digits in SL3; 12 in SL1). Prefer --key-file or $APDU_MIFARE_PLUS_KEY: arguments show in 'ps'.", valueName: "a|b:hex"))
    var key: String?

    @Option(help: ArgumentHelp("File holding A:HEX or B:HEX. Default: $APDU_MIFARE_PLUS_KEY.", valueName: "file"))
    var keyFile: String?

    /// The key type and bytes given (16 or 6 bytes), never shown.
    func resolved() throws -> (type: MifarePlusKeyType, bytes: [UInt8]) {
        let source = key != nil ? "--key" : keyFile != nil ? "--key-file" : "$APDU_MIFARE_PLUS_KEY"
        guard let text = try key ?? DESFireKeyText.load(file: keyFile, option: "--key-file", environment: "APDU_MIFARE_PLUS_KEY") else {
            throw Failure(.usage, "a key is needed: --key A:HEX or B:HEX, --key-file FILE, or $APDU_MIFARE_PLUS_KEY")
        }
        let fields = DESFireKeyText.firstLine(text).split(separator: ":", maxSplits: 1).map(String.init)
        guard fields.count == 2, let type = MifarePlusKeyType(rawValue: fields[0].uppercased()) else {
            throw Failure(.usage, "\(source): a key is A:HEX or B:HEX (the value is not shown)")
        }
        guard let bytes = try? Hex.decode(fields[1].filter { !":-".contains($0) }), bytes.count == 16 || bytes.count == 6 else {
            throw Failure(.usage, "\(source): a key is 32 hex digits (AES, SL3) or 12 (Crypto1, SL1) (the value is not shown)")
        }
        return (type, bytes)
    }
}

/// Block numbers: N or N-M, each decimal or 0x hex (`4`, `0x10-0x12`, `0xB000`).
enum PlusBlocks {
    static func number(_ text: String, option: String) throws -> Int {
        let t = text.filter { !$0.isWhitespace }.lowercased()
        let value = t.hasPrefix("0x") ? Int(t.dropFirst(2), radix: 16) : Int(t)
        guard let value, (0...0xFFFF).contains(value) else { throw ValidationError("\(option): '\(Terminal.safe(text))' is not a block number (decimal, or 0x hex)") }
        return value
    }

    static func range(_ text: String, option: String) throws -> ClosedRange<Int> {
        // Exactly N or N-M: "-", "", "-5" and "5-" are refused, not read as something else.
        let parts = text.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard !parts.contains(where: { $0.allSatisfy(\.isWhitespace) }) else {
            throw ValidationError("\(option): '\(Terminal.safe(text))' is not a block or a range N-M (decimal, or 0x hex)")
        }
        let first = try number(parts[0], option: option)
        let last = parts.count == 2 ? try number(parts[1], option: option) : first
        guard last >= first else { throw ValidationError("\(option): \(text) runs backwards") }
        return first...last
    }
}

/// Connects in one transaction and runs `body` with the reader's name and the card's ATR.
func withPlusCard<T>(_ readerOptions: ReaderOptions, _ trace: TraceOptions,
                     _ body: (_ reader: String, _ transport: APDUTransport, _ atr: [UInt8]) throws -> T) throws -> T {
    try readerOptions.withCard(transaction: true) { reader, pcsc in
        try body(reader, APDUTransport(channel: PCSCChannel(card: pcsc), observer: trace.observer), try pcsc.atr())
    }
}

/// Runs a Plus command's body, every library error turned into the documented exit code.
func reportingPlusFailures(_ body: () throws -> Void) throws {
    try reportingFailures {
        do { try body() } catch { throw plusFailure(error) }
    }
}

/// The one place a MIFARE Plus error becomes an exit code: refused authentication and the card's
/// refusals 1, an answer whose MAC fails 65, a malformed answer 74, a reader that cannot reach
/// the card 69, a change not confirmed 77; an interrupted change its cause's code, with the card's
/// state in words.
func plusFailure(_ error: any Error) -> Failure {
    switch error {
    case let e as MifarePlusError:
        switch e.kind {
        case .status, .authenticationFailed, .wrongCard: return Failure(.unexpected, e.message)
        case .macMismatch: return Failure(.badData, e.message)
        case .malformed, .answerLost: return Failure(.ioError, e.message)
        case .factoryKeysLeft: return Failure(.refused, e.message + " (--keep-factory-keys)")
        case .readerRefused: return Failure(.unavailable, e.message)
        case .needsConfirmation: return Failure(.refused, e.message + " (--yes)")
        case .refused: return Failure(.usage, e.message)
        }
    case let e as MifarePlusInterrupted:
        let cause = plusFailure(e.underlying)
        return Failure(cause.status, "\(Failure.reason(e.underlying)) during \(e.operation); \(e.state)")
    default:
        return Failure(error)
    }
}

extension MifarePlusCard {
    /// A card for SL3 work without identifying it first: a storage card (SL1, or a Classic) is
    /// refused here; the first authentication tells the rest (a card not in SL3 answers 0B).
    static func level3(_ transport: APDUTransport, atr: [UInt8]) throws -> MifarePlusCard {
        if let storage = (try? ATR(bytes: atr))?.storageCard {
            throw Failure(.unexpected, "the reader names a storage card (\(storage.name ?? "card name \(storage.cardName)")), not a MIFARE Plus in SL3 or SL0")
        }
        return MifarePlusCard(transport: transport, wrappingAllowed: true)
    }
}
