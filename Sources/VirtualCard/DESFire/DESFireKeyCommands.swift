import CardCrypto

// Authentication and keys: Authenticate 0A/1A/AA, AuthenticateEV2First/NonFirst 71/77,
// GetKeySettings, ChangeKeySettings, GetKeyVersion, ChangeKey.

extension DESFireCard {
    /// The key `number` of the current level (the PICC has key 0 only).
    func key(_ number: UInt8, _ s: State) throws(DESFireStatus) -> Key {
        if let app = s.application {
            guard Int(number) < app.keys.count else { throw .noSuchKey }
            return app.keys[Int(number)]
        }
        guard number == 0 else { throw .noSuchKey }
        return s.image.masterKey
    }

    static func rotateLeft(_ b: [UInt8]) -> [UInt8] { b.isEmpty ? b : Array(b.dropFirst()) + [b[0]] }

    static func cipher(_ algorithm: CipherAlgorithm, _ key: [UInt8]) throws(DESFireStatus) -> BlockCipher {
        do { return try BlockCipher(algorithm, key: key) } catch { throw .integrityError }
    }

    /// Authenticate (0A: DES/2K3DES, the legacy scheme), AuthenticateISO (1A: 2K3DES or
    /// 3K3DES), AuthenticateAES (AA), part 1: the chip's challenge E(K, RndB). Any session ends
    /// here, whatever part 2 brings.
    func authenticatePart1(_ command: UInt8, _ data: [UInt8], _ s: inout State) throws(DESFireStatus) -> Answer {
        guard data.count == 1 else { throw .lengthError }
        s.dropSession()
        let number = data[0]
        let key = try key(number, s)
        let kind: PendingAuthentication.Kind
        switch (command, key.type) {
        case (0x0A, .tdes): kind = .legacy
        case (0x1A, .tdes), (0x1A, .tdes3), (0xAA, .aes): kind = .iso
        default: throw .authenticationError
        }
        let rndB = random.bytes(key.type.challengeLength)
        let challenge: [UInt8]
        do { challenge = try Self.cipher(key.cipherAlgorithm, key.bytes).encrypt(cbc: rndB) } catch { throw .integrityError }
        s.pending = .authentication(PendingAuthentication(kind: kind, keyNumber: number, key: key, rndB: rndB,
                                                          iv: Array(challenge.suffix(key.type.blockSize)), ev2: nil, capabilities: []))
        return Answer(bytes: challenge, status: .additionalFrame)
    }

    /// AuthenticateEV2First (71: KeyNo ‖ LenCap ‖ PCDcap2) and NonFirst (77: KeyNo, within an
    /// EV2 session), part 1. AES keys only.
    func authenticateEV2Part1(first: Bool, _ data: [UInt8], _ s: inout State) throws(DESFireStatus) -> Answer {
        guard let number = data.first else { throw .lengthError }
        var capabilities: [UInt8] = []
        if first {
            guard data.count >= 2, data.count == 2 + Int(data[1]) else { throw .lengthError }
            capabilities = Array(data[2...])
            s.dropSession()
        } else {
            guard data.count == 1 else { throw .lengthError }
            guard case .ev2 = s.channel else { throw .authenticationError }
        }
        let key = try key(number, s)
        guard key.type == .aes else { throw .authenticationError }
        let auth = EV2ChipAuthentication(keyNumber: number, first: first, key: key.bytes, rndB: random.bytes(16))
        guard let challenge = auth.challenge() else { throw .integrityError }
        // PDcap2 is zeros; PCDcap2 is echoed, cut or padded to six bytes (AN12196 §6.6).
        let pcd = Array((capabilities + [UInt8](repeating: 0, count: 6)).prefix(6))
        s.pending = .authentication(PendingAuthentication(kind: .ev2, keyNumber: number, key: key, rndB: auth.rndB, iv: [], ev2: auth,
                                                          capabilities: [UInt8](repeating: 0, count: 6) + pcd))
        return Answer(bytes: challenge, status: .additionalFrame)
    }

