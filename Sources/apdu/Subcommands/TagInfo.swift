import ArgumentParser
import ISO7816
import NFCTags
import TagReader

extension APDUCommand {
    struct TagInfo: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "tag-info",
            abstract: "Identify a Type 2 tag: chip (GET_VERSION), UID, NXP originality signature, NFC counter.",
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

        func run() throws {
            try reportingFailures {
                let (reader, dialect, identity) = try NativeCommands.run(reader: readerOptions.requestedReader, wait: readerOptions.waitDuration,
                                                                         observer: traceOptions.observer, dialect: dialect.readerDialect) { reader, atr, commands in
                    guard Type2Tag.isType2(atr: atr) else {
                        throw Failure(.unexpected, "not a MIFARE Ultralight / NTAG tag (the ATR is not a PC/SC Part 3 Ultralight-family storage card)")
                    }
                    return (reader, commands.dialect, try Type2Identity.read(commands.transport, atr: atr, commands: commands))
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
                        ("notes", .array(identity.notes.map(JSON.string))),
                    ]).serialized)
                } else {
                    Terminal.print("Reader:    \(Terminal.safe(reader)) (\(dialect))")
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
