// The `apdu classic` group: MIFARE Classic keys, dumps and blocks.
import APDUCommandLine
import ArgumentParser

extension APDUCommand {
    struct Classic: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "classic",
            abstract: "MIFARE Classic Mini/1K/4K (and Plus in SL1): which keys open each sector, dumps, block reads and writes.",
            subcommands: [ClassicKeys.self, ClassicDump.self, ClassicRead.self, ClassicWrite.self])

        /// The names these commands had at the top level.
        static let legacy: [any ParsableCommand.Type] = [Legacy<ClassicKeys>.self, Legacy<ClassicDump>.self, Legacy<ClassicRead>.self, Legacy<ClassicWrite>.self]
    }
}

extension APDUCommand.ClassicKeys: LegacyNamed { static let legacyName = "classic-keys" }
extension APDUCommand.ClassicDump: LegacyNamed { static let legacyName = "classic-dump" }
extension APDUCommand.ClassicRead: LegacyNamed { static let legacyName = "classic-read" }
extension APDUCommand.ClassicWrite: LegacyNamed { static let legacyName = "classic-write" }
