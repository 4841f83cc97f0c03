import CardCrypto

/// A DESFire status code (the second byte of `91 xx`, the first byte of a native answer).
struct DESFireStatus: Error, Hashable, Sendable {
    let code: UInt8
    init(_ code: UInt8) { self.code = code }

    static let ok = DESFireStatus(0x00)
    static let noChanges = DESFireStatus(0x0C)
    static let outOfMemory = DESFireStatus(0x0E)
    static let illegalCommand = DESFireStatus(0x1C)
    static let integrityError = DESFireStatus(0x1E)
    static let noSuchKey = DESFireStatus(0x40)
    static let lengthError = DESFireStatus(0x7E)
    static let permissionDenied = DESFireStatus(0x9D)
    static let parameterError = DESFireStatus(0x9E)
    static let applicationNotFound = DESFireStatus(0xA0)
    static let authenticationError = DESFireStatus(0xAE)
    static let additionalFrame = DESFireStatus(0xAF)
    static let boundaryError = DESFireStatus(0xBE)
    static let commandAborted = DESFireStatus(0xCA)
    static let countError = DESFireStatus(0xCE)
    static let duplicateError = DESFireStatus(0xDE)
    static let memoryError = DESFireStatus(0xEE)
    static let fileNotFound = DESFireStatus(0xF0)
    static let fileIntegrityError = DESFireStatus(0xF1)

    /// Codes that end a command without it having failed: success, more frames, nothing to commit.
    var isSuccess: Bool { code == 0x00 || code == 0xAF || code == 0x0C }
}

/// The EV1 session opened by Authenticate (0A, the DESFire "legacy" or native scheme) or
/// AuthenticateISO / AuthenticateAES (1A, AA: the "new" scheme of the EV1 datasheet), as the
/// chip keeps it.
struct EV1Session: Sendable {
    enum Scheme: Sendable { case legacy, standard }
    let scheme: Scheme
    let keyNumber: UInt8
    let cipher: BlockCipher
    let cmac: CMAC
    /// The IV that every command and answer moves on (standard scheme only): the last CMAC or
    /// the last enciphered block, reset to zero once, when the session opens (RFDoorLock notes).
    var iv: [UInt8]

    var blockSize: Int { cipher.blockSize }
}

/// Which secure channel is open.
enum DESFireChannel: Sendable {
    case none
    case ev1(EV1Session)
    case ev2(keyNumber: UInt8, session: EV2ChipSession)

    var keyNumber: UInt8? {
        switch self {
        case .none: return nil
        case .ev1(let s): return s.keyNumber
        case .ev2(let k, _): return k
        }
    }
}

/// How a command's data arrives, by what the command is (the chip decides; the reader must agree).
enum Incoming: Sendable {
    /// SelectApplication and the authentications: never MACed, never moves the IV.
    case unprotected
    /// PICC and application management, settings, lists, commits: EV1 folds the command into the
    /// IV (no MAC is sent), EV2 requires its MAC, legacy sends it plain.
    case management
    /// ReadData, GetValue, ReadRecords: the command is plain (EV1 folds it into the IV); EV2
    /// MACs it unless the file is plain.
    case read(DESFireCard.CommMode)
    /// WriteData, WriteRecord, Credit, Debit, LimitedCredit: the data goes in the file's mode.
    case write(DESFireCard.CommMode)
    /// ChangeKeySettings, SetConfiguration, ChangeFileSettings (unless free): always enciphered.
    case enciphered
}

/// How an answer leaves.
enum Outgoing: Sendable {
    /// SelectApplication, ChangeKey of the key in use: no MAC at all.
    case unprotected
    /// EV1 appends the CMAC of data ‖ status (8 bytes), EV2 its MAC, legacy nothing.
    case management
    /// Data read from a file, in the mode the access was granted with.
    case data(DESFireCard.CommMode)
    /// The empty answer to a write: EV1 CMACs it, EV2 MACs it unless the file is plain.
    case acknowledgement(DESFireCard.CommMode)
    /// GetCardUID: always enciphered.
    case enciphered
}

extension DESFireChannel {
    // MARK: Commands

