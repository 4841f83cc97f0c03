import ISO7816

/// The Type 2 capability container, page 3 (T2T 1.0 §6.1).
public struct Type2CapabilityContainer: Hashable, Sendable {
    public var bytes: [UInt8]
    public var version: UInt8
    /// The data area's size in bytes (CC byte 2 × 8).
    public var dataAreaSize: Int
    /// Read access nibble (0: granted) and write access nibble (0: granted, F: none).
    public var readAccess: UInt8
    public var writeAccess: UInt8

    public var versionString: String { "\(version >> 4).\(version & 0x0F)" }

    public init(bytes: [UInt8]) throws(TagError) {
        guard bytes.count == 4 else { throw TagError(.badCapabilityContainer, "the capability container must be 4 bytes") }
        guard bytes[0] == 0xE1 else {
            throw TagError(.notNDEF, "not NDEF-formatted: the capability container starts \(Hex.encode([bytes[0]])), not E1 (CC \(bytes.hexString))")
        }
        self.bytes = bytes
        version = bytes[1]
        guard version >> 4 == 1 else {
            throw TagError(.unsupportedVersion, "unsupported Type 2 mapping version \(version >> 4).\(version & 0x0F) (this tool reads 1.x)")
        }
        dataAreaSize = Int(bytes[2]) * 8
        guard dataAreaSize >= 8 else { throw TagError(.badCapabilityContainer, "the capability container announces no data area (CC \(bytes.hexString))") }
        readAccess = bytes[3] >> 4
        writeAccess = bytes[3] & 0x0F
    }
}

/// The TLV area of a Type 2 tag's data area (T2T §4.4 – §4.5): where the NDEF message is and
/// which bytes lock and memory control TLVs reserve.
public struct Type2TLVArea: Hashable, Sendable {
    public struct LockArea: Hashable, Sendable {
        /// Absolute byte address of the first lock byte.
        public var position: Int
        public var bits: Int
        public var bytesLockedPerBit: Int
        public var byteCount: Int { (bits + 7) / 8 }
    }

    /// Absolute address of the NDEF TLV's tag byte.
    public var ndefTLVPosition: Int?
    /// 1 or 3.
    public var ndefLengthFieldSize = 1
    public var ndefLength = 0
    /// Byte ranges (absolute) reserved by lock and memory control TLVs.
    public var reserved: [Range<Int>] = []
    public var lockAreas: [LockArea] = []
    public var dataArea: Range<Int>

    /// Parses the TLVs in `memory[dataArea]`. Every length is checked against the data area.
    public init(memory: [UInt8], dataArea: Range<Int>) throws(TagError) {
        self.dataArea = dataArea
        guard dataArea.upperBound <= memory.count else {
            throw TagError(.lengthLies, "the capability container claims \(dataArea.count) data bytes, the tag has \(max(0, memory.count - dataArea.lowerBound))")
        }
        var p = dataArea.lowerBound
        func skipReserved(_ q: Int) -> Int {
            var q = q
            while let r = reserved.first(where: { $0.contains(q) }) { q = r.upperBound }
            return q
        }
        func byte(_ q: inout Int) throws(TagError) -> UInt8 {
            q = skipReserved(q)
            guard q < dataArea.upperBound else { throw TagError(.lengthLies, "a TLV runs past the end of the data area (byte \(q))") }
            defer { q += 1 }
            return memory[q]
        }
        while true {
            p = skipReserved(p)
            guard p < dataArea.upperBound else { break }
            let tagPosition = p
            let tag = try byte(&p)
            if tag == 0x00 { continue }
            if tag == 0xFE { break }
            var length = Int(try byte(&p))
            var lengthSize = 1
            if length == 0xFF {
                length = Int(try byte(&p)) << 8 | Int(try byte(&p))
                lengthSize = 3
            }
            if tag == 0x03 {
                ndefTLVPosition = tagPosition
                ndefLengthFieldSize = lengthSize
                ndefLength = length
                guard length <= availableBytes(from: p) else {
                    throw TagError(.lengthLies, "the NDEF TLV claims \(length) bytes, but only \(availableBytes(from: p)) remain in the data area")
                }
                break
            }
            var value: [UInt8] = []
            if tag == 0x01 || tag == 0x02 {
                guard length == 3 else { throw TagError(.badCapabilityContainer, "a \(tag == 1 ? "lock" : "memory") control TLV of length \(length), 3 expected") }
                for _ in 0..<3 { value.append(try byte(&p)) }
                let e = Int(value[2] & 0x0F)
                let position = Int(value[0] >> 4) << e + Int(value[0] & 0x0F)
                if tag == 0x01 {
                    let bits = value[1] == 0 ? 256 : Int(value[1])
                    let area = LockArea(position: position, bits: bits, bytesLockedPerBit: 1 << Int(value[2] >> 4))
                    lockAreas.append(area)
                    reserved.append(position..<(position + area.byteCount))
                } else {
                    let size = value[1] == 0 ? 256 : Int(value[1])
                    reserved.append(position..<(position + size))
                }
                continue
            }
            // Proprietary (FD) and unknown TLVs: skip their value.
            guard length <= availableBytes(from: p) else {
                throw TagError(.lengthLies, "TLV \(Hex.encode([tag])) at byte \(tagPosition) claims \(length) bytes beyond the data area")
            }
            for _ in 0..<length { _ = try byte(&p) }
        }
    }

