// How a Type 2 tag is locked for good: the lock state read from the tag, and the lock done
// in an order that can be resumed and is confirmed by reading it back.
import ISO7816

extension Type2Tag {
    /// The lock state (reads the dynamic lock bytes and configuration pages once: one READ on
    /// NTAG21x, whose CFG pages follow the lock page).
    public func readLockState() throws -> Type2LockState {
        if let lockState { return lockState }
        let ccByte = capabilityContainer.bytes[3] & 0x0F
        let staticBytes = Array(header[10...11])
        var areas: [Type2LockState.DynamicArea] = []
        var unknownDynamic: String?
        let known = chip.chip
        if !tlv.lockAreas.isEmpty && lockControlConflict == nil {
            areas = tlv.lockAreas.map { .init(position: $0.position, bits: $0.bits, bytesLockedPerBit: $0.bytesLockedPerBit, source: .lockControlTLV) }
        } else if let d = known?.dynamicLock {
            // A proven chip's datasheet says where its lock bits are; a lock control TLV that
            // says otherwise points into user memory (issue 49's hostile tag) and is not read.
            areas = [.init(position: d.page * 4, bits: d.bits, bytesLockedPerBit: d.pagesPerBit * 4, source: .chip(known!.name))]
        } else if known == nil, capabilityContainer.dataAreaSize > 48 {
            // No lock control TLV and no proven chip: the NFC Forum default (right after the data
            // area, T2T §4.6.2.2) is user memory on an NTAG215/216 whose CC was shrunk, and the
            // PACK page on an NTAG212 with a 144-byte CC. Unknown, then: never read as lock bits.
            unknownDynamic = "no lock control TLV, and the chip is not proven (\(chip.evidence)): where its dynamic lock bytes are is unknown"
        }
        for i in areas.indices {
            let a = areas[i]
            guard a.position >= 16, a.position + a.byteCount <= memoryEnd else { continue }
            // A tag that refuses the read leaves the bytes unknown; a card that goes away is an error.
            do {
                try ensureRead(a.position..<(a.position + a.byteCount))
                areas[i].bytes = Array(image[a.position..<(a.position + a.byteCount)])
            } catch let e as TagError where e.kind == .readFailed {}

        }
        var password = Type2LockState.Password.none
        if known == nil {
            // Whether it has AUTH0, and where, only a proven chip says: the tag's own answers
            // (a NAK, 63 00) decide what it lets us write.
            password = .unknown("the chip is not proven, so no page is read as its configuration")
        }
        if let p = known?.passwords {
            do {
                try ensureRead((p.auth0Page * 4)..<(p.accessPage * 4 + 4))
                let auth0 = Int(image[p.auth0Page * 4 + p.auth0Byte])
                let bitSet = image[p.accessPage * 4 + p.accessByte] & p.protectionBit != 0
                password = auth0 >= p.disabledFrom ? .disabled : .protects(fromPage: auth0, reads: bitSet == p.readsProtectedWhenBitSet)
            } catch let e as TagError where e.kind == .readFailed {
                password = .unknown("the configuration pages cannot be read; they may be password-protected")
            }
        }
        var locked = Set<Int>()
        for page in 3...15 {
            let bit = page < 8 ? staticBytes[0] & (1 << page) : staticBytes[1] & (1 << (page - 8))
            if bit != 0 { locked.insert(page) }
        }
        for a in areas {
            // Lock bytes that cannot be read lock nothing we know of: a write that meets a locked
            // page is refused by the tag mid-way, which the commit procedure makes safe (the
            // pages it changed until then were writable, so the backup can put them back).
            guard let bytes = a.bytes else { continue }
            for bit in 0..<a.bits where bytes[bit / 8] & (1 << (bit % 8)) != 0 {
                let first = 64 + bit * a.bytesLockedPerBit
                locked.formUnion((first / 4)..<((first + a.bytesLockedPerBit + 3) / 4))
            }
        }
        let state = Type2LockState(ccWriteAccess: ccByte, staticLockBytes: staticBytes, dynamicAreas: areas, unknownDynamicLocks: unknownDynamic,
                                   password: password, lockedPages: locked.sorted(), authenticated: pack != nil)
        lockState = state
        return state
    }

