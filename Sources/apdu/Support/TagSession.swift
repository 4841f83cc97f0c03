import Foundation
import ISO7816
import NDEF
import NFCTags
import PCSC
import Foundation

/// A connected tag, detected, for the ndef-* commands.
struct TagSession {
    let reader: String
    let card: Card
    let transport: APDUTransport
    let tag: any NDEFTag
    let atr: [UInt8]

    /// Chooses the reader, connects, and detects the tag. Detection failures become `Failure`s.
    static func open(_ readerOptions: ReaderOptions, trace: TraceOptions) throws -> TagSession {
        try open(reader: readerOptions.requestedReader, wait: readerOptions.waitDuration, trace: trace)
    }

    /// With a wait, a pcscd that goes away (restart, crash) is waited out until the deadline:
    /// the whole open starts over on a fresh context. Without one, it fails at once (69).
    static func open(reader requested: String?, wait: Duration?, trace: TraceOptions) throws -> TagSession {
        let deadline = ContinuousClock.now + (wait ?? .zero)
        while true {
            do {
                return try openOnce(reader: requested, wait: wait.map { _ in max(.zero, deadline - ContinuousClock.now) }, trace: trace)
            } catch let error as PCSCError {
                guard wait != nil, retryable.contains(error) else { throw error }
                guard ContinuousClock.now < deadline else {
                    throw Failure(.unavailable, "pcscd or the card went away while waiting (\(error.constantName ?? "\(error)")) and did not come back in time")
                }
                usleep(300_000)
            }
        }
    }

    static let retryable: Set<PCSCError> = ReaderSelection.serviceLost.union([PCSCError.removedCard, PCSCError.resetCard, PCSCError.noSmartcard])

    static func openOnce(reader requested: String?, wait: Duration?, trace: TraceOptions) throws -> TagSession {
        let selection = try ReaderSelection()
        let reader = try selection.chooseReaderWithCard(requested, wait: wait)
        let card = try selection.context.connect(reader: reader)
        let atr = (try? card.status().atr) ?? []
        let transport = APDUTransport(channel: PCSCChannel(card: card), observer: trace.observer)
        // A PC/SC Part 3 storage-card ATR of the Ultralight family is a Type 2 tag; anything
        // else may carry the Type 4 NDEF application.
        if let storage = (try? ATR(bytes: atr))?.storageCard, !Type2Tag.isType2(atr: atr) {
            throw Failure(.unexpected, "no NDEF support for this card: \(storage.name ?? "storage card \(String(format: "%04X", storage.cardName))") is not an NFC Forum Type 2 or Type 4 tag")
        }
        do {
            let tag: any NDEFTag = Type2Tag.isType2(atr: atr)
                ? try card.withTransaction { try Type2Tag.detect(transport) }
                : try card.withTransaction { try Type4Tag.detect(transport, atr: atr) }
            return TagSession(reader: reader, card: card, transport: transport, tag: tag, atr: atr)
        } catch let error as TagError {
            throw error.failure
        }
    }

    var tagJSON: JSON {
        var m: [(String, JSON)] = [("kind", .string(tag.kind)), ("uid", tag.uid.map { .hex($0) } ?? .null), ("version", .string(tag.mappingVersion))]
        if let t2 = tag as? Type2Tag {
            m.append(("chip", .string(t2.chip.name)))
            m.append(("chipEvidence", .string(t2.chip.evidence)))
        }
        return .object(m)
    }

    /// "Type 4 tag, mapping 2.0" / "Type 2 tag NTAG213, CC 1.0".
    var tagDescription: String {
        if let t2 = tag as? Type2Tag { return "Type 2 tag (\(t2.chip.name)), mapping \(t2.mappingVersion)" + (t2.uid.map { ", UID \($0.hexString)" } ?? "") }
        return "Type 4 tag, mapping \(tag.mappingVersion)"
    }
}

extension TagError {
    /// Exit codes: a tag that refuses is 1, a tag whose data lies is 65.
    var failure: Failure {
        switch kind {
        case .notNDEF, .readOnly, .writeFailed, .verifyFailed, .lockFailed, .fileMissing, .readFailed: return Failure(.unexpected, message)
        case .badCapabilityContainer, .unsupportedVersion, .lengthLies, .tooLarge: return Failure(.badData, message)
        }
    }
}

/// Backups of messages before they are overwritten: `$XDG_STATE_HOME/apdu/backups/`.
enum Backups {
    static var directory: URL {
        let env = ProcessInfo.processInfo.environment
        let state = env["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (env["HOME"] ?? NSTemporaryDirectory()) + "/.local/state"
        return URL(fileURLWithPath: state).appendingPathComponent("apdu/backups")
    }

    /// Saves the message and returns the file's path.
    static func save(_ message: [UInt8], reader: String, kind: String, uid: [UInt8]?) throws -> String {
        let dir = directory
        do { try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true) } catch {
            throw Failure(.ioError, "cannot create the backup directory \(dir.path): refusing to write without a backup")
        }
        let slug = reader.map { $0.isLetter || $0.isNumber ? $0 : "-" }.reduce(into: "") { s, c in
            if !(c == "-" && s.hasSuffix("-")) { s.append(c) }
        }
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyyMMdd-HHmmss-SSS"
        formatter.timeZone = TimeZone(identifier: "UTC")
        let name = [slug, kind, uid.map(\.hexString)].compactMap { $0 }.joined(separator: "-") + "-" + formatter.string(from: Date()) + ".ndef"
        let url = dir.appendingPathComponent(name)
        do { try Data(message).write(to: url, options: .atomic) } catch {
            throw Failure(.ioError, "cannot write the backup \(url.path): refusing to write without a backup")
        }
        return url.path
    }
}

/// Reads a message file: raw bytes, or hex text.
func readMessageFile(_ path: String, option: String) throws -> [UInt8] {
    guard let data = FileManager.default.contents(atPath: path) else {
        throw Failure(.usage, "\(option): cannot read '\(Terminal.safe(path))'")
    }
    return rawOrHex(data)
}

/// File or pipe contents as bytes: hex text (with separators) is decoded, anything else is raw.
func rawOrHex(_ data: Data) -> [UInt8] {
    let bytes = [UInt8](data)
    if !bytes.isEmpty, bytes.allSatisfy({ Hex.isHexOrSeparator($0) }), let decoded = try? Hex.decode(String(decoding: bytes, as: UTF8.self)) {
        return decoded
    }
    return bytes
}
