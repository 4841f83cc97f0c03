// Payment cards in the CLI: `apdu emv info | read`. The EMV module does the work, read-only;
// these commands parse, call it and print, private data masked unless asked.
import APDUCommandLine
import ArgumentParser
import CardReaders
import EMV
import FoundationEssentials
import ISO7816
import PCSC

extension APDUCommand {
    /// `apdu emv …`: payment cards (EMV), strictly read-only.
    struct EMVCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "emv",
            abstract: "Payment cards (EMV), read-only: list the applications, read one and prove what a read can prove.",
            discussion: """
                Nothing is changed on the card: the only commands sent are SELECT, READ RECORD, one GET PROCESSING \
                OPTIONS per selection (read only), GET DATA and INTERNAL AUTHENTICATE; never GENERATE AC, VERIFY or a \
                PIN command. The PAN is shown as its first 6 and last 4 digits, and the name, track data and the ICC \
                certificate not at all, unless --show-pan; traces and recordings show the answers that hold them as **. \
                Exit codes: 0 read (offline data authentication verified, not offered, or no CA key of the card's \
                scheme at all); 1 the card refused (no payment application, GET PROCESSING OPTIONS refused), or \
                offline data authentication unproven (the CA keys hold the card's scheme but not the index its 8F \
                names: unknown-ca-index); 65 offline data \
                authentication failed (a certificate or signature, data missing for a method the AIP offers, no PAN, \
                a DDOL without our unpredictable number, an expired CA key, a tag given twice with different values); \
                69 no reader or card; 74 the card was removed, the exchange failed or the card's answers do not parse \
                (an AIP that is not 2 bytes among them); 64 usage. See docs/emv.md.
                """,
            subcommands: [EMVInfo.self, EMVRead.self])
    }
}

/// Connects to the card, runs `body` with a payment-card reader in one transaction (the trace
/// and recording observe it), and turns the module's errors into exit codes.
func withPaymentCard<T>(_ readerOptions: ReaderOptions, _ trace: TraceOptions, caKeys: CAPublicKeys = .builtIn, terminal: TerminalData,
                        _ body: (_ reader: String, _ card: PaymentCardReader) throws -> T) throws -> T {
    do {
        return try readerOptions.withCard(transaction: true) { name, card in
            let transport = APDUTransport(channel: PCSCChannel(card: card), observer: trace.observer)
            return try body(name, PaymentCardReader(transport: transport, caKeys: caKeys, terminal: terminal))
        }
    } catch let e as PaymentCardError {
        switch e.kind {
        case .noApplication, .refused: throw Failure(.unexpected, e.message)
        case .malformed: throw Failure(.ioError, "the card's answer does not parse: \(e.message)")
        }
    }
}

/// Today as EMV's 9A (YYMMDD, BCD), in UTC.
func emvToday() -> [UInt8] {
    // "2026-11-27T…Z": the digits of the year's last two, the month and the day.
    let digits = Date.now.formatted(.iso8601).prefix(10).compactMap(\.wholeNumberValue).dropFirst(2)
    return stride(from: digits.startIndex, to: digits.endIndex, by: 2).map { UInt8(digits[$0] << 4 | digits[$0 + 1]) }
}
