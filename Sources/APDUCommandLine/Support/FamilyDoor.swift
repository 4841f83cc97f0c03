// The door from `apdu` to `apdu-tags`: the commands that need a tag family run in the executable
// beside it, in place of this process.
import Diagnostics
import Glibc
import PCSC

/// Runs `apdu-tags`, the executable with every command, in the directory `apdu` runs from.
package enum FamilyDoor {
    package static let executableName = "apdu-tags"

    /// Replaces this process with `apdu-tags` and the same arguments (exit status, output and
    /// signals are then the other program's); returns only to fail, with exit 69.
    /// - Parameter standardInput: bytes this process has already read from standard input
    ///   (`apdu script -`), handed on as the other program's standard input.
    package static func run(_ arguments: [String], standardInput: [UInt8]? = nil) -> Never {
        let path = siblingPath()
        if let standardInput, !replaceStandardInput(with: standardInput) {
            fail("cannot hand standard input on to \(Terminal.safe(path)) (\(String(cString: strerror(errno))))")
        }
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        execv(path, &argv)
        fail("cannot run \(Terminal.safe(path)) (\(String(cString: strerror(errno)))): the tag-family commands live in \(executableName), installed beside apdu")
    }

    private static func fail(_ message: String) -> Never {
        Terminal.error(message)
        Terminal.flush()
        exit(ExitStatus.unavailable.rawValue)
    }

    /// `apdu-tags` beside this executable (symbolic links resolved by the kernel); where that
    /// cannot be read, the packaged one, never a name looked up in the working directory.
    package static func siblingPath() -> String {
        guard let own = SystemFiles.live.linkTarget("/proc/self/exe"), own.hasPrefix("/"), let slash = own.lastIndex(of: "/") else {
            return "/usr/bin/" + executableName
        }
        return String(own[...slash]) + executableName
    }

    /// Makes standard input an anonymous file (`tmpfile`: created and unlinked at once, so
    /// nothing is left behind) holding `bytes`, read from its start.
    private static func replaceStandardInput(with bytes: [UInt8]) -> Bool {
        guard let file = tmpfile() else { return false }
        defer { fclose(file) }
        let fd = fileno(file)
        return FileIO.write(bytes, to: fd) && lseek(fd, 0, SEEK_SET) == 0 && dup2(fd, STDIN_FILENO) == STDIN_FILENO
    }
}
