// Passports and ID cards in the CLI: `apdu mrtd info | read | verify`. The MRTD module does the
// work; these commands parse, call it and print.
import APDUCommandLine
import ArgumentParser
import ISO7816
import MRTD
import PCSC
import TagReader

extension APDUCommand {
    /// `apdu mrtd …`: passports and ID cards (ICAO 9303 eMRTDs).
    struct MRTDCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "mrtd",
            abstract: "Passports and ID cards (ICAO 9303): what a chip offers, read it with the MRZ or CAN, prove it genuine.",
            discussion: """
                Exit codes: 0 read and proven as far as asked (the data group hashes and the Document Signer's signature, \
                the chain to a CSCA with --trust, chip and active authentication when the chip offers them); 1 the chip \
                refused (the MRZ or CAN is not this document's, PACE failed without --allow-bac-fallback, not a passport); \
                64 usage (no key, an MRZ whose check digits do not hold); 65 the document is not proven genuine (a hash, \
                the signature, the chain, chip or active authentication failed or could not run where EF.SOD lists DG14 or DG15) \
                or a file does not decode; 69 no reader or \
                card; 74 the card was removed or the exchange failed. See docs/mrtd.md.
                """,
            subcommands: [MRTDInfo.self, MRTDRead.self, MRTDVerify.self])
    }
}

/// Connects to the card and runs `body` in one transaction with a reader on the card's channel
/// (the trace and recording observe it; the reader learns extended length from the ATR).
func withMRTDReader<T>(_ readerOptions: ReaderOptions, _ trace: TraceOptions, options: MRTDReader.Options = MRTDReader.Options(),
                       _ body: (_ reader: String, _ atr: [UInt8], _ passport: MRTDReader) throws -> T) throws -> T {
    try mrtdFailures {
        try readerOptions.withCard(transaction: true) { name, card in
            let transport = APDUTransport(channel: PCSCChannel(card: card), observer: trace.observer)
            let passport = MRTDReader(transport: transport, options: options)
            let atr = (try? card.atr()) ?? []
            if let historical = (try? ATR(bytes: atr))?.historicalBytes { passport.learnExtendedLength(historicalBytes: historical) }
            return try body(name, atr, passport)
        }
    }
}
