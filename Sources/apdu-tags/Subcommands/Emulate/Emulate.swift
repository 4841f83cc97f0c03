// `apdu emulate`: a family's emulated card, a recording, a script or the demo card put into a
// vpcd slot, with faults to inject. One form per card (`apdu emulate type2 ntag215`), the
// families' forms listed from `Families`; the flags of before (`--type2 ntag215`) kept, hidden.
import APDUCommandLine
import ArgumentParser
import FoundationEssentials
import ISO7816
import VirtualCard

extension ContactlessReader.Dialect: ExpressibleByArgument {}

extension APDUCommand {
    /// `apdu emulate`: the forms, and the old flags as a hidden default form (`EmulateFlags`),
    /// so that no option of a form ever shares a command with an old flag of the same name.
    struct Emulate: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "emulate",
            abstract: "Put an emulated card into a vpcd virtual reader slot until interrupted.",
            discussion: """
                apdu emulate FAMILY [MODEL] [options]: apdu emulate type2 ntag215 --reader-model acr122u, apdu emulate \
                desfire transit --generation ev2, apdu emulate mrtd --data DIR, apdu emulate replay FILE. Alone, \
                'apdu emulate' serves the demo card. Every form takes --port, --host, --once and the faults \
                (--remove-after, --delay-ms, --garbage); 'apdu emulate FORM --help' lists its own options. The flags of \
                earlier versions (--type2 CHIP, --desfire PRESET, --mrtd, --replay FILE …) still work.
                """,
            subcommands: [EmulateFlags.self, EmulateDemo.self, EmulateScript.self, EmulateReplay.self] + Families.types.map { $0.emulateForm as any ParsableCommand.Type },
            defaultSubcommand: EmulateFlags.self)
    }

    /// `apdu emulate` with the flags of before the forms (`--type2 CHIP`, `--replay FILE` …), or
    /// none (the demo card): each still starts the same card. Not listed in the help.
    struct EmulateFlags: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "flags",
            abstract: "The flags of earlier versions: apdu emulate --type2 CHIP, --desfire PRESET, --mrtd, --replay FILE …",
            shouldDisplay: false)

        @OptionGroup var connection: EmulatorConnection

        // The flags of before the forms, hidden: each still starts the same card.

        @Option(help: ArgumentHelp("Card model: demo.", visibility: .hidden))
        var card = "demo"

        @Option(help: ArgumentHelp("Answer from a command→response table instead of a model.", valueName: "file", visibility: .hidden))
        var script: String?

        @OptionGroup(visibility: .hidden) var shared: EmulationOptions

        /// Every family's flags (`Families`: one line a family).
        @OptionGroup(visibility: .hidden) var families: Families

        @Option(help: ArgumentHelp("Answer from a recording made with --record (its ATR, its responses).", valueName: "file", visibility: .hidden))
        var replay: String?

        @Option(help: ArgumentHelp("--replay: strict or by-command.", valueName: "order", visibility: .hidden))
        var replayOrder: ReplayCard.Order = .strict

        @Option(help: ArgumentHelp("--replay: which connection of the log, counting from 1.", valueName: "n", visibility: .hidden))
        var session = 1

        @Flag(help: ArgumentHelp("--replay: name what looks secret and serve nothing.", visibility: .hidden))
        var redactCheck = false

        func validate() throws {
            let chosen = families.all.compactMap { $0.chosenBy } + (replay != nil ? ["--replay"] : []) + (script != nil ? ["--script"] : [])
            if chosen.count > 1 {
                let flags = Families.types.flatMap { $0.choosingFlags } + ["--replay", "--script"]
                throw ValidationError("\(flags.dropLast().joined(separator: ", ")) and \(flags.last!) exclude each other")
            }
            for family in families.all { try family.validate(shared: shared) }
            if shared.readerModel != nil && !families.all.contains(where: { $0.chosenBy != nil && $0.sitsBehindReaderModel }) {
                let flags = Families.types.filter { $0.takesReaderModel }.flatMap { $0.choosingFlags }
                throw ValidationError("--reader-model is for \(flags.joined(separator: ", "))")
            }
            if card != "demo" && script == nil { throw ValidationError("unknown --card '\(card)'; known: demo") }
            if replay == nil && (session != 1 || redactCheck) { throw ValidationError("--session and --redact-check are for --replay") }
            if session < 1 { throw ValidationError("--session counts from 1") }
            if let script, !FileManager.default.isReadableFile(atPath: script) {
                throw ValidationError("--script: cannot read '\(script)'")
            }
        }

        func run() throws {
            try reportingFailures {
                let model: any EmulatedCard
                let description: String
                if let family = families.all.first(where: { $0.chosenBy != nil }) {
                    (model, description) = try family.emulatedCard(shared: shared)
                } else if let replay {
                    let log = try ReplayLog(path: replay, session: session)
                    if redactCheck { return try EmulateReplay.redactCheck(log) }
                    log.announce()
                    (model, description) = (log.card(order: replayOrder), log.description)
                } else if let script {
                    (model, description) = try EmulateScript.card(script)
                } else {
                    model = ApplicationHost(applications: [DemoApplication()], behaviour: shared.hostBehaviour)
                    description = "demo card (application \(DemoApplication.defaultAID.hexString))"
                }
                try connection.serve(model, description: description)
            }
        }
    }
}
