// `apdu gp info`: what a GlobalPlatform card says of itself; with keys, the ISD's life cycle too.
import APDUCommandLine
import ArgumentParser
import GlobalPlatform
import ISO7816

extension APDUCommand {
    struct GPInfo: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "info",
            abstract: "Card information: CPLC, card recognition data, key information, IIN, CIN, the ISD's AID, and its life cycle with keys.",
            discussion: """
                Without keys: SELECT and GET DATA (9F7F, 66, E0, CF, C1, 42, 45) only, nothing the card counts; the ISD's \
                AID comes from the SELECT answer (the FCI's tag 84), and its life cycle is not read, as only GET STATUS \
                gives it and cards answer that in a secure channel. With keys (--key, --enc/--mac/--dek or --test-keys) \
                it authenticates as apdu gp list does, the card's cryptogram checked before EXTERNAL AUTHENTICATE, and \
                reads the ISD's life cycle and privileges with GET STATUS 80.
                """)

        @OptionGroup var keys: GPKeyChoice
        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions

        func run() throws {
            try reportingFailures {
                let withKeys = keys.given
                let (reader, info, isd, level): (String, CardInformation, RegistryEntry?, SecurityLevel?) = try withCardManager(readerOptions, traceOptions) { name, manager in
                    let info = try manager.information()
                    guard withKeys else { return (name, info, nil, nil) }
                    try manager.authenticate(keys: keys.staticKeys, level: keys.securityLevel)
                    return (name, info, try manager.issuerSecurityDomainEntry(), manager.secureChannel?.level)
                }
                let source = info.isdAIDFromFCI ? "the SELECT answer's FCI (tag 84)" : "the SELECT command (the card's answer names no AID)"
                let notRead = withKeys ? "not listed by GET STATUS 80" : "not read: only GET STATUS gives it, in a secure channel (give --key, --enc/--mac/--dek or --test-keys)"
                if output.json {
                    Terminal.print(JSON.object([
                        ("reader", .string(reader)), ("isd", .hex(info.isdAID)), ("isdFrom", .string(info.isdAIDFromFCI ? "fci" : "select")),
                        ("isdLifeCycle", isd.map { .string($0.lifeCycleName) } ?? .null), ("isdLifeCycleByte", isd.map { .hex([$0.lifeCycle]) } ?? .null),
                        ("isdPrivileges", isd.map { .array($0.privilegeNames.map(JSON.string)) } ?? .null),
                        ("lifeCycleRead", .bool(isd != nil)), ("securityLevel", level.map { .hex([$0.rawValue]) } ?? .null),
                        ("globalPlatformVersion", .optional(info.recognition?.globalPlatformVersion)),
                        ("protocols", .array((info.recognition?.protocols ?? []).map { .object([("scp", .int(Int($0.version))), ("i", .hex([$0.i]))]) })),
                        ("keys", .array(info.keys.map { .object([("id", .int(Int($0.id))), ("version", .hex([$0.version])), ("type", .string($0.typeName)),
                                                                 ("length", .int($0.components.first?.length ?? 0))]) })),
                        ("cplc", info.cplc.map { .object($0.fields.map { ($0.name, JSON.hex($0.value)) }) } ?? .null),
                        ("iin", info.iin.map { .hex($0) } ?? .null), ("cin", info.cin.map { .hex($0) } ?? .null),
                        ("kdd", info.keyDiversificationData.map { .hex($0) } ?? .null), ("ssc", info.sequenceCounter.map { .hex($0) } ?? .null),
                    ]).serialized)
                    return
                }
                Terminal.print("\(Terminal.safe(reader)): ISD \(info.isdAID.hexString) (from \(source))")
                if let isd {
                    var line = "  life cycle: \(isd.lifeCycleName) (GET STATUS 80, \(level.map(\.description) ?? "?"))"
                    if !isd.privilegeNames.isEmpty { line += "  [\(isd.privilegeNames.joined(separator: ", "))]" }
                    Terminal.print(line)
                } else {
                    Terminal.print("  life cycle: \(notRead)")
                }
                if let r = info.recognition {
                    Terminal.print("  GlobalPlatform \(r.globalPlatformVersion ?? "?"), \(r.protocols.map(\.description).joined(separator: ", "))")
                }
                for key in info.keys { Terminal.print("  \(key)") }
                if info.keys.isEmpty { Terminal.print("  no key information template (00E0)") }
                if let iin = info.iin { Terminal.print("  IIN \(iin.hexString)") }
                if let cin = info.cin { Terminal.print("  CIN \(cin.hexString)") }
                if let kdd = info.keyDiversificationData { Terminal.print("  KDD \(kdd.hexString)") }
                if let ssc = info.sequenceCounter { Terminal.print("  SSC \(ssc.hexString)") }
                if let cplc = info.cplc {
                    Terminal.print("  CPLC:")
                    for field in cplc.fields { Terminal.print("    \(field.name): \(field.value.hexString)") }
                }
            }
        }
    }
}
