// `apdu tag-info`: who a tag is (Type 2 chip, UID, originality signature, counter; Type 5
// system information; Type 3 IDm, PMm and systems).
import APDUCommandLine
import ArgumentParser
import ISO7816
import NFCTags
import TagReader

extension APDUCommand {
    struct TagInfo: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "tag-info",
            abstract: "Identify a tag: Type 2 chip (GET_VERSION), UID, NXP originality signature, NFC counter; Type 5 system info; Type 3 IDm, PMm, systems; Type 1 header ROM, UID, memory and locks.",
            discussion: """
                The signature is checked against NXP's published keys (ECDSA secp128r1, through OpenSSL). One that \
                does not verify is reported (signature.valid false, exit 0), not treated as an error: the tag answered. \
                On a reader with storage pseudo-APDUs only, the UID and the ATR's card name are shown and the rest is \
                said to be out of reach.
                """)

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions

        @OptionGroup var dialect: DialectOptions

        /// A Type 5 or Type 3 tag's identity, in JSON fields and lines.
        func otherFamily(_ atr: [UInt8], _ commands: TagCommandChannel, firstBlock: [UInt8]?) throws -> OperationResult? {
            if Type5Tag.isType5(atr: atr), commands.dialect == .storageOnly {
                // No GET SYSTEM INFO through storage pseudo-APDUs: the UID from GET DATA, the block
                // size from the first READ BINARY.
                let r = try commands.transport.send(.getUID)
                let uid = r.statusWord == .success && r.data.count == 8 ? (r.data.last == 0xE0 ? Array(r.data.reversed()) : r.data) : nil
                return OperationResult(json: [("kind", .string("type5")), ("uid", uid.map { .hex($0) } ?? .null), ("blockSize", firstBlock.map { .int($0.count) } ?? .null),
                                              ("notes", .array([.string("\(commands.readerName) offers storage pseudo-APDUs only: no GET SYSTEM INFO (manufacturer, IC reference, block count)")]))],
                                       lines: ["Chip:      ISO 15693 (Type 5); storage pseudo-APDUs only: no GET SYSTEM INFO",
                                               "UID:       \(uid.map { Hex.encode($0, separator: " ") } ?? "not given by the reader")",
                                               "Memory:    blocks of \(firstBlock.map { String($0.count) } ?? "?") bytes"])
            }
            if Type5Tag.isType5(atr: atr) {
                let iso = try ISO15693Commands(channel: commands)
                let info = try iso.systemInfoWithMemorySize()
                let memory = "\(info.blockCount.map(String.init) ?? "?") blocks of \(info.blockSize.map(String.init) ?? "?") bytes"
                return OperationResult(json: [("kind", .string("type5")), ("uid", .hex(info.displayUID)), ("manufacturer", .string(info.manufacturerName)),
                         ("icReference", info.icReference.map { .hex([$0]) } ?? .null), ("blockCount", info.blockCount.map(JSON.int) ?? .null),
                         ("blockSize", info.blockSize.map(JSON.int) ?? .null)],
                        lines: ["Chip:      ISO 15693 (Type 5), \(info.manufacturerName)" + (info.icReference.map { ", IC reference \(Hex.encode([$0]))" } ?? ""),
                         "UID:       \(Hex.encode(info.displayUID, separator: " "))", "Memory:    \(memory)"])
            }
            if Type3Tag.isType3(atr: atr) {
                let felica = try FeliCaCommands(channel: commands)
                guard let polled = try felica.polling() else { throw Failure(.unexpected, "the FeliCa card did not answer Polling") }
                let systems = (try? felica.requestSystemCode()) ?? []
                let codes = systems.map { Terminal.hex4($0) }
                return OperationResult(json: [("kind", .string("type3")), ("chip", .string(polled.productName)), ("idm", .hex(polled.idm)), ("pmm", .hex(polled.pmm)),
                         ("systemCodes", .array(codes.map(JSON.string)))],
                        lines: ["Chip:      \(polled.productName) (Type 3)", "IDm:       \(Hex.encode(polled.idm, separator: " "))",
                         "PMm:       \(Hex.encode(polled.pmm, separator: " "))", "Systems:   \(codes.isEmpty ? "unknown" : codes.map { $0 == "12FC" ? "12FC (NDEF)" : $0 }.joined(separator: ", "))"])
            }
            return nil
        }

        func run() throws {
            try reportingFailures {
                var other: OperationResult?
                var forms: [(name: String, value: String?)] = []
                let (reader, dialect, found) = try NativeCommands.run(reader: readerOptions.requestedReader, wait: readerOptions.waitDuration,
                                                                      observer: traceOptions.observer, dialect: dialect.readerDialect) { reader, atr, commands -> (String, ReaderDialect, Type2Identity?) in
                    // One storage READ BINARY of block 0 (harmless) tells the Le form this reader takes.
                    var firstBlock: [UInt8]?
                    if Type2Tag.isType2(atr: atr) || Type5Tag.isType5(atr: atr) {
                        let r = try? commands.transport.storageReadBinary(block: 0, size: Type2Tag.isType2(atr: atr) ? Type2Tag.readLimit : nil)
                        if r?.statusWord == .success { firstBlock = r?.data }
                    }
                    defer { forms = commands.spokenForms }
                    if let o = Type1Tag.isType1(atr: atr) ? try type1(atr, commands, reader: reader) : try otherFamily(atr, commands, firstBlock: firstBlock) {
                        other = OperationResult(json: o.json + [("dialect", .string(commands.dialect.rawValue))], lines: o.lines)
                        return (reader, commands.dialect, nil)
                    }
                    guard Type2Tag.isType2(atr: atr) else {
                        throw Failure(.unexpected, "not a Type 1, 2, 3 or 5 tag (the ATR is not a PC/SC Part 3 Ultralight-family, ISO 15693 or FeliCa storage card, nor a Topaz)")
                    }
                    return (reader, commands.dialect, try Type2Identity.read(commands.transport, atr: atr, commands: commands))
                }
                let formsJSON: (String, JSON) = ("readerForms", .object(forms.map { ($0.name, JSON.optional($0.value)) }))
                let formsLine = "Speaks:    " + forms.map { "\($0.name) \($0.value ?? "not needed")" }.joined(separator: ", ")
                guard let identity = found else {
                    if !output.json {
                        Terminal.print("Reader:    \(Terminal.safe(reader)) (\(dialect))")
                        Terminal.print(formsLine)
                    }
                    output.print(OperationResult(json: other!.json + [formsJSON], lines: other!.lines), reader: reader)
                    return
                }
                let valid = identity.signatureKey != nil
                if output.json {
                    var signature: JSON = .null
                    if let s = identity.signature {
                        signature = .object([("bytes", .hex(s.signature)), ("valid", .bool(valid)), ("key", JSON.optional(identity.signatureKey?.name)),
                                             ("curve", .string("secp128r1"))])
                    }
                    Terminal.print(JSON.object([
                        ("reader", .string(reader)), ("dialect", .string(dialect.rawValue)),
                        ("chip", .string(identity.chipName)), ("uid", identity.uid.map { .hex($0) } ?? .null),
                        ("version", identity.version.map { v in .object([
                            ("bytes", .hex(v.bytes)), ("vendor", .string(v.vendor)), ("product", .string(v.productName)),
                            ("storageBytes", .object([("min", .int(v.storageSize.lowerBound)), ("max", .int(v.storageSize.upperBound))])),
                        ]) } ?? .null),
                        ("signature", signature), ("counter", identity.counter.map { .int($0) } ?? .null),
                        ("notes", .array(identity.notes.map(JSON.string))), formsJSON,
                    ]).serialized)
                } else {
                    Terminal.print("Reader:    \(Terminal.safe(reader)) (\(dialect))")
                    Terminal.print(formsLine)
                    Terminal.print("Chip:      \(identity.chipName)")
                    if let uid = identity.uid { Terminal.print("UID:       \(Hex.encode(uid, separator: " "))") }
                    if let v = identity.version {
                        Terminal.print("Version:   \(Hex.encode(v.bytes, separator: " ")) (\(v.vendor), \(v.productName), user memory \(v.storageDescription))")
                    }
                    if let s = identity.signature {
                        Terminal.print("Signature: \(Hex.encode(s.signature))")
                        Terminal.print(valid ? "           valid: verifies with the \(identity.signatureKey!.name) key (secp128r1)"
                                             : "           NOT VALID: does not verify with NXP's key for this chip" + (s.isBlank ? " (all zeros: never signed)" : ""))
                    }
                    if let c = identity.counter { Terminal.print("Counter:   \(c)") }
                    for note in identity.notes { Terminal.print("Note:      \(note)") }
                }
            }
        }
    }
}
