// The emulated NTAG 424 DNA's native commands: EV2 authentication, secure messaging on every
// command and answer, file settings, keys, Read_Sig, GetCardUID, ReadData and WriteData.
import CardCrypto
import ISO7816
import SUN

extension NTAG424TagModel {
    func native(_ c: CommandAPDU, _ s: inout State) -> ResponseAPDU {
        switch c.ins {
        case 0x60:
            s.versionFrame = 1
            // NT4H2421Tx: subtype 08 names the TagTamper chip.
            return ResponseAPDU(data: [0x04, 0x04, tagTamper ? 0x08 : 0x02, 0x30, 0x00, 0x11, 0x05], statusWord: Self.more)
        case 0xAF where s.pendingAuth != nil:
            return authenticatePart2(c, &s)
        case 0xAF where s.versionFrame == 1:
            s.versionFrame = 2
            return ResponseAPDU(data: [0x04, 0x04, 0x02, 0x01, 0x02, 0x11, 0x05], statusWord: Self.more)
        case 0xAF where s.versionFrame == 2:
            s.versionFrame = 0
            // NT4H2421Gx §10.5.2: the UID bytes are all zero when configured for random ID.
            return ResponseAPDU(data: (randomID ? [UInt8](repeating: 0, count: 7) : uid) + [0xCF, 0x39, 0x41, 0x14, 0x90, 0x13, 0x22], statusWord: Self.ok)
        case 0x71, 0x77:
            return authenticatePart1(c, first: c.ins == 0x71, &s)
        default:
            break
        }
        s.versionFrame = 0
        switch c.ins {
        case 0xF5: return getFileSettings(c, &s)
        case 0x5F: return changeFileSettings(c, &s)
        case 0xC4: return changeKey(c, &s)
        case 0x51: return getCardUID(c, &s)
        case 0xAD: return readData(c, &s)
        case 0x8D: return writeData(c, &s)
        case 0x64: return getKeyVersion(c, &s)
        case 0x3C: return readSignature(c, &s)
        case 0xF7 where tagTamper: return getTTStatus(c, &s)
        default: return Self.err(0x1C)   // illegal command code
        }
    }

    func authenticatePart1(_ c: CommandAPDU, first: Bool, _ s: inout State) -> ResponseAPDU {
        guard c.data.count >= 1 else { return Self.err(0x7E) }
        let key = Int(c.data[0])
        guard key < 5 else { return Self.err(0x40) }
        guard first || s.authenticated != nil else { return Self.err(0xAE) }
        let auth = EV2ChipAuthentication(keyNumber: UInt8(key), first: first, key: s.keys[key], rndB: (0..<16).map { _ in UInt8.random(in: 0...255) })
        guard let challenge = auth.challenge() else { return Self.err(0x1E) }
        s.pendingAuth = auth
        return ResponseAPDU(data: challenge, statusWord: Self.more)
    }

    func authenticatePart2(_ c: CommandAPDU, _ s: inout State) -> ResponseAPDU {
        guard let auth = s.pendingAuth else { return Self.err(0xAE) }
        s.pendingAuth = nil
        s.authenticated = nil
        guard c.data.count == 32 else { return Self.err(0x7E) }
        // PDcap2 and PCDcap2 are answered as zeros.
        let ti = auth.first ? (0..<4).map { _ in UInt8.random(in: 0...255) } : []
        switch auth.respond(to: c.data, transactionIdentifier: ti, previous: s.session, capabilities: [UInt8](repeating: 0, count: 12)) {
        case .refused:
            s.failedAuthentications += 1
            return Self.err(0xAE)
        case let .authenticated(answer, session):
            s.session = session
            s.authenticated = Int(auth.keyNumber)
            return ResponseAPDU(data: answer, statusWord: Self.ok)
        }
    }

