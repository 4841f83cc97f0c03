// NDEF messages shown in a terminal: one line a record, every piece of tag text escaped.

/// Text from a tag made fit for a terminal.
public enum TerminalText {
    /// `text` with every control character (C0, DEL, C1) and bidi/format control shown as an
    /// escape (`\n`, `\u{1B}`), so nothing from a card can move the cursor, recolour or retitle
    /// a terminal, or reorder what is shown.
    public static func escaping(_ text: String) -> String {
        var out = ""
        out.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x0A: out += "\\n"
            case 0x09: out += "\\t"
            case 0x0D: out += "\\r"
            case 0x5C: out += "\\\\"
            case 0x00..<0x20, 0x7F..<0xA0, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0xFEFF:
                out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Spaced uppercase hex: "D1 01 0B".
    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16, uppercase: true) }.joined(separator: " ")
    }
}

extension NDEFMessage {
    /// One line per record for people ("[0] URI  https://example.com"), nested records
    /// indented, every piece of tag text escaped with `TerminalText.escaping`.
    public func displayLines(strict: Bool = true, indent: String = "") -> [String] {
        let safe = TerminalText.escaping
        var out: [String] = []
        for (i, record) in records.enumerated() {
            let prefix = "\(indent)[\(i)] "
            let idNote = record.id.isEmpty ? "" : "  id \"\(safe(String(decoding: record.id, as: UTF8.self)))\""
            let content: RecordContent
            do { content = try record.content(strict: strict) } catch {
                out.append(prefix + "\(record.tnf) \"\(safe(record.typeString))\"  INVALID: \(error)")
                continue
            }
            switch content {
            case let .uri(u): out.append(prefix + "URI  \(safe(u))" + idNote)
            case let .text(t, language, encoding): out.append(prefix + "Text (\(safe(language)), \(encoding.rawValue))  \"\(safe(t))\"" + idNote)
            case let .smartPoster(p):
                out.append(prefix + "Smart Poster  \(safe(p.uri ?? "(no URI)"))" + idNote)
                out += NDEFMessage(records: p.records).displayLines(strict: strict, indent: indent + "    ")
            case let .mime(type, text):
                let body = text.map { "  \"\(safe(String($0.prefix(200))))\"\($0.count > 200 ? "…" : "")" } ?? "  \(record.payload.count) bytes"
                out.append(prefix + "MIME \(safe(type))" + body + idNote)
            case let .absoluteURI(u): out.append(prefix + "Absolute URI  \(safe(u))" + idNote)
            case let .androidApplication(package): out.append(prefix + "Android app  \(safe(package))" + idNote)
            case let .external(type): out.append(prefix + "External \(safe(type))  \(TerminalText.hex(record.payload.prefix(32)))" + idNote)
            case .empty: out.append(prefix + "Empty")
            case .other:
                out.append(prefix + "\(record.tnf) \"\(safe(record.typeString))\"  \(record.payload.count) bytes: \(TerminalText.hex(record.payload.prefix(32)))" + idNote)
            }
        }
        return out
    }
}

extension BackgroundReadingVerdict {
    /// "iPhone background reading: yes — …", terminal-safe.
    public var displayLine: String {
        "iPhone background reading: " + (eligible ? "yes" : "no") + " — " + TerminalText.escaping(reason)
    }
}
