// The `apdu` command's namespace, what both executables say about it, and the commands that need
// no tag family (the ones `apdu` runs itself; every other goes to `apdu-tags`).
import ArgumentParser

/// The namespace of every `apdu` subcommand, and what the two roots (`apdu`, `apdu-tags`) share.
package enum APDUCommand {
    package static let version = "0.1.0"

    package static let abstract = "Talk to smart cards and NFC tags through PC/SC."

    package static let discussion = """
        Exit codes: 0 ok, 1 unexpected answer, 64 usage, 65 bad data, 69 no service/reader/card, \
        74 card I/O failed, 75 timeout or sharing violation, 77 refused by policy. See docs/cli.md.
        """

    /// The commands that touch no tag family: status words, APDUs and APDU scripts, readers,
    /// NDEF offline (a script's tag lines go through `ScriptTagLines`, set only in `apdu-tags`). The
    /// `apdu` executable holds these and nothing of NFCTags, TagReader, MRTD or the emulators,
    /// so the Swift runtime's conformance scans at its start cover only them.
    package static let coreCommands: [any ParsableCommand.Type] = [
        Readers.self, Send.self, Script.self, Select.self, ATRCommand.self, SW.self, Ndef.self, ReaderControlCommand.self, DoctorCommand.self,
    ]

    /// The command `name` (its name or an alias) among `commands`.
    package static func command(named name: String, in commands: [any ParsableCommand.Type]) -> (any ParsableCommand.Type)? {
        commands.first { $0.configuration.commandName == name || $0.configuration.aliases.contains(name) }
    }

    /// The argument parser looks up every type in the tree it is given, and each lookup scans the
    /// whole binary's conformance records. When the first argument names a command, the tree
    /// holds that command alone (its help and errors still read `apdu NAME …`); anything else
    /// (`--help`, `help`, a typo that wants suggestions, completion scripts) gets them all.
    package static func tree(for arguments: [String], from all: [any ParsableCommand.Type]) -> [any ParsableCommand.Type] {
        guard let first = arguments.first, !first.hasPrefix("-") else { return all }
        return command(named: first, in: all).map { [$0] } ?? all
    }
}
