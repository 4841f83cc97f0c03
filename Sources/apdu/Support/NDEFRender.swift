import ISO7816
import NDEF

/// How NDEF messages look in JSON (docs/ndef.md) and to people.
enum NDEFRender {
    static func recordJSON(_ record: NDEFRecord, strict: Bool) -> JSON {
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

    static func messageJSON(_ message: NDEFMessage, bytes: [UInt8], strict: Bool) -> JSON {
        .object([("hex", .hex(bytes)), ("records", .array(message.records.map { recordJSON($0, strict: strict) }))])
    }

    static func verdictJSON(_ v: BackgroundReadingVerdict) -> JSON {
        .object([("eligible", .bool(v.eligible)), ("uri", .optional(v.uri)), ("reason", .string(v.reason))])
    }

    /// Lines for people, every piece of tag text made terminal-safe.
    static func lines(_ message: NDEFMessage, strict: Bool, indent: String = "") -> [String] {
        var out: [String] = []
        for (i, record) in message.records.enumerated() {
            let prefix = "\(indent)[\(i)] "
            let idNote = record.id.isEmpty ? "" : "  id \"\(Terminal.safe(String(decoding: record.id, as: UTF8.self)))\""
            let content: RecordContent
            do { content = try record.content(strict: strict) } catch {
                out.append(prefix + "\(record.tnf) \"\(Terminal.safe(record.typeString))\"  INVALID: \(error)")
                continue
            }
            switch content {
            case let .uri(u): out.append(prefix + "URI  \(Terminal.safe(u))" + idNote)
            case let .text(t, language, encoding): out.append(prefix + "Text (\(Terminal.safe(language)), \(encoding.rawValue))  \"\(Terminal.safe(t))\"" + idNote)
            case let .smartPoster(p):
                out.append(prefix + "Smart Poster  \(Terminal.safe(p.uri ?? "(no URI)"))" + idNote)
                out += lines(NDEFMessage(records: p.records), strict: strict, indent: indent + "    ")
            case let .mime(type, text):
                let body = text.map { "  \"\(Terminal.safe(String($0.prefix(200))))\"\($0.count > 200 ? "…" : "")" } ?? "  \(record.payload.count) bytes"
                out.append(prefix + "MIME \(Terminal.safe(type))" + body + idNote)
            case let .absoluteURI(u): out.append(prefix + "Absolute URI  \(Terminal.safe(u))" + idNote)
            case let .androidApplication(package): out.append(prefix + "Android app  \(Terminal.safe(package))" + idNote)
            case let .external(type): out.append(prefix + "External \(Terminal.safe(type))  \(Hex.encode(record.payload.prefix(32), separator: " "))" + idNote)
            case .empty: out.append(prefix + "Empty")
            case .other:
                out.append(prefix + "\(record.tnf) \"\(Terminal.safe(record.typeString))\"  \(record.payload.count) bytes: \(Hex.encode(record.payload.prefix(32), separator: " "))" + idNote)
            }
        }
        return out
    }

    static func verdictLine(_ v: BackgroundReadingVerdict) -> String {
        "iPhone background reading: " + (v.eligible ? "yes" : "no") + " — " + Terminal.safe(v.reason)
    }
}
