// How a Type 2 tag is read: pages by READ BINARY, READ or FAST_READ into a memory image, the TLV
// walk, the message, its backup and page dumps that never show a roll-over as data.
import ISO7816

extension Type2Tag {
    /// Reads 16 bytes (4 pages) at `page` (0-255).
    func readPages(_ page: Int) throws -> [UInt8] {
        guard let bytes = try readPagesIfAllowed(page) else {
            throw TagError(.readFailed, "READ BINARY of page \(page) failed: the tag refused it (a password, or past its last page)")
        }
        return bytes
    }

    /// FAST_READ of the blocks of `range` not read yet, in as few frames as the reader's frame
    /// size allows, stopping at sector ends and the chip's last page. Only on chips that answered
    /// GET_VERSION (all of which have FAST_READ; an Ultralight would NAK and halt). A refused
    /// FAST_READ (a read-protected page inside) leaves the rest to READ.
    func fastRead(_ range: Range<Int>) throws {
        guard let commands, version != nil else { return }
        // Whole 16-byte blocks (what `loaded` counts), cut at the chip's last page.
        let lastPage = min((range.upperBound - 1) / 16 * 4 + 3, (chip.chip?.pages ?? reachablePages) - 1, reachablePages - 1)
        var block = range.lowerBound / 16
        let perFrame = max(4, commands.maxAnswerBytes / 16 * 4)
        while block * 4 <= lastPage {
            if loaded.contains(block) { block += 1; continue }
            let first = block * 4
            var end = first + perFrame - 1
            end = min(end, lastPage, (first / 256) * 256 + 255)
            // Stop before a block already read.
            if let next = loaded.filter({ $0 > block && $0 * 4 <= end }).min() { end = next * 4 - 1 }
            try select(sectorOf: first)
            guard let bytes = try commands.fastRead(UInt8(first % 256)...UInt8(end % 256)) else {
                try recover()
                return
            }
            cover((end + 1) * 4)
            image.replaceSubrange((first * 4)..<((end + 1) * 4), with: bytes)
            for b in block...(end / 4) { loaded.insert(b) }
            block = end / 4 + 1
        }
    }

    /// 16 bytes at `page`, or nil when the tag refuses (NAK); a malformed answer is an error.
    func readPagesIfAllowed(_ page: Int) throws -> [UInt8]? {
        guard (0..<reachablePages).contains(page) else {
            throw TagError(.beyondReach, "page \(page) is \(reachNote)")
        }
        if let commands {
            try select(sectorOf: page)
            guard let bytes = try commands.readPages(at: UInt8(page % 256)) else {
                try recover()
                return nil
            }
            return bytes
        }
        let r = try transport.storageReadBinary(block: page, size: Self.readLimit)
        guard r.statusWord == .success else { return nil }
        guard r.data.count == Self.readLimit else {
            throw TagError(.readFailed, "READ BINARY of page \(page) answered \(r.data.count) bytes, 16 expected")
        }
        return r.data
    }

    /// Fills `image` for bytes `range` (whole 16-byte reads, nothing read twice).
    ///
    /// A READ that runs into a read-protected area rolls over to page 0 there (NTAG21x), so
    /// 16 bytes can end in copies of pages 0-3: such pages are read again on their own, and a
    /// refusal then means the password protects them. Nothing rolled over is ever used.
    func ensureRead(_ range: Range<Int>) throws {
        guard !range.isEmpty else { return }
        guard range.upperBound <= reachableBytes else {
            throw TagError(.beyondReach, "the tag's data reaches byte \(range.upperBound - 1) (page \((range.upperBound - 1) / 4)), \(reachNote)")
        }
        cover(range.upperBound)
        try fastRead(range)
        var a = range.lowerBound - range.lowerBound % 16
        while a < range.upperBound {
            if !loaded.contains(a / 16) {
                var bytes = try readPages(a / 4)
                if a > 0, header.count == 16 {
                    for k in 1..<4 where bytes[(k * 4)...].elementsEqual(header[0..<(16 - k * 4)]) {
                        if let fresh = try readPagesIfAllowed(a / 4 + k) {
                            bytes.replaceSubrange((k * 4)..., with: fresh.prefix(16 - k * 4))
                        } else if range.upperBound > a + k * 4 {
                            // Rolled over at a page the tag refuses: the end of its memory or of
                            // what its password lets us read. Those bytes were asked for.
                            throw TagError(.readFailed, "READ BINARY of page \(a / 4 + k) failed: the tag refused it (a password, or past its last page)")
                        } else {
                            // Past what was asked for (the end of memory after the last page read).
                            bytes.replaceSubrange((k * 4)..., with: [UInt8](repeating: 0, count: 16 - k * 4))
                        }
                        break
                    }
                }
                let n = min(16, image.count - a)
                image.replaceSubrange(a..<(a + n), with: bytes[0..<n])
                loaded.insert(a / 16)
            }
            a += 16
        }
    }

