import ArgumentParser
import NFCTags
import PCSC

extension APDUCommand {
    struct NdefLock: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ndef-lock",
            abstract: "Make a tag read-only for good (needs --yes).",
            discussion: "Type 4: writes FF into the capability container's write-access byte, as Android does, then checks the tag refuses writes. This cannot be undone.")

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions

        @Flag(help: "Confirm: the tag will be read-only permanently.")
        var yes = false

        func run() throws {
            try reportingFailures {
                guard yes else {
                    throw Failure(.refused, "locking makes the tag read-only permanently; run again with --yes to do it")
                }
                let session = try TagSession.open(readerOptions, trace: traceOptions)
                guard session.tag.status == .readWrite else {
                    throw Failure(.unexpected, "the tag is already \(session.tag.status.rawValue) (write access \(session.tag.capabilityContainer.writeAccess))")
                }
                let refusesWrites: Bool
                do {
                    refusesWrites = try session.card.withTransaction { try session.tag.makeReadOnly() }
                } catch let e as Type4Error { throw e.failure }
                try? session.card.disconnect()
                if output.json {
                    Terminal.print(JSON.object([
                        ("reader", .string(session.reader)), ("tag", session.tagJSON),
                        ("writeAccess", .string(session.tag.capabilityContainer.writeAccess.description)),
                        ("refusesWrites", .bool(refusesWrites)),
                    ]).serialized)
                } else {
                    Terminal.print("locked: write access is now \(session.tag.capabilityContainer.writeAccess); the tag \(refusesWrites ? "refuses writes" : "STILL ACCEPTS writes")")
                }
                if !refusesWrites {
                    throw Failure(.unexpected, "the tag's CC says read-only, but it still accepted a write")
                }
            }
        }
    }
}