    /// Checks and strips a command's protection. `header` bytes after the command code travel in
    /// clear; `plainLength` is how long the protected data is once opened, which the enciphered
    /// EV1 frames (zero padding) need to find their CRC.
    mutating func open(_ command: UInt8, _ data: [UInt8], header: Int, as kind: Incoming, plainLength: Int? = nil) throws(DESFireStatus) -> (header: [UInt8], payload: [UInt8]) {
        guard data.count >= header else { throw .lengthError }
        let head = Array(data.prefix(header))
        let body = Array(data.dropFirst(header))
        switch self {
        case .none:
            if case .enciphered = kind { throw .authenticationError }
            return (head, body)

        case .ev1(var s):
            defer { self = .ev1(s) }
            switch (s.scheme, kind) {
            case (_, .unprotected):
                return (head, body)
            case (.legacy, .management), (.legacy, .read), (.legacy, .write(.plain)):
                return (head, body)
            case (.legacy, .write(.mac)):
                guard body.count >= 4 else { throw .lengthError }
                let payload = Array(body.dropLast(4))
                if let plainLength, payload.count != plainLength { throw .lengthError }
                guard constantTimeEquals(try Self.legacyMAC(payload, s.cipher), Array(body.suffix(4))) else { throw .integrityError }
                return (head, payload)
            case (.legacy, .write(.full)), (.legacy, .enciphered):
                guard let n = plainLength else { throw .lengthError }
                guard body.count == Self.padded(n + 2, 8) else { throw .lengthError }
                let plain = try Self.legacyReceive(body, s.cipher)
                guard constantTimeEquals(CRC.crc16(Array(plain[0..<n])), Array(plain[n..<(n + 2)])),
                      plain[(n + 2)...].allSatisfy({ $0 == 0 }) else { throw .integrityError }
                return (head, Array(plain[0..<n]))

            case (.standard, .management), (.standard, .read), (.standard, .write(.plain)):
                s.iv = try Self.cmac([command] + data, s)
                return (head, body)
            case (.standard, .write(.mac)):
                guard body.count >= 8 else { throw .lengthError }
                let payload = Array(body.dropLast(8))
                if let plainLength, payload.count != plainLength { throw .lengthError }
                let expected = try Self.cmac([command] + head + payload, s)
                guard constantTimeEquals(Array(expected.prefix(8)), Array(body.suffix(8))) else { throw .integrityError }
                s.iv = expected
                return (head, payload)
            case (.standard, .write(.full)), (.standard, .enciphered):
                guard let n = plainLength else { throw .lengthError }
                guard body.count == Self.padded(n + 4, s.blockSize) else { throw .lengthError }
                let plain: [UInt8]
                do { plain = try s.cipher.decrypt(cbc: body, iv: s.iv) } catch { throw .integrityError }
                s.iv = Array(body.suffix(s.blockSize))
                guard constantTimeEquals(CRC.crc32([command] + head + plain[0..<n]), Array(plain[n..<(n + 4)])),
                      plain[(n + 4)...].allSatisfy({ $0 == 0 }) else { throw .integrityError }
                return (head, Array(plain[0..<n]))
            }

        case .ev2(_, let s):
            switch kind {
            case .unprotected, .read(.plain), .write(.plain):
                return (head, body)
            case .management, .read(.mac), .read(.full), .write(.mac):
                guard body.count >= 8 else { throw .lengthError }
                guard let checked = s.verifyCommand(command: command, data) else { throw .integrityError }
                let payload = Array(checked.dropFirst(header))
                if case .write = kind, let plainLength, payload.count != plainLength { throw .lengthError }
                return (head, payload)
            case .write(.full), .enciphered:
                guard body.count >= 8 + 16 else { throw .lengthError }
                guard s.verifyCommand(command: command, data) != nil else { throw .integrityError }
                guard let plain = s.decryptCommand(Array(body.dropLast(8))) else { throw .integrityError }
                if let plainLength, plain.count != plainLength { throw .lengthError }
                return (head, plain)
            }
        }
    }

    // MARK: Answers