    /// Data-area bytes from `q` on that no control TLV reserves.
    public func availableBytes(from q: Int) -> Int {
        guard q < dataArea.upperBound else { return 0 }
        return (q..<dataArea.upperBound).count - reserved.reduce(0) { $0 + $1.clamped(to: q..<dataArea.upperBound).count }
    }

    /// The absolute addresses of `count` usable bytes starting at `q`, reserved bytes skipped.
    public func positions(from q: Int, count: Int) -> [Int] {
        var out: [Int] = []
        out.reserveCapacity(count)
        var a = q
        while out.count < count && a < dataArea.upperBound {
            if let r = reserved.first(where: { $0.contains(a) }) { a = r.upperBound; continue }
            out.append(a)
            a += 1
        }
        return out
    }

    /// The largest message: usable bytes from the NDEF TLV on, minus its header (2, or 4 with a
    /// 3-byte length), as the NFC Forum counts it (46 for the 48-byte static layout).
    public var capacity: Int {
        guard let start = ndefTLVPosition else { return 0 }
        let available = availableBytes(from: start)
        return available - 2 >= 0xFF ? available - 4 : max(0, available - 2)
    }
}

/// An NFC Forum Type 2 tag behind a PC/SC reader, through Part 3 storage-card pseudo-APDUs.
public final class Type2Tag: NDEFTag {
    public let transport: APDUTransport
    public let uid: [UInt8]?
    public private(set) var header: [UInt8]          // pages 0-3
    public private(set) var capabilityContainer: Type2CapabilityContainer
    /// Pages read so far, as a memory image (unknown bytes are 0).
    public private(set) var image: [UInt8]
    public private(set) var tlv: Type2TLVArea
    /// Most bytes one READ BINARY returns (4 pages on every PC/SC reader).
    public static let readLimit = 16

    public var kind: String { "type2" }
    public var mappingVersion: String { capabilityContainer.versionString }
    public var capacity: Int { tlv.capacity }
    var dataArea: Range<Int> { 16..<(16 + capabilityContainer.dataAreaSize) }

    /// The chip, and the evidence for it.
    public var chip: (name: String, evidence: String) {
        let names: [Int: String] = [48: "MIFARE Ultralight", 144: "NTAG213 or MIFARE Ultralight C", 496: "NTAG215", 504: "NTAG215", 872: "NTAG216", 888: "NTAG216"]
        return (names[capabilityContainer.dataAreaSize] ?? "unknown Type 2 chip", "capability container data area of \(capabilityContainer.dataAreaSize) bytes (no GET_VERSION: the reader offers no transparent exchange here)")
    }

    /// Whether the ATR says "storage card of the MIFARE Ultralight family" (PC/SC Part 3).
    public static func isType2(atr: [UInt8]) -> Bool {
        guard let s = (try? ATR(bytes: atr))?.storageCard else { return false }
        return s.cardName == 0x0003 || s.cardName == 0x003A
    }

    /// Reads the UID, pages 0-3 and the TLV area up to the NDEF TLV.
    public static func detect(_ transport: APDUTransport) throws -> Type2Tag {
        let uidResponse = try transport.send(CommandAPDU(cla: 0xFF, ins: 0xCA, p1: 0, p2: 0, ne: 256))
        let uid = uidResponse.statusWord == .success ? uidResponse.data : nil
        let tag = Type2Tag(transport: transport, uid: uid)
        try tag.load()
        return tag
    }

    init(transport: APDUTransport, uid: [UInt8]?) {
        self.transport = transport
        self.uid = uid
        header = []
        capabilityContainer = try! Type2CapabilityContainer(bytes: [0xE1, 0x10, 0x01, 0x00])
        image = []
        tlv = try! Type2TLVArea(memory: [UInt8](repeating: 0, count: 24), dataArea: 16..<24)
    }

