// BER-TLV (ISO/IEC 7816-4 §5.2): decoding that never reads past its input, length encoding,
// and trees for people.

/// One BER-TLV data object (ISO/IEC 7816-4 §5.2), with its children when constructed.
public struct TLV: Hashable, Sendable {
    /// The tag bytes as encoded (1–4 bytes).
    public var tag: [UInt8]
    public var value: [UInt8]
    /// Decoded children for a constructed object whose value parses as TLV; nil otherwise.
    public var children: [TLV]?

    public var isConstructed: Bool { (tag.first ?? 0) & 0x20 != 0 }
    public var tagHex: String { tag.hexString }
}

/// Why bytes are not BER-TLV, with the offset where it went wrong.
public struct TLVError: Error, Hashable, Sendable, CustomStringConvertible {
    public var offset: Int
    public var reason: String
    public var description: String { "TLV at byte \(offset): \(reason)" }
}

public enum BERTLV {
    /// Decodes a sequence of data objects. `00`/`FF` padding between objects is skipped.
    /// Constructed objects are decoded recursively up to `maxDepth`; deeper ones keep only
    /// their value bytes. Never reads past the input.
    public static func decode(_ bytes: [UInt8], maxDepth: Int = 16) throws(TLVError) -> [TLV] {
        try decode(bytes[...], base: 0, depth: maxDepth)
    }

    static func decode(_ bytes: ArraySlice<UInt8>, base: Int, depth: Int) throws(TLVError) -> [TLV] {
        var result: [TLV] = []
        var i = bytes.startIndex
        func offset(_ index: Int) -> Int { base + index - bytes.startIndex }
        while i < bytes.endIndex {
            if bytes[i] == 0x00 || bytes[i] == 0xFF { i += 1; continue }
            let tagStart = i
            var tag = [bytes[i]]
            i += 1
            if tag[0] & 0x1F == 0x1F {
                while true {
                    guard i < bytes.endIndex else { throw TLVError(offset: offset(tagStart), reason: "tag runs past the end") }
                    tag.append(bytes[i])
                    i += 1
                    if tag.last! & 0x80 == 0 { break }
                    if tag.count >= 4 { throw TLVError(offset: offset(tagStart), reason: "tag longer than 4 bytes") }
                }
            }
            guard i < bytes.endIndex else { throw TLVError(offset: offset(i), reason: "length missing after tag \(tag.hexString)") }
            let first = bytes[i]
            i += 1
            var length = 0
            if first < 0x80 {
                length = Int(first)
            } else if first == 0x80 {
                throw TLVError(offset: offset(i - 1), reason: "indefinite length is not used in ISO 7816")
            } else {
                let count = Int(first & 0x7F)
                guard count <= 4 else { throw TLVError(offset: offset(i - 1), reason: "length of \(count) bytes") }
                guard bytes.endIndex - i >= count else { throw TLVError(offset: offset(i - 1), reason: "length runs past the end") }
                for _ in 0..<count {
                    length = length << 8 | Int(bytes[i])
                    i += 1
                }
            }
            guard bytes.endIndex - i >= length else {
                throw TLVError(offset: offset(tagStart), reason: "tag \(tag.hexString) claims \(length) bytes, only \(bytes.endIndex - i) remain")
            }
            let value = bytes[i..<(i + length)]
            var object = TLV(tag: tag, value: Array(value), children: nil)
            if object.isConstructed && depth > 0 {
                object.children = try? decode(value, base: offset(i), depth: depth - 1)
            }
            result.append(object)
            i += length
        }
        return result
    }

    /// The BER length field for `length` (short form below 128, then 81 xx, 82 xx xx, 83 xx xx xx).
    public static func encodeLength(_ length: Int) -> [UInt8] {
        switch length {
        case ..<0x80: return [UInt8(length)]
        case ..<0x100: return [0x81, UInt8(length)]
        case ..<0x10000: return [0x82, UInt8(length >> 8), UInt8(length & 0xFF)]
        default: return [0x83, UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
        }
    }

    /// Names of common interindustry and EMV tags, for trees people read.
    public static let tagNames: [String: String] = [
        "6F": "FCI template", "62": "FCP template", "64": "FMD template", "84": "DF name (AID)",
        "A5": "FCI proprietary template", "50": "application label", "87": "application priority indicator",
        "88": "short EF identifier", "9F38": "PDOL", "5F2D": "language preference", "9F11": "issuer code table index",
        "9F12": "application preferred name", "BF0C": "FCI issuer discretionary data", "4F": "application identifier",
        "61": "application template", "80": "file size / proprietary", "82": "file descriptor", "83": "file identifier",
        "8A": "life cycle status", "8C": "security attributes (compact)", "A1": "security attributes", "73": "discretionary data",
        "53": "discretionary data", "5A": "application PAN", "57": "track 2 equivalent data", "70": "record template",
        "77": "response template (format 2)", "9F36": "application transaction counter", "9F26": "application cryptogram",
    ]

    /// An indented tree: tag, name, and value as hex (and as text when printable).
    public static func tree(_ objects: [TLV], indent: String = "") -> [String] {
        var lines: [String] = []
        for object in objects {
            let name = tagNames[object.tagHex].map { " (\($0))" } ?? ""
            if let children = object.children {
                lines.append("\(indent)\(object.tagHex)\(name)")
                lines += tree(children, indent: indent + "  ")
            } else {
                var line = "\(indent)\(object.tagHex)\(name) \(Hex.encode(object.value, separator: " "))"
                if !object.value.isEmpty, object.value.allSatisfy({ (0x20..<0x7F).contains($0) }) {
                    line += "  \"\(String(decoding: object.value, as: UTF8.self))\""
                }
                lines.append(line)
            }
        }
        return lines
    }
}