    /// Checks a MAC or FULL command's MAC; returns the header and the (decrypted, unpadded)
    /// data, or the error to answer. `headerLength`: bytes of the command header (in clear).
    func open(_ c: CommandAPDU, headerLength: Int, mode: UInt8, _ s: inout State) -> Result<(header: [UInt8], data: [UInt8]), Refusal> {
        guard s.authenticated != nil, let session = s.session else { return .failure(Refusal(Self.err(0xAE))) }
        guard c.data.count >= headerLength + 8 else { return .failure(Refusal(Self.err(0x7E))) }
        guard let body = session.verifyCommand(command: c.ins, c.data) else {
            s.authenticated = nil
            return .failure(Refusal(Self.err(0x1E)))
        }
        let header = Array(body.prefix(headerLength))
        var data = Array(body.dropFirst(headerLength))
        if mode == 3, !data.isEmpty {
            guard data.count % 16 == 0 else { return .failure(Refusal(Self.err(0x7E))) }
            guard let deciphered = session.decryptCommandPadded(data) else { return .failure(Refusal(Self.err(0x1E))) }
            data = deciphered
            guard let marker = data.lastIndex(where: { $0 != 0 }), data[marker] == 0x80 else { return .failure(Refusal(Self.err(0x1E))) }
            data.removeSubrange(marker...)
        }
        return .success((header, data))
    }

    /// The answer `data` in `mode` with the counter moved on: MACed (and encrypted in FULL). The
    /// return code (SW2) is the first byte of the answer's MAC input: 00 for `91 00`.
    func seal(_ data: [UInt8], mode: UInt8, returnCode: UInt8 = 0x00, _ s: inout State) -> ResponseAPDU {
        s.session?.advance()
        let status = StatusWord(0x91, returnCode)
        guard mode != 0, s.authenticated != nil, let session = s.session else { return ResponseAPDU(data: data, statusWord: status) }
        var body = data
        if mode == 3, !data.isEmpty {
            guard let enciphered = session.encryptResponse(data) else { return Self.err(0x1E) }
            body = enciphered
        }
        guard let mac = session.responseMAC(status: returnCode, body: body) else { return Self.err(0x1E) }
        return ResponseAPDU(data: body + mac, statusWord: status)
    }

    func getFileSettings(_ c: CommandAPDU, _ s: inout State) -> ResponseAPDU {
        var fileNo: UInt8
        if s.authenticated != nil {
            guard case let .success((header, _)) = open(c, headerLength: 1, mode: 1, &s) else { return Self.err(0x1E) }
            fileNo = header[0]
        } else {
            guard c.data.count == 1 else { return Self.err(0x7E) }
            fileNo = c.data[0]
        }
        guard let f = s.files[fileNo] else { return Self.err(0xF0) }
        let settings: [UInt8] = [0x00, (f.sdmEnabled ? 0x40 : 0) | f.commMode, f.readWrite << 4 | f.change, f.read << 4 | f.write,
                                 UInt8(f.data.count & 0xFF), UInt8(f.data.count >> 8 & 0xFF), UInt8(f.data.count >> 16)] + (f.sdmEnabled ? f.sdm : [])
        return seal(settings, mode: 1, &s)
    }

