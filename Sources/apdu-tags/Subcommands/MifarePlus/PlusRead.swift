// `apdu plus read`: blocks of a MIFARE Plus, in SL3 with MACed multi-block reads (one
// authentication per sector), in SL1 through the MIFARE Classic path.
import APDUCommandLine
import ArgumentParser
import ISO7816
import NFCTags

extension APDUCommand {
    struct PlusRead: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "read",
            abstract: "Read blocks of a MIFARE Plus: --block N[-M] with the sector key (--key A:HEX or B:HEX).",
            discussion: """
                In SL3: AuthenticateFirst once, then NonFirst for each further sector (the counters go on), reads of up to \
                3 blocks in one MACed command (the 64-byte frames Plus cards announce), every answer's MAC checked: a MAC \
                that does not verify exits 65 and nothing is shown. --encrypted has the card encipher the data on the way. \
                In SL1 the card is a MIFARE Classic: the key is its 12-digit Crypto1 key. Blocks are decimal or 0x hex.
                """)

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions
        @OptionGroup var keyOptions: PlusKeyOptions

        @Option(help: ArgumentHelp("The block, or a range N-M (decimal or 0x hex).", valueName: "n[-m]"))
        var block: String

        @Flag(help: "SL3: the data enciphered on the way (read command 31) rather than plain with a MAC (33).")
        var encrypted = false

        func validate() throws {
            let r = try PlusBlocks.range(block, option: "--block")
            guard r.upperBound < 256 else { throw ValidationError("--block: data blocks are 0-255 (keys and configuration blocks cannot be read)") }
        }

        func run() throws {
            try reportingPlusFailures {
                let range = try PlusBlocks.range(block, option: "--block")
                let key = try keyOptions.resolved()
                let (reader, level, layout, bytes) = try withPlusCard(readerOptions, traceOptions) { reader, transport, atr in
                    if let layout = MifareClassicLayout(atr: atr), layout.chip == .plus2K || layout.chip == .plus4K {
                        return (reader, MifarePlusSecurityLevel.sl1, layout, try Self.readLevel1(transport, layout, range, key))
                    }
                    // No identification: the authentication itself tells a card that is not in SL3 (0B),
                    // and a block the card does not have is its own answer (0A).
                    let card = try MifarePlusCard.level3(transport, atr: atr)
                    guard key.bytes.count == 16, let aes = MifarePlusKey(key.bytes) else { throw Failure(.usage, "an SL3 card's key is 32 hex digits (AES)") }
                    let layout = MifarePlusLayout(.plus4K)
                    let data = try card.read(blocks: range.lowerBound..<(range.upperBound + 1), key: aes, type: key.type, layout: layout,
                                             mode: encrypted ? .encrypted : .plain)
                    return (reader, MifarePlusSecurityLevel.sl3, layout, data)
                }
                let rows = range.enumerated().map { i, b in (b, Array(bytes[(16 * i)..<(16 * i + 16)])) }
                if output.json {
                    Terminal.print(JSON.object([("reader", .string(reader)), ("securityLevel", .int(level.rawValue)),
                                                ("blocks", .array(rows.map { b, d in ClassicRender.blockJSON(layout, b, d) }))]).serialized)
                } else {
                    for (b, d) in rows { Terminal.print(ClassicRender.blockLine(layout, b, d, access: nil)) }
                }
            }
        }

        /// SL1: the Classic path, with the Crypto1 key given.
        static func readLevel1(_ transport: APDUTransport, _ layout: MifareClassicLayout, _ range: ClosedRange<Int>,
                               _ key: (type: MifarePlusKeyType, bytes: [UInt8])) throws -> [UInt8] {
            guard let crypto1 = MifareClassicKey(key.bytes) else { throw Failure(.usage, "the card is in SL1: its key is a 12-digit MIFARE Classic key") }
            let card = MifareClassicCard(transport: transport, layout: layout)
            let candidate = MifareClassicKeyCandidate(crypto1, label: "the key given")
            var out: [UInt8] = []
            for b in range {
                let sector = layout.sector(ofBlock: b)
                if card.current?.sector != sector, try !card.authenticate(sector: sector, keyType: key.type == .a ? .a : .b, key: candidate) {
                    throw TagError(.authenticationFailed, "sector \(sector) does not open with the key given as key \(key.type)")
                }
                out += try card.read(block: b)
            }
            return out
        }
    }
}
