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
        subcommands: [Readers.self, Watch.self, Send.self, Script.self, Select.self, ATRCommand.self, SW.self, Ndef.self, NdefRead.self, NdefWrite.self, NdefStatus.self, NdefLock.self, ULRead.self, Transceive.self, ISO15693Command.self, FeliCaCommand.self, TagInfo.self, ClassicDump.self, ClassicKeys.self, ClassicRead.self, ClassicWrite.self, NdefFormat.self, ULProtect.self, ULUnprotect.self, ReaderControlCommand.self, Emulate.self, DoctorCommand.self, Sun.self, NTAG424.self, DESFire.self]
    )
}
