// `apdu replay-check FILE -- COMMAND…`: a logged session served as the card, a command run
// against it, and whether the command did what the log recorded: a bug report from real
// hardware as a regression test.
import APDUCommandLine
import ArgumentParser
import FoundationEssentials
import Glibc
import ISO7816
import PCSC
import VirtualCard

extension APDUCommand {
    struct ReplayCheck: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "replay-check",
            abstract: "Serve a logged session as the card in a vpcd slot, run a command against it, and check that it sends what the log recorded.",
            discussion: """
                apdu replay-check spy.log -- apdu select A000000527210101. FILE is an apdu --record recording, a pcsc-spy log \
                or a pcscd --debug --apdu log; the card answers in strict order (6F00 to anything else, never a response \
                the log does not hold). COMMAND runs with APDU_READER set to the slot's reader unless it is set already. \
                With APDU_READER set, the card is looked for in that reader only. Exit 0 when COMMAND sent every recorded command in order and nothing else, \
                reset the card exactly where the log does, and did not crash; 1 when it diverged (the first diverging command \
                is named with its hex and the nearest recorded one), stopped short, reset the card where the log does not (or \
                not where it does), or was killed by a signal; 65 a log that cannot be replayed; 69 no vpcd slot answered.
                """)

        @Option(help: "vpcd slot port (the reader.conf CHANNELID).")
        var port: UInt16 = 35963

        @Option(help: "Host where pcscd's vpcd listens.")
        var host = "127.0.0.1"

        @Option(help: ArgumentHelp("Which connection of the log, counting from 1.", valueName: "n"))
        var session = 1

        @Option(help: ArgumentHelp("Seconds to wait for the card to show in pcscd.", valueName: "seconds"))
        var wait = 10

        @Argument(help: ArgumentHelp("The log or recording.", valueName: "file"))
        var file: String

        @Argument(parsing: .postTerminator, help: ArgumentHelp("The command to run against it, after --.", valueName: "command"))
        var command: [String] = []

        func validate() throws {
            if command.isEmpty { throw ValidationError("give the command to check after --, e.g. apdu replay-check FILE -- apdu send 00A4040000") }
            if session < 1 { throw ValidationError("--session counts from 1") }
            if port == 0 { throw ValidationError("--port must be 1-65535") }
            if !(1...600).contains(wait) { throw ValidationError("--wait must be 1-600 seconds") }
        }

        func run() throws {
            try reportingFailures {
                let log = try ReplayLog(path: file, session: session)
                log.announce()
                let card = log.card(order: .strict)
                let client = VPCDClient(host: host, port: port, card: card, reconnects: true)
                client.start()
                defer { client.stop() }
                // With APDU_READER set, the card is looked for there only: another replayed log
                // with the same ATR may be in another slot at the same time.
                let reader = try Self.waitForCard(atr: card.atr, seconds: wait, in: ProcessInfo.processInfo.environment["APDU_READER"])
                Terminal.writeError("apdu: serving \(log.description) in '\(Terminal.safe(reader))'\n")
                let status = try Self.spawn(command, reader: reader)
                let recorded = log.session.exchanges.count
                var lines: [String] = []
                // A reset the log does not hold (or one it holds that never came) changes what
                // the card would have answered after it: no match (issue 48).
                let unlogged = card.resets.filter { !log.session.resets.contains($0) }
                let missing = log.session.resets.filter { !card.resets.contains($0) && $0 < recorded }
                // A crash is never a match, whatever it sent first.
                let crashed = status >= 128
                let matched = card.firstDivergence == nil && card.answered == recorded && unlogged.isEmpty && missing.isEmpty && !crashed
                if let divergence = card.firstDivergence {
                    lines.append("diverged at command \(divergence.number): sent \(Hex.encode(divergence.sent))")
                    if let nearest = divergence.nearest {
                        let hex = nearest.command.map { $0.map { Hex.encode([$0]) } ?? "**" }.joined()
                        lines.append("  the nearest recorded command is command \(nearest.index + 1) (line \(log.session.exchanges[nearest.index].line)): \(hex)")
                    } else {
                        lines.append("  the log recorded \(recorded) commands; there was none left")
                    }
                } else if card.answered < recorded {
                    lines.append("stopped short: sent \(card.answered) of the \(recorded) recorded commands; the next was command \(card.answered + 1) (line \(log.session.exchanges[card.answered].line))")
                } else if matched {
                    lines.append("matches the log: \(recorded) of \(recorded) recorded commands, in order")
                } else {
                    lines.append("sent the \(recorded) recorded commands in order, but:")
                }
                for after in unlogged {
                    lines.append("  the command reset the card after command \(after); the log holds no reset there")
                }
                for after in missing {
                    lines.append("  the log resets the card after exchange \(after) (line \(log.session.exchanges[after - 1].line)); the command did not")
                }
                if crashed {
                    lines.append("the command crashed (signal \(status - 128), exit \(status)): a crash is never a match")
                } else {
                    lines.append("the command \(status == 0 ? "succeeded" : "failed") (exit \(status))")
                }
                for line in lines { Terminal.print(line) }
                if !matched { throw Failure(.unexpected, "\(Terminal.safe(command.joined(separator: " "))) does not match \(Terminal.safe(file))") }
            }
        }

        /// The reader the replayed card shows up in: the one with a card whose ATR is the log's
        /// (among the readers whose name contains `readerName`, when given).
        static func waitForCard(atr: [UInt8], seconds: Int, in readerName: String? = nil) throws -> String {
            let deadline = ContinuousClock.now + .seconds(seconds)
            let context: Context
            do { context = try Context() } catch { throw Failure(.unavailable, "pcscd is not running: \(error)") }
            defer { try? context.release() }
            while ContinuousClock.now < deadline {
                if let names = (try? context.readers())?.filter({ readerName.map($0.contains) ?? true }), !names.isEmpty {
                    var states = names.map { ReaderState(reader: $0) }
                    if (try? context.statusChange(&states, timeout: .zero)) != nil,
                       let match = states.first(where: { $0.eventState.contains(.present) && $0.atr == atr }) {
                        return match.reader
                    }
                }
                usleep(50_000)
            }
            throw Failure(.unavailable, "the replayed card did not show in any reader within \(seconds) s: is vpcd on that port?")
        }

        /// Runs `arguments` (looked up on PATH) with APDU_READER set unless it is; its exit status.
        static func spawn(_ arguments: [String], reader: String) throws -> Int32 {
            var environment = ProcessInfo.processInfo.environment
            if environment["APDU_READER"] == nil { environment["APDU_READER"] = reader }
            var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
            var envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
            defer { (argv + envp).forEach { free($0) } }
            var pid = pid_t()
            let spawned = posix_spawnp(&pid, arguments[0], nil, nil, &argv, &envp)
            guard spawned == 0 else {
                throw Failure(.usage, "cannot run '\(Terminal.safe(arguments[0]))': \(String(cString: strerror(spawned)))")
            }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            // Exited: its code; killed by a signal: 128 + the signal, as a shell says.
            return status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        }
    }
}