    func changeFileSettings(_ c: CommandAPDU, _ s: inout State) -> ResponseAPDU {
        let opened = open(c, headerLength: 1, mode: 3, &s)
        guard case let .success((header, data)) = opened else { if case let .failure(e) = opened { return e.response }; return Self.err(0x1E) }
        guard var f = s.files[header[0]] else { return Self.err(0xF0) }
        guard f.change == 0xE || UInt8(s.authenticated!) == f.change else { return Self.err(0x9D) }
        guard data.count >= 3 else { return Self.err(0x7E) }
        let option = data[0]
        guard option & 0x3C == 0, option & 0x03 != 0x02 else { return Self.err(0x9E) }
        var sdm: [UInt8] = []
        if option & 0x40 != 0 {
            guard let parsed = Self.parseSDM(Array(data[3...])), parsed.length == data.count - 3 else { return Self.err(0x7E) }
            // Offsets inside the file, parts that do not overlap (NT4H2421Gx §10.7.1 conditions).
            let size = f.data.count
            var parts: [Range<Int>] = []
            if let o = parsed.uidOffset { parts.append(o..<(o + 14)) }
            if let o = parsed.counterOffset { parts.append(o..<(o + 6)) }
            if let o = parsed.piccOffset { parts.append(o..<(o + 32)) }
            if let o = parsed.encOffset, let length = parsed.encLength {
                guard length >= 32, length % 32 == 0 else { return Self.err(0x9E) }
                parts.append(o..<(o + length))
            }
            if let o = parsed.macOffset { parts.append(o..<(o + 16)) }
            // TTStatusOffset (NT4H2421Tx): only on a TagTamper chip; the two letters inside the
            // plain half of the encrypted file data, or in the clear inside the MAC input.
            if let t = parsed.ttOffset {
                guard tagTamper else { return Self.err(0x9E) }
                let inFile = parsed.encOffset.flatMap { o in parsed.encLength.map { t >= o && t + 2 <= o + $0 / 2 } } ?? false
                if !inFile {
                    guard let i = parsed.macInputOffset, let m = parsed.macOffset, t >= i, t + 2 <= m else { return Self.err(0x9E) }
                    parts.append(t..<(t + 2))
                }
            }
            guard parts.allSatisfy({ $0.upperBound <= size }) else { return Self.err(0x9E) }
            let sorted = parts.sorted { $0.lowerBound < $1.lowerBound }
            guard zip(sorted, sorted.dropFirst()).allSatisfy({ $0.0.upperBound <= $0.1.lowerBound }) else { return Self.err(0x9E) }
            if let i = parsed.macInputOffset, let m = parsed.macOffset, i > m { return Self.err(0x9E) }
            // Table 69: SDMENCOffset in SDMMACInputOffset … SDMMACOffset − 32 and SDMENCLength up
            // to SDMMACOffset − SDMENCOffset (the MAC covers all of the file data, and follows
            // it); Table 71: encryption only with the UID and the counter both mirrored.
            if let o = parsed.encOffset, let length = parsed.encLength {
                guard let i = parsed.macInputOffset, let m = parsed.macOffset, o >= i, o + length <= m else { return Self.err(0x9E) }
                guard parsed.options & 0xC0 == 0xC0 else { return Self.err(0x9E) }
            }
            sdm = Array(data[3...])
        } else if data.count != 3 {
            return Self.err(0x7E)
        }
        f.commMode = option & 0x03
        f.readWrite = data[1] >> 4; f.change = data[1] & 0x0F; f.read = data[2] >> 4; f.write = data[2] & 0x0F
        f.sdmEnabled = option & 0x40 != 0
        f.sdm = sdm
        if hostile != .changeFileSettingsDropped { s.files[header[0]] = f }
        return seal([], mode: 3, &s)
    }

    func changeKey(_ c: CommandAPDU, _ s: inout State) -> ResponseAPDU {
        let opened = open(c, headerLength: 1, mode: 3, &s)
        guard case let .success((header, data)) = opened else { if case let .failure(e) = opened { return e.response }; return Self.err(0x1E) }
        let number = Int(header[0] & 0x0F)
        guard number < 5 else { return Self.err(0x40) }
        // Only the application master key (0) changes keys.
        guard s.authenticated == 0 else { return Self.err(0x9D) }
        if number == 0 {
            guard data.count == 17 else { return Self.err(0x7E) }
            s.keys[0] = Array(data[0..<16])
            s.keyVersions[0] = data[16]
            // The session ends with the key it was opened with; the answer has no MAC.
            s.authenticated = nil
            s.session?.advance()
            return ResponseAPDU(statusWord: Self.ok)
        }
        guard data.count == 21 else { return Self.err(0x7E) }
        let new = zip(data[0..<16], s.keys[number]).map { $0 ^ $1 }
        guard Array(data[17..<21]) == CRC.crc32(new) else { return Self.err(0x1E) }
        if hostile != .changeKeyDropped {
            s.keys[number] = new
            s.keyVersions[number] = data[16]
        }
        return seal([], mode: 3, &s)
    }

    func getKeyVersion(_ c: CommandAPDU, _ s: inout State) -> ResponseAPDU {
        let number: Int
        if s.authenticated != nil {
            guard case let .success((header, _)) = open(c, headerLength: 1, mode: 1, &s) else { return Self.err(0x1E) }
            number = Int(header[0])
        } else {
            guard c.data.count == 1 else { return Self.err(0x7E) }
            number = Int(c.data[0])
        }
        guard number < 5 else { return Self.err(0x40) }
        return seal([s.keyVersions[number]], mode: 1, &s)
    }

