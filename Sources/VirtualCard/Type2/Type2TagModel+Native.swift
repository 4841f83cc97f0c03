// The Type 2 chip's own commands (GET_VERSION, READ, FAST_READ, WRITE, PWD_AUTH, SECTOR_SELECT,
// READ_SIG, READ_CNT) as a reader with a raw path passes them on.
import ISO7816

extension Type2TagModel: NativeTagModel {
    /// NTAG213/215/216 have the NFC counter (NTAG210/212 and Ultralight EV1 do not).
    var hasNFCCounter: Bool {
        guard let v = chip.version else { return false }
        return v[2] == 0x04 && [0x0F, 0x11, 0x13].contains(v[6])
    }

    /// Counts the first READ / FAST_READ after power-up when ACCESS's NFC_CNT_EN (bit 4) is set.
    func countRead(_ m: [UInt8]) {
        guard hasNFCCounter, let p = chip.passwords, m[p.access.page * 4 + p.access.byte] & 0x10 != 0 else { return }
        let first = volatile.withLock { v in defer { v.counted = true }; return !v.counted }
        if first { counter.withLock { $0 = min($0 + 1, 0xFF_FFFF) } }
    }

    /// The NTAG21x command set (NXP NTAG213/215/216 datasheet §10; NTAG I2C for SECTOR_SELECT).
    /// After a NAK or silence the tag is in IDLE/HALT and answers nothing until a new
    /// activation (`reset()`: the reader's field off and on, or a new InListPassiveTarget).
    public func transceive(_ frame: [UInt8]) -> NativeAnswer {
        if volatile.current.halted { return .silence }
        let secondStep = volatile.current.sectorSelectPending
        let answer = answer(frame)
        // SECTOR_SELECT's second step answers by silence and the tag stays active.
        if answer == .silence && secondStep { return answer }
        if answer == .silence || answer.isNAK { volatile.withLock { $0.halted = true } }
        return answer
    }

    private func answer(_ frame: [UInt8]) -> NativeAnswer {
        guard let command = frame.first else { return .silence }
        let pending = volatile.withLock { v in defer { v.sectorSelectPending = false }; return v.sectorSelectPending }
        if pending {
            // SECTOR_SELECT packet 2: sector and three RFU bytes; passive ACK = silence.
            guard frame.count == 4, Int(frame[0]) * 256 < chip.pages else { return .nak(0) }
            volatile.withLock { $0.sector = Int(frame[0]) }
            return .silence
        }
        let sector = volatile.current.sector
        switch command {
        case 0x60 where frame.count == 1:                         // GET_VERSION
            return chip.version.map(NativeAnswer.data) ?? .silence
        case 0x30 where frame.count == 2:                         // READ
            let bytes = memory.withLock { m in read(page: sector * 256 + Int(frame[1]), m) }
            return bytes.map(NativeAnswer.data) ?? .nak(0)
        case 0x3A where frame.count == 3 && chip.version != nil:  // FAST_READ
            let (start, end) = (sector * 256 + Int(frame[1]), sector * 256 + Int(frame[2]))
            return memory.withLock { m in fastRead(start, end, m) }.map(NativeAnswer.data) ?? .nak(0)
        case 0xA2 where frame.count == 6:                         // WRITE
            let page = sector * 256 + Int(frame[1])
            let image: [UInt8]? = memory.withLock { m in write(page: page, Array(frame[2...]), &m) ? m : nil }
            guard let image else { return .nak(0) }
            onChange?(image)
            return .ack
        case 0x3C where frame.count == 2 && chip.version != nil:  // READ_SIG
            return frame[1] == 0 ? .data(signature) : .nak(0)
        case 0x39 where frame.count == 2 && hasNFCCounter:        // READ_CNT
            guard frame[1] == 0x02, let p = chip.passwords else { return .nak(0) }
            let access = memory.current[p.access.page * 4 + p.access.byte]
            // NFC_CNT_EN (bit 4) must be set; NFC_CNT_PWD_PROT (bit 3) asks for PWD_AUTH first.
            guard access & 0x10 != 0, access & 0x08 == 0 || volatile.current.authenticated else { return .nak(0) }
            let c = counter.current
            return .data([UInt8(c & 0xFF), UInt8(c >> 8 & 0xFF), UInt8(c >> 16 & 0xFF)])
        case 0x1B where frame.count == 5 && chip.passwords?.configLockBit != nil:  // PWD_AUTH
            return passwordAuth(Array(frame[1...]))
        case 0xC2 where frame.count == 2 && frame[1] == 0xFF:    // SECTOR_SELECT packet 1
            guard chip.pages > 256 else { return .nak(0) }
            volatile.withLock { $0.sectorSelectPending = true }
            return .ack
        default:
            return .silence
        }
    }

    /// FAST_READ: every page from start to end inside the selected sector and the readable
    /// area (a read-protected page inside: NAK); PWD and PACK read as zeros.
    func fastRead(_ start: Int, _ end: Int, _ m: [UInt8]) -> [UInt8]? {
        let (_, limit) = readableWindow(start, m, sectored: true)
        guard start <= end, end < limit else { return nil }
        countRead(m)
        var out: [UInt8] = []
        for p in start...end {
            if realism.contains(.passwords) && chip.passwords?.secretPages.contains(p) == true { out += [0, 0, 0, 0] } else { out += m[(p * 4)..<(p * 4 + 4)] }
        }
        return out
    }

    /// PWD_AUTH: PACK for the right password; a NAK otherwise, counted against AUTHLIM (ACCESS
    /// bits 2-0; 0 = no limit). Past the limit every attempt fails.
    func passwordAuth(_ password: [UInt8]) -> NativeAnswer {
        guard let p = chip.passwords else { return .silence }
        let m = memory.current
        let pwd = Array(m[(p.secretPages.lowerBound * 4)..<(p.secretPages.lowerBound * 4 + 4)])
        let pack = Array(m[(p.secretPages.upperBound * 4)..<(p.secretPages.upperBound * 4 + 2)])
        let authlim = Int(m[p.access.page * 4 + p.access.byte] & 0x07)
        return volatile.withLock { v in
            let limitReached = authlim > 0 && v.failedAuthentications >= (1 << authlim)
            guard !limitReached, password == pwd else {
                v.failedAuthentications += 1
                return .nak(4)
            }
            v.failedAuthentications = 0
            v.authenticated = true
            return .data(pack)
        }
    }
}
