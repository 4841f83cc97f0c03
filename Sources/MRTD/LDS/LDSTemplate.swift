// Reading the BER-TLV templates of LDS files through ISO7816's BERTLV (ISO/IEC 7816-4 §5.2:
// definite lengths only, which is all Part 10 uses outside EF.SOD), with errors that name the
// file. Nothing here indexes card data without a bounds check.
import ISO7816

extension TLV {
    /// The tag as a number (`5F1F` → 0x5F1F); tags are at most 4 bytes.
    var tagNumber: UInt32 { tag.prefix(4).reduce(0) { $0 << 8 | UInt32($1) } }
}

enum LDSTemplate {
    /// The elements of the template `tag` that starts `bytes`. Bytes after the template (padding
    /// a reader added, or junk) are ignored, as long as the template itself is whole.
    static func open(_ bytes: [UInt8], tag: UInt32, file: String) throws(LDSError) -> [TLV] {
        guard !bytes.isEmpty else { throw LDSError(.structure, file: file, "the file is empty") }
        let extent = firstObjectExtent(bytes) ?? bytes.count
        let objects: [TLV]
        do {
            objects = try BERTLV.decode(Array(bytes.prefix(extent)))
        } catch {
            throw LDSError(.tlv, file: file, error.description)
        }
        guard let template = objects.first else { throw LDSError(.structure, file: file, "the file holds no data object") }
        guard template.tagNumber == tag else {
            throw LDSError(.structure, file: file, "the file starts with tag \(template.tagHex), not \(hex(tag))")
        }
        return try elements(of: template, file: file)
    }

    /// The children of a constructed object; when BERTLV kept only its bytes (it did not parse,
    /// or lies deeper than BERTLV's recursion limit), they are decoded here so the error is seen.
    static func elements(of object: TLV, file: String) throws(LDSError) -> [TLV] {
        if let children = object.children { return children }
        do {
            return try BERTLV.decode(object.value)
        } catch {
            throw LDSError(.tlv, file: file, "inside tag \(object.tagHex): \(error.description)")
        }
    }

    /// How many bytes the first data object of `bytes` takes (tag, length and value), when its
    /// header is readable and the value fits; nil otherwise (the decoder then reports why).
    static func firstObjectExtent(_ bytes: [UInt8]) -> Int? {
        var i = 0
        guard i < bytes.count else { return nil }
        let first = bytes[i]
        i += 1
        if first & 0x1F == 0x1F {
            var count = 0
            while true {
                guard i < bytes.count, count < 4 else { return nil }
                let b = bytes[i]
                i += 1
                count += 1
                if b & 0x80 == 0 { break }
            }
        }
        guard i < bytes.count else { return nil }
        let lengthByte = bytes[i]
        i += 1
        var length = 0
        if lengthByte < 0x80 {
            length = Int(lengthByte)
        } else {
            let count = Int(lengthByte & 0x7F)
            guard count >= 1, count <= 4, bytes.count - i >= count else { return nil }
            for _ in 0..<count {
                length = length << 8 | Int(bytes[i])
                i += 1
            }
        }
        guard bytes.count - i >= length else { return nil }
        return i + length
    }

    static func hex(_ tag: UInt32) -> String {
        var bytes: [UInt8] = []
        var t = tag
        repeat {
            bytes.insert(UInt8(t & 0xFF), at: 0)
            t >>= 8
        } while t != 0
        return bytes.hexString
    }

    /// A primitive value as text: UTF-8 (Part 10 encodes DG11/DG12 text so; Latin-1 documents
    /// show as replacement characters rather than failing).
    static func text(_ value: [UInt8]) -> String {
        String(decoding: value, as: UTF8.self)
    }

    /// The tag list of a `5C` element: the tags, one after another, each 1–4 bytes.
    static func tagList(_ value: [UInt8]) -> [UInt32] {
        var tags: [UInt32] = []
        var i = 0
        while i < value.count {
            var tag = UInt32(value[i])
            i += 1
            if tag & 0x1F == 0x1F {
                var count = 0
                while i < value.count, count < 3 {
                    let b = value[i]
                    tag = tag << 8 | UInt32(b)
                    i += 1
                    count += 1
                    if b & 0x80 == 0 { break }
                }
            }
            tags.append(tag)
        }
        return tags
    }

    /// An unsigned big-endian integer of at most 4 bytes; nil when longer or empty.
    static func integer(_ value: [UInt8]) -> Int? {
        guard !value.isEmpty, value.count <= 4 else { return nil }
        return value.reduce(0) { $0 << 8 | Int($1) }
    }
}
