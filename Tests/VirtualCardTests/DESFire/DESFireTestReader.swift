import CardCrypto
import ISO7816
import VirtualCard

/// A DESFire reader for these tests only: the reader's half of every scheme (legacy 0A, ISO 1A,
/// AES AA, EV2First/NonFirst), written here from the same public descriptions as the emulator
/// (libfreefare's mifare_desfire.c behaviour, the RFDoorLock traces, AN12196) but from the other
/// side and in another shape, so the emulator's secure messaging is checked by a peer and not by
/// itself. Every MAC and CRC the card sends is checked; a mismatch is a `Failure.integrity`.
final class DESFireTestReader {
    enum Scheme { case legacy, iso, aes, ev2First, ev2NonFirst }

    enum Failure: Error, Equatable, CustomStringConvertible {
        /// The card answered this status (its session is gone; ours too).
        case status(UInt8)
        /// The card's answer did not check out.
        case integrity(String)
        var description: String {
            switch self {
            case .status(let s): return "card status 91 \(Hex.encode([s]))"
            case .integrity(let w): return "integrity: \(w)"
            }
        }
    }

    /// How a command's data goes out.
    enum Send { case unprotected, management, read(DESFireCard.CommMode), write(DESFireCard.CommMode, header: Int), enciphered(header: Int) }
    /// How its answer comes back; `length` is the plain data length (needed to find CRCs).
    enum Receive { case unprotected, management, data(DESFireCard.CommMode, length: Int), ack(DESFireCard.CommMode), enciphered(length: Int) }

    private enum Session {
        case none
        case ev1(legacy: Bool, key: UInt8, cipher: BlockCipher, cmac: CMAC, iv: [UInt8])
        case ev2(key: UInt8, ti: [UInt8], counter: UInt16, enc: BlockCipher, mac: CMAC)
    }

    let card: any EmulatedCard
    private var session: Session = .none
    /// ISO 7816-4 wrapping (90 INS 00 00 …) or native frames.
    var wrapped = true
    /// Most data bytes a command frame carries; longer commands continue with AF frames.
    var frameLimit = 255
    /// Every frame sent, for tests that count or inspect them.
    private(set) var sent: [[UInt8]] = []
    private(set) var transactionIdentifier: [UInt8] = []
    /// A broken reader: EV2 FULL data padded with zeros instead of 80 00 … (MAC still right).
    var ev2ZeroPadding = false

    init(_ card: any EmulatedCard, wrapped: Bool = true) {
        self.card = card
        self.wrapped = wrapped
    }

    var authenticatedKey: UInt8? {
        switch session {
        case .none: return nil
        case .ev1(_, let k, _, _, _), .ev2(let k, _, _, _, _): return k
        }
    }

    func forgetSession() { session = .none }

    // MARK: Frames

    /// One frame: status and data.
    func frame(_ ins: UInt8, _ data: [UInt8]) -> (UInt8, [UInt8]) {
        if wrapped {
            let apdu = [0x90, ins, 0x00, 0x00] + (data.isEmpty ? [] : [UInt8(data.count)] + data) + [0x00]
            sent.append(apdu)
            let r = card.process(apdu)
            guard r.count >= 2, r[r.count - 2] == 0x91 else { return (0xFF, r) }
            return (r[r.count - 1], Array(r.dropLast(2)))
        }
        sent.append([ins] + data)
        let r = card.process([ins] + data)
        guard let status = r.first else { return (0xFF, []) }
        return (status, Array(r.dropFirst()))
    }

    /// A whole command, AF-chained beyond `frameLimit`, and every answer frame collected.
    func exchange(_ ins: UInt8, _ data: [UInt8]) throws(Failure) -> (status: UInt8, data: [UInt8]) {
        var rest = data[...]
        var (status, answer) = frame(ins, Array(rest.prefix(frameLimit)))
        rest = rest.dropFirst(frameLimit)
        while !rest.isEmpty {
            guard status == 0xAF, answer.isEmpty else { break }
            (status, answer) = frame(0xAF, Array(rest.prefix(frameLimit)))
            rest = rest.dropFirst(frameLimit)
        }
        var all = answer
        while status == 0xAF {
            let next = frame(0xAF, [])
            status = next.0
            all += next.1
        }
        guard status == 0x00 || status == 0x0C else {
            session = .none
            throw .status(status)
        }
        return (status, all)
    }

