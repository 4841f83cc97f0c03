import ArgumentParser
import NFCTags
import PCSC

extension APDUCommand {
    struct NdefLock: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ndef-lock",
            abstract: "Make a tag read-only for good (needs --yes).",
            discussion: "Type 4: writes FF into the capability container's write-access byte, as Android does. Type 2: CC write access 0F, the dynamic lock bits (per the lock control TLV or the default layout), then the static lock bytes. Then checks the tag refuses writes. This cannot be undone.")

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
                let (session, locked, refusesWrites) = try TagSession.withTag(readerOptions, trace: traceOptions) { session in
                    guard session.tag.status == .readWrite else {
                        throw Failure(.unexpected, "the tag is already \(session.tag.status.rawValue)")
                    }
                    do {
                        if let t4 = session.tag as? Type4Tag {
                            let refuses = try t4.makeReadOnly()
                            return (session, [("writeAccess", JSON.string(t4.capabilityContainer.writeAccess.description))], refuses)
                        } else if let t2 = session.tag as? Type2Tag {
                            let report = try t2.makeReadOnly()
                            return (session, [("capabilityContainer", .bool(report.capabilityContainer)), ("staticLockBytes", .bool(report.staticLockBytes)),
                                              ("dynamicLockBytes", .int(report.dynamicLockBytes))], report.refusesWrites)
                        }
                        return (session, [], false)
                    } catch let e as TagError { throw e.failure }
                }
                if output.json {
                    Terminal.print(JSON.object([("reader", .string(session.reader)), ("tag", session.tagJSON)] + locked + [("refusesWrites", .bool(refusesWrites))]).serialized)
                } else {
                    let what = locked.map { "\($0.0) \($0.1.serialized)" }.joined(separator: ", ")
                    Terminal.print("locked (\(what)); the tag \(refusesWrites ? "refuses writes" : "STILL ACCEPTS writes")")
                }
                if !refusesWrites {
                    throw Failure(.unexpected, "the tag's CC says read-only, but it still accepted a write")
                }
            }
        }
    }
}
