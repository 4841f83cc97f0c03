// A DESFire session's protection of frames: MACs, CMACs, enciphered data with CRCs and padding, per
// authentication scheme.
import CardCrypto
import ISO7816

/// How an authentication was made, which decides how every later frame is protected.
public enum DESFireAuthenticationScheme: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// `0A`, MF3ICD40's authentication (DES, 2K3DES): MACs of 4 bytes on file data only,
    /// enciphered frames with CRC16, and the PCD deciphering what it sends ("send mode").
    case legacy
    /// `1A`, EV1's ISO authentication (DES, 2K3DES, 3K3DES): CMAC over every command and
    /// answer with the IV chained, enciphered frames with CRC32.
    case iso
    /// `AA`, EV1's AES authentication: the same secure messaging as `iso`, with AES.
    case aes
    /// `71`/`77`, AuthenticateEV2First/NonFirst (AES): transaction identifier, command counter,
    /// SesAuthENC/MAC keys (the NTAG 424 DNA scheme, one implementation for both).
    case ev2

    public var instruction: UInt8 {
        switch self {
        case .legacy: return 0x0A
        case .iso: return 0x1A
        case .aes: return 0xAA
        case .ev2: return 0x71
        }
    }

    public var description: String {
        switch self {
        case .legacy: return "legacy (0A)"
        case .iso: return "ISO (1A)"
        case .aes: return "AES (AA)"
        case .ev2: return "EV2First (71)"
        }
    }

    /// The key types the scheme takes.
    public func accepts(_ type: DESFireKeyType) -> Bool {
        switch self {
        case .legacy: return type == .des || type == .tdes2
        case .iso: return type != .aes
        case .aes, .ev2: return type == .aes
        }
    }
}

/// What a command's frames carry once authenticated, per scheme (libfreefare's
/// `mifare_cryto_preprocess_data`, proxmark3's `desfiresecurechan.c`, the DESFire data sheets):
enum DESFireSecurity: Sendable, Hashable {
    /// Never protected: SelectApplication and the authentication frames.
    case none
    /// Management commands (listings, create, delete, commit, GetFileSettings): EV1 CMACs the
    /// command (not sent) and checks the answer's; EV2 MAC mode; legacy plain.
    case management
    /// Reads in the file's mode (ReadData, ReadRecords, GetValue, GetCardUID): the command's
    /// header as in `management`; the answer plain (EV1: CMAC), MACed or enciphered.
    case read(CommMode)
    /// Writes in the file's mode (WriteData, WriteRecord, Credit, Debit, LimitedCredit,
    /// ChangeKeySettings): the data after `header` bytes plain, MACed or enciphered (with the
    /// scheme's CRC); the answer checked as in `management`.
    case write(CommMode, header: Int)
    /// ChangeKey: the data after the key number is a cryptogram whose CRCs the caller built;
    /// enciphered without a CRC of the channel's (EV2: FULL, as any command).
    case cryptogram
}

/// The secure channel an authentication opened: the scheme, the key it was made with, the
/// session key and the chained IV (EV1), or the EV2 session. The IV lives here so that every
/// command, in order, moves it as the card does.
public final class DESFireSession {
    public let scheme: DESFireAuthenticationScheme
    public let keyNumber: UInt8
    public let keyType: DESFireKeyType
    /// Legacy and EV1: the session key as a cipher (DES sessions as 2K3DES K ‖ K).
    let cipher: BlockCipher?
    /// EV1: CMAC under the session key.
    let cmac: CMAC?
    /// EV1: the IV, carried from command to command; legacy: zeros for each command.
    var iv: [UInt8]
    /// EV2: the shared NTAG 424 DNA / DESFire EV2 session.
    public let ev2: EV2Session?

