// The NDEF message (NFC Forum NDEF 1.0): strict and relaxed decoding, chunks joined, and
// encoding.

/// An NDEF message: one or more records (NFC Forum NDEF 1.0).
public struct NDEFMessage: Hashable, Sendable {
    public var records: [NDEFRecord]

    public init(records: [NDEFRecord]) { self.records = records }

    /// Something the relaxed decoder passed over, and where.
    public struct Skipped: Hashable, Sendable, CustomStringConvertible {
        public var offset: Int
        public var what: String
        public var description: String { "byte \(offset): \(what)" }
    }

    /// Decodes strictly: any broken rule throws with the offset and the rule.
    /// Chunked records are joined. Never allocates more than the input holds.
    public init(decoding bytes: [UInt8]) throws(NDEFError) {
        var skipped: [Skipped] = []
        self = try Self.decode(bytes[...], strict: true, skipped: &skipped)
    }

    /// Decodes what it can of a damaged message, saying what it skipped.
    public static func decodeRelaxed(_ bytes: [UInt8]) -> (message: NDEFMessage, skipped: [Skipped]) {
        var skipped: [Skipped] = []
        let message = (try? decode(bytes[...], strict: false, skipped: &skipped)) ?? NDEFMessage(records: [])
        return (message, skipped)
    }

    static func decode(_ bytes: ArraySlice<UInt8>, strict: Bool, skipped: inout [Skipped]) throws(NDEFError) -> NDEFMessage {
        let base = bytes.startIndex
        var records: [NDEFRecord] = []
        records.reserveCapacity(min(bytes.count / 3, 4096))
        var i = base
        var first = true
        var sawEnd = false
        // A chunked record being assembled: its first chunk's type/id/tnf and the payload so far.
        var chunkHead: NDEFRecord? = nil
        var chunkPayload: [UInt8] = []
        var chunkOffset = 0

        func fail(_ offset: Int, _ rule: NDEFError.Rule, _ detail: String? = nil) throws(NDEFError) {
            if strict { throw NDEFError(offset: offset, rule: rule, detail: detail) }
            skipped.append(Skipped(offset: offset, what: rule.rawValue + (detail.map { " (\($0))" } ?? "")))
        }

        if bytes.isEmpty {
            try fail(0, .emptyMessage)
            return NDEFMessage(records: [])
        }

        while i < bytes.endIndex {
            let start = i - base
            if sawEnd {
                // Relaxed: note it and read on; what follows may still be records.
                try fail(start, .trailingBytes, "\(bytes.endIndex - i) bytes")
                sawEnd = false
            }
            let header = bytes[i]
            let mb = header & 0x80 != 0, me = header & 0x40 != 0, cf = header & 0x20 != 0
            let sr = header & 0x10 != 0, il = header & 0x08 != 0
            var tnf = TNF(rawValue: header & 0x07)!
            let fixed = 2 + (sr ? 1 : 4) + (il ? 1 : 0)
            guard bytes.endIndex - i >= fixed else {
                try fail(start, .truncated, "header needs \(fixed) bytes, \(bytes.endIndex - i) remain")
                break
            }
            let typeLength = Int(bytes[i + 1])
            var payloadLength: Int
            var j = i + 2
            if sr {
                payloadLength = Int(bytes[j]); j += 1
            } else {
                payloadLength = Int(bytes[j]) << 24 | Int(bytes[j + 1]) << 16 | Int(bytes[j + 2]) << 8 | Int(bytes[j + 3]); j += 4
            }
            let idLength = il ? Int(bytes[j]) : 0
            if il { j += 1 }
            let remaining = bytes.endIndex - j
            // Checked before anything is allocated: a length field cannot make us reserve memory
            // the input does not hold.
            guard typeLength + idLength <= remaining, payloadLength <= remaining - typeLength - idLength else {
                try fail(start, .payloadTooLarge, "type \(typeLength) + id \(idLength) + payload \(payloadLength) bytes, \(remaining) remain")
                break
            }
            // One-byte types ("U", "T") come from a shared table: no allocation per record.
            let typeBytes = typeLength == 1 ? Self.singleByteTypes[Int(bytes[j])] : typeLength == 0 ? [] : Array(bytes[j..<(j + typeLength)])
            j += typeLength
            let idBytes = idLength == 0 ? [] : Array(bytes[j..<(j + idLength)])
            j += idLength
            let payload = bytes[j..<(j + payloadLength)]
            i = j + payloadLength

            if first && !mb { try fail(start, .messageBeginMissing) }
            if !first && mb && chunkHead == nil { try fail(start, .messageBeginRepeated) }
            first = false
            if me { sawEnd = true }

            if let head = chunkHead {
                // Continuing a chunked record.
                if tnf != .unchanged { try fail(start, .chunkContinuationExpected, "TNF \(tnf.rawValue)") }
                if typeLength != 0 { try fail(start, .typeForbidden) }
                if idLength != 0 { try fail(start, .chunkIDForbidden) }
                chunkPayload += payload
                if !cf {
                    records.append(NDEFRecord(tnf: head.tnf, type: head.type, id: head.id, payload: chunkPayload[...]))
                    chunkHead = nil
                    chunkPayload = []
                } else if me {
                    try fail(start, .chunkMessageEnd)
                }
                continue
            }

            switch tnf {
            case .empty:
                if typeLength != 0 || idLength != 0 || payloadLength != 0 { try fail(start, .emptyRecordNotEmpty) }
            case .wellKnown, .media, .absoluteURI, .external:
                if typeLength == 0 { try fail(start, .typeRequired, "TNF \(tnf.rawValue)") }
            case .unknown:
                if typeLength != 0 { try fail(start, .typeForbidden) }
            case .unchanged:
                try fail(start, .unchangedOutsideChunk)
                tnf = .unknown
            case .reserved:
                try fail(start, .reservedTNF)
                tnf = .unknown
            }
            if cf {
                if me { try fail(start, .chunkMessageEnd) }
                chunkHead = NDEFRecord(tnf: tnf, type: typeBytes, id: idBytes, payload: [])
                chunkPayload = Array(payload)
                chunkOffset = start
                continue
            }
            records.append(NDEFRecord(tnf: tnf, type: typeBytes, id: idBytes, payload: payload))
        }
        if let head = chunkHead {
            try fail(chunkOffset, .chunkEndMissing)
            records.append(NDEFRecord(tnf: head.tnf, type: head.type, id: head.id, payload: chunkPayload[...]))
        }
        if !sawEnd && !records.isEmpty { try fail(bytes.count, .messageEndMissing) }
        return NDEFMessage(records: records)
    }