    /// Part 2: the reader's E(K, RndA ‖ RndB') checked in constant time, then E(K, RndA') and
    /// the session keys (RFDoorLock's traces, every key type).
    func authenticatePart2(_ p: PendingAuthentication, _ data: [UInt8], _ s: inout State) throws(DESFireStatus) -> Answer {
        if p.kind == .ev2, let auth = p.ev2 {
            guard data.count == 32 else { throw .lengthError }
            var previous: EV2ChipSession?
            if case .ev2(_, let session) = s.channel { previous = session }
            s.dropSession()
            let ti = auth.first ? random.bytes(4) : []
            switch auth.respond(to: data, transactionIdentifier: ti, previous: previous, capabilities: p.capabilities) {
            case .refused:
                throw .authenticationError
            case let .authenticated(answer, session):
                s.channel = .ev2(keyNumber: p.keyNumber, session: session)
                return Answer(bytes: answer)
            }
        }
        let n = p.rndB.count
        guard data.count == 2 * n else { throw .lengthError }
        let cipher = try Self.cipher(p.key.cipherAlgorithm, p.key.bytes)
        let plain: [UInt8]
        if p.kind == .legacy {
            plain = try DESFireChannel.legacyReceive(data, cipher)
        } else {
            do { plain = try cipher.decrypt(cbc: data, iv: p.iv) } catch { throw .integrityError }
        }
        guard constantTimeEquals(Array(plain[n..<(2 * n)]), Self.rotateLeft(p.rndB)) else { throw .authenticationError }
        let rndA = Array(plain[0..<n])
        let answer: [UInt8]
        do {
            answer = p.kind == .legacy ? try cipher.encrypt(cbc: Self.rotateLeft(rndA))
                : try cipher.encrypt(cbc: Self.rotateLeft(rndA), iv: Array(data.suffix(p.key.type.blockSize)))
        } catch { throw .integrityError }
        let (algorithm, sessionKey) = Self.sessionKey(rndA: rndA, rndB: p.rndB, key: p.key)
        let sessionCipher = try Self.cipher(algorithm, sessionKey)
        let cmac: CMAC
        do { cmac = try CMAC(sessionCipher) } catch { throw .integrityError }
        s.channel = .ev1(EV1Session(scheme: p.kind == .legacy ? .legacy : .standard, keyNumber: p.keyNumber, cipher: sessionCipher, cmac: cmac,
                                    iv: [UInt8](repeating: 0, count: sessionCipher.blockSize)))
        return Answer(bytes: answer)
    }

    /// The EV1 session key from the two challenges (RFDoorLock's "SessKey" lines):
    /// DES A0-3 B0-3 (twice), 2K3DES A0-3 B0-3 A4-7 B4-7, 3K3DES A0-3 B0-3 A6-9 B6-9 A12-15 B12-15,
    /// AES A0-3 B0-3 A12-15 B12-15.
    static func sessionKey(rndA a: [UInt8], rndB b: [UInt8], key: Key) -> (CipherAlgorithm, [UInt8]) {
        switch key.type {
        case .tdes where key.isSingleDES:
            let k = Array(a[0..<4] + b[0..<4])
            return (.tdes2, k + k)
        case .tdes:
            return (.tdes2, Array(a[0..<4] + b[0..<4] + a[4..<8] + b[4..<8]))
        case .tdes3:
            return (.tdes3, Array(a[0..<4] + b[0..<4] + a[6..<10] + b[6..<10] + a[12..<16] + b[12..<16]))
        case .aes:
            return (.aes128, Array(a[0..<4] + b[0..<4] + a[12..<16] + b[12..<16]))
        }
    }

    /// GetKeySettings (45): settings ‖ key count with the key type bits. Free when the current
    /// level's settings allow directory access (bit 1), else its master key.
    func getKeySettings(_ data: [UInt8], _ s: inout State) throws(DESFireStatus) -> Answer {
        try requireMasterKey(s, unlessFree: 0x02)
        let (_, payload) = try s.channel.open(0x45, data, header: 0, as: .management)
        guard payload.isEmpty else { throw .lengthError }
        let answer: [UInt8]
        if let app = s.application {
            answer = [app.keySettings, UInt8(app.keys.count) | app.keyType.typeBits]
        } else {
            answer = [s.image.masterKeySettings, 0x01 | s.image.masterKey.type.typeBits]
        }
        return Answer(bytes: try s.channel.seal(answer, as: .management))
    }

    /// ChangeKeySettings (54): master key of the level, settings bit 3 set; always enciphered
    /// (RFDoorLock: 0D ‖ CRC32(54 0D) ‖ 00 00 00 under the session key and IV).
    func changeKeySettings(_ data: [UInt8], _ s: inout State) throws(DESFireStatus) -> Answer {
        guard s.authenticatedKey == 0 else { throw .authenticationError }
        let current = s.application?.keySettings ?? s.image.masterKeySettings
        guard current & 0x08 != 0 else { throw .permissionDenied }
        let (_, p) = try s.channel.open(0x54, data, header: 0, as: .enciphered, plainLength: 1)
        guard p.count == 1 else { throw .lengthError }
        let index = s.applicationIndex
        try s.persist { image in
            if let index { image.applications[index].keySettings = p[0] } else { image.masterKeySettings = p[0] }
        }
        return Answer(bytes: try s.channel.seal([], as: .management))
    }

    /// GetKeyVersion (64): free. DES keys give the version held in their parity bits.
    func getKeyVersion(_ data: [UInt8], _ s: inout State) throws(DESFireStatus) -> Answer {
        let (header, payload) = try s.channel.open(0x64, data, header: 1, as: .management)
        guard payload.isEmpty else { throw .lengthError }
        let k = try key(header[0], s)
        return Answer(bytes: try s.channel.seal([k.version], as: .management))
    }