    init(scheme: DESFireAuthenticationScheme, keyNumber: UInt8, keyType: DESFireKeyType, sessionKey: [UInt8]) throws(DESFireError) {
        self.scheme = scheme
        self.keyNumber = keyNumber
        self.keyType = keyType
        let algorithm: CipherAlgorithm = keyType == .aes ? .aes128 : sessionKey.count == 24 ? .tdes3 : .tdes2
        do {
            let c = try BlockCipher(algorithm, key: sessionKey.count == 8 ? sessionKey + sessionKey : sessionKey)
            cipher = c
            cmac = scheme == .legacy ? nil : try CMAC(c)
        } catch {
            throw DESFireError(.malformed, "the session key could not be used: \(error)")
        }
        iv = [UInt8](repeating: 0, count: keyType.blockSize)
        ev2 = nil
    }

    init(ev2 session: EV2Session, keyNumber: UInt8) {
        scheme = .ev2
        self.keyNumber = keyNumber
        keyType = .aes
        cipher = nil
        cmac = nil
        iv = []
        ev2 = session
    }

    var blockSize: Int { keyType.blockSize }

    /// The EV1 session key from RndA and RndB (DESFire EV1 data sheet; libfreefare
    /// `mifare_desfire_session_key_new`): DES A0-3 B0-3; 2K3DES A0-3 B0-3 A4-7 B4-7; 3K3DES A0-3
    /// B0-3 A6-9 B6-9 A12-15 B12-15; AES A0-3 B0-3 A12-15 B12-15.
    static func sessionKey(rndA a: [UInt8], rndB b: [UInt8], key: DESFireKey) -> [UInt8] {
        switch key.type {
        case _ where key.runsAsSingleDES: return Array(a[0..<4] + b[0..<4])
        case .des, .tdes2: return Array(a[0..<4] + b[0..<4] + a[4..<8] + b[4..<8])
        case .tdes3: return Array(a[0..<4] + b[0..<4] + a[6..<10] + b[6..<10] + a[12..<16] + b[12..<16])
        case .aes: return Array(a[0..<4] + b[0..<4] + a[12..<16] + b[12..<16])
        }
    }

    // MARK: - Commands

    /// The command's data field as sent in `security`; moves the IV (EV1) as the card will.
    func protect(ins: UInt8, header: [UInt8], data: [UInt8], security: DESFireSecurity) throws(DESFireError) -> [UInt8] {
        if let ev2 {
            guard security != .none else { return header + data }
            do { return try ev2.wrap(ins: ins, header: header, data: data, mode: ev2Mode(security)).data } catch {
                throw DESFireError(.malformed, "the EV2 frame could not be made: \(error)")
            }
        }
        let plain = header + data
        switch (scheme, security) {
        case (_, .none):
            return plain
        case (.legacy, .management), (.legacy, .read), (.legacy, .write(.plain, _)):
            return plain
        case let (.legacy, .write(.mac, h)):
            // The MAC covers the data after the header only (libfreefare: offset).
            return plain + (try legacyMAC(Array(plain.dropFirst(h))))
        case let (.legacy, .write(.full, h)):
            let body = Array(plain.dropFirst(h))
            return Array(plain.prefix(h)) + (try legacySend(zeroPadded(body + CRC.crc16(body))))
        case (.legacy, .cryptogram):
            return Array(plain.prefix(1)) + (try legacySend(zeroPadded(Array(plain.dropFirst(1)))))
        case (_, .management), (_, .read), (_, .write(.plain, _)):
            // EV1: the CMAC over the whole command moves the IV; it is not sent.
            _ = try advanceCMAC([ins] + plain)
            return plain
        case (_, .write(.mac, _)):
            return plain + Array(try advanceCMAC([ins] + plain).prefix(8))
        case let (_, .write(.full, h)):
            // CRC32 over command, header and data; only the data and CRC enciphered.
            let body = Array(plain.dropFirst(h)) + CRC.crc32([ins] + plain)
            return Array(plain.prefix(h)) + (try encipher(zeroPadded(body)))
        case (_, .cryptogram):
            return Array(plain.prefix(1)) + (try encipher(zeroPadded(Array(plain.dropFirst(1)))))
        }
    }

