// `apdu gp info`: what a GlobalPlatform card says of itself, without authenticating.
import APDUCommandLine
import ArgumentParser
import GlobalPlatform
import ISO7816

extension APDUCommand {
    struct GPInfo: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "info",
            abstract: "Card information without authentication: CPLC, card recognition data, key information, IIN, CIN, the ISD.",
            discussion: "Sends SELECT and GET DATA (9F7F, 66, E0, 42, 45) only: nothing the card counts.")

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions

        func run() throws {
            try reportingFailures {
                let (reader, info) = try withCardManager(readerOptions, traceOptions) { name, manager in (name, try manager.information()) }
                if output.json {
                    Terminal.print(JSON.object([
                        ("reader", .string(reader)), ("isd", .hex(info.isdAID)),
                        ("globalPlatformVersion", .optional(info.recognition?.globalPlatformVersion)),
                        ("protocols", .array((info.recognition?.protocols ?? []).map { .object([("scp", .int(Int($0.version))), ("i", .hex([$0.i]))]) })),
                        ("keys", .array(info.keys.map { .object([("id", .int(Int($0.id))), ("version", .hex([$0.version])), ("type", .string($0.typeName)),
                                                                 ("length", .int($0.components.first?.length ?? 0))]) })),
                        ("cplc", info.cplc.map { .object($0.fields.map { ($0.name, JSON.hex($0.value)) }) } ?? .null),
                        ("iin", info.iin.map { .hex($0) } ?? .null), ("cin", info.cin.map { .hex($0) } ?? .null),
                    ]).serialized)
                    return
                }
                Terminal.print("\(Terminal.safe(reader)): ISD \(info.isdAID.hexString)")
                if let r = info.recognition {
                    Terminal.print("  GlobalPlatform \(r.globalPlatformVersion ?? "?"), \(r.protocols.map(\.description).joined(separator: ", "))")
                }
                for key in info.keys { Terminal.print("  \(key)") }
                if info.keys.isEmpty { Terminal.print("  no key information template (00E0)") }
                if let iin = info.iin { Terminal.print("  IIN \(iin.hexString)") }
                if let cin = info.cin { Terminal.print("  CIN \(cin.hexString)") }
                if let cplc = info.cplc {
                    Terminal.print("  CPLC:")
                    for field in cplc.fields { Terminal.print("    \(field.name): \(field.value.hexString)") }
                }
            }
        }
    }
}
