// The `apdu ndef` group: NDEF messages encoded and decoded offline.
import ArgumentParser

extension APDUCommand {
    package struct Ndef: ParsableCommand {
        package init() {}
        package static let configuration = CommandConfiguration(
            commandName: "ndef",
            abstract: "Encode and decode NDEF messages offline.",
            subcommands: [NdefDecode.self, NdefEncode.self])
    }
}
