// What every form of `apdu emulate` shares: the vpcd slot the card goes into, the faults it
// shows, and serving it until interrupted.
import APDUCommandLine
import ArgumentParser
import FoundationEssentials
import Glibc
import ISO7816
import VirtualCard

/// The vpcd slot and the faults: the options every `apdu emulate` form takes, in one place.
struct EmulatorConnection: ParsableArguments {
    @Option(help: "vpcd slot port (the reader.conf CHANNELID, +1 for the second slot).")
    var port: UInt16 = 35963

    @Option(help: "Host where pcscd's vpcd listens.")
    var host = "127.0.0.1"

    @Option(help: ArgumentHelp("Fault: pull the card instead of answering APDU N+1.", valueName: "N"))
    var removeAfter: Int?

    @Option(help: ArgumentHelp("Fault: delay every answer by this many milliseconds.", valueName: "ms"))
    var delayMs: Int?

    @Option(help: ArgumentHelp("Fault: answer every APDU with these bytes.", valueName: "hex"))
    var garbage: String?

    @Flag(help: "End when pcscd closes the connection instead of reconnecting.")
    var once = false

    func validate() throws {
        if port == 0 { throw ValidationError("--port must be 1-65535") }
        if let n = removeAfter, n < 0 { throw ValidationError("--remove-after must be 0 or more") }
        if let d = delayMs, d < 0 || d > 600_000 { throw ValidationError("--delay-ms must be 0-600000") }
        if let garbage { do { _ = try Hex.decode(garbage, allowEmpty: true) } catch { throw ValidationError("--garbage: \(error)") } }
    }

    /// Puts `card` into the slot and answers for it until interrupted (or, with `--once`, until
    /// pcscd lets go of it).
    func serve(_ card: any EmulatedCard, description: String) throws {
        let faults = Faults(
            removeAfter: removeAfter,
            delay: delayMs.map { .milliseconds($0) },
            garbage: try garbage.map { try Hex.decode($0, allowEmpty: true) })
        restoreTerminationSignals()
        let client = VPCDClient(host: host, port: port, card: card, faults: faults, reconnects: !once)
        Terminal.writeError("apdu: emulating \(description) on vpcd \(host):\(port); Ctrl-C removes it\n")
        do { try client.run() } catch {
            throw Failure(.unavailable, "\(error)")
        }
    }
}

/// One form of `apdu emulate NAME [MODEL] [options]`: a family's card (defined in the family's
/// folder and listed through `Families`), the demo card, a script or a recording.
protocol EmulateForm: ParsableCommand {
    var connection: EmulatorConnection { get }
    /// The card and its description for the start line.
    func emulatedCard() throws -> (card: any EmulatedCard, description: String)
}

extension EmulateForm {
    func run() throws {
        try reportingFailures {
            let (card, description) = try emulatedCard()
            try connection.serve(card, description: description)
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
