// `apdu classic dump`: every sector the keys open, with the access bits in plain words.
import APDUCommandLine
import ArgumentParser
import ISO7816
import NFCTags
import TagReader

extension APDUCommand {
    struct ClassicDump: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "dump",
            abstract: "Read every sector of a MIFARE Classic card that the keys open, with the access bits in plain words.",
            discussion: """
                Keys: --key, --key-file, $APDU_MIFARE_KEYS, then the public factory, MAD and NDEF keys. One \
                authentication per sector (the key that opened the last sector is tried first; key B only where the \
                access bits give blocks to it). Trailers show key A as zeros (the chip never reveals it) and key B \
                only where it is readable. Value blocks are recognised. Keys are never printed; traces show them as **.
                """)

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions
        @OptionGroup var keys: ClassicKeyOptions

        func run() throws {
            try reportingFailures {
                let candidates = try keys.candidates()
                let (reader, dump) = try MifareClassicSession.run(reader: readerOptions.requestedReader, wait: readerOptions.waitDuration,
                                                                   observer: traceOptions.observer, keySlot: keys.keySlot) { reader, card, uid in
                    let progress = Progress("dumping", output: output, trace: traceOptions)
                    defer { progress.finish() }
                    return (reader, try card.dump(keys: candidates, uid: uid) { progress.update($0 + 1, of: card.layout.sectorCount, "sector \($0)") })
                }
                let layout = dump.layout
                let opened = dump.sectors.filter { $0.keyType != nil }.count
                if output.json {
                    let sectors: [JSON] = dump.sectors.map { s in
                        .object([("sector", .int(s.sector)),
                                 ("key", s.keyType.map { t in .object([("type", .string(t.description)), ("label", .optional(s.keyLabel))]) } ?? .null),
                                 ("access", ClassicRender.accessJSON(s.access, layout: layout, sector: s.sector)),
                                 ("blocks", .array(s.blocks.enumerated().map { ClassicRender.blockJSON(layout, s.firstBlock + $0.offset, $0.element) })),
                                 ("notes", .array(s.notes.map(JSON.string)))])
                    }
                    Terminal.print(JSON.object([("reader", .string(reader)), ("card", .string(layout.description)), ("uid", dump.uid.map(JSON.hex) ?? .null),
                                                ("sectorsOpened", .int(opened)), ("authentications", .int(dump.authentications)), ("reads", .int(dump.reads)),
                                                ("sectors", .array(sectors))]).serialized)
                } else {
                    Terminal.print("\(layout), UID \(dump.uid.map { Hex.encode($0, separator: " ") } ?? "?"): \(opened) of \(layout.sectorCount) sectors opened (\(dump.authentications) authentications, \(dump.reads) reads)")
                    for s in dump.sectors {
                        let key = s.keyType.map { "key \($0) (\(Terminal.safe(s.keyLabel ?? "?")))" } ?? "not opened"
                        Terminal.print("sector \(s.sector): \(key)\(s.access.map { ", access bits \($0)" } ?? "")")
                        for (i, bytes) in s.blocks.enumerated() {
                            Terminal.print(ClassicRender.blockLine(layout, s.firstBlock + i, bytes, access: s.access))
                        }
                        for note in s.notes { Terminal.print("      note: \(Terminal.safe(note))") }
                    }
                }
                if opened < layout.sectorCount { throw ExitCode(ExitStatus.unexpected.rawValue) }
            }
        }
    }
}