    /// Checks the answer (all frames' data, status 00) to the command just protected and
    /// returns its plain data. `length`: the data's length when known (enciphered answers);
    /// with `lengthIsExpected`, only the length the card should send (a whole file read with
    /// length 0): tried first, then any other where the CRC checks.
    func verify(_ answer: [UInt8], ins: UInt8, security: DESFireSecurity, length: Int?, lengthIsExpected: Bool = false,
                what: String) throws(DESFireError) -> [UInt8] {
        if let ev2 {
            guard security != .none else { return answer }
            do {
                return try ev2.unwrap(ResponseAPDU(data: answer, statusWord: StatusWord(rawValue: 0x9100)), mode: ev2Mode(security), what: what)
            } catch let e as DESFireError {
                throw e
            } catch {
                throw DESFireError(.malformed, "\(what): the EV2 answer could not be read: \(error)")
            }
        }
        switch (scheme, security) {
        case (_, .none):
            return answer
        case (.legacy, .read(.mac)):
            guard answer.count >= 4 else { throw DESFireError(.malformed, "\(what): the answer has no MAC (\(answer.count) bytes)") }
            let data = Array(answer.dropLast(4))
            guard constantTimeEquals(try legacyMAC(data), Array(answer.suffix(4))) else {
                throw DESFireError(.badCryptogram, "\(what): the answer's MAC does not verify (a card without this session's key, or an altered answer)")
            }
            return data
        case (.legacy, .read(.full)):
            let plain = try legacyReceive(answer)
            return try stripCRC(plain, crcSize: 2, length: length, exact: !lengthIsExpected, what: what) { CRC.crc16($0) }
        case (.legacy, _):
            return answer
        case (_, .read(.full)):
            let plain = try decipher(answer)
            return try stripCRC(plain, crcSize: 4, length: length, exact: !lengthIsExpected, what: what) { CRC.crc32($0 + [0x00]) }
        default:
            // EV1: every answer with data or status 00 ends in 8 bytes of CMAC over data ‖ 00.
            guard answer.count >= 8 else { throw DESFireError(.malformed, "\(what): the answer has no CMAC (\(answer.count) bytes)") }
            let data = Array(answer.dropLast(8))
            let expected = try advanceCMAC(data + [0x00])
            guard constantTimeEquals(Array(expected.prefix(8)), Array(answer.suffix(8))) else {
                throw DESFireError(.badCryptogram, "\(what): the answer's CMAC does not verify (a card without this session's key, or an altered answer)")
            }
            return data
        }
    }

    private func ev2Mode(_ security: DESFireSecurity) -> CommMode {
        switch security {
        case .none: return .plain
        case .management: return .mac
        case let .read(mode), let .write(mode, _): return mode
        case .cryptogram: return .full
        }
    }

    // MARK: - Primitives

    private func zeroPadded(_ data: [UInt8]) -> [UInt8] {
        var out = data
        while out.isEmpty || out.count % blockSize != 0 { out.append(0) }
        return out
    }

    /// CMAC over `message` starting from the session IV; the IV becomes the CMAC.
    private func advanceCMAC(_ message: [UInt8]) throws(DESFireError) -> [UInt8] {
        guard let cmac else { throw DESFireError(.malformed, "no CMAC in a \(scheme) session") }
        do {
            iv = try cmac.mac(message, iv: iv)
            return iv
        } catch { throw DESFireError(.malformed, "CMAC failed: \(error)") }
    }

    /// EV1 CBC encryption from the session IV; the IV becomes the last block.
    private func encipher(_ data: [UInt8]) throws(DESFireError) -> [UInt8] {
        guard let cipher else { throw DESFireError(.malformed, "no session key") }
        do {
            let out = try cipher.encrypt(cbc: data, iv: iv)
            iv = Array(out.suffix(blockSize))
            return out
        } catch { throw DESFireError(.malformed, "encryption failed: \(error)") }
    }

