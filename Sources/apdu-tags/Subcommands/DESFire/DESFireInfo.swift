// `apdu desfire info`: describe a DESFire card.
import APDUCommandLine
import ArgumentParser
import ISO7816
import NFCTags

extension APDUCommand {
    struct DESFireInfo: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "info",
            abstract: "Describe a DESFire: EV1/EV2/EV3/Light, storage, vendor, production batch and week, UID, free memory, the card's key settings.",
            discussion: """
                With random ID on, GetVersion withholds the UID: give the card master key (--key 0:TYPE:HEX) and the real UID \
                comes from GetCardUID. Costs GetVersion (3 frames), SelectApplication, GetKeySettings and FreeMemory.
                """)

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions
        @OptionGroup var keyOptions: DESFireKeyOptions

        func run() throws {
            try reportingDESFireFailures {
                let key = try keyOptions.resolved()
                let (reader, version, settings, settingsProblem, free, cardUID) = try withDESFire(readerOptions, traceOptions) { reader, card in
                    guard let version = card.version else { throw Failure(.ioError, "GetVersion brought nothing") }
                    try card.selectApplication(.picc)
                    var cardUID: [UInt8]?
                    if let key {
                        try card.authenticate(keyNumber: key.number, key: key.key, scheme: keyOptions.auth)
                        if version.generation != .d40 { cardUID = try card.cardUID() }
                    }
                    var settings: DESFireKeyInfo?, problem: String?
                    do { settings = try card.keySettings() } catch let e as DESFireError where e.status != nil { problem = e.message }
                    let free = version.generation == .d40 ? nil : try? card.freeMemory()
                    return (reader, version, settings, problem, free, cardUID)
                }
                let uid = cardUID ?? (version.uidHidden ? nil : version.uid)
                if output.json {
                    Terminal.print(JSON.object([
                        ("reader", .string(reader)), ("chip", .string(version.generation.description)), ("generation", .string(version.generation.rawValue)),
                        ("hardwareVersion", .string(version.hardwareVersion)), ("softwareVersion", .string(version.softwareVersion)),
                        ("vendor", .hex([version.hardwareVendor])), ("hardwareType", .hex([version.hardwareType])),
                        ("storageSize", .int(version.storageSize.bytes)), ("storageOrMore", .bool(version.storageSize.orMore)),
                        ("uid", uid.map { .hex($0) } ?? .null), ("randomID", .bool(version.uidHidden)),
                        ("batch", .hex(version.batch)), ("productionWeek", version.productionWeek.map(JSON.int) ?? .null),
                        ("productionYear", version.productionYear.map(JSON.int) ?? .null),
                        ("freeMemory", free.map(JSON.int) ?? .null),
                        ("keySettings", settings.map { s in .object([("raw", .hex([s.settings.rawValue])), ("keyType", .string(s.family.description)),
                                                                       ("words", .array(s.settings.words(cardLevel: true).map(JSON.string)))]) } ?? .null),
                        ("version", .hex(version.bytes)),
                    ]).serialized)
                    return
                }
                let vendor = version.hardwareVendor == 0x04 ? "NXP" : "vendor \(Hex.encode([version.hardwareVendor]))"
                Terminal.print("\(Terminal.safe(reader)): \(version.generation), \(version.storageSize.bytes)\(version.storageSize.orMore ? "+" : "") bytes, \(vendor), hardware \(version.hardwareVersion), software \(version.softwareVersion)")
                if let uid {
                    Terminal.print("  UID \(uid.hexString)\(version.uidHidden ? " (random ID on; from GetCardUID)" : "")")
                } else {
                    Terminal.print("  UID withheld (random ID on): give the card master key for GetCardUID")
                }
                let week = version.productionWeek.map { "week \($0)" } ?? "week ?", year = version.productionYear.map(String.init) ?? "?"
                Terminal.print("  production batch \(version.batch.hexString), \(week) of \(year)")
                if let free { Terminal.print("  free memory \(free) bytes") }
                if let settings {
                    Terminal.print("  card master key: \(settings.family); \(settings.settings.words(cardLevel: true).joined(separator: "; "))")
                } else if let settingsProblem {
                    Terminal.print("  card key settings not shown: \(settingsProblem)")
                }
            }
        }
    }
}
