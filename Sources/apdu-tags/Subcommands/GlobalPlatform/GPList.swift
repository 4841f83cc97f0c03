// `apdu gp list`: the registry, after authenticating with the keys checked first.
import APDUCommandLine
import ArgumentParser
import GlobalPlatform
import ISO7816

extension APDUCommand {
    struct GPList: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "The registry: the ISD, security domains, applications, load files and their modules, with life cycles and privileges.",
            discussion: "Authenticates (the card's cryptogram checked before EXTERNAL AUTHENTICATE), then GET STATUS in the tag format, else the legacy one, following 63 10.")

        @OptionGroup var keys: GPKeyOptions
        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions

        func run() throws {
            try reportingFailures {
                let (reader, entries, level, commands, unproven): (String, [RegistryEntry], SecurityLevel, Int, [RegistryEntry.Kind]) = try withCardManager(readerOptions, traceOptions) { name, manager in
                    try manager.authenticate(keys: keys.staticKeys, level: keys.securityLevel)
                    return (name, try manager.registry(), manager.secureChannel?.level ?? [], manager.getStatusCommands, manager.unprovenEmptyKinds)
                }
                // What the card's answers prove: with R-MAC each entry listed is the card's; an
                // absence (6A 88) never is, nor anything at all without R-MAC.
                let authenticated = level.contains(.rMAC)
                if output.json {
                    Terminal.print(JSON.object([
                        ("reader", .string(reader)), ("securityLevel", .hex([level.rawValue])), ("getStatusCommands", .int(commands)),
                        ("answersAuthenticated", .bool(authenticated)), ("unprovenEmpty", .array(unproven.map { .string($0.rawValue) })),
                        ("entries", .array(entries.map(Self.json))),
                    ]).serialized)
                    return
                }
                Terminal.print("\(Terminal.safe(reader)): \(entries.count) registry entries (\(level))")
                if !authenticated {
                    Terminal.print("  note: at this level the card's answers carry no R-MAC, so this listing is unauthenticated (--level 33 asks for R-MAC where the card offers it)")
                } else if !unproven.isEmpty {
                    Terminal.print("  note: none of \(unproven.map(\.rawValue).joined(separator: ", ")) by the card's 6A 88, a status word without R-MAC: that absence is unproven")
                }
                for e in entries {
                    let kind = e.kind.rawValue + String(repeating: " ", count: max(0, 4 - e.kind.rawValue.count))
                    var line = "  \(kind) \(e.aid.hexString)  \(e.lifeCycleName)"
                    if !e.privilegeNames.isEmpty { line += "  [\(e.privilegeNames.joined(separator: ", "))]" }
                    if let v = e.version { line += "  version \(v.map(String.init).joined(separator: "."))" }
                    if let lf = e.loadFile { line += "  from \(lf.hexString)" }
                    Terminal.print(line)
                    for m in e.modules { Terminal.print("       module \(m.hexString)") }
                }
            }
        }

        static func json(_ e: RegistryEntry) -> JSON {
            .object([("kind", .string(e.kind.rawValue)), ("aid", .hex(e.aid)), ("lifeCycle", .string(e.lifeCycleName)), ("lifeCycleByte", .hex([e.lifeCycle])),
                     ("privileges", .array(e.privilegeNames.map(JSON.string))), ("loadFile", e.loadFile.map { .hex($0) } ?? .null),
                     ("version", e.version.map { .hex($0) } ?? .null), ("modules", .array(e.modules.map { .hex($0) }))])
        }
    }
}
