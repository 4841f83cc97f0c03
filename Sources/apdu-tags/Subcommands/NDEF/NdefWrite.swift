// `apdu ndef-write`: a message written or a backup restored, on one reader or every reader,
// the old message kept first.
import APDUCommandLine
import ArgumentParser
import Dispatch
import FoundationEssentials
import Glibc
import ISO7816
import NDEF
import NFCTags
import PCSC
import TagReader

extension APDUCommand {
    struct NdefWrite: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ndef-write",
            abstract: "Write an NDEF message to a tag, keeping a backup of the old one.",
            discussion: NDEFBuilder.help + """


                Or --message FILE (an encoded message, raw or hex), or --restore BACKUP.
                Before writing, the old message is saved under $XDG_STATE_HOME/apdu/backups/ \
                (~/.local/state/apdu/backups/) and the path printed; a write cut short by a pulled \
                card leaves at worst an empty message, and the error says how to restore.
                """)

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions
        @OptionGroup var tagAccess: TagAccessOptions

        @Option(help: ArgumentHelp("Write this encoded message (raw bytes or hex).", valueName: "file"))
        var message: String?

        @Option(help: ArgumentHelp("Put a backup back (a file ndef-write saved), byte for byte, whatever state a cut write left.", valueName: "backup"))
        var restore: String?

        @Flag(help: "With --restore: write the backup even to a tag with another UID or capability container.")
        var force = false

        @Argument(parsing: .allUnrecognized, help: ArgumentHelp("Record options (see above).", valueName: "records"))
        var items: [String] = []

        func validate() throws {
            if allReaders && readerOptions.reader != nil { throw ValidationError("--all-readers and --reader exclude each other") }
            if allReaders && readerOptions.wait != nil {
                throw ValidationError("--all-readers writes the tags present now; --wait does not apply (wait with `apdu watch --count N` first)")
            }
            if allReaders && restore != nil { throw ValidationError("--restore puts one tag's backup back: use --reader, not --all-readers") }
            if force && restore == nil { throw ValidationError("--force goes with --restore") }
            let sources = [message != nil, restore != nil, !items.isEmpty].filter { $0 }.count
            if sources == 0 { throw ValidationError("say what to write: record options (--uri …), --message FILE or --restore BACKUP") }
            if sources > 1 { throw ValidationError("give record options, --message or --restore, not several") }
            if !items.isEmpty {
                do { _ = try NDEFBuilder.build(items) } catch let p as NDEFBuilder.Problem where !p.isBadData {
                    throw ValidationError(p.message)
                } catch {}
            }
        }

        /// What to write: a message, or a backup to put back exactly.
        enum Content {
            case message([UInt8])
            case backup(TagBackup, path: String)
            var message: [UInt8] {
                switch self {
                case let .message(m): return m
                case let .backup(b, _): return b.message
                }
            }
        }

        func content() throws -> Content {
            if let restore, let data = FileManager.default.contents(atPath: restore), TagBackup.isBackup([UInt8](data)) {
                do { return .backup(try TagBackup(parsing: TextInput.normalized(data)), path: restore) } catch {
                    throw Failure(.badData, "'\(Terminal.safe(restore))' is not a usable backup: \(error)")
                }
            }
            if let path = message ?? restore {
                // A bare message (an older backup, or any NDEF file): written the usual way.
                let bytes = try readMessageFile(path, option: message != nil ? "--message" : "--restore")
                // An empty --message file is a mistake far more often than a wish to clear the tag
                // (an older backup of an empty tag is an empty file too: that one means "empty").
                if bytes.isEmpty {
                    guard restore != nil else {
                        throw Failure(.badData, "'\(Terminal.safe(path))' is empty: nothing to write (to clear a tag, write the empty record: a file holding D0 00 00)")
                    }
                    return .message([])
                }
                do { _ = try NDEFMessage(decoding: bytes) } catch {
                    throw Failure(.badData, "'\(Terminal.safe(path))' is not a valid NDEF message: \(error)")
                }
                return .message(bytes)
            }
            let records: [NDEFRecord]
            do { records = try NDEFBuilder.build(items) } catch let p as NDEFBuilder.Problem {
                throw Failure(p.isBadData ? .badData : .usage, p.message)
            }
            do { return .message(try NDEFMessage(records: records).encoded()) } catch { throw Failure(.badData, "\(error)") }
        }

        @Flag(help: "Write to the tag in every reader that has one, in parallel; one result line per reader.")
        var allReaders = false

        struct Outcome {
            var reader: String
            var tagJSON: JSON
            var written: Int
            var capacity: Int
            var backup: String?
        }

        func run() throws {
            try reportingFailures {
                let what = try content()
                let bytes = what.message
                if allReaders { return try writeAll(bytes) }
                let restoring: Bool
                if case .backup = what { restoring = true } else { restoring = false }
                let outcome = try readerOptions.withTag(trace: traceOptions, tolerant: restoring, access: tagAccess) { t in
                    try write(what, on: t, announceBackup: !output.json, showProgress: true)
                }
                if output.json {
                    Terminal.print(json(outcome).serialized)
                } else if restoring {
                    Terminal.print("restored the backup (\(bytes.count)-byte message) to \(Terminal.safe(outcome.reader)) and read it back")
                } else {
                    Terminal.print("wrote \(bytes.count) bytes to \(Terminal.safe(outcome.reader)) and read them back")
                }
            }
        }

        func json(_ o: Outcome) -> JSON {
            .object([
                ("reader", .string(o.reader)), ("tag", o.tagJSON), ("written", .int(o.written)),
                ("capacity", .int(o.capacity)), ("verified", .bool(true)), ("backup", .optional(o.backup)),
            ])
        }

        /// Every reader with a card, written in parallel (`TagTransaction.runOnEveryReader`).
        func writeAll(_ bytes: [UInt8]) throws {
            let progress = Progress("ndef-write:", output: output, trace: traceOptions)
            let results = try TagTransaction.runOnEveryReader(observer: traceOptions.observer, finished: { reader, done, total in
                progress.update(done, of: total, "\(Terminal.safe(reader)) done")
            }) { t in
                try write(.message(bytes), on: t, announceBackup: false, showProgress: false)
            }
            progress.finish()
            var failures: [Failure] = []
            for (reader, result) in results {
                switch result {
                case let .success(o):
                    if output.json {
                        guard case var .object(m) = json(o) else { continue }
                        m.append(("ok", .bool(true)))
                        Terminal.print(JSON.object(m).serialized)
                    } else {
                        Terminal.print("\(Terminal.safe(reader)): wrote \(o.written) bytes and read them back; backup \(o.backup ?? "-")")
                    }
                case let .failure(error):
                    let f = Failure(error)
                    failures.append(f)
                    if output.json {
                        Terminal.print(JSON.object([("reader", .string(reader)), ("ok", .bool(false)), ("error", .string(f.message)), ("exitCode", .int(Int(f.status.rawValue)))]).serialized)
                    } else {
                        Terminal.print("\(Terminal.safe(reader)): FAILED: \(Terminal.safe(f.message))")
                    }
                }
            }
            if let first = failures.first {
                throw Failure(first.status, "\(failures.count) of \(results.count) writes failed")
            }
        }

        /// Backs up the old message, then writes and verifies the new one (inside the tag's
        /// transaction); or puts a backup back. `showProgress`: each step on a terminal's stderr.
        func write(_ what: Content, on t: TagTransaction, announceBackup: Bool, showProgress: Bool) throws -> Outcome {
            let progress = Progress("ndef-write:", output: output, trace: traceOptions, wanted: showProgress)
            defer { progress.finish() }
            let step = { (s: WriteStep) in progress.update(s.number, of: s.total, s.action) }
            let restoreCommand = { (path: String) in tagAccess.restoreCommand(reader: t.reader, backup: path) }
            let receipt: WriteReceipt
            do {
                switch what {
                case let .backup(backup, path):
                    do {
                        receipt = try t.restore(backup, allowingOtherTag: force, progress: step)
                    } catch let e as WriteInterrupted {
                        throw Failure(Failure.status(of: e.underlying), "\(Failure.reason(e.underlying)) while putting the backup back; \(e.state.words(old: "what was on the tag before", new: "the backup's message")); run the restore again: \(restoreCommand(path))")
                    }
                case let .message(bytes):
                    receipt = try t.writeNDEF(bytes, backups: AnnouncedBackups(announce: announceBackup), progress: step)
                }
            } catch let e as WriteInterrupted {
                var failure = Failure(e)
                if let backup = e.backup { failure.message += "; restore the previous message with: \(restoreCommand(backup))" }
                throw failure
            } catch let e as TagError {
                throw Failure(e.failure.status, e.message + (e.message.hasSuffix("nothing was written") ? "" : "; nothing was written"))
            }
            return Outcome(reader: t.reader, tagJSON: TagView(t).json, written: receipt.written, capacity: receipt.capacity, backup: receipt.backup)
        }
    }
}

/// apdu's backup directory, saying where each backup went before the tag changes.
struct AnnouncedBackups: BackupStore {
    var announce: Bool

    func save(_ backup: TagBackup, reader: String) throws -> String {
        let path = try DirectoryBackupStore.standard.save(backup, reader: reader)
        if announce { Terminal.print("backup of the previous message (\(backup.message.count) bytes): \(path)") }
        return path
    }
}
