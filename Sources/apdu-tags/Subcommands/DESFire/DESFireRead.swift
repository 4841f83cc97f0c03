// `apdu desfire read`: a DESFire file's bytes, value or records.
import APDUCommandLine
import ArgumentParser
import ISO7816
import NFCTags

extension APDUCommand {
    struct DESFireRead: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "read",
            abstract: "Read a DESFire file: a data file's bytes, a value file's value, a record file's records.",
            discussion: """
                The communication mode (plain, MAC, full) follows the file's settings; a file whose read access is free is \
                read plain without a key, as transit readers and Metrodroid do. Every MAC and CRC on the answer is checked. \
                A 4 KB file comes in one ReadData answered in frames of up to 59 bytes.
                """)

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions
        @OptionGroup var appOption: DESFireAppOption
        @OptionGroup var keyOptions: DESFireKeyOptions

        @Option(help: ArgumentHelp("The file number, 0-31.", valueName: "n"))
        var file: UInt8

        @Option(help: ArgumentHelp("Data files: the first byte to read.", valueName: "n"))
        var offset: Int = 0

        @Option(help: ArgumentHelp("Data files: how many bytes (default: to the end).", valueName: "n"))
        var length: Int?

        func validate() throws {
            guard file <= 31 else { throw ValidationError("--file is 0-31") }
            guard offset >= 0, (length ?? 1) > 0 else { throw ValidationError("--offset is 0 or more, --length 1 or more") }
        }

        func run() throws {
            try reportingDESFireFailures {
                let key = try keyOptions.resolved()
                let aid = try appOption.aid()
                let (reader, settings, contents, proven) = try withDESFire(readerOptions, traceOptions) { reader, card in
                    try card.selectApplication(aid)
                    if let key { try card.authenticate(keyNumber: key.number, key: key.key, scheme: keyOptions.auth) }
                    let settings = try card.fileSettings(file)
                    guard key != nil || settings.access.freeRead || (settings.type == .value && settings.limits?.freeGetValue == true) else {
                        throw Failure(.unexpected, "file \(file) of \(aid) is read with \(settings.access.read) or read-write \(settings.access.readWrite): give --key; nothing was read")
                    }
                    let contents: DESFireFileContents
                    if let size = settings.size, offset != 0 || length != nil {
                        let n = length ?? (size - offset)
                        guard offset + n <= size, n > 0 else { throw Failure(.usage, "file \(file) holds \(size) bytes; --offset \(offset) --length \(n) is beyond it") }
                        contents = .data(try card.readData(file, offset: offset, length: n, mode: card.readMode(settings)))
                    } else {
                        contents = try card.contents(file, settings: settings)
                    }
                    return (reader, settings, contents, card.answersProve(settings))
                }
                if output.json {
                    Terminal.print(JSON.object([("reader", .string(reader)), ("app", .string(aid.description)), ("file", .int(Int(file))),
                                                ("settings", settings.json), ("contents", contents.json), ("proven", .bool(proven))]).serialized)
                    return
                }
                Terminal.print("\(Terminal.safe(reader)): application \(aid), file \(file): \(settings.words)")
                for line in contents.lines { Terminal.print("  \(line)") }
                if !proven {
                    Terminal.print("  (unproven: \(key == nil ? "read without a key" : "these answers carry no MAC: a legacy session, or a plain file under EV2"); anyone between the card and the tool could have changed them)")
                }
            }
        }
    }
}
