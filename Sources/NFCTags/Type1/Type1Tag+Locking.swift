// How a Type 1 tag is locked for good: the CC's access byte to 0F, then the lock bits with
// WRITE-NE (Android's rw_t1t order), resumable and confirmed by reading them back.
import ISO7816

extension Type1Tag {
    /// The Topaz 512's own dynamic lock bytes (BCM20203T512: LOCK2-LOCK7 at 7A-7F, a bit per
    /// block from 10).
    static let topaz512LockArea = (position: 0x7A, bits: 48, bytesPerBit: 8)

    /// The dynamic lock area: on a chip HR0/HR1 prove, the chip's own (issue 48: a TLV does not
    /// move the lock bytes the silicon has); else the lock control TLV's; none on static memory.
    var dynamicLockArea: (position: Int, bits: Int, bytesPerBit: Int)? {
        if chip == .topaz512 { return Self.topaz512LockArea }
        if let a = tlv.lockAreas.first { return (a.position, a.bits, a.bytesLockedPerBit) }
        return nil
    }

    /// Every lock byte a lock would write is checked before the first write: a proven chip's
    /// lock control TLV must name the chip's own lock bytes, and no TLV may put them in block 0,
    /// the CC, reserved block D, the static lock block E, or past the memory.
    func checkLockAreas() throws {
        for area in tlv.lockAreas {
            let bytes = area.position..<(area.position + (area.bits + 7) / 8)
            let named = "the lock control TLV puts \(area.bits) dynamic lock bits (\(area.bytesLockedPerBit) bytes a bit) at bytes \(Hex.encode([UInt8(bytes.lowerBound & 0xFF)]))-\(Hex.encode([UInt8((bytes.upperBound - 1) & 0xFF)]))"
            if chip == .topaz512 {
                let own = Self.topaz512LockArea
                guard area.position == own.position, area.bits == own.bits, area.bytesLockedPerBit == own.bytesPerBit else {
                    throw TagError(.unsafe, "\(named), but a Topaz 512 (HR \(header.bytes.hexString)) has its lock bytes at 7A-7F (48 bits, 8 bytes a bit): the TLV is not this chip's; nothing was written")
                }
            }
            let forbidden: [(Range<Int>, String)] = [(0..<0x0C, "block 0 (the UID) or the CC"), (0x68..<0x70, "block D, which is reserved"),
                                                     (0x70..<0x78, "block E (LOCK0, LOCK1 and the OTP bytes)")]
            if let (_, words) = forbidden.first(where: { $0.0.overlaps(bytes) }) {
                throw TagError(.unsafe, "\(named), in \(words): no lock bit goes there; nothing was written")
            }
            guard bytes.upperBound <= min(memorySize, physicalSize) else {
                throw TagError(.unsafe, "\(named), past the tag's \(min(memorySize, physicalSize)) bytes; nothing was written")
            }
        }
    }

    public func readLockState() throws -> Type1LockState {
        if let lockState { return lockState }
        try ensureRead(0x70..<0x72)
        var dynamic: [(address: Int, value: UInt8)] = []
        var bits = 0, perBit = 8
        if let area = dynamicLockArea, !header.staticMemory {
            let count = (area.bits + 7) / 8
            try ensureRead(area.position..<(area.position + count))
            dynamic = (area.position..<(area.position + count)).map { ($0, image[$0]) }
            bits = area.bits
            perBit = area.bytesPerBit
        }
        let state = Type1LockState(ccWriteAccess: capabilityContainer.writeAccess, staticLockBytes: Array(image[0x70..<0x72]),
                                   dynamicLockBytes: dynamic, dynamicBits: bits, bytesLockedPerBit: perBit)
        lockState = state
        return state
    }

    /// Why this reader's form cannot lock the tag (nil: it can): lock bits are set only with
    /// WRITE-NE, and a Topaz 512's dynamic lock bytes in block F only with WRITE-NE8.
    public var lockRefusal: String? {
        if !link.form.carries(.writeNoErase(address: 0x70, byte: 0xFF)) {
            return "\(link.form.refusal(.writeNoErase(address: 0x70, byte: 0xFF))): lock bits are set only with WRITE-NE"
        }
        if let area = dynamicLockArea, !header.staticMemory, area.position >= 0x78, !link.form.carries(.writeNoErase8(block: 0x0F, bytes: [])) {
            return "the dynamic lock bytes in block F need WRITE-NE8, and \(link.form.refusal(.writeNoErase8(block: 0x0F, bytes: [])))"
        }
        return nil
    }

    public typealias LockReport = NFCTags.LockReport<Type1LockState>
    public static let locksDescription = "CC write access 0F, LOCK0/LOCK1 and the dynamic lock bits set"

