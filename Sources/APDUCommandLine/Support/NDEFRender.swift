// How NDEF records, messages and the background-reading verdict look in JSON.
import ISO7816
import NDEF

/// How NDEF messages look in JSON (docs/ndef.md) and to people.
package enum NDEFRender {
    package static func recordJSON(_ record: NDEFRecord, strict: Bool) -> JSON {
        var m: [(String, JSON)] = [
            ("tnf", .string(record.tnf.description)),
            ("type", .string(record.typeString)),
            ("typeHex", .hex(record.type)),
            ("id", .string(String(decoding: record.id, as: UTF8.self))),
            ("idHex", .hex(record.id)),
            ("payload", .hex(record.payload)),
        ]
        let content: RecordContent
        do { content = try record.content(strict: strict) } catch {
            m.append(("error", .string(error.description)))
            return .object(m)
        }
        switch content {
        case let .uri(u): m.append(("uri", .string(u)))
        case let .text(t, language, encoding):
            m += [("text", .string(t)), ("language", .string(language)), ("encoding", .string(encoding.rawValue))]
        case let .smartPoster(p):
            m.append(("uri", .optional(p.uri)))
            m.append(("titles", .array(p.titles.map { .object([("language", .string($0.language)), ("text", .string($0.text))]) })))
            if let a = p.action { m.append(("action", .string(["do", "save", "open"].indices.contains(Int(a)) ? ["do", "save", "open"][Int(a)] : "0x" + Hex.encode([a])))) }
            if let s = p.size { m.append(("size", .int(Int(s)))) }
            if let t = p.mimeType { m.append(("targetType", .string(t))) }
            m.append(("records", .array(p.records.map { recordJSON($0, strict: strict) })))
        case let .mime(type, text):
            m.append(("mimeType", .string(type)))
            if let text { m.append(("text", .string(text))) }
        case let .absoluteURI(u): m.append(("uri", .string(u)))
        case let .androidApplication(package): m.append(("androidPackage", .string(package)))
        case let .external(type): m.append(("externalType", .string(type)))
        case .empty, .other: break
        }
        return .object(m)
    }

    package static func messageJSON(_ message: NDEFMessage, bytes: [UInt8], strict: Bool) -> JSON {
        .object([("hex", .hex(bytes)), ("records", .array(message.records.map { recordJSON($0, strict: strict) }))])
    }

    package static func verdictJSON(_ v: BackgroundReadingVerdict) -> JSON {
        .object([("eligible", .bool(v.eligible)), ("uri", .optional(v.uri)), ("reason", .string(v.reason))])
    }
}
