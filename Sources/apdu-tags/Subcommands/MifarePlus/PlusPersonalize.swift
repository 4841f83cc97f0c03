// `apdu plus personalize`: WritePerso of the keys of an SL0 card, CommitPerso to SL1 or SL3, and
// the switch of an SL1 card to SL3.
import APDUCommandLine
import ArgumentParser
import CardReaders
import FoundationEssentials
import ISO7816
import NFCTags
import PCSC

extension MifarePlusSecurityLevel: ExpressibleByArgument {
    public init?(argument: String) {
        switch argument.lowercased() {
        case "sl1", "1": self = .sl1
        case "sl3", "3": self = .sl3
        default: return nil
        }
    }

    /// CommitPerso goes to SL1 or SL3 only: the help lists those, not every level's raw value
    /// (issue 48 §6: "sl1 or sl3" beside "values: 0, 1, 2, 3").
    public static var allValueStrings: [String] { ["sl1", "sl3"] }
    public static var allValueDescriptions: [String: String] { [:] }
    public var defaultValueDescription: String { description.lowercased() }
}

extension APDUCommand {
    struct PlusPersonalize: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "personalize",
            abstract: "Personalise an SL0 MIFARE Plus (WritePerso of its keys, CommitPerso to SL1 or SL3), or switch an SL1 card to SL3.",
            discussion: """
                Keys: --key-file FILE (lines KEYNO HEX, KEYNO 4 hex digits, '#' comments), or --all-keys HEX for every \
                sector key A and B and 9000-9003, as proxmark3's initp does (also from $APDU_MIFARE_PLUS_PERSO_KEY). \
                WritePerso can be repeated: a card cut before CommitPerso stays in SL0, and the same command finishes it. \
                --commit sl1|sl3 sends CommitPerso (S and X: SL1 only) and needs --yes, then resets the card and checks the \
                level it shows (its 90 alone proves nothing; still in SL0: exit 1); the tool refuses it unless 9000, \
                9001 and 9003 are among the keys, and refuses SL3 while sector keys stay at the factory value FF…FF (it \
                names the sectors) unless --keep-factory-keys. On an S or X whose size nothing tells, keys of sectors 32-39 the \
                card answers 09 (no such block) to are named and stop the run before CommitPerso (exit 1) unless \
                --allow-absent-sectors (a 2K card). B000-B003 in a key file need --yes, as in plus write. --switch-sl3 authenticates an SL1 card with the SL3 switch key 9003 \
                (--key HEX, or the file's 9003 line) and needs --yes: it cannot be undone. Key bytes never show.
                """)

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions

        @Option(help: ArgumentHelp("Keys to write: lines KEYNO HEX.", valueName: "file"))
        var keyFile: String?

        @Option(help: ArgumentHelp("One AES key (32 hex digits) for every sector key and 9000-9003. Default: $APDU_MIFARE_PLUS_PERSO_KEY.", valueName: "hex"))
        var allKeys: String?

        @Option(help: ArgumentHelp("CommitPerso: sl1 or sl3 (needs --yes).", valueName: "sl1|sl3"))
        var commit: MifarePlusSecurityLevel?

        @Flag(help: "--commit sl3: commit although sector keys the keys given leave out keep the factory value FF…FF.")
        var keepFactoryKeys = false

        @Flag(help: "Switch an SL1 card to SL3 with its key 9003 (needs --yes; cannot be undone).")
        var switchSl3 = false

        @Option(help: ArgumentHelp("--switch-sl3: the 9003 key (32 hex digits); else the key file's 9003 line.", valueName: "hex"))
        var key: String?

        @Flag(help: "An S or X whose size nothing tells: accept that the card answers 09 (no such block) to the keys of sectors 32-39 (a 2K card), and commit without them.")
        var allowAbsentSectors = false

        @Flag(help: "Confirm CommitPerso, the switch to SL3, or WritePerso of B000-B003.")
        var yes = false

        func keys(sectors: Int) throws -> MifarePlusKeyFile {
            if let keyFile {
                let text = try DESFireKeyText.load(file: keyFile, option: "--key-file", environment: "")!
                return try MifarePlusKeyFile.parse(text, source: Terminal.safe(keyFile))
            }
            let all = allKeys ?? ProcessInfo.processInfo.environment["APDU_MIFARE_PLUS_PERSO_KEY"].flatMap { $0.isEmpty ? nil : $0 }
            guard let all else { return MifarePlusKeyFile([]) }
            guard let bytes = try? Hex.decode(all), let key = MifarePlusKey(bytes) else {
                throw Failure(.usage, "\(allKeys != nil ? "--all-keys" : "$APDU_MIFARE_PLUS_PERSO_KEY"): an AES key is 32 hex digits (the value is not shown)")
            }
            return .everyKey(key, sectors: sectors)
        }

        func run() throws {
            try reportingPlusFailures {
                if switchSl3 {
                    try runSwitch()
                    return
                }
                let (reader, written, id, checked) = try readerOptions.withCard(transaction: true) { reader, pcsc in
                    let transport = APDUTransport(channel: PCSCChannel(card: pcsc), observer: traceOptions.observer)
                    let (card, id) = try MifarePlusCard.identify(transport, atr: try pcsc.atr())
                    guard id.level == .sl0 else {
                        throw Failure(.unexpected, "the card is \(id.summary): personalisation is for SL0 cards\(id.level == .sl1 ? " (--switch-sl3 takes an SL1 card to SL3)" : "")")
                    }
                    let sectors = id.sectors ?? 40
                    let keys = try keys(sectors: sectors)
                    guard !keys.keys.isEmpty || commit != nil else { throw Failure(.usage, "nothing to do: give --key-file, --all-keys or --commit") }
                    // After CommitPerso the library resets the card and looks at its level: the
                    // 90 carries no MAC in SL0 (review of issue 48: "in SL3" for a card a middle
                    // kept in SL0).
                    let done = try card.personalize(keys, commit: commit, generation: id.generation, sectors: sectors, storageKnown: id.sectors != nil,
                                                    confirmed: yes, keepingFactoryKeys: keepFactoryKeys, allowingAbsentSectors: allowAbsentSectors,
                                                    again: Self.sameCommand()) {
                        try pcsc.reconnect(initialization: .reset)
                        return (APDUTransport(channel: PCSCChannel(card: pcsc), observer: traceOptions.observer), try pcsc.atr())
                    }
                    let skipped = done.notWritten
                    return (reader, (keys.keys.count - skipped.count, skipped), id, done)
                }
                // Keys the card had no block for are named, never left out in silence (issue 48).
                let (count, notWritten) = written
                // WritePerso's 90 carries no MAC: the keys are "written" only once they proved
                // themselves (in SL3, after the commit); else they were sent and answered (the
                // review of issue 49: "wrote 68 keys" with every sector key left FF…FF).
                let proven = checked.keysProven
                if output.json {
                    let checkedMember: [(String, JSON)] = checked.levelShown.map { [("levelCheckedAfterReactivation", .string($0))] } ?? []
                    Terminal.print(JSON.object([("reader", .string(reader)), ("keysWritten", .int(count)), ("keysProven", .bool(proven)),
                                                ("keysUnproven", .array(checked.unproven.map { .string(Hex.encode([UInt8($0 >> 8), UInt8($0 & 0xFF)])) })),
                                                ("keysNotWritten", .array(notWritten.map { .string(Hex.encode([UInt8($0 >> 8), UInt8($0 & 0xFF)])) })),
                                                ("securityLevel", .int(commit?.rawValue ?? 0)), ("generation", .string(id.generation.rawValue))]
                                               + checkedMember).serialized)
                } else {
                    let unprovenCount = checked.unproven.count
                    let keysWords = proven ? "wrote \(count) key\(count == 1 ? "" : "s") with WritePerso"
                        : unprovenCount < count ? "sent \(count) keys with WritePerso: \(count - unprovenCount) proved themselves in SL3; \(MifarePlusBlockNumber.span(checked.unproven)) answered 90, unproven (SL0 has no MAC; an SL3 card does not authenticate with them)"
                        : "sent \(count) key\(count == 1 ? "" : "s") with WritePerso, each answered 90 (unproven: SL0 has no MAC, and the AES keys prove themselves only once the card is in SL3)"
                    Terminal.print("\(Terminal.safe(reader)): \(keysWords)" + (commit.map { "; CommitPerso done: the card is in \($0) (checked after re-activation: \(checked.levelShown ?? ""))" } ?? "; the card stays in SL0 (no --commit)"))
                    if !notWritten.isEmpty {
                        Terminal.print("  not written (the card has no such block, 09; --allow-absent-sectors): \(MifarePlusBlockNumber.span(notWritten))")
                    }
                }
            }
        }

        /// This command line again, every key value replaced by `…`.
        static func sameCommand() -> String {
            var out: [String] = ["apdu"]
            var hideNext = false
            for arg in CommandLine.arguments.dropFirst() {
                if hideNext { out.append("…"); hideNext = false; continue }
                if arg == "--all-keys" || arg == "--key" { hideNext = true }
                if arg.hasPrefix("--all-keys=") || arg.hasPrefix("--key=") { out.append(arg.split(separator: "=")[0] + "=…"); continue }
                out.append(Terminal.safe(arg))
            }
            return out.joined(separator: " ")
        }

        func runSwitch() throws {
            let key: MifarePlusKey
            if let text = self.key {
                guard let bytes = try? Hex.decode(text), let k = MifarePlusKey(bytes) else { throw Failure(.usage, "--key: the 9003 key is 32 hex digits (the value is not shown)") }
                key = k
            } else if let k = try keys(sectors: 40).keys.first(where: { $0.number == MifarePlusBlockNumber.level3SwitchKey })?.key {
                key = k
            } else {
                throw Failure(.usage, "--switch-sl3 needs the 9003 key: --key HEX, or a --key-file with a 9003 line")
            }
            let reader = try withPlusCard(readerOptions, traceOptions) { reader, transport, atr in
                guard let layout = MifareClassicLayout(atr: atr), layout.chip == .plus2K || layout.chip == .plus4K else {
                    throw Failure(.unexpected, "--switch-sl3 is for a MIFARE Plus in SL1; the reader does not name this card one (apdu plus info)")
                }
                try MifarePlusCard(transport: transport).switchToLevel3(key: key, confirmed: yes)
                return reader
            }
            if output.json {
                Terminal.print(JSON.object([("reader", .string(reader)), ("securityLevel", .int(3))]).serialized)
            } else {
                Terminal.print("\(Terminal.safe(reader)): the card accepted the SL3 switch key: it is in SL3 from its next activation")
            }
        }
    }
}
