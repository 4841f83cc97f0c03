import Foundation
import ISO7816
import NDEF
import NFCTags
import PCSC

/// A connected, detected tag for the ndef-* commands, valid inside `TagSession.withTag`.
///
/// Detection and the command's own work run in one PC/SC transaction: no other process's
/// command lands between reading the capability container and writing the message.
struct TagSession {
    let reader: String
    let card: Card
    let transport: APDUTransport
    let tag: any NDEFTag
    let atr: [UInt8]

    /// Chooses the reader, connects, detects the tag and runs `body`; disconnects afterwards.
    /// Detection failures become `Failure`s.
    static func withTag<T>(_ readerOptions: ReaderOptions, trace: TraceOptions, tolerant: Bool = false, _ body: (TagSession) throws -> T) throws -> T {
        try withTag(reader: readerOptions.requestedReader, wait: readerOptions.waitDuration, trace: trace, tolerant: tolerant, body)
    }

    /// With a wait, a pcscd that goes away (restart, crash) before `body` starts is waited out
    /// until the deadline: the whole open starts over on a fresh context. Without one, it fails
    /// at once (69). Once `body` has started, nothing is retried.
    static func withTag<T>(reader requested: String?, wait: Duration?, trace: TraceOptions, tolerant: Bool = false, _ body: (TagSession) throws -> T) throws -> T {
        let start = ContinuousClock.now
        let deadline = start + (wait ?? .zero)
        while true {
            var started = false
            do {
                let selection = try ReaderSelection()
                let (reader, atr) = try selection.chooseCard(requested, wait: wait.map { _ in max(.zero, deadline - ContinuousClock.now) })
                // Another program's transaction is waited out until the --wait deadline (at least
                // a couple of seconds), then the command gives up with 75 before touching the card.
                let (card, gate) = try selection.connectWatched(reader, wait: wait, waitStarted: start)
                defer { gate.standDown() }
                defer { try? card.disconnect() }
                return try withTag(card: card, atr: atr, trace: trace, gate: gate, tolerant: tolerant) { session in
                    started = true
                    return try body(session)
                }
            } catch let error as PCSCError {
                guard !started, wait != nil, retryable.contains(error) else { throw error }
                guard ContinuousClock.now < deadline else {
                    throw Failure(.unavailable, "pcscd or the card went away while waiting (\(error.constantName ?? "\(error)")) and did not come back in time")
                }
                usleep(300_000)
            }
        }
    }

    static let retryable: Set<PCSCError> = ReaderSelection.serviceLost.union([PCSCError.removedCard, PCSCError.resetCard, PCSCError.noSmartcard])

    /// Connects to `reader` through `context` and runs `body` on the detected tag. `atr` is what
    /// pcscd reported in the reader's state (empty: ask the connection). Were the card swapped in
    /// between, detection fails on the new card before anything is written.
    static func withTag<T>(context: Context, reader: String, atr knownATR: [UInt8], trace: TraceOptions,
                           _ body: (TagSession) throws -> T) throws -> T {
        let card = try context.connect(reader: reader)
        defer { try? card.disconnect() }
        return try withTag(card: card, atr: knownATR, trace: trace, body)
    }

    /// Detects the tag on a connection the caller made (and will end) and runs `body`.
    /// `tolerant`: a Type 2 tag whose TLV area does not parse is still detected (to restore it).
    static func withTag<T>(card: Card, atr knownATR: [UInt8], trace: TraceOptions, gate: BusyReaderGate? = nil, tolerant: Bool = false,
                           _ body: (TagSession) throws -> T) throws -> T {
        let reader = card.reader
        let atr = knownATR.isEmpty ? ((try? card.status().atr) ?? []) : knownATR
        let transport = APDUTransport(channel: PCSCChannel(card: card), observer: trace.observer)
        // A PC/SC Part 3 storage-card ATR of the Ultralight family is a Type 2 tag; anything
        // else may carry the Type 4 NDEF application.
        if let storage = (try? ATR(bytes: atr))?.storageCard, !Type2Tag.isType2(atr: atr) {
            throw Failure(.unexpected, "no NDEF support for this card: \(storage.name ?? "storage card \(String(format: "%04X", storage.cardName))") is not an NFC Forum Type 2 or Type 4 tag")
        }
        return try card.withTransaction {
            gate?.proceed()
            let tag: any NDEFTag
            do {
                tag = Type2Tag.isType2(atr: atr) ? try Type2Tag.detect(transport, atr: atr, tolerant: tolerant) : try Type4Tag.detect(transport, atr: atr)
            } catch let error as TagError {
                throw error.failure
            }
            return try body(TagSession(reader: reader, card: card, transport: transport, tag: tag, atr: atr))
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
        case .notNDEF, .readOnly, .writeFailed, .verifyFailed, .lockFailed, .fileMissing, .readFailed, .unsafe: return Failure(.unexpected, message)
        case .badCapabilityContainer, .unsupportedVersion, .lengthLies, .tooLarge: return Failure(.badData, message)
        case .beyondReach: return Failure(.unavailable, message)
        case .differentTag: return Failure(.refused, message)
        }
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
    // Hex text may come with a UTF-8 byte order mark and CRLF line ends (Windows editors).
    let text = TextInput.droppingByteOrderMark(bytes)
    if !text.isEmpty, text.allSatisfy({ Hex.isHexOrSeparator($0) }), let decoded = try? Hex.decode(String(decoding: text, as: UTF8.self)) {
        return decoded
    }
    return bytes
}
