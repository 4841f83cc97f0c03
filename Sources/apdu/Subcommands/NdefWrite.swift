import ArgumentParser
import Foundation
import ISO7816
import NDEF
import NFCTags
import PCSC
import VirtualCard

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
                let outcome = try TagSession.withTag(readerOptions, trace: traceOptions, tolerant: restoring) { session in
                    try write(what, session: session, announceBackup: !output.json)
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

        /// Every reader with a card, written in parallel: one thread and PC/SC context each (a
        /// context's calls are serialised by pcsclite), starting from the reader states read here.
        /// Three phases, because pcsclite's handle lists make connects, card calls and disconnects
        /// take turns (see PCSC.HandleTableLock): all threads connect at once, then all work at
        /// once, then the connections end here, one by one, after all are done.
        func writeAll(_ bytes: [UInt8]) throws {
            let context = try Context()
            let names = try context.readers()
            var states = names.map { ReaderState(reader: $0) }
            if !states.isEmpty { try context.statusChange(&states, timeout: .zero) }
            let targets = states.filter { $0.eventState.hasUsableCard }
            guard !targets.isEmpty else { throw Failure(.unavailable, "no reader has a card") }
            let results = Locked([String: Result<Outcome, Failure>]())
            let connections = Locked([Card]())
            defer { for card in connections.current { try? card.disconnect() } }
            let done = DispatchSemaphore(value: 0)
            let connected = DispatchGroup()
            let go = DispatchSemaphore(value: 0)
            let threads = targets.map { target in
                connected.enter()
                return Thread {
                    defer { done.signal() }
                    let r: Result<Outcome, Failure>
                    do {
                        let card: Card
                        do {
                            defer { connected.leave(); go.wait() }
                            card = try Context().connect(reader: target.reader)
                        }
                        connections.withLock { $0.append(card) }
                        r = .success(try TagSession.withTag(card: card, atr: target.atr, trace: traceOptions) { session in
                            try write(.message(bytes), session: session, announceBackup: false)
                        })
                    } catch let f as Failure {
                        r = .failure(f)
                    } catch let e as PCSCError {
                        r = .failure(e.failure)
                    } catch {
                        r = .failure(Failure(.ioError, "\(error)"))
                    }
                    results.withLock { $0[target.reader] = r }
                }
            }
            threads.forEach { $0.start() }
            connected.wait()
            for _ in targets { go.signal() }
            for _ in targets { done.wait() }
            var firstFailure: Failure?
            for reader in targets.map(\.reader) {
                switch results.current[reader]! {
                case let .success(o):
                    if output.json {
                        guard case var .object(m) = json(o) else { continue }
                        m.append(("ok", .bool(true)))
                        Terminal.print(JSON.object(m).serialized)
                    } else {
                        Terminal.print("\(Terminal.safe(reader)): wrote \(o.written) bytes and read them back; backup \(o.backup ?? "-")")
                    }
                case let .failure(f):
                    firstFailure = firstFailure ?? f
                    if output.json {
                        Terminal.print(JSON.object([("reader", .string(reader)), ("ok", .bool(false)), ("error", .string(f.message)), ("exitCode", .int(Int(f.status.rawValue)))]).serialized)
                    } else {
                        Terminal.print("\(Terminal.safe(reader)): FAILED: \(Terminal.safe(f.message))")
                    }
                }
            }
            if let firstFailure {
                throw Failure(firstFailure.status, "\(results.current.values.filter { if case .failure = $0 { return true } else { return false } }.count) of \(targets.count) writes failed")
            }
        }

        /// Backs up the old message, then writes and verifies the new one (inside the session's
        /// transaction); or puts a backup back.
        func write(_ what: Content, session: TagSession, announceBackup: Bool) throws -> Outcome {
            let tag = session.tag
            let bytes = what.message
            var saved: String?
            let restoreCommand = { (path: String) in
                "apdu ndef-write -r \(Terminal.shellQuoted(session.reader)) --restore \(Terminal.shellQuoted(path))"
            }
            do {
                switch what {
                case let .backup(backup, path):
                    do {
                        try tag.restore(backup, allowingOtherTag: force)
                    } catch let e as WriteInterrupted {
                        throw Failure(e.exitStatus, "\(e.reason) while putting the backup back; \(e.state.words(old: "what was on the tag before", new: "the backup's message")); run the restore again: \(restoreCommand(path))")
                    }
                    return Outcome(reader: session.reader, tagJSON: session.tagJSON, written: bytes.count, capacity: tag.capacity, backup: nil)
                case .message:
                    // Refuse before touching anything when it cannot work.
                    guard tag.status == .readWrite else {
                        throw Failure(.unexpected, "the tag is \(tag.status == .readOnly ? "read-only" : "not writable (\(tag.status.rawValue))")\((tag as? Type4Tag).map { " (write access \($0.capabilityContainer.writeAccess))" } ?? ""); nothing was written")
                    }
                    guard bytes.count <= tag.capacity else {
                        throw Failure(.badData, "the message is \(bytes.count) bytes; the tag holds \(tag.capacity) (\(bytes.count - tag.capacity) bytes over); nothing was written")
                    }
                    try tag.replaceNDEF(with: bytes) { old in
                        saved = try Backups.save(old, reader: session.reader)
                        if announceBackup { Terminal.print("backup of the previous message (\(old.message.count) bytes): \(saved!)") }
                    }
                }
            } catch let e as WriteInterrupted {
                let hint = saved.map { "; restore the previous message with: \(restoreCommand($0))" } ?? ""
                throw Failure(e.exitStatus, "\(e.reason) during the write; \(e.state.words(old: "the previous message", new: "the new message"))\(hint)")
            } catch let e as TagError {
                throw Failure(e.failure.status, e.message + (e.message.hasSuffix("nothing was written") ? "" : "; nothing was written"))
            }
            return Outcome(reader: session.reader, tagJSON: session.tagJSON, written: bytes.count, capacity: tag.capacity, backup: saved)
        }
    }
}

extension WriteInterrupted {
    /// What stopped it, in the CLI's words ("the card was removed").
    var reason: String { Failure.reason(underlying) }

    /// The exit code of what stopped it.
    var exitStatus: ExitStatus {
        switch underlying {
        case let e as PCSCError: return e.failure.status
        case let e as TagError: return e.failure.status
        default: return .ioError
        }
    }
}

extension WriteInterrupted.TagState {
    /// "the tag holds the previous message or an empty one".
    func words(old: String, new: String) -> String {
        switch self {
        case .old: return "nothing took effect: the tag holds \(old)"
        case .oldOrEmpty: return "the tag holds \(old) or an empty message"
        case .empty: return "the tag holds an empty message"
        case .emptyOrNew: return "the tag holds an empty message or \(new)"
        case .new: return "the tag holds \(new), but reading it back did not finish"
        case .unknown: return "the tag reads back something other than what it acknowledged"
        }
    }
}
