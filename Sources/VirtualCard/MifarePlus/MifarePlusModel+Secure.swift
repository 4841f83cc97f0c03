// The emulated MIFARE Plus's SL3 side: AES authentication, and reads and writes under EV0 secure
// messaging (MACs, counters, IVs), each command's MAC checked as the chip checks it.
import CardCrypto

extension MifarePlusModel {
    static func le(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
    static func rotated(_ b: [UInt8]) -> [UInt8] { Array(b[1...]) + [b[0]] }
    static let zeroIV = [UInt8](repeating: 0, count: 16)

    func mac(_ key: [UInt8], _ message: [UInt8]) -> [UInt8] {
        let full = (try? CMAC(.aes128, key: key).mac(message)) ?? [UInt8](repeating: 0, count: 16)
        return (0..<8).map { full[2 * $0 + 1] }
    }

    /// `70 BNr LenCap [PCDcap2]` (First) or `76 BNr` (NonFirst): 90 ‖ E(K, RndB).
    func authenticateStart(_ frame: [UInt8]) -> [UInt8] {
        let first = frame[0] == 0x70
        guard frame.count >= 3 else { return [0x0C] }
        let n = UInt16(frame[1]) | UInt16(frame[2]) << 8
        let level = memory.current.level
        volatile.withLock { $0.pending = nil }
        switch level {
        case .sl0: return [0x0B]
        case .sl1: guard first, n == 0x9003 else { return [0x0B] }
        case .sl3:
            guard (0x4000..<UInt16(0x4000 + 2 * sectors)).contains(n) || (0x9000...0x9003).contains(n) else { return [0x09] }
            if !first && volatile.current.session == nil { return [0x0B] }
        }
        guard let key = memory.current.blocks[n] else { return [0x0A] }
        let rndB = random(16)
        volatile.withLock { $0.pending = PendingAuthentication(keyNumber: n, key: key, rndB: rndB, first: first) }
        guard let e = try? BlockCipher(.aes128, key: key).encrypt(cbc: rndB, iv: Self.zeroIV) else { return [0x0F] }
        return [0x90] + e
    }

    /// `72 E(K, RndA ‖ RndB<<<8)`: First answers E(K, TI ‖ RndA<<<8 ‖ PICCcap2 ‖ PCDcap2), NonFirst
    /// E(K, RndA<<<8); a wrong RndB' answers 06 and leaves the card unauthenticated.
    func authenticateFinish(_ frame: [UInt8]) -> [UInt8] {
        guard let p = volatile.current.pending else { return [0x0B] }
        volatile.withLock { $0.pending = nil; $0.session = p.first ? nil : $0.session }
        guard frame.count == 33, let aes = try? BlockCipher(.aes128, key: p.key),
              let plain = try? aes.decrypt(cbc: Array(frame[1...]), iv: Self.zeroIV) else { return [0x0C] }
        let rndA = Array(plain[0..<16])
        guard Array(plain[16..<32]) == Self.rotated(p.rndB) else {
            volatile.withLock { $0.session = nil }
            return [0x06]
        }
        if memory.current.level == .sl1 {
            // The SL3 switch key proved: the card is in SL3 from now on (its next activation shows it).
            leaveLevel1()
            onChange?(self)
        }
        let previous = volatile.current.session
        let ti = p.first ? random(4) : (previous?.ti ?? random(4))
        func xor(_ r: Range<Int>) -> [UInt8] { r.map { rndA[$0] ^ p.rndB[$0] } }
        guard let kenc = try? aes.encrypt(block: Array(rndA[11..<16]) + Array(p.rndB[11..<16]) + xor(4..<9) + [0x11]),
              let kmac = try? aes.encrypt(block: Array(rndA[7..<12]) + Array(p.rndB[7..<12]) + xor(0..<5) + [0x22]) else { return [0x0F] }
        var session = Session(ti: ti, kenc: kenc, kmac: kmac, keyNumber: p.keyNumber)
        if !p.first, let previous {
            session.readCounter = previous.readCounter
            session.writeCounter = previous.writeCounter
        }
        volatile.withLock { $0.session = session }
        let answer = p.first ? ti + Self.rotated(rndA) + [UInt8](repeating: 0, count: 12) : Self.rotated(rndA)
        guard let e = try? aes.encrypt(cbc: answer, iv: Self.zeroIV) else { return [0x0F] }
        return [0x90] + e
    }

    /// The session's key type on the sector of `block`: 0x60 (A) or 0x61 (B), nil when the
    /// session is with another sector's key (or a system key).
    func keyType(for block: Int, _ s: Session) -> UInt8? {
        let sector = Self.sector(ofBlock: block)
        guard s.keyNumber >= 0x4000, s.keyNumber < 0x9000, (Int(s.keyNumber) - 0x4000) / 2 == sector else { return nil }
        return s.keyNumber & 1 == 0 ? 0x60 : 0x61
    }

    /// The trailer's access bits allow `operation` (0 read, 1 write) on `block` with `key`.
    func allows(_ operation: Int, block: Int, key: UInt8) -> Bool {
        let sector = Self.sector(ofBlock: block)
        guard let t = memory.current.blocks[UInt16(Self.trailer(sector))] else { return false }
        let first = Self.firstBlock(sector), i = block - first
        let isTrailer = block == Self.trailer(sector)
        let group = isTrailer ? 3 : (block < 128 ? i : min(2, i / 5))
        guard let c = MifareClassicModel.condition(t, group: group) else { return false }
        if isTrailer {
            // Read access bits, write access bits (the trailer table's columns 1 and 2).
            guard let row = MifareClassicModel.trailerTable[c] else { return false }
            return MifareClassicModel.permits(operation == 0 ? row[1] : row[2], key)
        }
        guard let row = MifareClassicModel.dataTable[c] else { return false }
        return MifareClassicModel.permits(row[operation], key)
    }

    /// `3x BNr Ext [MAC]`: bit 0 MAC on the answer, bit 1 plain, bit 2 an unMACed command.
    func read(_ frame: [UInt8]) -> [UInt8] {
        let code = frame[0]
        let macedCommand = code & 0x04 == 0
        guard frame.count == (macedCommand ? 12 : 4) else { return [0x0C] }
        guard var s = volatile.current.session else { return [0x06] }
        let n = UInt16(frame[1]) | UInt16(frame[2]) << 8, ext = Int(frame[3])
        if macedCommand {
            let expected = mac(s.kmac, [code] + Self.le(s.readCounter) + s.ti + Self.le(n) + [frame[3]])
            guard expected == Array(frame[4..<12]) else { return fail(0x08) }
        }
        let count = Self.blockCount(sectors: sectors)
        guard (1...15).contains(ext), Int(n) + ext <= count else { return fail(Int(n) < count ? 0x0C : 0x0A) }
        let sector = Self.sector(ofBlock: Int(n))
        guard Self.sector(ofBlock: Int(n) + ext - 1) == sector else { return fail(0x06) }
        guard let key = keyType(for: Int(n), s), (Int(n)..<(Int(n) + ext)).allSatisfy({ allows(0, block: $0, key: key) }) else { return fail(0x06) }
        let blocks = memory.current.blocks
        var data = (Int(n)..<(Int(n) + ext)).flatMap { blocks[UInt16($0)]! }
        s.readCounter &+= 1
        if code & 0x02 == 0 {
            let iv = Self.answerIV(s)
            guard let e = try? BlockCipher(.aes128, key: s.kenc).encrypt(cbc: data, iv: iv) else { return fail(0x0F) }
            data = e
        }
        volatile.withLock { $0.session = s }
        guard code & 0x01 == 1 else { return [0x90] + data }
        var m = mac(s.kmac, [0x90] + Self.le(s.readCounter) + s.ti + Self.le(n) + [frame[3]] + data)
        if log.current.tamperAnswerMAC && !log.current.tamperWritesOnly { m[0] ^= 0x01 }
        return [0x90] + data + m
    }

    /// `Ax BNr data [MAC]`: bit 0 MAC on the answer, bit 1 plain; always a MACed command.
    func write(_ frame: [UInt8]) -> [UInt8] {
        let code = frame[0]
        guard frame.count >= 3 + 16 + 8, (frame.count - 11) % 16 == 0, frame.count - 11 <= 48 else { return [0x0C] }
        guard var s = volatile.current.session else { return [0x06] }
        let n = UInt16(frame[1]) | UInt16(frame[2]) << 8
        let sent = Array(frame[3..<(frame.count - 8)])
        let expected = mac(s.kmac, [code] + Self.le(s.writeCounter) + s.ti + Self.le(n) + sent)
        guard expected == Array(frame.suffix(8)) else { return fail(0x08) }
        var data = sent
        if code & 0x02 == 0 {
            guard let d = try? BlockCipher(.aes128, key: s.kenc).decrypt(cbc: sent, iv: Self.commandIV(s)) else { return fail(0x0F) }
            data = d
        }
        let blocks = data.count / 16
        guard writable(n, blocks: blocks, s) else { return fail(0x06) }
        memory.withLock { m in
            for i in 0..<blocks where !dropsWrite(n + UInt16(i)) { m.blocks[n + UInt16(i)] = Array(data[(16 * i)..<(16 * i + 16)]) }
        }
        onChange?(self)
        s.writeCounter &+= 1
        volatile.withLock { $0.session = s }
        guard code & 0x01 == 1 else { return [0x90] }
        var m = mac(s.kmac, [0x90] + Self.le(s.writeCounter) + s.ti)
        if log.current.tamperAnswerMAC { m[0] ^= 0x01 }
        return [0x90] + m
    }

    /// Whether the session may write `blocks` blocks from `n`: data blocks and trailers by the
    /// access bits (block 0 never), a sector's keys in its own session (key A by the trailer's
    /// "write key A" column, key B by "write key B"), system keys with 9000, B000-B003 with 9001.
    func writable(_ n: UInt16, blocks: Int, _ s: Session) -> Bool {
        let count = Self.blockCount(sectors: sectors)
        if Int(n) < count {
            guard n != 0, Int(n) + blocks <= count, Self.sector(ofBlock: Int(n) + blocks - 1) == Self.sector(ofBlock: Int(n)),
                  let key = keyType(for: Int(n), s) else { return false }
            return (Int(n)..<(Int(n) + blocks)).allSatisfy { allows(1, block: $0, key: key) }
        }
        guard blocks == 1 else { return false }
        switch n {
        case 0x4000..<UInt16(0x4000 + 2 * sectors):
            let sector = (Int(n) - 0x4000) / 2
            guard let key = keyType(for: Self.firstBlock(sector), s), let t = memory.current.blocks[UInt16(Self.trailer(sector))],
                  let c = MifareClassicModel.condition(t, group: 3), let row = MifareClassicModel.trailerTable[c] else { return false }
            return MifareClassicModel.permits(n & 1 == 0 ? row[0] : row[4], key)
        case 0x9000...0x9003: return s.keyNumber == 0x9000
        case 0xB000...0xB003: return s.keyNumber == 0x9001
        default: return false
        }
    }

    /// An error status: the chip drops its authentication.
    func fail(_ status: UInt8) -> [UInt8] {
        volatile.withLock { $0.session = nil }
        return [status]
    }

    static func counters(_ s: Session) -> [UInt8] { le(s.readCounter) + le(s.writeCounter) }
    /// TI ‖ (R_Ctr ‖ W_Ctr) × 3.
    static func commandIV(_ s: Session) -> [UInt8] { s.ti + counters(s) + counters(s) + counters(s) }
    /// (R_Ctr ‖ W_Ctr) × 3 ‖ TI.
    static func answerIV(_ s: Session) -> [UInt8] { counters(s) + counters(s) + counters(s) + s.ti }
}
