import ArgumentParser
import Foundation
import ISO7816
import NDEF
import NFCTags
import PCSC

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

        @Option(help: ArgumentHelp("Put a backup back (a file ndef-write saved).", valueName: "backup"))
        var restore: String?

        @Argument(parsing: .allUnrecognized, help: ArgumentHelp("Record options (see above).", valueName: "records"))
        var items: [String] = []

        func validate() throws {
            let sources = [message != nil, restore != nil, !items.isEmpty].filter { $0 }.count
            if sources == 0 { throw ValidationError("say what to write: record options (--uri …), --message FILE or --restore BACKUP") }
            if sources > 1 { throw ValidationError("give record options, --message or --restore, not several") }
            if !items.isEmpty {
                do { _ = try NDEFBuilder.build(items) } catch let p as NDEFBuilder.Problem where !p.isBadData {
                    throw ValidationError(p.message)
                } catch {}
            }
        }

        func newMessage() throws -> [UInt8] {
            if let path = message ?? restore {
                let bytes = try readMessageFile(path, option: message != nil ? "--message" : "--restore")
                if !bytes.isEmpty {
                    do { _ = try NDEFMessage(decoding: bytes) } catch {
                        throw Failure(.badData, "'\(Terminal.safe(path))' is not a valid NDEF message: \(error)")
                    }
                }
                return bytes
            }
            let records: [NDEFRecord]
            do { records = try NDEFBuilder.build(items) } catch let p as NDEFBuilder.Problem {
                throw Failure(p.isBadData ? .badData : .usage, p.message)
            }
            do { return try NDEFMessage(records: records).encoded() } catch { throw Failure(.badData, "\(error)") }
        }

        func run() throws {
            try reportingFailures {
                let bytes = try newMessage()
                let session = try TagSession.open(readerOptions, trace: traceOptions)
                let tag = session.tag
                // Refuse before touching anything when it cannot work.
                guard tag.status == .readWrite else {
                    throw Failure(.unexpected, "the tag is \(tag.status == .readOnly ? "read-only" : "not writable (\(tag.status.rawValue))")\((tag as? Type4Tag).map { " (write access \($0.capabilityContainer.writeAccess))" } ?? ""); nothing was written")
                }
                guard bytes.count <= tag.capacity else {
                    throw Failure(.badData, "the message is \(bytes.count) bytes; the tag holds \(tag.capacity) (\(bytes.count - tag.capacity) bytes over); nothing was written")
                }
                var backup: String?
                try session.card.withTransaction {
                    let old: [UInt8]
                    do { old = try tag.readNDEF() } catch let e as TagError {
                        throw Failure(e.failure.status, "cannot read the current message to back it up (\(e.message)); nothing was written")
                    }
                    backup = try Backups.save(old, reader: session.reader, kind: tag.kind, uid: tag.uid)
                    if !output.json { Terminal.print("backup of the previous message (\(old.count) bytes): \(backup!)") }
                    do {
                        try tag.writeNDEF(bytes)
                    } catch let e as TagError {
                        throw Failure(e.failure.status, e.message + restoreHint(backup))
                    } catch let e as PCSCError {
                        throw Failure(e.failure.status, e.failure.message + " during the write; the tag may hold an empty message" + restoreHint(backup))
                    } catch let e as TransmitError {
                        throw Failure(.ioError, "\(e) during the write" + restoreHint(backup))
                    }
                }
                try? session.card.disconnect()
                if output.json {
                    Terminal.print(JSON.object([
                        ("reader", .string(session.reader)), ("tag", session.tagJSON), ("written", .int(bytes.count)),
                        ("capacity", .int(tag.capacity)), ("verified", .bool(true)), ("backup", .optional(backup)),
                    ]).serialized)
                } else {
                    Terminal.print("wrote \(bytes.count) bytes to \(Terminal.safe(session.reader)) and read them back")
                }
            }
        }

        func restoreHint(_ backup: String?) -> String {
            guard let backup else { return "" }
            return "; restore the previous message with: apdu ndef-write --restore \(backup)"
        }
    }
}
