// `apdu replay convert LOG`: any session log as an apdu --record recording (JSON Lines), with
// the secrets masked on request, for a fixture to commit.
import APDUCommandLine
import ArgumentParser
import FoundationEssentials
import ISO7816
import VirtualCard

extension APDUCommand {
    struct ReplayConvert: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "convert",
            abstract: "Write a session of a pcsc-spy, pcscd --debug --apdu or apdu --record log as an apdu --record recording.",
            discussion: """
                --redact masks what looks secret, by the one table traces and --record redact by: a PIN (VERIFY, CHANGE \
                REFERENCE DATA, DISABLE/ENABLE VERIFICATION REQUIREMENT, RESET RETRY COUNTER), keys (LOAD KEYS, a MIFARE key or \
                tag password inside a reader frame, MIFARE Plus WritePerso, OpenPGP key import, PIV's management key), \
                authentication cryptograms and their answers (BAC's, PACE's nonce, DESFire's, MIFARE Plus's, native or \
                wrapped), and a response's PAN, track data and cardholder name (5F20, 9F0B), even in a template whose length is \
                wrong. A masked command byte (**) matches any byte when replayed; a masked response byte replays as 00. The list \
                goes to standard error. Without --redact the session is written as the log has it. -o writes a new file with \
                mode 0600, narrows an existing one to 0600, and refuses a symlink (exit 77).
                """)

        @Argument(help: ArgumentHelp("The log.", valueName: "log"))
        var log: String

        @Flag(help: "Mask what looks secret (the list goes to standard error).")
        var redact = false

        @Option(help: ArgumentHelp("Which connection of the log, counting from 1.", valueName: "n"))
        var session = 1

        @Option(name: [.short, .long], help: ArgumentHelp("Write here (mode 0600, never through a symlink) instead of standard output.", valueName: "file"))
        var output: String?

        func validate() throws {
            if session < 1 { throw ValidationError("--session counts from 1") }
        }

        func run() throws {
            try reportingFailures {
                let loaded = try ReplayLog(path: log, session: session)
                loaded.announce()
                var recorded = loaded.session
                if redact {
                    let (masked, findings) = SessionRedaction.redacted(recorded)
                    recorded = masked
                    for finding in findings { Terminal.writeError("apdu: masked \(Terminal.safe(finding.description))\n") }
                } else if case let findings = SessionRedaction.findings(recorded), !findings.isEmpty {
                    Terminal.writeError("apdu: \(findings.count) thing\(findings.count == 1 ? "" : "s") in this session look\(findings.count == 1 ? "s" : "") secret; --redact masks \(findings.count == 1 ? "it" : "them")\n")
                }
                let text = Self.recording(recorded, source: loaded)
                if let output {
                    try writePrivate(Array(text.utf8), to: output, option: "--output")
                } else {
                    Terminal.print(String(text.dropLast()))
                }
            }
        }

        /// The JSON Lines `--record` writes: session, connect (reader, ATR), each exchange, end.
        static func recording(_ session: RecordedSession, source: ReplayLog) -> String {
            func hex(_ bytes: [UInt8?]) -> String { bytes.map { $0.map { Hex.encode([$0]) } ?? "**" }.joined() }
            var lines: [JSON] = [.object([("type", .string("session")), ("tool", .string("apdu \(APDUCommand.version)")),
                                          ("command", .string("replay convert")), ("source", .string(source.log.format.rawValue))])]
            var connect: [(String, JSON)] = [("type", .string("connect"))]
            if let reader = session.reader { connect.append(("reader", .string(reader))) }
            connect.append(("atr", .string(Hex.encode(session.atr ?? ReplayCard.placeholderATR))))
            lines.append(.object(connect))
            for exchange in session.exchanges {
                lines.append(.object([("type", .string("exchange")), ("command", .string(hex(exchange.command))),
                                      ("response", .string(hex(exchange.response))), ("line", .int(exchange.line))]))
            }
            lines.append(.object([("type", .string("end"))]))
            return lines.map { $0.serialized + "\n" }.joined()
        }
    }
}