    /// Why the tag's lock control TLV cannot be followed: it puts dynamic lock bytes where the
    /// chip proven by GET_VERSION has none (user memory on an NTAG213, say); nil when there is
    /// no TLV, no proven chip, or they agree. Locking then would set bits in user memory and
    /// leave the chip's own lock bits clear under "locked" (issue 49's hostile tag).
    var lockControlConflict: String? {
        guard !tlv.lockAreas.isEmpty, let known = chip.chip else { return nil }
        if let far = tlv.lockAreas.first(where: { $0.position < 16 || $0.position + ($0.bits + 7) / 8 > memoryEnd }) {
            return "the dynamic lock bytes (lock control TLV) would be at bytes \(far.position)…\(far.position + (far.bits + 7) / 8 - 1), outside the tag's memory (0…\(memoryEnd - 1))"
        }
        guard let d = known.dynamicLock else {
            return "the tag's lock control TLV names dynamic lock bytes at byte \(tlv.lockAreas.map { String($0.position) }.joined(separator: ", ")), but the \(known.name) it proved to be (GET_VERSION) has none"
        }
        let chipBytes = (d.page * 4)..<(d.page * 4 + (d.bits + 7) / 8)
        // Only the datasheet's own area, bit for bit, agrees: a TLV naming part of it, or other
        // granularity, would read some bits as locking pages they do not lock (the review of
        // issue 49: byte 161 alone, 4 bits, "locked" with pages 16-31 writable).
        let agrees = tlv.lockAreas.count == 1 && tlv.lockAreas[0].position == chipBytes.lowerBound && tlv.lockAreas[0].bits == d.bits
            && tlv.lockAreas[0].bytesLockedPerBit == d.pagesPerBit * 4
        guard !agrees else { return nil }
        let named = tlv.lockAreas.map { "\($0.bits) bits at byte \($0.position), \($0.bytesLockedPerBit) bytes a bit" }.joined(separator: "; ")
        return "the tag's lock control TLV names dynamic lock bits (\(named)) that are not those of the \(known.name) it proved to be (GET_VERSION): \(d.bits) bits at page \(d.page) (bytes \(chipBytes.lowerBound)-\(chipBytes.upperBound - 1)), \(d.pagesPerBit * 4) bytes a bit"
    }

    /// Whether the tag refuses a write of `page`'s own bytes (a tag that takes them changes nothing).
    func writeIsRefused(page: Int) throws -> Bool {
        try ensureRead((page * 4)..<(page * 4 + 4))
        let bytes = Array(image[(page * 4)..<(page * 4 + 4)])
        if let commands {
            let refused = try commands.writePage(UInt8(page), bytes) != .ack
            if refused { try recover() }
            return refused
        }
        return try transport.send(CommandAPDU(cla: 0xFF, ins: 0xD6, p1: 0, p2: UInt8(page), data: bytes)).statusWord != .success
    }

    /// The first and the last page of the data area past page 15 that the dynamic lock bits must
    /// cover and a write probe may take: no lock byte and no mirrored text on it, and within
    /// reach of a READ (page 255 at most); nil when there is none (a data area that ends by page
    /// 15, which the static bits lock whole).
    func dynamicProbePages(_ state: Type2LockState, avoiding mirrored: Set<Int>) -> (first: Int, last: Int)? {
        let lockBytes = Set(state.dynamicAreas.flatMap { $0.position..<($0.position + $0.byteCount) })
        let end = min((16 + capabilityContainer.dataAreaSize) / 4 - 1, 255, memoryEnd / 4 - 1)
        guard end >= 16 else { return nil }
        let pages = (16...end).filter { page in !mirrored.contains(page) && !((page * 4)..<(page * 4 + 4)).contains(where: lockBytes.contains) }
        guard let first = pages.first, let last = pages.last else { return nil }
        return (first, last)
    }

    /// The pages an NTAG21x mirrors its UID and NFC counter into (CFG0: MIRROR_CONF, MIRROR_PAGE;
    /// at most 24 bytes from the page, 6 pages); empty for a chip without a mirror; nil when its
    /// configuration cannot be read (the mirror is then unknown).
    func mirroredPages() throws -> Set<Int>? {
        guard let p = chip.chip?.passwords, p.auth0Byte == 3 else { return [] }
        let cfg0 = p.auth0Page * 4
        do { try ensureRead(cfg0..<(cfg0 + 4)) } catch let e as TagError where e.kind == .readFailed { return nil }
        guard image[cfg0] >> 6 != 0, image[cfg0 + 2] >= 4 else { return [] }
        let first = Int(image[cfg0 + 2])
        return Set(first..<(first + 6))
    }

    /// What `makeReadOnly` did.
    public typealias LockReport = NFCTags.LockReport<Type2LockState>

    public static let locksDescription = "CC read-only, static and dynamic lock bits set"