    /// A command with its protection on the way out and checked on the way back.
    @discardableResult
    func command(_ ins: UInt8, _ data: [UInt8] = [], send: Send = .management, receive: Receive = .management) throws(Failure) -> [UInt8] {
        let wire = try protect(ins, data, send)
        let (status, answer) = try exchange(ins, wire)
        return try unprotect(answer, status, receive)
    }

    /// The status a command ends with (00 or 0C), for CommitTransaction and AbortTransaction.
    func commandStatus(_ ins: UInt8) throws(Failure) -> UInt8 {
        let wire = try protect(ins, [], .management)
        let (status, answer) = try exchange(ins, wire)
        _ = try unprotect(answer, status, .management)
        return status
    }

    // MARK: Crypto helpers (the reader's own)

    private static func run<T>(_ body: () throws -> T) throws(Failure) -> T {
        do { return try body() } catch { throw .integrity("crypto: \(error)") }
    }

    private static func zeroPad(_ d: [UInt8], _ block: Int) -> [UInt8] {
        var out = d
        while out.isEmpty || out.count % block != 0 { out.append(0) }
        return out
    }

    private static func rotate(_ b: [UInt8]) -> [UInt8] { Array(b.dropFirst()) + b.prefix(1) }

    /// Legacy "send": decipher each block after XOR with the previous result (libfreefare
    /// MCD_SEND with MCO_DECYPHER).
    private static func legacySend(_ plain: [UInt8], _ cipher: BlockCipher) throws(Failure) -> [UInt8] {
        var out: [UInt8] = []
        var chain = [UInt8](repeating: 0, count: 8)
        for i in stride(from: 0, to: plain.count, by: 8) {
            let x = zip(plain[i..<(i + 8)], chain).map { $0 ^ $1 }
            chain = try run { try cipher.decrypt(block: x) }
            out += chain
        }
        return out
    }

    private static func legacyMAC(_ d: [UInt8], _ cipher: BlockCipher) throws(Failure) -> [UInt8] {
        let e = try run { try cipher.encrypt(cbc: zeroPad(d, 8)) }
        return Array(e[(e.count - 8)..<(e.count - 4)])
    }

    private static func ev2MAC(_ mac: CMAC, _ message: [UInt8]) throws(Failure) -> [UInt8] {
        let full = try run { try mac.mac(message) }
        return [1, 3, 5, 7, 9, 11, 13, 15].map { full[$0] }
    }

    private static func ev2IV(_ enc: BlockCipher, _ label: [UInt8], _ ti: [UInt8], _ counter: UInt16) throws(Failure) -> [UInt8] {
        try run { try enc.encrypt(block: label + ti + [UInt8(counter & 0xFF), UInt8(counter >> 8)] + [UInt8](repeating: 0, count: 8)) }
    }

    // MARK: Protection

