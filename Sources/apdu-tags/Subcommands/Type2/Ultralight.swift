// The `apdu ultralight` group: MIFARE Ultralight and NTAG21x page dumps and passwords.
import APDUCommandLine
import ArgumentParser

extension APDUCommand {
    struct Ultralight: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ultralight",
            abstract: "MIFARE Ultralight and NTAG21x (NFC Forum Type 2): page dumps and passwords.",
            subcommands: [ULRead.self, ULProtect.self, ULUnprotect.self])

        /// The names these commands had at the top level.
        static let legacy: [any ParsableCommand.Type] = [Legacy<ULRead>.self, Legacy<ULProtect>.self, Legacy<ULUnprotect>.self]
    }
}

extension APDUCommand.ULRead: LegacyNamed { static let legacyName = "ul-read" }
extension APDUCommand.ULProtect: LegacyNamed { static let legacyName = "ul-protect" }
extension APDUCommand.ULUnprotect: LegacyNamed { static let legacyName = "ul-unprotect" }
