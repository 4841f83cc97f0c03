// The `apdu` root command: the entry point, the exit codes, and the subcommand tree cut to the
// one command named so start-up does not grow with the families.
import ArgumentParser

@main
enum Main {
    static func main() {
        // The long version (revision, pcsclite) is looked up only when asked for.
        if CommandLine.arguments.dropFirst().elementsEqual(["--version"]) {
            for line in BuildInfo.versionLines { Terminal.print(line) }
            return
        }
        APDUCommand.main()
    }
}

struct APDUCommand: ParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "apdu",
        abstract: "Talk to smart cards and NFC tags through PC/SC.",
        discussion: """
            Exit codes: 0 ok, 1 unexpected answer, 64 usage, 65 bad data, 69 no service/reader/card, \
            74 card I/O failed, 75 timeout or sharing violation, 77 refused by policy. See docs/cli.md.
            """,
        version: version,
        subcommands: subcommands(for: Array(CommandLine.arguments.dropFirst())))

    /// The commands that are no family's: readers, APDUs, the NDEF commands every family serves,
    /// the emulator, SUN verification.
    static let generalCommands: [any ParsableCommand.Type] = [
        Readers.self, Watch.self, Send.self, Script.self, Select.self, ATRCommand.self, SW.self, Ndef.self, NdefRead.self, NdefWrite.self,
        NdefStatus.self, NdefLock.self, NdefFormat.self, Transceive.self, TagInfo.self, ReaderControlCommand.self, Emulate.self, DoctorCommand.self,
        Sun.self,
    ]

    /// Every subcommand: the general ones, each family's group (`Families`), and the names
    /// commands had before their family became a group (hidden).
    static var allSubcommands: [any ParsableCommand.Type] { generalCommands + Families.commandGroups + Families.legacyCommands }

    /// The argument parser looks up every type in the tree it is given, and each lookup scans the
    /// whole binary's conformance records: a command's start-up would grow with every family
    /// added. When the first argument names a command, the tree holds that command alone (its
    /// help and errors still read `apdu NAME …`); anything else (`--help`, `help`, a typo that
    /// wants suggestions, completion scripts) gets them all.
    static func subcommands(for arguments: [String]) -> [any ParsableCommand.Type] {
        guard let first = arguments.first, !first.hasPrefix("-") else { return allSubcommands }
        func named(_ type: any ParsableCommand.Type) -> Bool {
            type.configuration.commandName == first || type.configuration.aliases.contains(first)
        }
        if let general = generalCommands.first(where: named) { return [general] }
        let all = allSubcommands
        return all.first(where: named).map { [$0] } ?? all
    }
}
