// `apdu`: runs the commands that need no tag family itself, and hands every other command (and
// the root help) to `apdu-tags` beside it, so no family's types weigh on `apdu sw` or `apdu send`.
import APDUCommandLine
import ArgumentParser
import Diagnostics
import Glibc

@main
enum Main {
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        // The long version (revision, pcsclite) is looked up only when asked for.
        if arguments == ["--version"] {
            for line in BuildInfo.versionLines { Terminal.print(line) }
            return
        }
        if let first = arguments.first, APDUCommand.command(named: first, in: APDUCommand.coreCommands) != nil {
            CoreCommands.main()
        } else {
            FamilyCommands.run(CommandLine.arguments)
        }
    }
}

/// The root when the first argument names a core command: that command alone.
struct CoreCommands: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apdu", abstract: APDUCommand.abstract, discussion: APDUCommand.discussion, version: APDUCommand.version,
        subcommands: APDUCommand.tree(for: Array(CommandLine.arguments.dropFirst()), from: APDUCommand.coreCommands))
}

/// `apdu-tags`, the executable with every command, in the directory `apdu` runs from.
enum FamilyCommands {
    static let executableName = "apdu-tags"

    /// Replaces this process with `apdu-tags` and the same arguments; returns only to fail.
    static func run(_ arguments: [String]) -> Never {
        let path = siblingPath()
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        execv(path, &argv)
        let reason = String(cString: strerror(errno))
        Terminal.error("cannot run \(Terminal.safe(path)) (\(reason)): the tag-family commands live in \(executableName), installed beside apdu")
        Terminal.flush()
        exit(ExitStatus.unavailable.rawValue)
    }

    /// `apdu-tags` beside this executable (symbolic links resolved by the kernel); where that
    /// cannot be read, the packaged one, never a name looked up in the working directory.
    static func siblingPath() -> String {
        guard let own = SystemFiles.live.linkTarget("/proc/self/exe"), own.hasPrefix("/"), let slash = own.lastIndex(of: "/") else {
            return "/usr/bin/" + executableName
        }
        return String(own[...slash]) + executableName
    }
}