    static let singleByteTypes: [[UInt8]] = (0...255).map { [UInt8($0)] }

    /// Encodes the message. Records whose payload exceeds `chunkSize` are sent as chunks.
    /// - Throws: when a type or ID is longer than 255 bytes or a payload longer than 2^32-1.
    public func encoded(chunkSize: Int? = nil) throws(NDEFError) -> [UInt8] {
        for record in records {
            if record.type.count > 255 { throw NDEFError(offset: 0, rule: .tooLarge, detail: "type of \(record.type.count) bytes (255 at most)") }
            if record.id.count > 255 { throw NDEFError(offset: 0, rule: .tooLarge, detail: "ID of \(record.id.count) bytes (255 at most)") }
            if UInt64(record.payload.count) > UInt64(UInt32.max) { throw NDEFError(offset: 0, rule: .tooLarge, detail: "payload over 4 GiB") }
            if record.tnf == .empty && !(record.type.isEmpty && record.id.isEmpty && record.payload.isEmpty) {
                throw NDEFError(offset: 0, rule: .emptyRecordNotEmpty)
            }
        }
        if records.isEmpty { throw NDEFError(offset: 0, rule: .emptyMessage) }
        var out: [UInt8] = []
        out.reserveCapacity(records.reduce(0) { $0 + $1.payload.count + $1.type.count + $1.id.count + 7 })
        for (index, record) in records.enumerated() {
            let isFirst = index == 0, isLast = index == records.count - 1
            if let size = chunkSize, size > 0, record.payload.count > size {
                var offset = record.payload.startIndex
                var chunkIndex = 0
                while offset < record.payload.endIndex {
                    let end = min(offset + size, record.payload.endIndex)
                    let firstChunk = chunkIndex == 0, lastChunk = end == record.payload.endIndex
                    Self.append(
                        tnf: firstChunk ? record.tnf : .unchanged, type: firstChunk ? record.type : [],
                        id: firstChunk ? record.id : [], payload: record.payload[offset..<end],
                        mb: isFirst && firstChunk, me: isLast && lastChunk, cf: !lastChunk, to: &out)
                    offset = end
                    chunkIndex += 1
                }
            } else {
                Self.append(tnf: record.tnf, type: record.type, id: record.id, payload: record.payload,
                            mb: isFirst, me: isLast, cf: false, to: &out)
            }
        }
        return out
    }

    static func append(tnf: TNF, type: [UInt8], id: [UInt8], payload: ArraySlice<UInt8>, mb: Bool, me: Bool, cf: Bool, to out: inout [UInt8]) {
        let sr = payload.count < 256
        var header = tnf.rawValue
        if mb { header |= 0x80 }
        if me { header |= 0x40 }
        if cf { header |= 0x20 }
        if sr { header |= 0x10 }
        if !id.isEmpty { header |= 0x08 }
        out.append(header)
        out.append(UInt8(type.count))
        if sr {
            out.append(UInt8(payload.count))
        } else {
            let n = UInt32(payload.count)
            out += [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)]
        }
        if !id.isEmpty { out.append(UInt8(id.count)) }
        out += type
        out += id
        out += payload
    }
}
