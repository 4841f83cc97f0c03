// `apdu ndef-lock`: a tag made read-only for good, each family in its own way.
import APDUCommandLine
import ArgumentParser
import NFCTags
import PCSC
import TagReader

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
                back set and that the tag refuses writes. \
                Type 5: CC write access 11, then LOCK BLOCK on every block of the T5T area (the CC's \
                own blocks last); needs a reader that carries ISO 15693 frames. \
                Type 3: RWFlag 00, then on FeliCa Lite / Lite-S the memory configuration block (every \
                user block read-only, the MC itself frozen); other FeliCa cards have no permanent lock \
                and are refused. This cannot be undone.
                """)

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions
        @OptionGroup var tagAccess: TagAccessOptions

        @Flag(help: "Confirm: the tag will be read-only permanently.")
        var yes = false

        func run() throws {
            try reportingFailures {
                guard yes else {
                    throw Failure(.refused, "locking makes the tag read-only permanently; run again with --yes to do it")
                }
                let (view, receipt) = try readerOptions.withTag(trace: traceOptions, access: tagAccess) { t in
                    do {
                        return (TagView(t), try t.makeReadOnly())
                    } catch let e as LockInterrupted {
                        let done = e.done.isEmpty ? "nothing was changed yet" : "done so far: \(e.done.joined(separator: ", ")); the message is unchanged"
                        throw Failure(Failure.status(of: e.underlying), "\(Failure.reason(e.underlying)) while trying to \(e.step); \(done); finish the lock with: \(tagAccess.command(["ndef-lock", "--yes"], reader: t.reader))")
                    }
                }
                // Type 4 reports the new write-access byte; Types 2, 5 and 3 the steps done now and before.
                let details: [(String, JSON)] = receipt.writeAccess.map { [("writeAccess", .string($0))] }
                    ?? [("done", .array(receipt.done.map(JSON.string))), ("alreadyDone", .array(receipt.alreadyDone.map(JSON.string))), ("lockBitsSet", .bool(true))]
                if output.json {
                    Terminal.print(JSON.object([("reader", .string(view.reader)), ("tag", view.json)] + details + [("refusesWrites", .bool(true))]).serialized)
                } else {
                    Terminal.print("locked (\(details.map { "\($0.0) \($0.1.serialized)" }.joined(separator: ", "))); the tag refuses writes")
                }
            }
        }
    }
}
