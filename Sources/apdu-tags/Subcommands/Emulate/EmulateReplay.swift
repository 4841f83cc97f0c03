// `apdu emulate replay FILE`: a card that answers as a recorded session did, from our own
// recording, a pcsc-spy log or a pcscd --debug --apdu log.
import APDUCommandLine
import ArgumentParser
import FoundationEssentials
import VirtualCard

extension ReplayCard.Order: ExpressibleByArgument {}

struct EmulateReplay: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "A card that answers as a recorded session did: an apdu --record recording, a pcsc-spy log or a pcscd --debug --apdu log.",
        discussion: """
            The format is found from the content. The log's ATR and reader name are taken from it (pcscd names the vpcd \
            slot itself: the start line says which reader the log was made on). SCardControl entries are listed, not \
            replayed. A response the log does not hold is never made up: strict order answers 6F00 to a command out of \
            order. Exit 65 for a log that cannot be replayed, naming its line. See docs/testing-without-hardware.md.
            """)

    @Argument(help: ArgumentHelp("The log or recording.", valueName: "file"))
    var file: String

    @Option(help: ArgumentHelp("strict (the recorded commands in the recorded order; anything else gets 6F00) or by-command (any recorded command, its responses in turn).", valueName: "order"))
    var order: ReplayCard.Order = .strict

    @Option(help: ArgumentHelp("Which connection of the log (SCardConnect to SCardDisconnect), counting from 1.", valueName: "n"))
    var session = 1

    @Flag(help: "Serve nothing: name what in the session looks secret (PINs, keys, tag passwords, cryptograms, PANs, track data), by the rules traces redact by; exit 1 when anything does.")
    var redactCheck = false

    @OptionGroup var connection: EmulatorConnection

    func validate() throws {
        if session < 1 { throw ValidationError("--session counts from 1") }
    }

    func run() throws {
        try reportingFailures {
            let log = try ReplayLog(path: file, session: session)
            if redactCheck { return try Self.redactCheck(log) }
            log.announce()
            try connection.serve(log.card(order: order), description: log.description)
        }
    }

    /// `--redact-check`: what in the session looks secret, one line each; a Failure (exit 1) when anything does.
    static func redactCheck(_ log: ReplayLog) throws {
        let findings = SessionRedaction.findings(log.session)
        for finding in findings { Terminal.print(Terminal.safe(finding.description)) }
        Terminal.print(findings.isEmpty ? "nothing in session \(log.number) looks secret"
            : "\(findings.count) secret\(findings.count == 1 ? "" : "s") found; 'apdu replay convert --redact' masks them")
        if !findings.isEmpty { throw Failure(.unexpected, "session \(log.number) of \(Terminal.safe(log.path)) holds secrets") }
    }
}