    /// Grows the memory image to whole 16-byte blocks up to `end` (exclusive), never past what
    /// this path reaches: reads write whole blocks into it.
    func cover(_ end: Int) {
        let blocks = min((end + 15) / 16 * 16, reachableBytes)
        if blocks > image.count { image += [UInt8](repeating: 0, count: blocks - image.count) }
    }

    func load(tolerant: Bool = false) throws {
        // With FAST_READ, the first frame brings the header and as much of the data area as the
        // reader carries: most messages need no second one.
        var prefetched: [UInt8] = []
        if let commands, version != nil {
            let last = min(commands.maxAnswerBytes / 4, chip.chip?.pages ?? 16) - 1
            try select(sectorOf: 0)
            if let bytes = try commands.fastRead(0...UInt8(last)) { prefetched = bytes } else { try recover() }
        }
        header = prefetched.count >= 16 ? Array(prefetched[0..<16]) : try readPages(0)
        capabilityContainer = try Type2CapabilityContainer(bytes: Array(header[12..<16]))
        // The image covers all this path can reach, whatever the CC says: lock and configuration
        // pages of a proven chip lie past a shrunk CC's data area (an NTAG215 with a 144-byte CC
        // keeps its dynamic lock bytes at page 82h), and every address is checked against the
        // reach before it is used (at most 4 KiB).
        image = [UInt8](repeating: 0, count: reachableBytes)
        loaded = [0]
        lockState = nil
        for (i, b) in header.enumerated() { image[i] = b }
        let usable = min(prefetched.count, image.count) / 16
        for block in 1..<max(1, usable) {
            image.replaceSubrange((block * 16)..<(block * 16 + 16), with: prefetched[(block * 16)..<(block * 16 + 16)])
            loaded.insert(block)
        }
        do {
            try walkTLVs()
            layoutError = nil
        } catch let error as TagError where tolerant && error.kind != .beyondReach {
            layoutError = error
        }
        identified = nil
    }

    /// Reads the data area progressively until the TLV walk finds the NDEF TLV: most tags need one read.
    func walkTLVs() throws {
        let end = min(dataArea.upperBound, reachableBytes)
        var readTo = min(end, 32)
        while true {
            try ensureRead(16..<readTo)
            let walk = Result { () throws(TagError) in try Type2TLVArea(memory: Array(image.prefix(readTo)), dataArea: 16..<readTo) }
            switch walk {
            case let .success(area):
                if area.ndefTLVPosition != nil || readTo == end { tlv = area }
            case let .failure(error):
                // A walk that ran past what was read reads on; anything else is the tag's fault.
                if error.kind != .lengthLies || readTo == end {
                    if readTo == end && end < dataArea.upperBound { break }
                    throw error
                }
            }
            if (try? walk.get())?.ndefTLVPosition != nil || readTo == end { break }
            // Storage READs bring 16 bytes; FAST_READ frames bring the rest of the area in a few.
            readTo = commands != nil && version != nil ? end : min(end, readTo + 16)
        }
        // The whole data area's TLV structure, with bytes past page 255 unknown (zeros): the walk
        // stops at the NDEF TLV, which must itself be reachable.
        var memory = Array(image.prefix(end))
        memory += [UInt8](repeating: 0, count: max(0, dataArea.upperBound - memory.count))
        let area = try Type2TLVArea(memory: memory, dataArea: dataArea)
        guard let position = area.ndefTLVPosition else {
            throw TagError(.notNDEF, "the tag is formatted (CC \(capabilityContainer.bytes.hexString)) but has no NDEF TLV")
        }
        guard position + 1 + area.ndefLengthFieldSize <= reachableBytes else {
            throw TagError(.beyondReach, "the NDEF TLV is at byte \(position), \(reachNote)")
        }
        tlv = area
    }

