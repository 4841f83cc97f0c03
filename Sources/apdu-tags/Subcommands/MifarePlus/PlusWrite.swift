// `apdu plus write`: one block of a MIFARE Plus, MACed both ways in SL3 (the old contents kept for
// the restore), through the MIFARE Classic path in SL1.
import APDUCommandLine
import ArgumentParser
import ISO7816
import NFCTags

extension APDUCommand {
    struct PlusWrite: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "write",
            abstract: "Write one 16-byte block of a MIFARE Plus: --block N --hex DATA (or --value N, a value block) with the sector key; trailers, keys and B000-B003 only with --yes.",
            discussion: """
                In SL3 the block's old contents are read first (when the key may), the write goes enciphered (A1; --plain: \
                A3) with the command MACed and the answer's MAC checked, and the block is read back. A write cut short says \
                whether the block holds the old bytes or the new, and gives the command that writes the old ones back. \
                Sector trailers (access bits), AES keys (4000-404F), system keys (9000-9003: authenticated with 9000) and \
                the configuration blocks (B000-B003: with 9001) need --yes; B003 is the field configuration, and a wrong \
                value there can make the card unusable. Block 0 is refused. In SL1 the card is a MIFARE Classic.
                """)

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions
        @OptionGroup var keyOptions: PlusKeyOptions

        @Option(help: ArgumentHelp("The block (decimal or 0x hex): a data block, trailer, key 0x4000-0x404F, 0x9000-0x9003 or 0xB000-0xB003.", valueName: "n"))
        var block: String

        @Option(help: ArgumentHelp("16 bytes in hex.", valueName: "hex"))
        var hex: String?

        @Option(help: ArgumentHelp("Write a value block instead: a signed 32-bit value, stored with the block's number as its address.", valueName: "n"))
        var value: Int32?

        @Flag(help: "SL3: send the data plain (A3) rather than enciphered (A1); keys always go enciphered.")
        var plain = false

        @Flag(help: "Confirm a trailer, key or configuration-block write.")
        var yes = false

        func validate() throws {
            _ = try PlusBlocks.number(block, option: "--block")
            guard (hex == nil) != (value == nil) else { throw ValidationError("give --hex DATA or --value N") }
            if let hex, (try? Hex.decode(hex))?.count != 16 { throw ValidationError("--hex: a block is 16 bytes (32 hex digits)") }
        }

        func run() throws {
            try reportingPlusFailures {
                let number = try PlusBlocks.number(block, option: "--block")
                let data = try value.map { MifareClassicValueBlock(value: $0, address: UInt8(number & 0xFF)).bytes } ?? Hex.decode(hex ?? "")
                let key = try keyOptions.resolved()
                let keyWord = key.type == .a ? "A" : "B"
                // What the write's success rests on: SL1 has no MAC, so there only a read-back tells.
                // `shown`: how it was shown, in words, when not read back; `proof`: the same for JSON.
                let (reader, old, back, shown, proof) = try withPlusCard(readerOptions, traceOptions) { reader, transport, atr -> (String, [UInt8]?, [UInt8]?, String?, String) in
                    if let layout = MifareClassicLayout(atr: atr), layout.chip == .plus2K || layout.chip == .plus4K {
                        guard let crypto1 = MifareClassicKey(key.bytes) else { throw Failure(.usage, "the card is in SL1: its key is a 12-digit MIFARE Classic key") }
                        guard number < layout.blockCount else { throw Failure(.usage, "a \(layout) has blocks 0-\(layout.blockCount - 1)") }
                        if layout.isTrailer(number) && !yes { throw Failure(.refused, "block \(number) is a sector trailer (keys and access bits); nothing was written (--yes)") }
                        let card = MifareClassicCard(transport: transport, layout: layout)
                        try card.writeChecked(block: number, data: data, keys: [MifareClassicKeyCandidate(crypto1, label: "the key given")],
                                              trailer: layout.isTrailer(number), confirmLockout: yes ? layout.sector(ofBlock: number) : nil)
                        if layout.isTrailer(number) {
                            // SL1 has no MAC and a 90 00 proves nothing (the review of issue 49:
                            // a middle's 90 00 for a write never passed on exited 0): the new key
                            // A must open the sector and the access bits read back as written.
                            do { return (reader, nil, nil, try card.confirmTrailer(block: number, data: data), "trailer opens and reads back") } catch let e as TagError where e.kind == .writeFailed {
                                throw Failure(.ioError, e.message)
                            } catch {
                                throw Failure(.ioError, "block \(number) (a sector trailer) was written but could not be checked (\(Failure.reason(error))): the write is unconfirmed")
                            }
                        }
                        // SL1 has no MAC: only the read-back shows the write, and a read-back that
                        // differs or fails is no "wrote" (review: an SL1 write answered 90 00 but
                        // never delivered exited 0), with nothing printed as if it were (the third
                        // review of the key proof: "wrote" printed before the exit 74).
                        let back: [UInt8]
                        do { back = try card.read(block: number) } catch {
                            throw Failure(.ioError, "block \(number) was written but could not be read back (\(Failure.reason(error))): the write is unconfirmed")
                        }
                        guard back == data else {
                            throw Failure(.ioError, "block \(number) reads back as \(back.hexString), not as written: the write did not take")
                        }
                        return (reader, nil, back, nil, "read back")
                    }
                    let card = try MifarePlusCard.level3(transport, atr: atr)
                    guard let aes = MifarePlusKey(key.bytes) else { throw Failure(.usage, "an SL3 card's key is 32 hex digits (AES)") }
                    let layout = MifarePlusLayout(.plus4K)
                    let isKey = (0x4000...0x9003).contains(number) || (0xA000...0xA0FF).contains(number)
                    let result = try card.writeBlock(UInt16(number), data: data, key: aes, type: key.type, confirmed: yes, layout: layout,
                                                     mode: plain && !isKey ? .plain : .encrypted) { old in
                        "apdu plus write --block \(number) --hex \(old.hexString) --key \(keyWord):… (the same key)"
                    }
                    // SL3: a sector key proves itself by opening a session of its sector; the
                    // system keys and B000-B003 rest on the answer's MAC alone, and say so.
                    if result.readBack != nil { return (reader, result.old, result.readBack, nil, "read back") }
                    let proof = result.keyProof ?? .answerMAC
                    switch proof {
                    case .sectorOpens:
                        return (reader, result.old, nil, "the card's answer confirmed it (its MAC verified), and the new key opens a session of its sector (a block read there under MAC; no session tells key A from key B)", proof.rawValue)
                    case .answerMAC:
                        return (reader, result.old, nil, "the card's answer confirmed it (its MAC verified); \(isKey ? "a system key" : "a configuration block") cannot be read back or tied to a session", proof.rawValue)
                    }
                }
                // Here the write is proven as far as `proof` says: read back as written (SL3's
                // writeBlock throws on a read-back that differs), a trailer or an SL3 key opening a
                // session, or (9000-9003, B000-B003, which nothing else shows) the answer's MAC.
                if output.json {
                    Terminal.print(JSON.object([("reader", .string(reader)), ("block", .int(number)), ("verified", .bool(back == data)),
                                                ("proof", .string(proof)),
                                                ("previous", old.map { .hex($0) } ?? .null)]).serialized)
                } else {
                    let how = back == data ? "it reads back as written" : shown ?? "not read back"
                    Terminal.print("wrote \(MifarePlusBlockNumber.words(UInt16(number))); \(Terminal.safe(how))")
                    if let old { Terminal.print("  previous contents \(old.hexString)") }
                }
            }
        }
    }
}
