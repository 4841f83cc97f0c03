// `apdu gp delete AID [--deps]`: an application, a security domain or a package.
import APDUCommandLine
import ArgumentParser
import GlobalPlatform
import ISO7816

extension APDUCommand {
    struct GPDelete: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "delete",
            abstract: "Delete an application, security domain or package (never the ISD; a package with instances only with --deps).",
            discussion: "Also removes a partial load file left by an interrupted install (its AID is not in the registry).")

        @Argument(help: ArgumentHelp("The AID, in hex.", valueName: "aid"))
        var aid: String

        @Flag(help: "Delete a package together with the applications made from it.")
        var deps = false

        @OptionGroup var keys: GPKeyOptions
        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions

        func validate() throws { _ = try parseAID(aid, "the AID") }

        func run() throws {
            try reportingFailures {
                let target = try parseAID(aid, "the AID")
                let (reader, related, authenticated) = try withCardManager(readerOptions, traceOptions) { name, manager in
                    try manager.authenticate(keys: keys.staticKeys, level: keys.securityLevel)
                    let entries = try manager.registry()
                    if entries.contains(where: { $0.aid == target }) || target == manager.isdAID {
                        try manager.delete(aid: target, related: deps)
                        return (name, deps, manager.answersAuthenticated)
                    }
                    // Not in the registry: perhaps the partial load file of an interrupted install,
                    // deleted alone (so the output does not claim what depends on it went too).
                    try manager.deleteUnchecked(aid: target, related: false)
                    return (name, false, manager.answersAuthenticated)
                }
                if output.json {
                    Terminal.print(JSON.object([("reader", .string(reader)), ("deleted", .hex(target)), ("deps", .bool(related)), ("answersAuthenticated", .bool(authenticated))]).serialized)
                } else {
                    Terminal.print("\(Terminal.safe(reader)): deleted \(target.hexString)\(related ? " and what depends on it" : "") \(confirmationNote(authenticated))")
                }
            }
        }
    }
}
