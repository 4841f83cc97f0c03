// `apdu classic write`: one block written, with the checks that keep a sector trailer from
// locking the sector out.
import APDUCommandLine
import ArgumentParser
import ISO7816
import NFCTags
import TagReader

extension APDUCommand {
    struct ClassicWrite: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "write",
            abstract: "Write one 16-byte block of a MIFARE Classic card; sector trailers only with --trailer.",
            discussion: """
                Authenticates with a key the sector's access bits allow to write (--key, --key-file, $APDU_MIFARE_KEYS, \
                then the public keys), writes, and reads the block back where the access bits allow. Block 0 (UID and \
                manufacturer data) is refused. A sector trailer (keys and access bits) needs --trailer; its access \
                bits must be valid (a wrong inverted copy bricks the sector), and bits that leave no key able to write \
                the trailer again, or that give blocks to a key B they make readable (and so useless), also need \
                --confirm-lockout SECTOR with the sector's number. The trailer's bytes are redacted in traces.
                """)

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions
        @OptionGroup var keys: ClassicKeyOptions

        @Argument(help: "The block (decimal).")
        var block: Int

        @Argument(help: "16 bytes in hex.")
        var data: String

        @Flag(help: "Allow writing a sector trailer (key A, access bits, GPB, key B).")
        var trailer = false

        @Option(help: ArgumentHelp("Confirm, by the sector's number, access bits that lock the sector's trailer (or blocks) for good.", valueName: "sector"))
        var confirmLockout: Int?

        func validate() throws {
            guard (0...255).contains(block) else { throw ValidationError("BLOCK must be 0-255, not \(block)") }
            let bytes: [UInt8]
            do { bytes = try Hex.decode(data) } catch { throw ValidationError("data: \(error)") }
            guard bytes.count == 16 else { throw ValidationError("a block is 16 bytes; \(bytes.count) were given") }
        }

        func run() throws {
            try reportingFailures {
                let bytes = try Hex.decode(data)
                let candidates = try keys.candidates()
                let (reader, back, isTrailer) = try MifareClassicSession.run(reader: readerOptions.requestedReader, wait: readerOptions.waitDuration,
                                                                              observer: traceOptions.observer, keySlot: keys.keySlot) { reader, card, _ in
                    try card.writeChecked(block: block, data: bytes, keys: candidates, trailer: trailer, confirmLockout: confirmLockout)
                    let isTrailer = card.layout.isTrailer(block)
                    if isTrailer {
                        // A trailer's keys do not read back: the new key A must open the sector,
                        // and the access bits read back as written (the review of issue 49: a
                        // 90 00 for a write never passed on, with the old access bits, read as
                        // written).
                        do { _ = try card.confirmTrailer(block: block, data: bytes) } catch let e as TagError where e.kind == .writeFailed {
                            throw Failure(.unexpected, e.message)
                        } catch {
                            throw Failure(.ioError, "block \(block) (a sector trailer) was written but could not be checked (\(Failure.reason(error))): the write is unconfirmed")
                        }
                        return (reader, bytes as [UInt8]?, isTrailer)
                    }
                    // Read back where allowed.
                    let back = try? card.read(block: block)
                    return (reader, back, isTrailer)
                }
                let verified = back.map { $0 == bytes }
                if verified == false { throw Failure(.unexpected, "block \(block) reads back \(isTrailer ? "other access bits" : back!.hexString) after the write") }
                if output.json {
                    Terminal.print(JSON.object([("reader", .string(reader)), ("block", .int(block)), ("trailer", .bool(isTrailer)),
                                                ("verified", verified.map(JSON.bool) ?? .null)]).serialized)
                } else {
                    Terminal.print("wrote block \(block)\(isTrailer ? " (sector trailer)" : "")\(verified == true ? (isTrailer ? "; the new keys open the sector and the access bits read back as written (as the reader reports them)" : "; it reads back as written") : "; not readable back with these keys")")
                }
            }
        }
    }
}