    private func protect(_ ins: UInt8, _ data: [UInt8], _ send: Send) throws(Failure) -> [UInt8] {
        switch session {
        case .none:
            return data
        case .ev1(let legacy, let key, let cipher, let cmac, var iv):
            defer { session = .ev1(legacy: legacy, key: key, cipher: cipher, cmac: cmac, iv: iv) }
            if legacy {
                switch send {
                case .write(.mac, let h):
                    return data + (try Self.legacyMAC(Array(data.dropFirst(h)), cipher))
                case .write(.full, let h), .enciphered(let h):
                    let p = Array(data.dropFirst(h))
                    return Array(data.prefix(h)) + (try Self.legacySend(Self.zeroPad(p + CRC.crc16(p), 8), cipher))
                default:
                    return data
                }
            }
            switch send {
            case .unprotected:
                return data
            case .management, .read, .write(.plain, _):
                iv = try Self.run { try cmac.mac([ins] + data, iv: iv) }
                return data
            case .write(.mac, _):
                iv = try Self.run { try cmac.mac([ins] + data, iv: iv) }
                return data + iv.prefix(8)
            case .write(.full, let h), .enciphered(let h):
                let p = Array(data.dropFirst(h))
                let plain = Self.zeroPad(p + CRC.crc32([ins] + data), cipher.blockSize)
                let c = try Self.run { try cipher.encrypt(cbc: plain, iv: iv) }
                iv = Array(c.suffix(cipher.blockSize))
                return Array(data.prefix(h)) + c
            }
        case let .ev2(_, ti, counter, enc, mac):
            let ctr = [UInt8(counter & 0xFF), UInt8(counter >> 8)]
            switch send {
            case .unprotected, .read(.plain), .write(.plain, _):
                return data
            case .management, .read, .write(.mac, _):
                return data + (try Self.ev2MAC(mac, [ins] + ctr + ti + data))
            case .write(.full, let h), .enciphered(let h):
                let iv = try Self.ev2IV(enc, [0xA5, 0x5A], ti, counter)
                let p = Array(data.dropFirst(h))
                let padded = ev2ZeroPadding ? Self.zeroPad(p, 16) : Padding.pad(p, blockSize: 16)
                let c = try Self.run { try enc.encrypt(cbc: padded, iv: iv) }
                let body = Array(data.prefix(h)) + c
                return body + (try Self.ev2MAC(mac, [ins] + ctr + ti + body))
            }
        }
    }

    private func unprotect(_ answer: [UInt8], _ status: UInt8, _ receive: Receive) throws(Failure) -> [UInt8] {
        switch session {
        case .none:
            return answer
        case .ev1(let legacy, let key, let cipher, let cmac, var iv):
            defer { session = .ev1(legacy: legacy, key: key, cipher: cipher, cmac: cmac, iv: iv) }
            if legacy {
                switch receive {
                case .data(.mac, let n):
                    guard answer.count == n + 4 else { throw .integrity("legacy MAC length") }
                    guard try Self.legacyMAC(Array(answer.prefix(n)), cipher) == Array(answer.suffix(4)) else { throw .integrity("legacy MAC") }
                    return Array(answer.prefix(n))
                case .data(.full, let n), .enciphered(let n):
                    let p = try Self.run { try cipher.decrypt(cbc: answer) }
                    guard p.count >= n + 2, CRC.crc16(Array(p.prefix(n))) == Array(p[n..<(n + 2)]) else { throw .integrity("legacy CRC16") }
                    return Array(p.prefix(n))
                default:
                    return answer
                }
            }
            switch receive {
            case .unprotected:
                return answer
            case .management, .data(.plain, _), .data(.mac, _), .ack:
                guard answer.count >= 8 else { throw .integrity("no CMAC") }
                let body = Array(answer.dropLast(8))
                let m = try Self.run { try cmac.mac(body + [status], iv: iv) }
                guard constantTimeEquals(Array(m.prefix(8)), Array(answer.suffix(8))) else { throw .integrity("CMAC") }
                iv = m
                return body
            case .data(.full, let n), .enciphered(let n):
                let p = try Self.run { try cipher.decrypt(cbc: answer, iv: iv) }
                iv = Array(answer.suffix(cipher.blockSize))
                guard p.count >= n + 4, CRC.crc32(Array(p.prefix(n)) + [status]) == Array(p[n..<(n + 4)]) else { throw .integrity("CRC32") }
                guard p[(n + 4)...].allSatisfy({ $0 == 0 }) else { throw .integrity("padding") }
                return Array(p.prefix(n))
            }
        case let .ev2(key, ti, counter, enc, mac):
            let next = counter &+ 1
            session = .ev2(key: key, ti: ti, counter: next, enc: enc, mac: mac)
            let ctr = [UInt8(next & 0xFF), UInt8(next >> 8)]
            switch receive {
            case .unprotected, .data(.plain, _), .ack(.plain):
                return answer
            case .management, .data(.mac, _), .ack:
                guard answer.count >= 8 else { throw .integrity("no MAC") }
                let body = Array(answer.dropLast(8))
                guard try Self.ev2MAC(mac, [status] + ctr + ti + body) == Array(answer.suffix(8)) else { throw .integrity("EV2 MAC") }
                return body
            case .data(.full, _), .enciphered:
                guard answer.count >= 8 else { throw .integrity("no MAC") }
                let body = Array(answer.dropLast(8))
                guard try Self.ev2MAC(mac, [status] + ctr + ti + body) == Array(answer.suffix(8)) else { throw .integrity("EV2 MAC") }
                if body.isEmpty { return [] }
                let iv = try Self.ev2IV(enc, [0x5A, 0xA5], ti, next)
                let p = try Self.run { try enc.decrypt(cbc: body, iv: iv) }
                guard let plain = Padding.unpad(p, blockSize: 16) else { throw .integrity("EV2 padding") }
                return plain
            }
        }
    }

