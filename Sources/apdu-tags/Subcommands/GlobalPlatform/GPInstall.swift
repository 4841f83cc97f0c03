// `apdu gp install FILE.cap`: load a CAP file and install its applets, selectable.
import APDUCommandLine
import ArgumentParser
import FoundationEssentials
import GlobalPlatform
import ISO7816

extension APDUCommand {
    struct GPInstall: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "install",
            abstract: "Load a CAP file and install its applets (INSTALL [for load], LOAD in blocks, INSTALL [for install and make selectable]).",
            discussion: """
                The CAP's components go in the Java Card VM's load order (not the ZIP's), without the Descriptor unless \
                --descriptor. LOAD blocks are as large as a short APDU allows once the secure channel's MAC and padding \
                are counted. A load cut or refused mid-way leaves a partial load file: the error names it and \
                `apdu gp delete AID` removes it.
                """)

        @Argument(help: ArgumentHelp("The CAP file.", valueName: "file.cap"))
        var file: String

        @Option(help: ArgumentHelp("Install parameters (C9's value), in hex.", valueName: "hex"))
        var params: String?

        @Option(help: ArgumentHelp("Privileges, in hex (1 or 3 bytes; default 00).", valueName: "hex"))
        var privs: String?

        @Option(help: ArgumentHelp("The instance AID of the first applet (default: the applet's AID).", valueName: "hex"))
        var instance: String?

        @Flag(help: "Make the first applet the card's default selected application (privilege Card Reset, 04).")
        var `default` = false

        @Flag(help: "Load the Descriptor component too.")
        var descriptor = false

        @Option(help: ArgumentHelp("The most data bytes a LOAD may carry (the card's buffer): 255 is a short APDU; more uses extended length (SCP03, a reader and card that take it).",
                                   valueName: "bytes"))
        var blockSize = 255

        @OptionGroup var keys: GPKeyOptions
        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions

        func validate() throws {
            if let params, (try? Hex.decode(params, allowEmpty: true)).map({ $0.count <= 127 }) != true { throw ValidationError("--params is at most 127 bytes in hex") }
            if let privs, (try? Hex.decode(privs)).map({ $0.count == 1 || $0.count == 3 }) != true { throw ValidationError("--privs is 1 or 3 bytes in hex") }
            if let instance { _ = try parseAID(instance, "--instance") }
            if blockSize < 64 || blockSize > 65535 { throw ValidationError("--block-size is 64 to 65535 bytes") }
        }

        func run() throws {
            try reportingFailures {
                guard let bytes = FileManager.default.contents(atPath: file) else { throw Failure(.usage, "\(Terminal.safe(file)): cannot read the file") }
                let cap: CAPFile
                do { cap = try CAPFile(zip: Array(bytes)) } catch let e as GlobalPlatformError { throw Failure(.badData, "\(Terminal.safe(file)): \(e.message)") }
                var privileges = try privs.map { try Hex.decode($0) } ?? [0x00]
                if `default` { privileges[0] |= 0x04 }
                let parameters = try params.map { try Hex.decode($0, allowEmpty: true) } ?? []
                let (reader, loads, block): (String, Int, Int) = try withCardManager(readerOptions, traceOptions) { name, manager in
                    try manager.authenticate(keys: keys.staticKeys, level: keys.securityLevel)
                    try manager.install(cap, instance: try instance.map { try Hex.decode($0) }, privileges: privileges, parameters: parameters,
                                        includeDescriptor: descriptor, maxData: blockSize)
                    return (name, manager.lastLoadCount, manager.loadBlockSize(maxData: blockSize))
                }
                let size = (try? cap.loadFileDataBlock(includeDescriptor: descriptor).count) ?? 0
                if output.json {
                    Terminal.print(JSON.object([("reader", .string(reader)), ("package", .hex(cap.package.aid)), ("applets", .array(cap.applets.map { .hex($0) })),
                                                ("loadFileBytes", .int(size)), ("blockSize", .int(block)), ("loads", .int(loads))]).serialized)
                } else {
                    Terminal.print("\(Terminal.safe(reader)): loaded \(cap.package.aid.hexString) (\(size) bytes in \(loads) LOADs of up to \(block)), installed \(cap.applets.map(\.hexString).joined(separator: ", "))")
                }
            }
        }
    }
}