    public func readNDEF() throws -> [UInt8] {
        if let layoutError { throw layoutError }
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

    /// The bytes a backup needs to put the current message back exactly: from the first TLV to
    /// the end of the NDEF TLV (and its terminator), in whole pages.
    public func backup(reader: String? = nil) throws -> TagBackup {
        let message = try readNDEF()
        let start = tlv.ndefTLVPosition!
        var positions = tlv.positions(from: start, count: 1 + tlv.ndefLengthFieldSize + message.count + 1)
        if positions.count > 1 + tlv.ndefLengthFieldSize + message.count, positions.last! < reachableBytes {
            try ensureRead(positions.last!..<(positions.last! + 1))
            if image[positions.last!] != 0xFE { positions.removeLast() }
        } else if positions.count > 1 + tlv.ndefLengthFieldSize + message.count {
            positions.removeLast()
        }
        let end = ((positions.last ?? start) / 4 + 1) * 4
        try ensureRead(16..<end)
        return TagBackup(kind: kind, uid: uid, capabilityContainer: capabilityContainer.bytes, start: 16, bytes: Array(image[16..<end]), message: message, reader: reader)
    }

    /// Pages for a dump, each with its bytes or nil where the tag refused (a password, or past
    /// the end). Pages past 255 are not addressable here. A READ that rolls over (to page 0, at
    /// the end of memory or at a read-protected page) is caught: the pages past the roll-over are
    /// read on their own, and shown refused when the tag refuses them — never as copies of 0-3.
    public func dump(pages: ClosedRange<Int>) throws -> [(page: Int, bytes: [UInt8]?)] {
        guard pages.lowerBound >= 0 else { throw TagError(.beyondReach, "page \(pages.lowerBound) does not exist: pages start at 0") }
        guard pages.upperBound < reachablePages else {
            throw TagError(.beyondReach, "page \(pages.upperBound) is \(reachNote)")
        }
        var out: [(Int, [UInt8]?)] = []
        var page = pages.lowerBound
        // FAST_READ where the chip has it (`fastRead`, the reads' own chunking), up to the chip's
        // last page (past it, nothing). A refusal leaves the rest to READ.
        if commands != nil, version != nil, let chipPages = chip.chip?.pages {
            let last = min(pages.upperBound, chipPages - 1)
            if page <= last {
                cover((last + 1) * 4)
                try fastRead((page * 4)..<((last + 1) * 4))
                while page <= last, loaded.contains(page / 4) { out.append((page, Array(image[(page * 4)..<(page * 4 + 4)]))); page += 1 }
            }
            if page >= chipPages {
                while page <= pages.upperBound { out.append((page, nil)); page += 1 }
            }
        }
        // Pages 0-3, to recognise a READ that rolled over: read only when a READ needs them.
        var head: [UInt8]? = header.count == 16 ? header : loaded.contains(0) && image.count >= 16 ? Array(image[0..<16]) : nil
        while page <= pages.upperBound {
            // A READ never leaves the selected sector: at page 254 its last 8 bytes are not 256-257.
            let count = min(4, pages.upperBound - page + 1, 256 - page % 256)
            if page > 0, head == nil { head = try readPagesIfAllowed(0) }
            let read = try readPagesIfAllowed(page)
            if page == 0 { head = read }
            var rows: [[UInt8]?] = read.map { b in (0..<4).map { Array(b[($0 * 4)..<($0 * 4 + 4)]) } } ?? [nil, nil, nil, nil]
            if page > 0, let head, rows[0] != nil,
               let k = (1..<4).first(where: { k in rows[k...].compactMap { $0 }.flatMap { $0 }.elementsEqual(head[0..<(16 - k * 4)]) }), k < count {
                let fresh = try readPagesIfAllowed(page + k)
                for i in k..<4 { rows[i] = fresh.map { Array($0[((i - k) * 4)..<((i - k) * 4 + 4)]) } }
            }
            for i in 0..<count { out.append((page + i, rows[i])) }
            page += count
        }
        return out
    }
}
