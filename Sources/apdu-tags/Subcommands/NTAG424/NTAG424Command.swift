// The `apdu ntag424` group, the detection its commands share, and how its errors and
// signatures are reported.
import APDUCommandLine
import ArgumentParser
import ISO7816
import NFCTags
import PCSC
import TagReader

extension APDUCommand {
    /// `apdu ntag424 …`: NTAG 424 DNA tags, their keys and Secure Dynamic Messaging.
    struct NTAG424: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ntag424",
            abstract: "NTAG 424 DNA: describe the tag, provision Secure Unique NFC (SDM) URLs, change keys.",
            subcommands: [NTAG424Info.self, NTAG424SDM.self, NTAG424ChangeKey.self])
    }
}

/// Connects, detects the NTAG 424 DNA and runs `body` in one transaction.
func withNTAG424<T>(_ readerOptions: ReaderOptions, _ trace: TraceOptions, _ body: (_ reader: String, _ card: Card, _ transport: APDUTransport, _ tag: NTAG424Tag) throws -> T) throws -> T {
    try readerOptions.withCard(transaction: true) { reader, card in
        let transport = APDUTransport(channel: PCSCChannel(card: card), observer: trace.observer)
        guard let tag = try NTAG424Tag.detect(transport) else {
            throw Failure(.unexpected, "not an NTAG 424 DNA (no NDEF application D2760000850101, or GetVersion names another chip)")
        }
        return try body(reader, card, transport, tag)
    }
}

extension NTAG424Error {
    /// Refusals by the tag are 1, a MAC that does not verify is 1 too (the tag is not the one
    /// the keys are for, or the exchange was altered), a malformed answer is I/O (74).
    package var failure: Failure {
        switch kind {
        case .malformed: return Failure(.ioError, message)
        case .lengthError: return Failure(.badData, message)
        default: return Failure(.unexpected, message)
        }
    }
}

extension NTAG424Access {
    var words: String {
        switch self {
        case let .key(k): return "key \(k)"
        case .free: return "free (no key)"
        case .never: return "never"
        }
    }
}

extension NTAG424Originality {
    /// The signature and its verdict, as `ntag424 info` and `ntag424 sdm` print them in JSON.
    var json: JSON {
        .object([
            ("uid", .hex(uid)), ("uidSource", .string(uidSource.rawValue)), ("signature", .hex(signature.signature)),
            ("valid", .bool(isValid)), ("key", .string(key.name)), ("curve", .string(key.curve)),
        ])
    }
}