    /// ChangeKey (C4), both cases of the EV1 datasheet as libfreefare and the RFDoorLock traces
    /// run them:
    /// - the key in use: E(new key [‖ AES version] ‖ CRC ‖ 0…); the session ends, no MAC follows;
    /// - another key: E((new ⊕ old) [‖ version] ‖ CRC ‖ CRC(new key) ‖ 0…).
    /// The first CRC is CRC32 over C4 ‖ KeyNo ‖ cryptogram (EV1 ISO/AES) or CRC16 over the
    /// cryptogram (legacy); the second is over the new key alone. EV2 sends new key ‖ version
    /// (‖ CRC32(new key) for another key) with padding method 2 and its MAC. Any wrong CRC, MAC
    /// or padding: `91 1E`, and the key stays as it was.
    func changeKey(_ data: [UInt8], _ s: inout State) throws(DESFireStatus) -> Answer {
        guard let auth = s.authenticatedKey else { throw .authenticationError }
        guard let keyNo = data.first else { throw .lengthError }
        let number: Int, type: KeyType, old: Key
        if let app = s.application {
            guard Int(keyNo) < app.keys.count else { throw .noSuchKey }
            number = Int(keyNo)
            type = app.keyType
            old = app.keys[number]
            let settings = app.keySettings, rule = settings >> 4
            if number == 0 {
                guard settings & 0x01 != 0 else { throw .permissionDenied }
                guard auth == 0 else { throw .authenticationError }
            } else if rule == 0xF {
                throw .permissionDenied
            } else if rule == 0xE {
                guard Int(auth) == number else { throw .authenticationError }
            } else {
                guard auth == rule else { throw .authenticationError }
            }
        } else {
            // At the PICC level the key number's bits 7-6 choose the new master key's type.
            guard keyNo & 0x3F == 0 else { throw .noSuchKey }
            guard let t = KeyType(typeBits: keyNo) else { throw .parameterError }
            number = 0
            type = t
            old = s.image.masterKey
            guard s.image.masterKeySettings & 0x01 != 0 else { throw .permissionDenied }
            guard auth == 0 else { throw .authenticationError }
        }
        let sameKey = Int(auth) == number
        let length = type.keyLength
        var newKey: [UInt8], version: UInt8
        switch s.channel {
        case .none:
            throw .authenticationError
        case .ev1(var session):
            let explicitVersion = type == .aes ? 1 : 0
            let crcLength = session.scheme == .legacy ? 2 : 4
            let plainLength = length + explicitVersion + crcLength + (sameKey ? 0 : crcLength)
            let cryptogram = Array(data.dropFirst())
            guard cryptogram.count == DESFireChannel.padded(plainLength, session.blockSize) else { throw .lengthError }
            let plain: [UInt8]
            if session.scheme == .legacy {
                plain = try DESFireChannel.legacyReceive(cryptogram, session.cipher)
            } else {
                do { plain = try session.cipher.decrypt(cbc: cryptogram, iv: session.iv) } catch { throw .integrityError }
                session.iv = Array(cryptogram.suffix(session.blockSize))
                s.channel = .ev1(session)
            }
            let field = Array(plain[0..<length])
            let covered = Array(plain[0..<(length + explicitVersion)])
            let crc = Array(plain[(length + explicitVersion)..<(length + explicitVersion + crcLength)])
            let expected = session.scheme == .legacy ? CRC.crc16(covered) : CRC.crc32([0xC4, keyNo] + covered)
            guard constantTimeEquals(expected, crc) else { throw .integrityError }
            newKey = sameKey ? field : zip(field, old.bytes).map { $0 ^ $1 }
            var end = length + explicitVersion + crcLength
            if !sameKey {
                let keyCRC = Array(plain[end..<(end + crcLength)])
                guard constantTimeEquals(session.scheme == .legacy ? CRC.crc16(newKey) : CRC.crc32(newKey), keyCRC) else { throw .integrityError }
                end += crcLength
            }
            guard plain[end...].allSatisfy({ $0 == 0 }) else { throw .integrityError }
            version = type == .aes ? plain[length] : Key.parityVersion(newKey)
        case .ev2:
            let (_, plain) = try s.channel.open(0xC4, data, header: 1, as: .enciphered)
            guard plain.count == length + 1 + (sameKey ? 0 : 4) else { throw .lengthError }
            let field = Array(plain[0..<length])
            newKey = sameKey ? field : zip(field, old.bytes).map { $0 ^ $1 }
            if !sameKey {
                guard constantTimeEquals(CRC.crc32(newKey), Array(plain[(length + 1)...])) else { throw .integrityError }
            }
            version = plain[length]
        }
        guard newKey.count == length else { throw .integrityError }
        let changed = Key(type, bytes: newKey, version: version)
        let index = s.applicationIndex
        try s.persist { image in
            if let index { image.applications[index].keys[number] = changed } else { image.masterKey = changed }
        }
        if sameKey {
            // The session was opened with the key that is gone: it ends, and the answer has no MAC.
            s.dropSession()
            return Answer()
        }
        return Answer(bytes: try s.channel.seal([], as: .management))
    }
}
