// Data object lists (EMV Book 3 §5.4): a card's PDOL, DDOL, CDOL or log format, parsed, and the
// terminal's values concatenated exactly as long as each entry says.
import ISO7816

/// One entry of a DOL: a tag and the length the card wants its value in.
public struct DOLEntry: Sendable, Hashable {
    public var tag: [UInt8]
    public var length: Int
    public init(tag: [UInt8], length: Int) {
        self.tag = tag
        self.length = length
    }
}

/// Why bytes are not a data object list.
public struct EMVFormatError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// A data object list (PDOL 9F38, DDOL 9F49, CDOL 8C/8D, Log Format 9F4F).
public struct DataObjectList: Sendable, Hashable {
    public var entries: [DOLEntry]

    public init(entries: [DOLEntry]) { self.entries = entries }

    /// Parses tag-length pairs: BER tags of 1-3 bytes, one-byte lengths.
    public init(parsing bytes: [UInt8]) throws(EMVFormatError) {
        var entries: [DOLEntry] = []
        var i = 0
        while i < bytes.count {
            var tag = [bytes[i]]
            i += 1
            if tag[0] & 0x1F == 0x1F {
                while true {
                    guard i < bytes.count else { throw EMVFormatError("the data object list \(bytes.hexString) ends inside a tag") }
                    tag.append(bytes[i])
                    i += 1
                    if tag.last! & 0x80 == 0 { break }
                    guard tag.count < 4 else { throw EMVFormatError("the data object list \(bytes.hexString) has a tag longer than 3 bytes") }
                }
            }
            guard i < bytes.count else { throw EMVFormatError("the data object list \(bytes.hexString) ends before the length of tag \(tag.hexString)") }
            entries.append(DOLEntry(tag: tag, length: Int(bytes[i])))
            i += 1
        }
        self.entries = entries
    }

    /// The bytes the DOL asks for (Book 3 §5.4): each entry's value from `values`, fitted to
    /// its length (numeric values are cut or padded on the left, others on the right), zeros
    /// for a tag the terminal does not know.
    public func build(_ values: [[UInt8]: [UInt8]]) -> [UInt8] {
        var out: [UInt8] = []
        for entry in entries {
            guard let value = values[entry.tag] else {
                out += [UInt8](repeating: 0, count: entry.length)
                continue
            }
            let numeric = EMVTags.info(entry.tag)?.format == .numeric
            if value.count == entry.length {
                out += value
            } else if value.count > entry.length {
                out += numeric ? Array(value.suffix(entry.length)) : Array(value.prefix(entry.length))
            } else {
                let pad = [UInt8](repeating: 0, count: entry.length - value.count)
                out += numeric ? pad + value : value + pad
            }
        }
        return out
    }

    /// The total length of the built data.
    public var dataLength: Int { entries.reduce(0) { $0 + $1.length } }

    /// Splits data built from this list back into its values (a log entry, by the log format).
    public func split(_ data: [UInt8]) throws(EMVFormatError) -> [(tag: [UInt8], value: [UInt8])] {
        guard data.count >= dataLength else {
            throw EMVFormatError("\(data.count) bytes where the data object list asks for \(dataLength)")
        }
        var out: [(tag: [UInt8], value: [UInt8])] = []
        var i = 0
        for e in entries {
            out.append((e.tag, Array(data[i..<(i + e.length)])))
            i += e.length
        }
        return out
    }
}
