// `apdu`: runs the commands that need no tag family itself, and hands every other command (and
// the root help) to `apdu-tags` beside it, so no family's types weigh on `apdu sw` or `apdu send`.
import APDUCommandLine
import ArgumentParser

@main
enum Main {
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        // The long version (revision, pcsclite) is looked up only when asked for.
        if arguments == ["--version"] {
            for line in BuildInfo.versionLines { Terminal.print(line) }
            return
        }
        // `send --scp` takes the GlobalPlatform key options, which only `apdu-tags` knows.
        if let first = arguments.first, APDUCommand.command(named: first, in: APDUCommand.coreCommands) != nil,
           !APDUCommand.Send.asksForSecureChannel(arguments) {
            CoreCommands.main(LongArgumentLists.setAside(arguments))
        } else {
            FamilyDoor.run(CommandLine.arguments)
        }
    }
}

/// The root when the first argument names a core command: that command alone.
struct CoreCommands: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apdu", abstract: APDUCommand.abstract, discussion: APDUCommand.discussion, version: APDUCommand.version,
        subcommands: APDUCommand.tree(for: Array(CommandLine.arguments.dropFirst()), from: APDUCommand.coreCommands))
}
