// `apdu desfire`: the command group, and the connection and error handling its subcommands share.
import APDUCommandLine
import ArgumentParser
import ISO7816
import NFCTags
import PCSC
import TagReader

extension APDUCommand {
    /// `apdu desfire …`: MIFARE DESFire EV1/EV2/EV3 cards, their applications, files and keys.
    struct DESFire: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "desfire",
            abstract: "MIFARE DESFire (EV1, EV2, EV3, Light): describe, list and read (keyless where the card allows), write, change keys, create and delete.",
            discussion: """
                Keys: --key KEYNO:TYPE:HEX (TYPE des, 2k3des, 3k3des or aes), or --key-file FILE holding that text, or \
                $APDU_DESFIRE_KEY. Keys are never printed, and ChangeKey's cryptogram shows as ** in --trace and --record. \
                See docs/desfire.md.
                """,
            subcommands: [DESFireInfo.self, DESFireList.self, DESFireRead.self, DESFireWrite.self, DESFireChangeKey.self,
                          DESFireCreateApp.self, DESFireCreateFile.self, DESFireDeleteApp.self, DESFireFormat.self])
    }
}

/// Connects, proves the card a DESFire (GetVersion) and runs `body` in one transaction.
func withDESFire<T>(_ readerOptions: ReaderOptions, _ trace: TraceOptions,
                    _ body: (_ reader: String, _ card: DESFireCard) throws -> T) throws -> T {
    try readerOptions.withCard(transaction: true) { reader, pcsc in
        let transport = APDUTransport(channel: PCSCChannel(card: pcsc), observer: trace.observer)
        guard let card = try DESFireCard.detect(transport) else {
            throw Failure(.unexpected, "not a MIFARE DESFire (no answer to GetVersion, or it names another chip)")
        }
        return try body(reader, card)
    }
}

/// Runs a DESFire command's body, every library error turned into the documented exit code and
/// one line that says what the card holds.
func reportingDESFireFailures(_ body: () throws -> Void) throws {
    try reportingFailures {
        do { try body() } catch { throw desfireFailure(error) }
    }
}

/// The one place a DESFire error becomes an exit code: a change not confirmed is refused by
/// policy (77); the card's refusals and answers that do not verify are 1; a malformed answer is
/// I/O (74); an interrupted change is its cause's code, with the card's state in words.
func desfireFailure(_ error: any Error) -> Failure {
    switch error {
    case let e as DESFireError:
        switch e.kind {
        case .needsConfirmation: return Failure(.refused, e.message + " (--yes)")
        case .malformed: return Failure(.ioError, e.message)
        case .parameterError where e.status == nil: return Failure(.usage, e.message)
        default: return Failure(.unexpected, e.message)
        }
    case let e as DESFireInterrupted:
        let cause = desfireFailure(e.underlying)
        return Failure(cause.status, "\(Failure.reason(e.underlying)) during \(e.operation); \(e.stateWords)")
    case let e as DESFireNDEFFormatInterrupted:
        return Failure(desfireFailure(e.underlying).status, e.description)
    default:
        return Failure(error)
    }
}

extension DESFireAccess {
    /// "key 1", "free", "never" for JSON too.
    var json: JSON {
        switch self {
        case let .key(k): return .int(Int(k))
        case .free: return .string("free")
        case .never: return .string("never")
        }
    }
}

extension DESFireFileSettings {
    /// "backup data, 64 bytes, MAC, read free, write key 1, read-write key 1, change key 0".
    var words: String {
        var parts = ["\(type)"]
        switch type {
        case .standardData, .backupData: parts.append("\(size ?? 0) bytes")
        case .value:
            if let l = limits {
                parts.append("limits \(l.lower)…\(l.upper)")
                if l.limitedCreditEnabled { parts.append("limited credit \(l.limitedCreditValue)") }
                if l.freeGetValue { parts.append("GetValue free") }
            }
        case .linearRecord, .cyclicRecord:
            if let r = records { parts.append("\(r.currentRecords) of \(r.maxRecords) records of \(r.recordSize) bytes") }
        case .transactionMAC: break
        }
        parts.append("comm \(commMode)")
        parts.append(access.description)
        return parts.joined(separator: ", ")
    }

    var json: JSON {
        var m: [(String, JSON)] = [("type", .string(typeName)), ("commMode", .string(commMode.rawValue)),
                                   ("access", .object([("read", access.read.json), ("write", access.write.json),
                                                       ("readWrite", access.readWrite.json), ("change", access.change.json)]))]
        if let size { m.append(("size", .int(size))) }
        if let l = limits {
            m.append(("limits", .object([("lower", .int(Int(l.lower))), ("upper", .int(Int(l.upper))), ("limitedCreditValue", .int(Int(l.limitedCreditValue))),
                                         ("limitedCreditEnabled", .bool(l.limitedCreditEnabled)), ("freeGetValue", .bool(l.freeGetValue))])))
        }
        if let r = records {
            m.append(("records", .object([("recordSize", .int(r.recordSize)), ("maxRecords", .int(r.maxRecords)), ("currentRecords", .int(r.currentRecords))])))
        }
        return .object(m)
    }

    var typeName: String {
        switch type {
        case .standardData: return "standard"
        case .backupData: return "backup"
        case .value: return "value"
        case .linearRecord: return "linearRecord"
        case .cyclicRecord: return "cyclicRecord"
        case .transactionMAC: return "transactionMAC"
        }
    }
}

extension DESFireFileContents {
    var json: JSON {
        switch self {
        case let .data(bytes): return .object([("hex", .hex(bytes))])
        case let .value(v): return .object([("value", .int(Int(v)))])
        case let .records(r): return .object([("records", .array(r.map { .hex($0) }))])
        }
    }

    var lines: [String] {
        switch self {
        case let .data(bytes): return bytes.isEmpty ? ["(empty)"] : stride(from: 0, to: bytes.count, by: 16).map { Hex.encode(bytes[$0..<min(bytes.count, $0 + 16)], separator: " ") }
        case let .value(v): return ["value \(v)"]
        case let .records(r): return r.isEmpty ? ["(no records)"] : r.enumerated().map { "record \($0.offset): \(Hex.encode($0.element, separator: " "))" }
        }
    }
}
