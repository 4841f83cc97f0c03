// `apdu classic read`: blocks read, each sector authenticated once.
import APDUCommandLine
import ArgumentParser
import ISO7816
import NFCTags
import TagReader

extension APDUCommand {
    struct ClassicRead: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "read",
            abstract: "Read blocks of a MIFARE Classic card: BLOCK [COUNT], authenticating each sector once.",
            discussion: "Keys: --key, --key-file, $APDU_MIFARE_KEYS, then the public keys. Exit 1 when a block cannot be read.")

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions
        @OptionGroup var keys: ClassicKeyOptions

        @Argument(help: "The first block (decimal).")
        var block: Int

        @Argument(help: "How many blocks.")
        var count: Int = 1

        func validate() throws {
            guard (0...255).contains(block) else { throw ValidationError("BLOCK must be 0-255, not \(block)") }
            guard (1...256).contains(count), block + count <= 256 else { throw ValidationError("COUNT must be 1-\(256 - block)") }
        }

        func run() throws {
            try reportingFailures {
                let candidates = try keys.candidates()
                let (reader, layout, rows) = try MifareClassicSession.run(reader: readerOptions.requestedReader, wait: readerOptions.waitDuration,
                                                                           observer: traceOptions.observer, keySlot: keys.keySlot) { reader, card, _ in
                    let layout = card.layout
                    guard block + count <= layout.blockCount else {
                        throw TagError(.beyondReach, "a \(layout) has blocks 0-\(layout.blockCount - 1); \(block)-\(block + count - 1) asked")
                    }
                    var rows: [(Int, Result<[UInt8], TagError>)] = []
                    for b in block..<(block + count) {
                        let sector = layout.sector(ofBlock: b)
                        do {
                            if card.current?.sector != sector, try card.open(sector: sector, with: candidates) == nil {
                                throw TagError(.authenticationFailed, "sector \(sector): no key given opens it (\(candidates.count) tried as key A and B)")
                            }
                            rows.append((b, .success(try card.read(block: b))))
                        } catch let e as TagError {
                            // Key A may not read it: key B may.
                            if e.kind == .readFailed, let opened = try card.open(sector: sector, with: candidates, as: [.b]), opened.keyType == .b,
                               let bytes = try? card.read(block: b) {
                                rows.append((b, .success(bytes)))
                            } else {
                                rows.append((b, .failure(e)))
                            }
                        }
                    }
                    return (reader, layout, rows)
                }
                if output.json {
                    Terminal.print(JSON.object([("reader", .string(reader)), ("card", .string(layout.description)),
                                                ("blocks", .array(rows.map { b, r in
                                                    switch r {
                                                    case let .success(bytes): return ClassicRender.blockJSON(layout, b, bytes)
                                                    case let .failure(e): return .object([("block", .int(b)), ("bytes", .null), ("error", .string(e.message))])
                                                    }
                                                }))]).serialized)
                } else {
                    for (b, r) in rows {
                        switch r {
                        case let .success(bytes): Terminal.print(ClassicRender.blockLine(layout, b, bytes, access: nil))
                        case let .failure(e): Terminal.print(ClassicRender.blockLine(layout, b, nil, access: nil) + ": " + Terminal.safe(e.message))
                        }
                    }
                }
                if rows.contains(where: { if case .failure = $0.1 { return true } else { return false } }) { throw ExitCode(ExitStatus.unexpected.rawValue) }
            }
        }
    }
}