    /// EV1 CBC decryption from the session IV; the IV becomes the last enciphered block.
    private func decipher(_ data: [UInt8]) throws(DESFireError) -> [UInt8] {
        guard let cipher else { throw DESFireError(.malformed, "no session key") }
        guard !data.isEmpty, data.count % blockSize == 0 else {
            throw DESFireError(.malformed, "an enciphered answer of \(data.count) bytes is not whole \(blockSize)-byte blocks")
        }
        do {
            let out = try cipher.decrypt(cbc: data, iv: iv)
            iv = Array(data.suffix(blockSize))
            return out
        } catch { throw DESFireError(.malformed, "decryption failed: \(error)") }
    }

    /// The legacy MAC: CBC encryption from a zero IV over the zero-padded data; the first four
    /// bytes of the last block.
    private func legacyMAC(_ data: [UInt8]) throws(DESFireError) -> [UInt8] {
        guard let cipher else { throw DESFireError(.malformed, "no session key") }
        do { return Array(try cipher.encrypt(cbc: zeroPadded(data)).suffix(8).prefix(4)) } catch {
            throw DESFireError(.malformed, "the MAC could not be computed: \(error)")
        }
    }

    /// Legacy "send mode": MF3ICD40 can only encipher, so the PCD deciphers what it sends: each
    /// block XORed with the previous result and deciphered, from a zero IV.
    private func legacySend(_ data: [UInt8]) throws(DESFireError) -> [UInt8] {
        guard let cipher else { throw DESFireError(.malformed, "no session key") }
        var previous = [UInt8](repeating: 0, count: 8), out: [UInt8] = []
        do {
            for start in stride(from: 0, to: data.count, by: 8) {
                let block = zip(data[start..<(start + 8)], previous).map { $0 ^ $1 }
                previous = try cipher.decrypt(block: block)
                out += previous
            }
        } catch { throw DESFireError(.malformed, "send-mode decipher failed: \(error)") }
        return out
    }

    /// Legacy receive: ordinary CBC decryption from a zero IV.
    private func legacyReceive(_ data: [UInt8]) throws(DESFireError) -> [UInt8] {
        guard let cipher else { throw DESFireError(.malformed, "no session key") }
        guard !data.isEmpty, data.count % 8 == 0 else { throw DESFireError(.malformed, "an enciphered answer of \(data.count) bytes is not whole 8-byte blocks") }
        do { return try cipher.decrypt(cbc: data) } catch { throw DESFireError(.malformed, "decryption failed: \(error)") }
    }

    /// Finds the data before the CRC in a deciphered answer: data ‖ CRC ‖ padding (00…, or 80
    /// 00…). With `length` known (`exact`) the CRC must be there; with `length` only expected,
    /// there first; otherwise the one position where the CRC checks and only padding follows
    /// (within the last block and a CRC). Compared in constant time.
    private func stripCRC(_ plain: [UInt8], crcSize: Int, length: Int?, exact: Bool = true, what: String,
                          crc: ([UInt8]) -> [UInt8]) throws(DESFireError) -> [UInt8] {
        func fits(_ n: Int) -> Bool {
            guard n >= 0, n + crcSize <= plain.count else { return false }
            let pad = plain[(n + crcSize)...]
            guard pad.enumerated().allSatisfy({ $0.element == 0 || ($0.offset == 0 && $0.element == 0x80) }) else { return false }
            return constantTimeEquals(crc(Array(plain[..<n])), Array(plain[n..<(n + crcSize)]))
        }
        if let length, !exact, fits(length) { return Array(plain[..<length]) }
        if let length, exact {
            guard fits(length) else {
                throw DESFireError(.badCryptogram, "\(what): the enciphered answer's CRC does not verify (a card without this session's key, or an altered answer)")
            }
            return Array(plain[..<length])
        }
        let lowest = max(0, plain.count - blockSize - crcSize)
        for n in stride(from: plain.count - crcSize, through: lowest, by: -1) where fits(n) { return Array(plain[..<n]) }
        throw DESFireError(.badCryptogram, "\(what): the enciphered answer's CRC does not verify (a card without this session's key, or an altered answer)")
    }
}
