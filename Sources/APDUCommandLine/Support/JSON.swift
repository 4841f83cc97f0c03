// The CLI's JSON values with ordered keys, written compactly and always escaped.
import ISO7816

/// A JSON value with ordered keys, written compactly. Every string is escaped so the output
/// is valid JSON and carries no raw control characters, whatever bytes it came from.
package indirect enum JSON: Sendable {
    case object([(String, JSON)])
    case array([JSON])
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)
    case null

    package static func hex(_ bytes: some Sequence<UInt8>) -> JSON { .string(bytes.hexString) }
    package static func optional(_ s: String?) -> JSON { s.map(JSON.string) ?? .null }

    package var serialized: String {
        var out = ""
        write(into: &out)
        return out
    }

    package func write(into out: inout String) {
        switch self {
        case let .object(members):
            out += "{"
            for (i, (key, value)) in members.enumerated() {
                if i > 0 { out += "," }
                JSON.writeString(key, into: &out)
                out += ":"
                value.write(into: &out)
            }
            out += "}"
        case let .array(items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                item.write(into: &out)
            }
            out += "]"
        case let .string(s): JSON.writeString(s, into: &out)
        case let .int(n): out += String(n)
        case let .double(d): out += d.isFinite ? String(d) : "null"
        case let .bool(b): out += b ? "true" : "false"
        case .null: out += "null"
        }
    }

    package static func writeString(_ s: String, into out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar.value {
            case 0x22: out += "\\\""
            case 0x5C: out += "\\\\"
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            case 0x00..<0x20, 0x7F..<0xA0, 0x2028, 0x2029:
                let h = String(scalar.value, radix: 16, uppercase: true)
                out += "\\u" + String(repeating: "0", count: 4 - h.count) + h
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
