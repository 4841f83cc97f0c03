// How a Type 1 tag is locked for good: the CC's access byte to 0F, then the lock bits with
// WRITE-NE (Android's rw_t1t order), resumable and confirmed by reading them back.
import ISO7816

extension Type1Tag {
    /// The dynamic lock area: the lock control TLV's, else the Topaz 512's own (LOCK2-LOCK7 at
    /// 7A-7F, a bit per block from 10); none on static memory.
    var dynamicLockArea: (position: Int, bits: Int, bytesPerBit: Int)? {
        if let a = tlv.lockAreas.first { return (a.position, a.bits, a.bytesLockedPerBit) }
        if chip == .topaz512 { return (0x7A, 48, 8) }
        return nil
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
            // A locked block is barred: the tag skips the write and does not answer.
            var refused = false
            do {
                let answer = try link.send(.writeErase(address: 0x0C, byte: image[0x0C]))
                refused = answer[1] != image[0x0C]
            } catch let e as TagError where e.kind == .writeFailed { refused = true }
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
