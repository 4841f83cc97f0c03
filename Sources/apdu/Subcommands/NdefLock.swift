import ArgumentParser
import NFCTags
import PCSC

extension APDUCommand {
    struct NdefLock: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ndef-lock",
            abstract: "Make a tag read-only for good (needs --yes).",
            discussion: """
                Type 4: writes FF into the capability container's write-access byte, as Android does. \
                Type 2: CC write access 0F, every dynamic lock bit (where the lock control TLV or the \
                chip's datasheet puts them), then the static lock bytes. A lock cut short (a pulled \
                card) is finished by running the command again. Then checks that the lock bytes read \
                back set and that the tag refuses writes. This cannot be undone.
                """)

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
                    do {
                        if let t4 = session.tag as? Type4Tag {
                            guard t4.status == .readWrite else { throw Failure(.unexpected, "the tag is already \(t4.status.rawValue); nothing was written") }
                            let refuses = try t4.makeReadOnly()
                            return (session, [("writeAccess", JSON.string(t4.capabilityContainer.writeAccess.description))], refuses)
                        } else if let t2 = session.tag as? Type2Tag {
                            guard !(try t2.readLockState()).isFullyLocked else {
                                throw Failure(.unexpected, "the tag is already locked (CC read-only, static and dynamic lock bits set); nothing was written")
                            }
                            let report = try t2.makeReadOnly()
                            return (session, [("done", JSON.array(report.done.map(JSON.string))), ("alreadyDone", .array(report.alreadyDone.map(JSON.string))),
                                              ("lockBitsSet", .bool(report.state.isFullyLocked))], report.refusesWrites)
                        }
                        return (session, [], false)
                    } catch let e as LockInterrupted {
                        let status = (e.underlying as? PCSCError)?.failure.status ?? (e.underlying as? TagError)?.failure.status ?? .ioError
                        let done = e.done.isEmpty ? "nothing was changed yet" : "done so far: \(e.done.joined(separator: ", ")); the message is unchanged"
                        throw Failure(status, "\(Failure.reason(e.underlying)) while trying to \(e.step); \(done); finish the lock with: apdu ndef-lock --yes -r \(Terminal.shellQuoted(session.reader))")
                    } catch let e as TagError { throw e.failure }
                }
                if output.json {
                    Terminal.print(JSON.object([("reader", .string(session.reader)), ("tag", session.tagJSON)] + locked + [("refusesWrites", .bool(refusesWrites))]).serialized)
                } else {
                    let what = locked.map { "\($0.0) \($0.1.serialized)" }.joined(separator: ", ")
                    Terminal.print("locked (\(what)); the tag \(refusesWrites ? "refuses writes" : "STILL ACCEPTS writes")")
                }
                if !refusesWrites {
                    throw Failure(.unexpected, "the lock did not take: the tag still accepts a write or its lock bits do not read back set")
                }
            }
        }
    }
}