    /// Adds an answer's protection. `status` is the code the answer ends with (00, or 0C for
    /// a commit with nothing to commit); EV1 and EV2 MAC it with the data.
    mutating func seal(_ data: [UInt8], as kind: Outgoing, status: UInt8 = 0x00) throws(DESFireStatus) -> [UInt8] {
        switch self {
        case .none:
            return data

        case .ev1(var s):
            defer { self = .ev1(s) }
            switch (s.scheme, kind) {
            case (_, .unprotected):
                return data
            case (.legacy, .data(.mac)):
                return data + (try Self.legacyMAC(data, s.cipher))
            case (.legacy, .data(.full)), (.legacy, .enciphered):
                let plain = data + CRC.crc16(data)
                do { return try s.cipher.encrypt(cbc: plain + [UInt8](repeating: 0, count: Self.padded(plain.count, 8) - plain.count)) } catch { throw .integrityError }
            case (.legacy, _):
                return data
            case (.standard, .data(.full)), (.standard, .enciphered):
                let plain = data + CRC.crc32(data + [status])
                let padded = plain + [UInt8](repeating: 0, count: Self.padded(plain.count, s.blockSize) - plain.count)
                let out: [UInt8]
                do { out = try s.cipher.encrypt(cbc: padded, iv: s.iv) } catch { throw .integrityError }
                s.iv = Array(out.suffix(s.blockSize))
                return out
            case (.standard, _):
                s.iv = try Self.cmac(data + [status], s)
                return data + s.iv.prefix(8)
            }

        case .ev2(let key, var s):
            defer { self = .ev2(keyNumber: key, session: s) }
            s.advance()
            switch kind {
            case .unprotected, .data(.plain), .acknowledgement(.plain):
                return data
            case .management, .data(.mac), .acknowledgement(.mac), .acknowledgement(.full):
                guard let mac = s.responseMAC(status: status, body: data) else { throw .integrityError }
                return data + mac
            case .data(.full), .enciphered:
                var body: [UInt8] = []
                if !data.isEmpty {
                    guard let c = s.encryptResponse(data) else { throw .integrityError }
                    body = c
                }
                guard let mac = s.responseMAC(status: status, body: body) else { throw .integrityError }
                return body + mac
            }
        }
    }

    // MARK: EV1 primitives

    /// `n` rounded up to whole blocks, at least one block (libfreefare's padded_data_length).
    static func padded(_ n: Int, _ block: Int) -> Int { max(block, (n + block - 1) / block * block) }

    static func cmac(_ message: [UInt8], _ s: EV1Session) throws(DESFireStatus) -> [UInt8] {
        do { return try s.cmac.mac(message, iv: s.iv) } catch { throw .integrityError }
    }

    /// The legacy 4-byte MAC: CBC encryption from a zero IV over the data padded with zeros to
    /// whole blocks, the first four bytes of the last block (DESFire MF3ICD40; libfreefare).
    static func legacyMAC(_ data: [UInt8], _ cipher: BlockCipher) throws(DESFireStatus) -> [UInt8] {
        let padded = data + [UInt8](repeating: 0, count: padded(data.count, 8) - data.count)
        do { return Array(try cipher.encrypt(cbc: padded).suffix(8).prefix(4)) } catch { throw .integrityError }
    }

    /// Legacy "send mode": the reader deciphers its blocks, chaining each into the next
    /// (C_i = D_K(P_i ⊕ C_i−1), C_0 = 0), so the chip enciphers to recover P_i = E_K(C_i) ⊕ C_i−1.
    static func legacyReceive(_ data: [UInt8], _ cipher: BlockCipher) throws(DESFireStatus) -> [UInt8] {
        guard !data.isEmpty, data.count % 8 == 0 else { throw .lengthError }
        var out: [UInt8] = []
        var previous = [UInt8](repeating: 0, count: 8)
        for start in stride(from: 0, to: data.count, by: 8) {
            let block = Array(data[start..<(start + 8)])
            let e: [UInt8]
            do { e = try cipher.encrypt(block: block) } catch { throw .integrityError }
            out += zip(e, previous).map { $0 ^ $1 }
            previous = block
        }
        return out
    }
}
