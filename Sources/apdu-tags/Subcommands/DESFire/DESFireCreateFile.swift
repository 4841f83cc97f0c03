// `apdu desfire create-file`: create a file in a DESFire application.
import APDUCommandLine
import ArgumentParser
import ISO7816
import NFCTags

extension APDUCommand {
    struct DESFireCreateFile: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create-file",
            abstract: "Create a file in a DESFire application: standard or backup data, value, linear or cyclic records.",
            discussion: """
                --access is four hex digits: read, write, read-write and change, each a key number (0-D), E (free) or F \
                (never); E000 reads free and needs key 0 for the rest. --comm is how the data travels: plain, mac or full \
                (enciphered); free access always travels plain. One command: the file exists afterwards or nothing changed.
                """)

        enum Kind: String, ExpressibleByArgument, CaseIterable { case standard, backup, value, linear, cyclic }

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions
        @OptionGroup var appOption: DESFireAppOption
        @OptionGroup var keyOptions: DESFireKeyOptions

        @Option(help: ArgumentHelp("The file number, 0-31.", valueName: "n"))
        var file: UInt8

        @Option(help: ArgumentHelp("standard, backup, value, linear or cyclic.", valueName: "type"))
        var type: Kind

        @Option(help: ArgumentHelp("plain, mac or full.", valueName: "mode"))
        var comm: CommMode = .plain

        @Option(help: ArgumentHelp("Access rights: read, write, read-write, change as four hex digits (E free, F never).", valueName: "hex"))
        var access: String = "EEEE"

        @Option(help: ArgumentHelp("Data files: the size in bytes.", valueName: "n"))
        var size: Int?

        @Option(help: ArgumentHelp("Value files: the lower limit.", valueName: "n"))
        var lower: Int32 = 0

        @Option(help: ArgumentHelp("Value files: the upper limit.", valueName: "n"))
        var upper: Int32 = 0

        @Option(help: ArgumentHelp("Value files: the initial value.", valueName: "n"))
        var value: Int32 = 0

        @Flag(help: "Value files: allow LimitedCredit.")
        var limitedCredit = false

        @Option(help: ArgumentHelp("Record files: bytes per record.", valueName: "n"))
        var recordSize: Int?

        @Option(help: ArgumentHelp("Record files: how many records at most.", valueName: "n"))
        var maxRecords: Int?

        @Option(help: ArgumentHelp("ISO file identifier (4 hex digits), in applications created with ISO names.", valueName: "hex"))
        var isoFid: String?

        func spec() throws -> DESFireFileSpec {
            guard access.count == 4, let a = UInt16(access, radix: 16) else { throw ValidationError("--access is four hex digits (read, write, read-write, change)") }
            let kind: DESFireFileSpec.Kind
            switch type {
            case .standard, .backup:
                guard let size else { throw ValidationError("--size is needed for a data file") }
                kind = type == .standard ? .standardData(size: size) : .backupData(size: size)
            case .value:
                kind = .value(lower: lower, upper: upper, initial: value, limitedCredit: limitedCredit)
            case .linear, .cyclic:
                guard let recordSize, let maxRecords else { throw ValidationError("--record-size and --max-records are needed for a record file") }
                kind = type == .linear ? .linearRecord(recordSize: recordSize, maxRecords: maxRecords) : .cyclicRecord(recordSize: recordSize, maxRecords: maxRecords)
            }
            var iso: UInt16?
            if let isoFid {
                guard isoFid.count == 4, let v = UInt16(isoFid, radix: 16) else { throw ValidationError("--iso-fid is 4 hex digits") }
                iso = v
            }
            let spec = DESFireFileSpec(number: file, kind: kind, commMode: comm, access: DESFireAccessRights(a), isoFileID: iso)
            do { try spec.validate() } catch { throw ValidationError(error.message) }
            return spec
        }

        func validate() throws { _ = try spec() }

        func run() throws {
            try reportingDESFireFailures {
                let spec = try self.spec()
                let aid = try appOption.aid()
                let key = try keyOptions.resolved()
                let reader = try withDESFire(readerOptions, traceOptions) { reader, card in
                    try card.selectApplication(aid)
                    if let key { try card.authenticate(keyNumber: key.number, key: key.key, scheme: keyOptions.auth) }
                    try card.atomically("\(spec.kind.commandName) \(spec.number)") { try card.createFile(spec) }
                    return reader
                }
                if output.json {
                    Terminal.print(JSON.object([("reader", .string(reader)), ("app", .string(aid.description)), ("file", .int(Int(file))),
                                                ("type", .string(type.rawValue)), ("commMode", .string(comm.rawValue)), ("access", .string(access.uppercased()))]).serialized)
                } else {
                    Terminal.print("\(Terminal.safe(reader)): created file \(file) (\(type.rawValue), comm \(comm), \(spec.access)) in application \(aid)")
                }
            }
        }
    }
}