    /// Reads 16 bytes (4 pages) at `page`.
    func readPages(_ page: Int) throws -> [UInt8] {
        let r = try transport.send(CommandAPDU(cla: 0xFF, ins: 0xB0, p1: 0, p2: UInt8(page & 0xFF), ne: Self.readLimit))
        guard r.statusWord == .success, r.data.count == Self.readLimit else {
            throw TagError(.readFailed, "READ BINARY of page \(page) failed: \(r.statusWord) (\(r.statusWord.meaning.text))")
        }
        return r.data
    }

    /// Fills `image` for bytes `range` (whole 16-byte reads, nothing read twice).
    func ensureRead(_ range: Range<Int>) throws {
        var a = range.lowerBound - range.lowerBound % 16
        while a < range.upperBound {
            if !loaded.contains(a / 16) {
                let bytes = try readPages(a / 4)
                for (i, b) in bytes.enumerated() where a + i < image.count { image[a + i] = b }
                loaded.insert(a / 16)
            }
            a += 16
        }
    }
    private var loaded: Set<Int> = []

    func load() throws {
        header = try readPages(0)
        capabilityContainer = try Type2CapabilityContainer(bytes: Array(header[12..<16]))
        image = [UInt8](repeating: 0, count: 16 + capabilityContainer.dataAreaSize + 64)
        loaded = [0]
        for (i, b) in header.enumerated() { image[i] = b }
        // Read the data area progressively until the TLV walk succeeds: most tags need one read.
        var end = min(dataArea.upperBound, 32)
        while true {
            try ensureRead(16..<end)
            let walk = Result { () throws(TagError) in try Type2TLVArea(memory: Array(image.prefix(end)), dataArea: 16..<end) }
            switch walk {
            case let .success(area):
                tlv = area
                if area.ndefTLVPosition != nil || end == dataArea.upperBound { break }
            case let .failure(error):
                // A walk that ran past what was read reads on; anything else is the tag's fault.
                if error.kind != .lengthLies || end == dataArea.upperBound { throw error }
            }
            if tlv.ndefTLVPosition != nil || end == dataArea.upperBound { break }
            end = min(dataArea.upperBound, end + 16)
        }
        tlv = try Type2TLVArea(memory: Array(image.prefix(dataArea.upperBound)), dataArea: dataArea)
        guard tlv.ndefTLVPosition != nil else {
            throw TagError(.notNDEF, "the tag is formatted (CC \(capabilityContainer.bytes.hexString)) but has no NDEF TLV")
        }
    }

    public var status: NDEFStatus {
        if capabilityContainer.readAccess != 0 { return .notSupported }
        if capabilityContainer.writeAccess != 0 { return .readOnly }
        let lock0 = header[10], lock1 = header[11]
        if lock0 & 0xF0 != 0 || lock1 != 0 { return .readOnly }
        return dynamicLocksSet ? .readOnly : .readWrite
    }

    var dynamicLockAreas: [Type2TLVArea.LockArea] {
        if !tlv.lockAreas.isEmpty { return tlv.lockAreas }
        let size = capabilityContainer.dataAreaSize
        guard size > 48 else { return [] }
        // No lock control TLV: the default dynamic lock bits follow the data area (T2T §4.6.2.2).
        return [Type2TLVArea.LockArea(position: dataArea.upperBound, bits: (size - 48 + 7) / 8, bytesLockedPerBit: 8)]
    }

    var dynamicLocksSet: Bool {
        for area in dynamicLockAreas {
            guard (try? ensureRead(area.position..<(area.position + area.byteCount))) != nil else { continue }
            for i in 0..<area.byteCount where area.position + i < image.count && image[area.position + i] != 0 { return true }
        }
        return false
    }

    public func readNDEF() throws -> [UInt8] {
        guard capabilityContainer.readAccess == 0 else {
            throw TagError(.readOnly, "the tag does not allow reading (CC read access \(capabilityContainer.readAccess))")
        }
        guard let start = tlv.ndefTLVPosition else { throw TagError(.notNDEF, "no NDEF TLV") }
        let positions = tlv.positions(from: start, count: 1 + tlv.ndefLengthFieldSize + tlv.ndefLength)
        guard positions.count == 1 + tlv.ndefLengthFieldSize + tlv.ndefLength else {
            throw TagError(.lengthLies, "the NDEF TLV runs past the data area")
        }
        if let last = positions.last { try ensureRead(start..<(last + 1)) }
        return positions.dropFirst(1 + tlv.ndefLengthFieldSize).map { image[$0] }
    }

