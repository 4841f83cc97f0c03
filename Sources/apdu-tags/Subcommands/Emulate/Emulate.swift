// `apdu emulate`: a family's emulated card, a recording, a script or the demo card put into a
// vpcd slot, with faults to inject.
import APDUCommandLine
import ArgumentParser
import Dispatch
import FoundationEssentials
import Glibc
import ISO7816
import NFCTags
import VirtualCard

extension ContactlessReader.Dialect: ExpressibleByArgument {}

extension APDUCommand {
    struct Emulate: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "emulate",
            abstract: "Put an emulated card into a vpcd virtual reader slot until interrupted.",
            discussion: """
                Cards: 'demo' (an ISO 7816 card with the demo application F0617064750 1), or a \
                command→response table with --script FILE (see docs/testing-without-hardware.md).
                """)

        @Option(help: "vpcd slot port (the reader.conf CHANNELID, +1 for the second slot).")
        var port: UInt16 = 35963

        @Option(help: "Host where pcscd's vpcd listens.")
        var host = "127.0.0.1"

        @Option(help: "Card model: demo.")
        var card = "demo"

        @Option(help: ArgumentHelp("Answer from a command→response table instead of a model.", valueName: "file"))
        var script: String?

        @Option(help: ArgumentHelp("Fault: pull the card instead of answering APDU N+1.", valueName: "N"))
        var removeAfter: Int?

        @Option(help: ArgumentHelp("Fault: delay every answer by this many milliseconds.", valueName: "ms"))
        var delayMs: Int?

        @Option(help: ArgumentHelp("Fault: answer every APDU with these bytes.", valueName: "hex"))
        var garbage: String?

        @Flag(help: "End when pcscd closes the connection instead of reconnecting.")
        var once = false

        @OptionGroup var shared: EmulationOptions

        /// Every family's flags (`Families`: one line a family).
        @OptionGroup var families: Families

        @Option(help: ArgumentHelp("Answer from a recording made with --record (its ATR, its responses).", valueName: "file"))
        var replay: String?

        @Option(help: ArgumentHelp("--replay: strict (the recorded commands in the recorded order; anything else gets 6F00) or by-command (any recorded command, its responses in turn).", valueName: "order"))
        var replayOrder: ReplayCard.Order = .strict

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
            if port == 0 { throw ValidationError("--port must be 1-65535") }
            if card != "demo" && script == nil { throw ValidationError("unknown --card '\(card)'; known: demo") }
            if let n = removeAfter, n < 0 { throw ValidationError("--remove-after must be 0 or more") }
            if let d = delayMs, d < 0 || d > 600_000 { throw ValidationError("--delay-ms must be 0-600000") }
            if let garbage { do { _ = try Hex.decode(garbage, allowEmpty: true) } catch { throw ValidationError("--garbage: \(error)") } }
            if let script, !FileManager.default.isReadableFile(atPath: script) {
                throw ValidationError("--script: cannot read '\(script)'")
            }
        }

        func run() throws {
            try reportingFailures {
                let model: any EmulatedCard
                var description: String
                if let family = families.all.first(where: { $0.chosenBy != nil }) {
                    (model, description) = try family.emulatedCard(shared: shared)
                } else if let replay {
                    guard let bytes = FileManager.default.contents(atPath: replay) else {
                        throw Failure(.usage, "cannot read the recording '\(Terminal.safe(replay))'")
                    }
                    let card: ReplayCard
                    do { card = try ReplayCard(recording: [UInt8](bytes), order: replayOrder) } catch {
                        throw Failure(.badData, "\(Terminal.safe(replay)): \(error)")
                    }
                    model = card
                    description = "the recording \(replay) (\(card.count) exchanges, \(replayOrder.rawValue)\(card.reader.map { ", made on \($0)" } ?? ""))"
                } else if let script {
                    let text: String
                    do { text = try String(contentsOfFile: script, encoding: .utf8) } catch {
                        throw Failure(.badData, "cannot read '\(script)' as UTF-8 text")
                    }
                    do { model = try ScriptedCard(script: text) } catch { throw Failure(.badData, "\(error)") }
                    description = "scripted card from \(script)"
                } else {
                    model = ApplicationHost(applications: [DemoApplication()], behaviour: shared.hostBehaviour)
                    description = "demo card (application \(DemoApplication.defaultAID.hexString))"
                }
                let faults = Faults(
                    removeAfter: removeAfter,
                    delay: delayMs.map { .milliseconds($0) },
                    garbage: try garbage.map { try Hex.decode($0, allowEmpty: true) })
                restoreTerminationSignals()
                let client = VPCDClient(host: host, port: port, card: model, faults: faults, reconnects: !once)
                Terminal.writeError("apdu: emulating \(description) on vpcd \(host):\(port); Ctrl-C removes it\n")
                do { try client.run() } catch {
                    throw Failure(.unavailable, "\(error)")
                }
            }
        }
    }
}

/// A parent may have left SIGINT/SIGTERM blocked (the mask survives exec; some test runners and
/// service managers do this). The emulator must die on them, which closes its socket and so
/// removes the card.
func restoreTerminationSignals() {
    var set = sigset_t()
    sigemptyset(&set)
    for sig in [SIGINT, SIGTERM, SIGHUP] {
        sigaddset(&set, sig)
        signal(sig, SIG_DFL)
    }
    pthread_sigmask(SIG_UNBLOCK, &set, nil)
}

extension ReplayCard.Order: ExpressibleByArgument {}
