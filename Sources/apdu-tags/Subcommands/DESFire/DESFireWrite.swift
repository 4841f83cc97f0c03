// `apdu desfire write`: change a DESFire file, committed where the file is transactional.
import APDUCommandLine
import ArgumentParser
import ISO7816
import NFCTags

extension APDUCommand {
    struct DESFireWrite: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "write",
            abstract: "Change a DESFire file: write data, credit or debit a value, add a record, clear records; commit where the file is transactional.",
            discussion: """
                Standard data files take a write at once (no backup: a write of several frames cut short may leave them \
                partly written). Backup data, value and record files keep their old contents until CommitTransaction, which \
                this command sends after the change, then reads the file back in the same session where the key may read it \
                (a card that acknowledges a commit it did not make is reported, not taken at its word): the output says \
                whether the change was committed and whether that was read back. A card pulled before \
                the commit keeps the old contents (the chip's guarantee). The mode (plain, MAC, full) follows the file's \
                settings; every MAC and CRC on the answers is checked. An option that does not fit the file's type \
                (--data on a record file) is refused before anything is sent, naming the options that do (exit 64).
                """)

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions
        @OptionGroup var appOption: DESFireAppOption
        @OptionGroup var keyOptions: DESFireKeyOptions

        @Option(help: ArgumentHelp("The file number, 0-31.", valueName: "n"))
        var file: UInt8

        @Option(help: ArgumentHelp("Data files: the bytes to write (hex).", valueName: "hex"))
        var data: String?

        @Option(help: ArgumentHelp("Data files: where to write; record files: where within the new record.", valueName: "n"))
        var offset: Int = 0

        @Option(help: ArgumentHelp("Value files: add this amount.", valueName: "n"))
        var credit: Int32?

        @Option(help: ArgumentHelp("Value files: take this amount.", valueName: "n"))
        var debit: Int32?

        @Option(help: ArgumentHelp("Value files: give back up to what the last debits took.", valueName: "n"))
        var limitedCredit: Int32?

        @Option(help: ArgumentHelp("Record files: a new record (hex).", valueName: "hex"))
        var newRecord: String?

        @Flag(help: "Record files: remove every record.")
        var clear = false

        func validate() throws {
            guard file <= 31 else { throw ValidationError("--file is 0-31") }
            let given = [data != nil, credit != nil, debit != nil, limitedCredit != nil, newRecord != nil, clear].filter { $0 }.count
            guard given == 1 else { throw ValidationError("give exactly one of --data, --credit, --debit, --limited-credit, --new-record, --clear") }
            for amount in [credit, debit, limitedCredit].compactMap({ $0 }) where amount < 0 { throw ValidationError("amounts are 0 or more") }
            guard offset >= 0 else { throw ValidationError("--offset is 0 or more") }
            if let data { _ = try hexArgument(data, option: "--data") }
            if let newRecord { _ = try hexArgument(newRecord, option: "--new-record") }
        }

        var change: DESFireFileChange {
            get throws {
                if let data { return .data(try hexArgument(data, option: "--data"), offset: offset) }
                if let credit { return .credit(credit) }
                if let debit { return .debit(debit) }
                if let limitedCredit { return .limitedCredit(limitedCredit) }
                if let newRecord { return .record(try hexArgument(newRecord, option: "--new-record"), offset: offset) }
                return .clearRecords
            }
        }

        func run() throws {
            try reportingDESFireFailures {
                let key = try keyOptions.resolved()
                let aid = try appOption.aid()
                let change = try self.change
                let (reader, receipt, legacy) = try withDESFire(readerOptions, traceOptions) { reader, card in
                    try card.selectApplication(aid)
                    if let key { try card.authenticate(keyNumber: key.number, key: key.key, scheme: keyOptions.auth) }
                    let settings = try card.fileSettings(file)
                    guard change.applies(to: settings.type) else {
                        throw Failure(.usage, "\(Self.option(of: change)) does not apply to file \(file) of \(aid), a \(settings.type) file: "
                            + "\(Self.options(for: settings.type)); nothing was sent")
                    }
                    guard key != nil || settings.access.freeWrite else {
                        throw Failure(.unexpected, "file \(file) of \(aid) is written with \(settings.access.write) or read-write \(settings.access.readWrite): give --key; nothing was written")
                    }
                    return (reader, try card.change(file, settings: settings, change), card.session?.scheme == .legacy)
                }
                if output.json {
                    Terminal.print(JSON.object([("reader", .string(reader)), ("app", .string(aid.description)), ("file", .int(Int(file))),
                                                ("fileType", .string("\(receipt.type)")), ("committed", .bool(receipt.committed)),
                                                ("transactional", .bool(receipt.type.isTransactional)), ("readBack", .bool(receipt.readBack)),
                                                ("proven", .bool(receipt.proven))]).serialized)
                } else {
                    Terminal.print("\(Terminal.safe(reader)): application \(aid), file \(file) (\(receipt.type)): \(Self.words(receipt, keyed: key != nil, legacy: legacy))")
                }
                // A legacy session proves nothing, and one can be brought about by a middle that
                // changes GetVersion to name an MF3ICD40: not a success, exit 1, as a lock
                // nothing proves. (A free file, or a plain one under EV2, is unproven by the
                // file's own choice, which its MACed settings show: said, exit 0.)
                if legacy, !receipt.proven {
                    throw Failure(.unexpected, "the change is unproven: a legacy (0A) session MACs neither the card's answers nor the file's settings; read the file to check, or authenticate with --auth iso or aes if the card takes them")
                }
            }
        }

        /// What the receipt says, in words: the change, what it rests on.
        static func words(_ receipt: DESFireWriteReceipt, keyed: Bool, legacy: Bool) -> String {
            let what = receipt.type.isTransactional ? "committed (CommitTransaction" : "written (a standard data file takes writes at once"
            let back = receipt.readBack ? "read back in the session: the file holds the change" : keyed ? "not read back: the key in use may not read the file" : "not read back"
            let proof = receipt.proven ? (receipt.readBack ? "" : ", the card's answers MACed")
                : legacy ? "; unproven: a legacy session MACs nothing" : keyed ? "; unproven: a plain file's answers carry no MAC under EV2" : "; unproven: a free file, no session, nothing MACed"
            return "\(what); \(back)\(proof))"
        }

        /// The option that asked for `change`.
        static func option(of change: DESFireFileChange) -> String {
            switch change {
            case .data: return "--data"
            case .credit: return "--credit"
            case .debit: return "--debit"
            case .limitedCredit: return "--limited-credit"
            case .record: return "--new-record"
            case .clearRecords: return "--clear"
            }
        }

        /// What this command offers for a file of `type`.
        static func options(for type: DESFireFileSettings.FileType) -> String {
            switch type {
            case .standardData, .backupData: return "give --data (with --offset)"
            case .value: return "give --credit, --debit or --limited-credit"
            case .linearRecord, .cyclicRecord: return "give --new-record (a record to add; --offset places the bytes within it) or --clear"
            case .transactionMAC: return "a transaction MAC file is written by the card alone"
            }
        }
    }
}
