// `apdu desfire change-key`: change a DESFire key and prove it, or an application's key settings.
import APDUCommandLine
import ArgumentParser
import ISO7816
import NFCTags
import PCSC
import TagReader

extension APDUCommand {
    struct DESFireChangeKey: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "change-key",
            abstract: "Change a DESFire key (then prove it by authenticating with it), or an application's key settings.",
            discussion: """
                Authenticate with the key the application's settings name for key changes (--key KEYNO:TYPE:HEX, --key-file \
                or $APDU_DESFIRE_KEY). Changing that same key sends the new key and ends the session; changing another key \
                sends new XOR old with the new key's CRC, so a wrong --old is refused by the card (91 1E) and nothing \
                changes. New and old keys: --new / --new-key-file / $APDU_DESFIRE_NEW_KEY and --old / --old-key-file / \
                $APDU_DESFIRE_OLD_KEY, each TYPE:HEX (an AES key may end :VERSION; DES-family keys carry their version in \
                their bits). Changing the card master key, an application master key (key 0) or the key that changes the \
                others needs --yes: change them last, after the others are proved. --key-settings HEX runs ChangeKeySettings; \
                settings that freeze something for good need --yes. If the card goes away while the change is on its way, \
                the tool tries the old and the new key (waiting up to --wait for the card) and says which one holds; \
                --probe does only that. Keys are never printed; traces show the cryptogram as **.
                """)

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions
        @OptionGroup var appOption: DESFireAppOption
        @OptionGroup var keyOptions: DESFireKeyOptions

        @Option(help: ArgumentHelp("The key to change, 0-13.", valueName: "n"))
        var keyNumber: UInt8?

        @Option(help: ArgumentHelp("The new key: TYPE:HEX[:VERSION]. Prefer --new-key-file or $APDU_DESFIRE_NEW_KEY.", valueName: "type:hex"))
        var new: String?

        @Option(help: ArgumentHelp("File holding the new key (TYPE:HEX). Default: $APDU_DESFIRE_NEW_KEY.", valueName: "file"))
        var newKeyFile: String?

        @Option(help: ArgumentHelp("The key's current value (not needed when it is the authenticating key).", valueName: "type:hex"))
        var old: String?

        @Option(help: ArgumentHelp("File holding the current value. Default: $APDU_DESFIRE_OLD_KEY.", valueName: "file"))
        var oldKeyFile: String?

        @Option(help: ArgumentHelp("Write this card's AN10922-diversified key: the new key is a master key, M = UID ‖ AID ‖ this system identifier (hex, may be '').", valueName: "hex"))
        var diversify: String?

        @Option(help: ArgumentHelp("ChangeKeySettings to this byte (hex) instead of changing a key.", valueName: "hex"))
        var keySettings: String?

        @Flag(help: "Only say which of --old and --new key --key-number holds now (after an interrupted change).")
        var probe = false

        @Flag(help: "Confirm a change that cannot be undone without the new key, or settings that freeze something.")
        var yes = false

        func validate() throws {
            if let keyNumber, keyNumber > 13 { throw ValidationError("--key-number is 0-13") }
            if keySettings == nil && keyNumber == nil { throw ValidationError("give --key-number (and the new key), or --key-settings") }
            if keySettings != nil && (keyNumber != nil || probe) { throw ValidationError("--key-settings changes settings only; leave out --key-number and --probe") }
            if let keySettings { guard (try? Hex.decode(keySettings))?.count == 1 else { throw ValidationError("--key-settings is one byte of hex") } }
            if let diversify { _ = try hexArgument(diversify, option: "--diversify", allowEmpty: true) }
        }

        func loaded(_ inline: String?, file: String?, option: String, environment: String) throws -> DESFireKey? {
            if let inline { return try DESFireKeyText.parse(inline, numbered: false, source: option).key }
            guard let text = try DESFireKeyText.load(file: file, option: option + "-key-file", environment: environment) else { return nil }
            return try DESFireKeyText.parse(text, numbered: false, source: file == nil ? "$" + environment : option + "-key-file").key
        }

        func run() throws {
            try reportingDESFireFailures { try perform() }
        }

        func perform() throws {
            let aid = try appOption.aid()
            guard let auth = try keyOptions.resolved() else { throw Failure(.usage, "no key to authenticate with: give --key, --key-file or $APDU_DESFIRE_KEY") }
            if let keySettings { return try changeSettings(aid, auth, DESFireKeySettings(rawValue: try Hex.decode(keySettings)[0])) }
            guard let number = keyNumber, let newOrMaster = try loaded(new, file: newKeyFile, option: "--new", environment: "APDU_DESFIRE_NEW_KEY") else {
                throw Failure(.usage, "no new key: give --new, --new-key-file or $APDU_DESFIRE_NEW_KEY")
            }
            let sameKey = number == auth.number
            let old = try loaded(old, file: oldKeyFile, option: "--old", environment: "APDU_DESFIRE_OLD_KEY") ?? (sameKey ? auth.key : nil)
            if probe { return try probeKey(aid, number, candidates: [old, newOrMaster].compactMap { $0 }) }
            guard sameKey || old != nil else {
                throw Failure(.usage, "changing key \(number) in a session of key \(auth.number) needs its current value: --old, --old-key-file or $APDU_DESFIRE_OLD_KEY")
            }
            var newKey = newOrMaster
            var reader = ""
            let change: DESFireKeyChange
            do {
                change = try withDESFire(readerOptions, traceOptions) { name, card -> DESFireKeyChange in
                    reader = name
                    try card.selectApplication(aid)
                    try card.authenticate(keyNumber: auth.number, key: auth.key, scheme: keyOptions.auth)
                    if let diversify {
                        newKey = try newOrMaster.diversified(input: try uid(card) + aid.wire + hexArgument(diversify, option: "--diversify", allowEmpty: true))
                    }
                    let settings = aid == .picc ? nil : try? card.keySettings()
                    return try card.changeKey(number, to: newKey, from: old, confirmed: yes, settings: settings)
                }
            } catch let e as DESFireError where e.kind == .needsConfirmation || e.status != nil || e.kind == .parameterError {
                // Refused before the change, or by the card with the old key proved still in place
                // (changeKey authenticates with it after a refusal): nothing changed.
                throw e
            } catch let e as Failure {
                throw e
            } catch {
                // Cut while the change may have been on its way: which key holds now?
                let words = whichHolds(aid, number, old: old, new: newKey)
                throw Failure(desfireFailure(error).status, "\(Failure.reason(error)) during ChangeKey \(number) of \(aid); \(words)")
            }
            if output.json {
                Terminal.print(JSON.object([("reader", .string(reader)), ("app", .string(aid.description)), ("key", .int(Int(number))),
                                            ("version", .int(Int(change.version))), ("proved", .bool(change.proved)),
                                            ("answerContradicted", .optional(change.answerContradicted))]).serialized)
            } else {
                Terminal.print("\(Terminal.safe(reader)): key \(number) of \(aid) changed (version \(change.version)) and proved by an authentication with it")
                if let answer = change.answerContradicted {
                    Terminal.print("  note: the answer to ChangeKey was an error (\(Terminal.safe(answer))), yet the card authenticates with the new key: something between it and us changed the answer")
                }
            }
        }

        /// The real UID, also under random ID (GetCardUID in the authenticated session).
        func uid(_ card: DESFireCard) throws -> [UInt8] {
            if let v = card.version, !v.uidHidden { return v.uid }
            return try card.cardUID()
        }

        /// After an interrupted change: connects again (waiting up to --wait) and tries both keys.
        func whichHolds(_ aid: DESFireApplicationID, _ number: UInt8, old: DESFireKey?, new: DESFireKey) -> String {
            let candidates = [old, new].compactMap { $0 }
            let held: DESFireKey?
            do {
                held = try readerOptions.withCard(transaction: true) { _, pcsc in
                    try DESFireCard(transport: APDUTransport(channel: PCSCChannel(card: pcsc), observer: traceOptions.observer))
                        .keyHolding(number, of: aid, candidates: candidates)
                }
            } catch {
                return "the key is the old or the new one; run again with --probe when the card is back"
            }
            guard let held else { return "neither the old nor the new key authenticates" }
            return held == new ? "the card holds the NEW key (tried both)" : "the card holds the OLD key (tried both); nothing changed"
        }

        func changeSettings(_ aid: DESFireApplicationID, _ auth: (number: UInt8, key: DESFireKey), _ settings: DESFireKeySettings) throws {
            let reader = try withDESFire(readerOptions, traceOptions) { reader, card in
                try card.selectApplication(aid)
                try card.authenticate(keyNumber: auth.number, key: auth.key, scheme: keyOptions.auth)
                try card.atomically("ChangeKeySettings") { try card.changeKeySettings(settings, confirmed: yes) }
                return reader
            }
            if output.json {
                Terminal.print(JSON.object([("reader", .string(reader)), ("app", .string(aid.description)), ("keySettings", .hex([settings.rawValue]))]).serialized)
            } else {
                Terminal.print("\(Terminal.safe(reader)): key settings of \(aid) are now \(Hex.encode([settings.rawValue])): \(settings.words(cardLevel: aid == .picc).joined(separator: "; "))")
            }
        }

        func probeKey(_ aid: DESFireApplicationID, _ number: UInt8, candidates: [DESFireKey]) throws {
            let (reader, held) = try withDESFire(readerOptions, traceOptions) { reader, card in (reader, try card.keyHolding(number, of: aid, candidates: candidates)) }
            let which = held.map { $0 == candidates.last && candidates.count > 1 ? "new" : "old" }
            if output.json {
                Terminal.print(JSON.object([("reader", .string(reader)), ("app", .string(aid.description)), ("key", .int(Int(number))), ("holds", .optional(which))]).serialized)
            } else {
                Terminal.print("\(Terminal.safe(reader)): key \(number) of \(aid) is the \(which.map { "\($0.uppercased()) key" } ?? "neither the old nor the new key")")
            }
            if which == nil { throw ExitCode(ExitStatus.unexpected.rawValue) }
        }
    }
}