    /// The CC's access byte to 0F (WRITE-NE), then LOCK0 and LOCK1 to FF and every dynamic lock
    /// byte's bits (WRITE-NE, or WRITE-NE8 of the lock bytes' block with 00 elsewhere, on a Topaz
    /// 512), then a check: the lock bits read back set, and a WRITE-E of the first data byte's own
    /// value gets no answer. Refused before anything is written where the reader's form cannot
    /// send WRITE-NE (READ/UPDATE BINARY) or cannot reach the dynamic lock bytes (the PN532).
    public func makeReadOnly() throws -> LockReport {
        try checkLayoutKnown()
        guard capabilityContainer.valid else { throw TagError(.notNDEF, Type1CapabilityContainer.invalidMessage) }
        try checkLockAreas()
        guard link.form.carries(.writeNoErase(address: 0x70, byte: 0xFF)) else {
            throw TagCommandError(.noRawPath, "\(link.form.refusal(.writeNoErase(address: 0x70, byte: 0xFF))): lock bits are set only with WRITE-NE; nothing was written")
        }
        let before = try readLockState()
        var steps: [(String, () throws -> Void)] = []
        var already: [String] = []
        if before.ccWriteAccess != 0x0F {
            steps.append(("set the CC write access to 0F (byte 0B)", { try self.setBits(0x0B, 0x0F) }))
        } else { already.append("CC write access 0F") }
        for (i, address) in [0x70, 0x71].enumerated() where before.staticLockBytes[i] != 0xFF {
            steps.append(("set LOCK\(i) (byte \(Hex.encode([UInt8(address)])))", { try self.setBits(address, 0xFF) }))
        }
        if before.staticLockBytes == [0xFF, 0xFF] { already.append("LOCK0/LOCK1") }
        if let area = dynamicLockArea, !header.staticMemory {
            var wanted: [(Int, UInt8)] = []
            for (i, lock) in before.dynamicLockBytes.enumerated() {
                let bitsHere = min(8, area.bits - i * 8)
                let mask = UInt8(truncatingIfNeeded: (1 << bitsHere) - 1)
                if lock.value & mask != mask { wanted.append((lock.address, mask)) }
            }
            if wanted.isEmpty { already.append("dynamic lock bits") }
            for block in Set(wanted.map { $0.0 / 8 }).sorted() {
                let inBlock = wanted.filter { $0.0 / 8 == block }
                guard link.form.carries(.writeNoErase8(block: UInt8(block), bytes: [])) || block < 15 else {
                    throw TagCommandError(.noRawPath, "the dynamic lock bytes in block \(Hex.encode([UInt8(block)])) need WRITE-NE8, and \(link.form.refusal(.writeNoErase8(block: UInt8(block), bytes: []))); nothing was written")
                }
                steps.append(("set the dynamic lock bits (block \(Hex.encode([UInt8(block)])))", {
                    if block >= 15 {
                        var bytes = [UInt8](repeating: 0, count: 8)
                        for (a, v) in inBlock { bytes[a % 8] = v }
                        let answer = try self.link.send(.writeNoErase8(block: UInt8(block), bytes: bytes))
                        for (a, v) in inBlock where answer[1 + a % 8] & v != v {
                            throw TagError(.lockFailed, "lock byte \(Hex.encode([UInt8(a)])) reads \(Hex.encode([answer[1 + a % 8]])) after WRITE-NE8")
                        }
                        self.image.replaceSubrange((block * 8)..<(block * 8 + 8), with: answer[1...])
                    } else {
                        for (a, v) in inBlock { try self.setBits(a, v) }
                    }
                }))
            }
        }
        var done: [String] = []
        for (what, step) in steps {
            do { try step() } catch { throw LockInterrupted(done: done, underlying: error, step: what) }
            done.append(what)
        }
        do {
            lockState = nil
            for block in [1, 14, 15] { loaded.remove(block) }
            if let area = dynamicLockArea { loaded.remove(area.position / 8) }
            try ensureRead(8..<12)
            capabilityContainer = try Type1CapabilityContainer(bytes: Array(image[8..<12]))
            let after = try readLockState()
            // A locked block is barred: the tag skips the write and does not answer. Each lock is
            // probed on a block it locks (issue 48): block 1 for LOCK0, the first block past F
            // for the dynamic bits, each rewritten with its own bytes.
            var refused = false
            do {
                let answer = try link.send(.writeErase(address: 0x0C, byte: image[0x0C]))
                refused = answer[1] != image[0x0C]
            } catch let e as TagError where e.kind == .writeFailed { refused = true }
            if refused, after.dynamicBits > 0, !header.staticMemory, memorySize > 0x80 {
                let block = 0x10
                if link.form.carries(.writeErase8(block: UInt8(block), bytes: [])) {
                    try ensureRead((block * 8)..<(block * 8 + 8))
                    let own = Array(image[(block * 8)..<(block * 8 + 8)])
                    do {
                        let answer = try link.send(.writeErase8(block: UInt8(block), bytes: own))
                        refused = Array(answer[1...]) != own
                    } catch let e as TagError where e.kind == .writeFailed { refused = true }
                } else {
                    refused = false
                }
            }
            return LockReport(done: done, alreadyDone: already, state: after, refusesWrites: refused && after.isFullyLocked)
        } catch {
            throw LockInterrupted(done: done, underlying: error, step: "check the lock")
        }
    }

    /// WRITE-NE of `bits` into byte `address` (bits only ever set); checks the answer.
    func setBits(_ address: Int, _ bits: UInt8) throws {
        lockState = nil
        let answer = try link.send(.writeNoErase(address: UInt8(address), byte: bits))
        guard answer[1] & bits == bits else {
            throw TagError(.lockFailed, "byte \(Hex.encode([UInt8(address)])) reads \(Hex.encode([answer[1]])) after WRITE-NE of \(Hex.encode([bits]))")
        }
        image[address] = answer[1]
    }
}