    // MARK: Authentication

    static func algorithm(_ key: DESFireCard.Key) -> CipherAlgorithm {
        switch key.type {
        case .tdes: return .tdes2
        case .tdes3: return .tdes3
        case .aes: return .aes128
        }
    }

    func authenticate(_ number: UInt8, _ key: DESFireCard.Key, _ scheme: Scheme, rndA given: [UInt8]? = nil) throws(Failure) {
        let cipher = try Self.run { try BlockCipher(Self.algorithm(key), key: key.bytes) }
        switch scheme {
        case .legacy, .iso, .aes:
            session = .none
            let (s1, challenge) = frame(scheme == .legacy ? 0x0A : scheme == .iso ? 0x1A : 0xAA, [number])
            guard s1 == 0xAF else { throw .status(s1) }
            let n = challenge.count
            let bs = cipher.blockSize
            let rndB = try Self.run { try cipher.decrypt(cbc: challenge) }
            let rndA = given ?? secureRandomBytes(n)
            let token = rndA + Self.rotate(rndB)
            let sentToken = scheme == .legacy ? try Self.legacySend(token, cipher)
                : try Self.run { try cipher.encrypt(cbc: token, iv: Array(challenge.suffix(bs))) }
            let (s2, proof) = frame(0xAF, sentToken)
            guard s2 == 0x00 else { throw .status(s2) }
            let rotatedA = scheme == .legacy ? try Self.run { try cipher.decrypt(cbc: proof) }
                : try Self.run { try cipher.decrypt(cbc: proof, iv: Array(sentToken.suffix(bs))) }
            guard rotatedA == Self.rotate(rndA) else { throw .integrity("RndA'") }
            func part(_ r: Range<Int>) -> [UInt8] { Array(rndA[r]) + Array(rndB[r]) }
            var sessionKey = part(0..<4)
            switch key.type {
            case .tdes:
                sessionKey += key.bytes.prefix(8) == key.bytes.suffix(8) ? sessionKey : part(4..<8)
            case .tdes3:
                sessionKey += part(6..<10)
                sessionKey += part(12..<16)
            case .aes:
                sessionKey += part(12..<16)
            }
            let sc = try Self.run { try BlockCipher(Self.algorithm(key), key: sessionKey) }
            let cmac = try Self.run { try CMAC(sc) }
            session = .ev1(legacy: scheme == .legacy, key: number, cipher: sc, cmac: cmac, iv: [UInt8](repeating: 0, count: sc.blockSize))
        case .ev2First, .ev2NonFirst:
            var previous: (ti: [UInt8], counter: UInt16)?
            if case let .ev2(_, ti, counter, _, _) = session { previous = (ti, counter) }
            let (s1, challenge) = frame(scheme == .ev2First ? 0x71 : 0x77, scheme == .ev2First ? [number, 0x00] : [number])
            guard s1 == 0xAF else { session = .none; throw .status(s1) }
            let rndB = try Self.run { try cipher.decrypt(cbc: challenge) }
            let rndA = given ?? secureRandomBytes(16)
            let (s2, answer) = frame(0xAF, try Self.run { try cipher.encrypt(cbc: rndA + Self.rotate(rndB)) })
            guard s2 == 0x00 else { session = .none; throw .status(s2) }
            let plain = try Self.run { try cipher.decrypt(cbc: answer) }
            let ti: [UInt8], counter: UInt16
            if scheme == .ev2First {
                guard plain.count == 32, Array(plain[4..<20]) == Self.rotate(rndA) else { throw .integrity("RndA' (EV2First)") }
                ti = Array(plain[0..<4])
                counter = 0
            } else {
                guard let previous, plain == Self.rotate(rndA) else { throw .integrity("RndA' (EV2NonFirst)") }
                (ti, counter) = previous
            }
            transactionIdentifier = ti
            // SV1 / SV2 (AN12196 §6.6), written out byte by byte here.
            var sv: [UInt8] = [0x00, 0x01, 0x00, 0x80, rndA[0], rndA[1]]
            for i in 0..<6 { sv.append(rndA[2 + i] ^ rndB[i]) }
            sv += rndB[6..<16]
            sv += rndA[8..<16]
            let k = try Self.run { try CMAC(.aes128, key: key.bytes) }
            let encKey = try Self.run { try k.mac([0xA5, 0x5A] + sv) }, macKey = try Self.run { try k.mac([0x5A, 0xA5] + sv) }
            session = .ev2(key: number, ti: ti, counter: counter, enc: try Self.run { try BlockCipher(.aes128, key: encKey) },
                           mac: try Self.run { try CMAC(.aes128, key: macKey) })
        }
    }