    /// CC write access 0F, then every dynamic lock bit, then the static lock bytes (FF FF, which
    /// also locks the CC page) — skipping what an earlier, interrupted lock already did — and
    /// then checks: the lock bytes read back set, and writes refused on the first data page, the
    /// first page past 15 and the last data page (each the page's own bytes; never a page the
    /// chip mirrors its UID or counter into).
    /// Every address is checked against the tag's memory before the first write.
    public func makeReadOnly() throws -> LockReport {
        if let conflict = lockControlConflict {
            throw TagError(.unsafe, "\(conflict): the tag's layout contradicts its chip, so nothing was written")
        }
        let before = try readLockState()
        for area in before.dynamicAreas {
            guard area.position >= 16, area.position + area.byteCount <= memoryEnd else {
                throw TagError(.badCapabilityContainer, "the dynamic lock bytes (\(area.source)) would be at bytes \(area.position)…\(area.position + area.byteCount - 1), outside the tag's memory (0…\(memoryEnd - 1)); nothing was written")
            }
            guard area.bytes != nil else {
                throw TagError(.readFailed, "the dynamic lock bytes at byte \(area.position) cannot be read; nothing was written")
            }
        }
        if let why = before.unknownDynamicLocks {
            throw TagError(.unsafe, "\(why); a guess could set bits in user memory, so nothing was written. Lock it through a reader with a raw tag-command path (GET_VERSION proves the chip), or give the tag a lock control TLV")
        }
        if let doubt = tlv.uncertainty.first {
            throw TagError(.unsafe, "\(doubt); nothing was written")
        }
        var done: [String] = [], already: [String] = []
        var steps: [(String, Int, [UInt8])] = []
        let ccPage = Array(header[12..<16])
        if before.ccWriteAccess != 0x0F {
            var cc = ccPage
            cc[3] = cc[3] & 0xF0 | 0x0F
            steps.append(("set the CC write access to 0F", 3, cc))
        } else { already.append("CC write access 0F") }
        for area in before.dynamicAreas {
            guard let locked = area.lockedBytes, locked != area.bytes else { already.append("dynamic lock bits at byte \(area.position)"); continue }
            var bytes = image
            for (i, b) in locked.enumerated() { bytes[area.position + i] = b }
            for page in Set((area.position..<(area.position + area.byteCount)).map { $0 / 4 }).sorted() {
                steps.append(("set the dynamic lock bits (page \(page))", page, Array(bytes[(page * 4)..<(page * 4 + 4)])))
            }
        }
        if before.staticLockBytes != [0xFF, 0xFF] {
            steps.append(("set the static lock bytes", 2, Array(header[8..<10]) + [0xFF, 0xFF]))
        } else { already.append("static lock bytes FF FF") }
        for (what, page, data) in steps {
            do { try writePage(page, data) } catch {
                throw LockInterrupted(done: done, underlying: error, step: what)
            }
            done.append(what)
        }
        // Check what the tag says now, not what was sent.
        do {
            loaded = [0]
            lockState = nil
            header = try readPages(0)
            capabilityContainer = try Type2CapabilityContainer(bytes: Array(header[12..<16]))
            for (i, b) in header.enumerated() { image[i] = b }
            let after = try readLockState()
            // The first data page (the static lock bits), and the last one the dynamic bits must
            // cover: what the tag does, not what its lock bytes say. A lock control TLV of an
            // unproven chip may name bytes that lock nothing (user memory on an NTAG213 whose
            // GET_VERSION a middle turned away, issue 49's hostile tag): the last page then still
            // takes the write, and the lock is not confirmed.
            // Page 16, the first the dynamic bits lock, and the last one too (a bit read as
            // locking pages it does not lock shows at one end or the other).
            // Never a page an NTAG21x mirrors its UID or counter into: a READ there shows the
            // mirror, not what is stored, and writing it back would store it (the second review
            // of issue 49). Where the mirror cannot be read, no probe: not confirmed.
            var refused = false
            if let mirrored = try mirroredPages(), let staticPage = (4...15).first(where: { !mirrored.contains($0) }) {
                refused = try writeIsRefused(page: staticPage)
                if refused, let dynamic = dynamicProbePages(after, avoiding: mirrored) {
                    refused = try writeIsRefused(page: dynamic.last)
                    if refused, dynamic.first < dynamic.last { refused = try writeIsRefused(page: dynamic.first) }
                }
            }
            return LockReport(done: done, alreadyDone: already, state: after, refusesWrites: refused && after.isFullyLocked)
        } catch {
            throw LockInterrupted(done: done, underlying: error, step: "check the lock")
        }
    }
}
