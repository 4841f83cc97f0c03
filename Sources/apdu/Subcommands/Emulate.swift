import ArgumentParser
import Foundation
import ISO7816
import VirtualCard

extension APDUCommand {
    struct Emulate: ParsableCommand {
        static let configuration = CommandConfiguration(
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

        @Flag(help: "T=0 behaviour: answer data with 61xx and serve it by GET RESPONSE.")
        var getResponse = false

        @Flag(help: "Refuse GET RESPONSE whose CLA differs from the original command's.")
        var strictGetResponseCla = false

        @Flag(help: "Answer 6Cxx when Le does not match the data available.")
        var wrongLe = false

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
                if let script {
                    let text: String
                    do { text = try String(contentsOfFile: script, encoding: .utf8) } catch {
                        throw Failure(.badData, "cannot read '\(script)' as UTF-8 text")
                    }
                    do { model = try ScriptedCard(script: text) } catch { throw Failure(.badData, "\(error)") }
                    description = "scripted card from \(script)"
                } else {
                    var behaviour = HostBehaviour()
                    behaviour.usesGetResponse = getResponse
                    behaviour.requiresGetResponseCLA = strictGetResponseCla
                    behaviour.answersWrongLe = wrongLe
                    model = ApplicationHost(applications: [DemoApplication()], behaviour: behaviour)
                    description = "demo card (application \(DemoApplication.defaultAID.hexString))"
                }
                let faults = Faults(
                    removeAfter: removeAfter,
                    delay: delayMs.map { .milliseconds($0) },
                    garbage: try garbage.map { try Hex.decode($0, allowEmpty: true) })
                restoreTerminationSignals()
                let client = VPCDClient(host: host, port: port, card: model, faults: faults, reconnects: !once)
                FileHandle.standardError.write(Data("apdu: emulating \(description) on vpcd \(host):\(port); Ctrl-C removes it\n".utf8))
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
