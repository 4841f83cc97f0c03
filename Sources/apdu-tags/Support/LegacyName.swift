// The hyphenated names commands had before every family became a group (`classic-dump`,
// `ul-read`): kept working, hidden from help, so no script breaks.
import APDUCommandLine
import ArgumentParser

/// A command that was once at the top level under another name.
protocol LegacyNamed: ParsableCommand {
    /// The old top-level name ("classic-dump").
    static var legacyName: String { get }
}

/// The command under its old name: the same options, validation and run, not shown in help.
struct Legacy<Command: LegacyNamed>: ParsableCommand {
    static var configuration: CommandConfiguration {
        var configuration = Command.configuration
        configuration.commandName = Command.legacyName
        configuration.shouldDisplay = false
        return configuration
    }

    @OptionGroup var command: Command

    mutating func run() throws { try command.run() }
}
