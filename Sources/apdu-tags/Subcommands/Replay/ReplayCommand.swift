// `apdu replay`: what to do with a session log besides serving it (`apdu emulate replay`) and
// checking a command against it (`apdu replay-check`).
import APDUCommandLine
import ArgumentParser

extension APDUCommand {
    struct Replay: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "replay",
            abstract: "Session logs: convert a pcsc-spy or pcscd log into a recording, secrets masked.",
            discussion: "Serve a log as a card with 'apdu emulate replay FILE'; check a command against it with 'apdu replay-check FILE -- COMMAND'.",
            subcommands: [ReplayConvert.self])
    }
}