    /// Read_Sig (`90 3C 00 00 01 00 00`, NT4H2421Gx §10.12): the 56-byte originality signature,
    /// status `91 90` as real chips give it (AN12196 Table 30; the datasheet says 91 00). Plain
    /// outside a session; in one, the command is MACed and the answer comes in CommMode.Full with
    /// 90 as the first byte of its MAC input.
    func readSignature(_ c: CommandAPDU, _ s: inout State) -> ResponseAPDU {
        let header: [UInt8]
        if s.authenticated != nil {
            let opened = open(c, headerLength: 1, mode: 1, &s)
            guard case let .success((h, _)) = opened else { if case let .failure(e) = opened { return e.response }; return Self.err(0x1E) }
            header = h
        } else {
            guard c.data.count == 1 else { return Self.err(0x7E) }
            header = c.data
        }
        // Address 00h: the one signature there is.
        guard header == [0x00] else { return Self.err(0x9E) }
        return seal(originalitySignature, mode: 3, returnCode: 0x90, &s)
    }

    /// GetTTStatus (NT4H2421Tx): full mode, in an authenticated session; the loop is read now.
    func getTTStatus(_ c: CommandAPDU, _ s: inout State) -> ResponseAPDU {
        guard s.authenticated != nil else { return Self.err(0xAE) }
        let opened = open(c, headerLength: 0, mode: 3, &s)
        guard case .success = opened else { if case let .failure(e) = opened { return e.response }; return Self.err(0x1E) }
        return seal(readTamperStatus(&s), mode: 3, &s)
    }

    func getCardUID(_ c: CommandAPDU, _ s: inout State) -> ResponseAPDU {
        let opened = open(c, headerLength: 0, mode: 3, &s)
        guard case .success = opened else { if case let .failure(e) = opened { return e.response }; return Self.err(0x1E) }
        return seal(uid, mode: 3, &s)
    }

    func readData(_ c: CommandAPDU, _ s: inout State) -> ResponseAPDU {
        let plain = s.authenticated == nil
        let fileNo = c.data.first ?? 0
        guard let f = s.files[fileNo] else { return Self.err(0xF0) }
        let header: [UInt8]
        if plain || f.commMode == 0 {
            guard c.data.count >= 7 else { return Self.err(0x7E) }
            header = Array(c.data.prefix(7))
            if !plain {
                // A plain command in a session still moves the counter; its MAC is not checked.
            }
        } else {
            let opened = open(c, headerLength: 7, mode: f.commMode, &s)
            guard case let .success((h, _)) = opened else { if case let .failure(e) = opened { return e.response }; return Self.err(0x1E) }
            header = h
        }
        let allowed = f.read == 0xE || f.readWrite == 0xE || s.authenticated.map { UInt8($0) == f.read || UInt8($0) == f.readWrite } == true
        guard allowed else { return Self.err(0x9D) }
        let offset = Int(header[1]) | Int(header[2]) << 8 | Int(header[3]) << 16
        var length = Int(header[4]) | Int(header[5]) << 8 | Int(header[6]) << 16
        let content = offset == 0 ? served(fileNo, &s) : servedWithoutCounting(fileNo, s)
        if length == 0 { length = content.count - offset }
        guard offset + length <= content.count else { return Self.err(0xBE) }
        return seal(Array(content[offset..<(offset + length)]), mode: plain ? 0 : f.commMode, &s)
    }

    func writeData(_ c: CommandAPDU, _ s: inout State) -> ResponseAPDU {
        let fileNo = c.data.first ?? 0
        guard var f = s.files[fileNo] else { return Self.err(0xF0) }
        let header: [UInt8], data: [UInt8]
        if s.authenticated == nil || f.commMode == 0 {
            guard c.data.count >= 7 else { return Self.err(0x7E) }
            header = Array(c.data.prefix(7))
            data = Array(c.data.dropFirst(7).prefix(Int(header[4]) | Int(header[5]) << 8))
        } else {
            let opened = open(c, headerLength: 7, mode: f.commMode, &s)
            guard case let .success((h, d)) = opened else { if case let .failure(e) = opened { return e.response }; return Self.err(0x1E) }
            (header, data) = (h, d)
        }
        let allowed = f.write == 0xE || f.readWrite == 0xE || s.authenticated.map { UInt8($0) == f.write || UInt8($0) == f.readWrite } == true
        guard allowed else { return Self.err(0x9D) }
        let offset = Int(header[1]) | Int(header[2]) << 8 | Int(header[3]) << 16
        guard offset + data.count <= f.data.count else { return Self.err(0xBE) }
        f.data.replaceSubrange(offset..<(offset + data.count), with: data)
        s.files[fileNo] = f
        if fileNo == 2 { onChange?(f.data) }
        return seal([], mode: s.authenticated == nil ? 0 : f.commMode, &s)
    }
}
