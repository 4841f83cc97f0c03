// `apdu desfire ls`: a DESFire's applications and files, with settings in words.
import APDUCommandLine
import ArgumentParser
import ISO7816
import NFCTags

extension APDUCommand {
    struct DESFireList: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ls",
            abstract: "List a DESFire's applications (well-known transit AIDs named) and, where readable, their files with settings in words.",
            discussion: """
                Without a key, lists what the card lets anyone see (a transit card usually shows its applications and files, \
                as Metrodroid reads them); a part it refuses is named with the card's status. With --app AID and --key, that \
                application is listed (and with --contents read) after authenticating; --app 000000 --key authenticates with \
                the card master key. --contents also reads every readable file. Known AIDs: docs/desfire.md.
                """)

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions
        @OptionGroup var appOption: DESFireAppOption
        @OptionGroup var keyOptions: DESFireKeyOptions

        @Flag(help: "Read every file that is readable (free, or with the key given) too.")
        var contents = false

        func run() throws {
            try reportingDESFireFailures {
                let key = try keyOptions.resolved()
                let aid = try appOption.aid()
                let (reader, version, survey) = try withDESFire(readerOptions, traceOptions) { reader, card in
                    var keys: [DESFireApplicationID: (number: UInt8, key: DESFireKey)] = [:]
                    if let key, aid != .picc { keys[aid] = key }
                    return (reader, card.version, try card.survey(readContents: contents, cardKey: aid == .picc ? key?.key : nil, keys: keys))
                }
                if output.json {
                    Terminal.print(JSON.object([
                        ("reader", .string(reader)), ("chip", .optional(version?.generation.description)),
                        ("card", survey.card.map(Self.keysJSON) ?? .null), ("problem", .optional(survey.problem)),
                        ("applications", .array(survey.applications.map(Self.json))),
                    ]).serialized)
                    return
                }
                let count = survey.problem == nil ? "\(survey.applications.count) application\(survey.applications.count == 1 ? "" : "s")" : "applications not listed"
                Terminal.print("\(Terminal.safe(reader)): \(version.map { "\($0.generation), \($0.storageSize.bytes) bytes" } ?? "MIFARE DESFire"); \(count)")
                if let card = survey.card { Terminal.print("  card: \(card.family) master key; \(card.settings.words(cardLevel: true).joined(separator: "; "))") }
                if let problem = survey.problem { Terminal.print("  \(problem)") }
                for app in survey.applications {
                    let name = app.known.map { " (\($0.name)\($0.place.isEmpty ? "" : ", \($0.place)"))" } ?? ""
                    Terminal.print("  application \(app.aid)\(name)")
                    if let keys = app.keys {
                        Terminal.print("    keys: \(keys.keyCount) \(keys.family); \(keys.settings.words(cardLevel: false).joined(separator: "; "))")
                    }
                    if let problem = app.problem { Terminal.print("    \(problem)") }
                    for file in app.files ?? [] {
                        Terminal.print("    file \(file.number): \(file.settings?.words ?? "settings not shown")")
                        if let c = file.contents { for line in c.lines { Terminal.print("      \(line)") } }
                        if let problem = file.problem { Terminal.print("      \(problem)") }
                    }
                }
            }
        }

        static func keysJSON(_ k: DESFireKeyInfo) -> JSON {
            .object([("raw", .hex([k.settings.rawValue])), ("keyCount", .int(k.keyCount)), ("keyType", .string(k.family.description)),
                     ("masterKeyChangeable", .bool(k.settings.masterKeyChangeable)), ("freeDirectoryListing", .bool(k.settings.freeDirectoryListing)),
                     ("freeCreateDelete", .bool(k.settings.freeCreateDelete)), ("configurationChangeable", .bool(k.settings.configurationChangeable)),
                     ("changeKey", .string(k.settings.changeKeyAccess.description))])
        }

        static func json(_ app: DESFireSurvey.Application) -> JSON {
            .object([
                ("aid", .string(app.aid.description)), ("name", .optional(app.known?.name)), ("place", .optional(app.known.map(\.place))),
                ("keys", app.keys.map(keysJSON) ?? .null), ("problem", .optional(app.problem)),
                ("files", app.files.map { files in .array(files.map { f in
                    .object([("file", .int(Int(f.number))), ("settings", f.settings?.json ?? .null), ("contents", f.contents?.json ?? .null),
                             ("problem", .optional(f.problem))])
                }) } ?? .null),
            ])
        }
    }
}