    /// Writes the message power-loss-safe: NDEF TLV length 0, the data pages (with the
    /// terminator after the message), then the real length; then reads it back.
    public func writeNDEF(_ message: [UInt8]) throws {
        guard status == .readWrite else { throw TagError(.readOnly, "the tag is \(status.rawValue)") }
        guard message.count <= capacity else {
            throw TagError(.tooLarge, "the message is \(message.count) bytes; the tag holds \(capacity) (\(message.count - capacity) bytes over)")
        }
        guard let start = tlv.ndefTLVPosition else { throw TagError(.notNDEF, "no NDEF TLV") }
        let lengthSize = message.count >= 0xFF ? 3 : 1
        let headerCount = 1 + lengthSize
        let terminator = tlv.availableBytes(from: start) > headerCount + message.count ? 1 : 0
        let positions = tlv.positions(from: start, count: headerCount + message.count + terminator)
        // Pages are written whole: read the ones the new bytes touch (and nothing else).
        try ensureRead((positions.first! / 4 * 4)..<((positions.last! / 4 + 1) * 4))
        let zeroHeader: [UInt8] = lengthSize == 1 ? [0x03, 0x00] : [0x03, 0xFF, 0x00, 0x00]
        let realHeader: [UInt8] = lengthSize == 1 ? [0x03, UInt8(message.count)] : [0x03, 0xFF, UInt8(message.count >> 8), UInt8(message.count & 0xFF)]
        var target = image
        for (i, b) in zeroHeader.enumerated() { target[positions[i]] = b }
        let headerPages = Set(positions.prefix(headerCount).map { $0 / 4 })
        try writePages(headerPages.sorted(), from: target, step: "clear the NDEF length")
        for (i, b) in message.enumerated() { target[positions[headerCount + i]] = b }
        if terminator == 1 { target[positions.last!] = 0xFE }
        let dataPages = Set(positions.dropFirst(headerCount).map { $0 / 4 }).subtracting(headerPages)
        try writePages(dataPages.sorted(), from: target, step: "write the message")
        for (i, b) in realHeader.enumerated() { target[positions[i]] = b }
        try writePages(headerPages.sorted(), from: target, step: "write the NDEF length")
        // Read back the 16-byte blocks the write touched and walk the TLVs again. The other
        // blocks are as detection read them (the caller holds the transaction).
        let touched = Set(headerPages.union(dataPages).map { $0 / 4 })
        loaded.subtract(touched)
        for block in touched.sorted() { try ensureRead((block * 16)..<(block * 16 + 16)) }
        tlv = try Type2TLVArea(memory: Array(image.prefix(dataArea.upperBound)), dataArea: dataArea)
        let back = try readNDEF()
        guard back == message else {
            throw TagError(.verifyFailed, "the tag reads back a different message than was written (\(back.count) bytes vs \(message.count))")
        }
    }

    func writePages(_ pages: [Int], from target: [UInt8], step: String) throws {
        for page in pages {
            let data = Array(target[(page * 4)..<(page * 4 + 4)])
            let r = try transport.send(CommandAPDU(cla: 0xFF, ins: 0xD6, p1: 0, p2: UInt8(page & 0xFF), data: data))
            guard r.statusWord == .success else {
                throw TagError(.writeFailed, "the tag refused to \(step) (page \(page)): \(r.statusWord) (\(r.statusWord.meaning.text))")
            }
            for i in 0..<4 { image[page * 4 + i] = data[i] }
        }
    }

    /// What `makeReadOnly` changed.
    public struct LockReport: Sendable, Hashable {
        public var capabilityContainer: Bool
        public var staticLockBytes: Bool
        public var dynamicLockBytes: Int
        public var refusesWrites: Bool
    }

    /// CC write access to 0F, then the dynamic lock bits, then the static lock bytes.
    public func makeReadOnly() throws -> LockReport {
        var report = LockReport(capabilityContainer: false, staticLockBytes: false, dynamicLockBytes: 0, refusesWrites: false)
        var target = image
        target[15] = capabilityContainer.bytes[3] & 0xF0 | 0x0F
        try writePages([3], from: target, step: "set the CC write access to 0F")
        report.capabilityContainer = true
        for area in dynamicLockAreas {
            try ensureRead(area.position..<(area.position + area.byteCount))
            var pages: Set<Int> = []
            for i in 0..<area.byteCount {
                let a = area.position + i
                let bitsHere = min(8, area.bits - i * 8)
                target[a] = image[a] | UInt8((1 << bitsHere) - 1)
                pages.insert(a / 4)
            }
            try writePages(pages.sorted(), from: target, step: "set the dynamic lock bits")
            report.dynamicLockBytes += area.byteCount
        }
        target[10] = 0xFF
        target[11] = 0xFF
        try writePages([2], from: target, step: "set the static lock bytes")
        report.staticLockBytes = true
        // Check: rewriting the first data page with its own bytes must now be refused.
        let probe = try transport.send(CommandAPDU(cla: 0xFF, ins: 0xD6, p1: 0, p2: 4, data: Array(image[16..<20])))
        report.refusesWrites = probe.statusWord != .success
        loaded = [0]
        try load()
        return report
    }
}
