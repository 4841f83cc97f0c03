// The `apdu-tags` executable: every `apdu` command, the tag families' and the core ones, cut to
// the one named so start-up does not grow with the families. `apdu` hands it every command that
// needs a family, the root help and the completion scripts.
import APDUCommandLine
import ArgumentParser

@main
enum Main {
    static func main() {
        // The long version (revision, pcsclite) is looked up only when asked for.
        if CommandLine.arguments.dropFirst().elementsEqual(["--version"]) {
            for line in BuildInfo.versionLines { Terminal.print(line) }
            return
        }
        ScriptTagFrames.install()
        AllCommands.main(LongArgumentLists.setAside(Array(CommandLine.arguments.dropFirst())))
    }
}

/// The root with every command; its help, errors and completion scripts say `apdu`.
struct AllCommands: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apdu", abstract: APDUCommand.abstract, discussion: APDUCommand.discussion, version: APDUCommand.version,
        subcommands: tree(for: Array(CommandLine.arguments.dropFirst())))

    /// The commands that are no family's, in the order the help lists them: the core ones
    /// (`APDUCommand.coreCommands`, which `apdu` runs itself; `script` hands over only scripts
    /// with tag lines) and those that need the families: watch (which names a tag's kind), the
    /// NDEF commands every family serves, the emulator, SUN verification.
    static let generalCommands: [any ParsableCommand.Type] = [
        APDUCommand.Readers.self, APDUCommand.Watch.self, APDUCommand.Send.self, APDUCommand.Script.self, APDUCommand.Select.self,
        APDUCommand.ATRCommand.self, APDUCommand.SW.self, APDUCommand.Ndef.self, APDUCommand.NdefRead.self, APDUCommand.NdefWrite.self,
        APDUCommand.NdefStatus.self, APDUCommand.NdefLock.self, APDUCommand.NdefFormat.self, APDUCommand.Transceive.self, APDUCommand.TagInfo.self,
        APDUCommand.ReaderControlCommand.self, APDUCommand.Emulate.self, APDUCommand.Replay.self, APDUCommand.ReplayCheck.self, APDUCommand.DoctorCommand.self, APDUCommand.Sun.self,
    ]

    /// Every subcommand: the general ones, each family's group (`Families`), and the names
    /// commands had before their family became a group (hidden).
    static var all: [any ParsableCommand.Type] { generalCommands + Families.commandGroups + Families.legacyCommands }

    /// The tree for these arguments: a general command is found without listing the families
    /// (which reflects over every family's option group, casts the runtime pays for).
    static func tree(for arguments: [String]) -> [any ParsableCommand.Type] {
        if APDUCommand.Send.asksForSecureChannel(arguments) { return [APDUCommand.SendSecureChannel.self] }
        if let first = arguments.first, let general = APDUCommand.command(named: first, in: generalCommands) { return [general] }
        return APDUCommand.tree(for: arguments, from: all)
    }
}