    // MARK: Commands

    private static func le24(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF)] }
    private static func aid(_ a: UInt32) -> [UInt8] { [UInt8(a & 0xFF), UInt8(a >> 8 & 0xFF), UInt8(a >> 16 & 0xFF)] }

    func select(_ aid: UInt32) throws(Failure) {
        _ = try exchange(0x5A, Self.aid(aid))
        session = .none
    }

    func getVersion() throws(Failure) -> [UInt8] { try command(0x60) }
    func getApplicationIDs() throws(Failure) -> [UInt8] { try command(0x6A) }
    func getKeySettings() throws(Failure) -> [UInt8] { try command(0x45) }
    func getKeyVersion(_ n: UInt8) throws(Failure) -> UInt8 { try command(0x64, [n]).first ?? 0xFF }
    func freeMemory() throws(Failure) -> Int {
        let b = try command(0x6E)
        return b.reversed().reduce(0) { $0 << 8 | Int($1) }
    }
    func getCardUID() throws(Failure) -> [UInt8] { try command(0x51, send: .management, receive: .enciphered(length: 7)) }
    func format() throws(Failure) { try command(0xFC) }
    func getFileIDs() throws(Failure) -> [UInt8] { try command(0x6F) }
    func getFileSettings(_ f: UInt8) throws(Failure) -> [UInt8] { try command(0xF5, [f]) }

    func createApplication(_ aid: UInt32, settings: UInt8 = 0x0F, keys: Int, type: DESFireCard.KeyType, isoFileID: UInt16? = nil, dfName: [UInt8]? = nil) throws(Failure) {
        var keyByte = UInt8(keys) | (type == .tdes3 ? 0x40 : type == .aes ? 0x80 : 0)
        var data = Self.aid(aid) + [settings]
        var tail: [UInt8] = []
        if let isoFileID {
            keyByte |= 0x20
            tail = [UInt8(isoFileID & 0xFF), UInt8(isoFileID >> 8)] + (dfName ?? [])
        }
        data += [keyByte] + tail
        try command(0xCA, data)
    }

    func deleteApplication(_ aid: UInt32) throws(Failure) { try command(0xDA, Self.aid(aid)) }

    /// Access rights as libfreefare's MDAR(read, write, read&write, change) value.
    func createStdFile(_ f: UInt8, mode: DESFireCard.CommMode, access: UInt16, size: Int, backup: Bool = false, isoFileID: UInt16? = nil) throws(Failure) {
        let fid = isoFileID.map { [UInt8($0 & 0xFF), UInt8($0 >> 8)] } ?? []
        try command(backup ? 0xCB : 0xCD, [f] + fid + [mode.rawValue, UInt8(access & 0xFF), UInt8(access >> 8)] + Self.le24(size))
    }

    func createValueFile(_ f: UInt8, mode: DESFireCard.CommMode, access: UInt16, lower: Int32, upper: Int32, value: Int32, options: UInt8 = 0) throws(Failure) {
        func le32(_ v: Int32) -> [UInt8] { let u = UInt32(bitPattern: v); return [UInt8(u & 0xFF), UInt8(u >> 8 & 0xFF), UInt8(u >> 16 & 0xFF), UInt8(u >> 24)] }
        try command(0xCC, [f, mode.rawValue, UInt8(access & 0xFF), UInt8(access >> 8)] + le32(lower) + le32(upper) + le32(value) + [options])
    }

    func createRecordFile(_ f: UInt8, cyclic: Bool, mode: DESFireCard.CommMode, access: UInt16, recordSize: Int, max: Int) throws(Failure) {
        try command(cyclic ? 0xC0 : 0xC1, [f, mode.rawValue, UInt8(access & 0xFF), UInt8(access >> 8)] + Self.le24(recordSize) + Self.le24(max))
    }

    func readData(_ f: UInt8, offset: Int = 0, length: Int, mode: DESFireCard.CommMode) throws(Failure) -> [UInt8] {
        try command(0xBD, [f] + Self.le24(offset) + Self.le24(length), send: .read(mode), receive: .data(mode, length: length))
    }

    func writeData(_ f: UInt8, offset: Int = 0, _ data: [UInt8], mode: DESFireCard.CommMode) throws(Failure) {
        try command(0x3D, [f] + Self.le24(offset) + Self.le24(data.count) + data, send: .write(mode, header: 7), receive: .ack(mode))
    }

    func getValue(_ f: UInt8, mode: DESFireCard.CommMode) throws(Failure) -> Int32 {
        let b = try command(0x6C, [f], send: .read(mode), receive: .data(mode, length: 4))
        guard b.count == 4 else { throw .integrity("value length") }
        return Int32(bitPattern: UInt32(b[0]) | UInt32(b[1]) << 8 | UInt32(b[2]) << 16 | UInt32(b[3]) << 24)
    }

    /// Credit (0C), Debit (DC), LimitedCredit (1C).
    func value(_ ins: UInt8, _ f: UInt8, _ amount: Int32, mode: DESFireCard.CommMode) throws(Failure) {
        let u = UInt32(bitPattern: amount)
        try command(ins, [f, UInt8(u & 0xFF), UInt8(u >> 8 & 0xFF), UInt8(u >> 16 & 0xFF), UInt8(u >> 24)], send: .write(mode, header: 1), receive: .ack(mode))
    }

    func writeRecord(_ f: UInt8, offset: Int = 0, _ data: [UInt8], mode: DESFireCard.CommMode) throws(Failure) {
        try command(0x3B, [f] + Self.le24(offset) + Self.le24(data.count) + data, send: .write(mode, header: 7), receive: .ack(mode))
    }

    func readRecords(_ f: UInt8, offset: Int = 0, count: Int, recordSize: Int, mode: DESFireCard.CommMode) throws(Failure) -> [UInt8] {
        try command(0xBB, [f] + Self.le24(offset) + Self.le24(count), send: .read(mode), receive: .data(mode, length: count * recordSize))
    }

    func clearRecordFile(_ f: UInt8) throws(Failure) { try command(0xEB, [f]) }
    func commit() throws(Failure) -> UInt8 { try commandStatus(0xC7) }
    func abort() throws(Failure) -> UInt8 { try commandStatus(0xA7) }

    func changeKeySettings(_ settings: UInt8) throws(Failure) { try command(0x54, [settings], send: .enciphered(header: 0)) }

    /// `rawMode` sends a comm-mode byte no CommMode has (a broken reader).
    func changeFileSettings(_ f: UInt8, mode: DESFireCard.CommMode, access: UInt16, enciphered: Bool, rawMode: UInt8? = nil) throws(Failure) {
        try command(0x5F, [f, rawMode ?? mode.rawValue, UInt8(access & 0xFF), UInt8(access >> 8)], send: enciphered ? .enciphered(header: 1) : .management)
    }

    /// ChangeKey, both cases: `keyNumber` carries the PICC-level type bits when needed; `old` is
    /// the key being replaced (for another key than the one in use).
    func changeKey(_ keyNumber: UInt8, to new: DESFireCard.Key, old: DESFireCard.Key? = nil) throws(Failure) {
        let same = authenticatedKey == keyNumber & 0x3F
        let oldBytes = old?.bytes ?? [UInt8](repeating: 0, count: new.bytes.count)
        let field = same ? new.bytes : zip(new.bytes, oldBytes).map { $0 ^ $1 }
        switch session {
        case .none:
            throw .status(0xAE)
        case .ev1(let legacy, let key, let cipher, let cmac, var iv):
            let versioned = field + (new.type == .aes ? [new.version] : [])
            var plain = versioned + (legacy ? CRC.crc16(versioned) : CRC.crc32([0xC4, keyNumber] + versioned))
            if !same { plain += legacy ? CRC.crc16(new.bytes) : CRC.crc32(new.bytes) }
            let c: [UInt8]
            if legacy {
                c = try Self.legacySend(Self.zeroPad(plain, 8), cipher)
            } else {
                c = try Self.run { try cipher.encrypt(cbc: Self.zeroPad(plain, cipher.blockSize), iv: iv) }
                iv = Array(c.suffix(cipher.blockSize))
                session = .ev1(legacy: legacy, key: key, cipher: cipher, cmac: cmac, iv: iv)
            }
            let (status, answer) = try exchange(0xC4, [keyNumber] + c)
            if same {
                guard answer.isEmpty else { throw .integrity("an answer after changing the key in use") }
                session = .none
            } else {
                _ = try unprotect(answer, status, .management)
            }
        case .ev2:
            let data = [keyNumber] + field + [new.version] + (same ? [] : CRC.crc32(new.bytes))
            let wire = try protect(0xC4, data, .enciphered(header: 1))
            let (status, answer) = try exchange(0xC4, wire)
            if same {
                guard answer.isEmpty else { throw .integrity("an answer after changing the key in use") }
                session = .none
            } else {
                _ = try unprotect(answer, status, .management)
            }
        }
    }
}

extension DESFireCard.Key {
    /// A DES-family key with `version` written into the parity bits of its first eight bytes (and
    /// their inverse into K2, as libfreefare does, so a 2K3DES key stays one).
    static func tdes(_ bytes: [UInt8], version: UInt8) -> DESFireCard.Key {
        var b = bytes.count == 8 ? bytes + bytes : bytes
        let single = b.count == 16 && b.prefix(8) == b.suffix(8)
        for i in 0..<8 {
            let bit = version >> (7 - i) & 1
            b[i] = b[i] & 0xFE | bit
            if b.count == 16 { b[i + 8] = single ? b[i] : b[i + 8] & 0xFE | (bit ^ 1) }
        }
        return DESFireCard.Key(.tdes, bytes: b)
    }
}
