// A MIFARE Plus over any CardChannel: native frames or the ISO 7816 wrapping, learned per
// connection; GetVersion, Read_Sig, WritePerso/CommitPerso; SL3 authentication and MACed reads
// and writes with every answer's MAC checked.
import CardCrypto
import ISO7816

/// A MIFARE Plus card in security level 0 or 3 (ISO 14443-4), or one in SL1 for the switch to SL3.
///
/// Frames go to the card as they are (the reader carries them as ISO 14443-4 INF), or wrapped in
/// ISO 7816 (`90 cmd 00 00 Lc data 00`, EV1 and EV2 only). Which one this reader carries is
/// learned by the first frame: a reader that refuses a native frame answers a status word of
/// its own (`6x xx`), which is no MIFARE Plus answer. A reader that checks APDU shapes passes
/// the native frames that happen to parse as one, so the form is proven only by a frame that
/// does not (GetVersion's one byte): before the first authentication, so that a read or write,
/// which the card counts, is never sent a second time in the other form (issue 48).
///
/// After an authentication every read and write is MACed both ways with the session's
/// counters; an answer whose MAC does not verify ends the session and throws `.macMismatch`.
public final class MifarePlusCard {
    public let transport: APDUTransport
    /// How frames travel on this connection.
    public enum Framing: String, Sendable, Hashable, CustomStringConvertible {
        case native
        /// `90 cmd 00 00 Lc data 00` → `data 90 00` (or `91 status`), EV1 and EV2.
        case wrapped
        public var description: String { self == .native ? "native frames" : "ISO 7816 wrapping" }
    }
    /// nil until the first frame tells.
    public private(set) var framing: Framing?
    /// Whether `framing` is proven: a native frame that no reader could take for an APDU got the
    /// card's answer, or a wrapped one did (or the caller named the framing).
    public private(set) var framingProven: Bool
    /// Whether the wrapping may be tried (the card is an EV1 or EV2, or the caller says so).
    public var wrappingAllowed: Bool
    /// The open SL3 session.
    public private(set) var session: MifarePlusSession?
    /// The key number the session was opened with.
    public private(set) var authenticatedKey: UInt16?
    /// Blocks one read asks for: 3 fit the 64-byte frames Plus cards announce (status, 48 bytes,
    /// an 8-byte MAC, PCB and CRC).
    public var blocksPerRead = 3
    /// Frames sent so far.
    public private(set) var frames = 0
    /// Authentications sent so far (AuthenticateFirst or NonFirst).
    public private(set) var authentications = 0

    /// How far the last command got, for naming what a card pulled mid-command holds.
    public enum CommandProgress: Sendable, Hashable {
        /// Not sent.
        case notRun
        /// Sent, no answer: it ran, or not.
        case mayHaveRun
        /// Answered.
        case answered
    }
    public private(set) var progress = CommandProgress.answered

    /// Where RndA comes from: the CSPRNG; replays of published traces give the trace's.
    var randomSource: (Int) -> [UInt8] = { secureRandomBytes($0) }

    public init(transport: APDUTransport, framing: Framing? = nil, wrappingAllowed: Bool = false) {
        self.transport = transport
        self.framing = framing
        self.framingProven = framing != nil
        self.wrappingAllowed = wrappingAllowed
    }

    /// A card whose RndA comes from `randomSource` (tests that replay a published trace).
    convenience init(transport: APDUTransport, framing: Framing?, randomSource: @escaping (Int) -> [UInt8]) {
        self.init(transport: transport, framing: framing)
        self.randomSource = randomSource
    }

    // MARK: - Frames

    /// An answer: the status byte and the data after it.
    public struct Answer: Sendable, Hashable {
        public var statusByte: UInt8
        public var data: [UInt8]
        public var status: MifarePlusStatus? { MifarePlusStatus(rawValue: statusByte) }
        public var isOK: Bool { statusByte == 0x90 }
    }

    /// Sends one frame and returns the card's answer.
    /// - Parameters:
    ///   - code: the command code.
    ///   - payload: the bytes after it.
    ///   - secret: bytes of `payload` marked for observers (a key in WritePerso), shown as `**`.
    ///   - secretAnswer: the answer's data is marked (a session's cryptograms).
    ///   - counted: the card counts the command (a read or write in a session): it goes once, in
    ///     the proven form; a reader's `6x xx` in place of its answer leaves it `.mayHaveRun`.
    public func send(_ code: UInt8, _ payload: [UInt8] = [], secret: Range<Int>? = nil, secretAnswer: Bool = false, counted: Bool = false) throws -> Answer {
        if counted {
            if !framingProven { try learnFraming() }
            if let answer = try exchange(framing!, code, payload, secret: secret, secretAnswer: secretAnswer) { return answer }
            // Its counters may have moved on the card: this session's are unknown from here.
            progress = .mayHaveRun
            forgetSession()
            throw MifarePlusError(.answerLost, "the reader answered a status word of its own in place of the card's answer to \(Hex.encode([code])) (\(framing!)): the card may have carried it out, and a command it counts is not sent again")
        }
        if framing == nil {
            let answer = try exchange(.native, code, payload, secret: secret, secretAnswer: secretAnswer)
            if let answer {
                framing = .native
                return answer
            }
            guard wrappingAllowed else {
                throw MifarePlusError(.readerRefused, "the reader does not pass native MIFARE Plus frames, and this card (not known to be an EV1 or EV2) has no ISO 7816 wrapping")
            }
            guard let wrapped = try exchange(.wrapped, code, payload, secret: secret, secretAnswer: secretAnswer) else {
                throw MifarePlusError(.readerRefused, "the reader passes neither native MIFARE Plus frames nor the ISO 7816 wrapping")
            }
            framing = .wrapped
            return wrapped
        }
        if let answer = try exchange(framing!, code, payload, secret: secret, secretAnswer: secretAnswer) { return answer }
        // A reader that checks APDU shapes passes the native frames that happen to parse as one
        // (`70 02 40 00` is a 4-byte header) and refuses the others: the wrapping from then on.
        if framing == .native, wrappingAllowed, let wrapped = try exchange(.wrapped, code, payload, secret: secret, secretAnswer: secretAnswer) {
            framing = .wrapped
            return wrapped
        }
        throw MifarePlusError(.readerRefused, "the reader refused \(Hex.encode([code])) as a native frame\(wrappingAllowed ? " and wrapped" : ", and this card (not known to be an EV1 or EV2) has no ISO 7816 wrapping")")
    }

    /// Proves how frames travel with GetVersion (`60`), one byte no reader takes for an APDU: the
    /// card's answer, native or wrapped, settles it. Nothing on the card changes.
    public func learnFraming() throws {
        guard !framingProven else { return }
        _ = try send(0x60)
        framingProven = true
    }

    /// Native frames without a probe, where nothing else can be spoken (SL1's native switch).
    func assumeNativeFraming() {
        framing = .native
        framingProven = true
    }

    /// Whether `bytes` parse as a short command APDU (a header, with Le, with Lc and data, or both).
    static func parsesAsShortAPDU(_ bytes: [UInt8]) -> Bool {
        if bytes.count == 4 || bytes.count == 5 { return true }
        guard bytes.count > 5, bytes[4] != 0 else { return false }
        return bytes.count == 5 + Int(bytes[4]) || bytes.count == 6 + Int(bytes[4])
    }

    /// One exchange in `form`; nil when the reader (not the card) refused the form: a 2-byte
    /// answer `6x xx` to a native frame, or anything but `90 00` / `91 xx` to a wrapped one.
    private func exchange(_ form: Framing, _ code: UInt8, _ payload: [UInt8], secret: Range<Int>?, secretAnswer: Bool) throws -> Answer? {
        let bytes: [UInt8]
        let offset: Int
        switch form {
        case .native:
            bytes = [code] + payload
            offset = 1
        case .wrapped:
            bytes = CommandAPDU(cla: 0x90, ins: code, p1: 0, p2: 0, data: payload, ne: 256).bytes
            offset = 5
        }
        progress = .mayHaveRun
        let raw = try transport.transmitRaw(bytes, secret: secret.map { ($0.lowerBound + offset)..<($0.upperBound + offset) }, secretResponse: secretAnswer)
        frames += 1
        progress = .answered
        switch form {
        case .native:
            guard let first = raw.first else { throw MifarePlusError(.malformed, "the card answered \(Hex.encode([code])) with nothing") }
            if raw.count == 2, (0x62...0x6F).contains(first) { return nil }
            if !Self.parsesAsShortAPDU(bytes) { framingProven = true }
            return Answer(statusByte: first, data: Array(raw.dropFirst()))
        case .wrapped:
            // One byte: the card took the wrapped frame as a native one (an S, X or SE has no wrapping).
            guard raw.count >= 2 else { return nil }
            let sw1 = raw[raw.count - 2], sw2 = raw[raw.count - 1]
            let data = Array(raw.dropLast(2))
            if sw1 == 0x90 && sw2 == 0x00 {
                framingProven = true
                return Answer(statusByte: 0x90, data: data)
            }
            if sw1 == 0x91 {
                framingProven = true
                return Answer(statusByte: sw2 == 0x00 ? 0x90 : sw2, data: data)
            }
            return nil
        }
    }

    /// Throws the typed error of a status other than 90, naming `what`.
    func check(_ answer: Answer, _ what: String) throws(MifarePlusError) {
        guard !answer.isOK else { return }
        let words = answer.status?.description ?? "\(Hex.encode([answer.statusByte])) (not a MIFARE Plus status)"
        throw MifarePlusError(.status, "the card refused \(what): \(words)", status: answer.status, rawStatus: answer.statusByte)
    }

    // MARK: - Keyless commands

    /// GetVersion (`60`, `AF` for each further part): EV1 and EV2 answer 28 bytes or more (vendor
    /// 04, type 02); S and X do not know the command. nil when the card does not answer it with
    /// data.
    public func getVersion() throws -> [UInt8]? {
        var answer = try send(0x60)
        var bytes = answer.data
        var parts = 1
        while answer.statusByte == 0xAF, parts < 4 {
            answer = try send(0xAF)
            bytes += answer.data
            parts += 1
        }
        guard answer.isOK || answer.statusByte == 0x00, bytes.count >= 28 else { return nil }
        return bytes
    }

    /// Read_Sig (`3C 00`): NXP's 56-byte secp224r1 signature over the UID, plain before an
    /// authentication. nil when the card does not have the command (S, X).
    public func readSignature() throws -> [UInt8]? {
        let answer = try send(0x3C, [0x00])
        guard answer.isOK, answer.data.count >= 56 else { return nil }
        return Array(answer.data.prefix(56))
    }

    /// WritePerso (`A8 BNr data16`), SL0 only: a key, data block or configuration block. The
    /// data is marked secret for observers.
    public func writePerso(_ number: UInt16, _ data: [UInt8]) throws {
        guard data.count == 16 else { throw MifarePlusError(.refused, "WritePerso writes 16 bytes, not \(data.count)") }
        let answer = try send(0xA8, MifarePlusSession.le(number) + data, secret: 2..<18)
        try check(answer, "WritePerso of \(MifarePlusBlockNumber.words(number))")
    }

    /// The WritePerso probe (proxmark3 `hf mfp info`): WritePerso of block 9090, which exists on
    /// no card, so nothing is written. A card in SL0 answers `09` (no such block number), one in
    /// SL3 `0B` (not available in this state); a DESFire answers something else.
    public func probeWritePerso() throws -> UInt8 {
        try send(0xA8, [0x90, 0x90] + [UInt8](repeating: 0, count: 16)).statusByte
    }

    /// CommitPerso (`AA`, with the target level on EV1/EV2: `AA 01` or `AA 03`): ends SL0.
    public func commitPerso(targetLevel: UInt8?) throws {
        // Once: CommitPerso cannot be taken back, and a second one after a lost answer is refused
        // by a card already switched (review: reported as "still in SL0").
        let answer = try send(0xAA, targetLevel.map { [$0] } ?? [], counted: true)
        try check(answer, "CommitPerso")
    }

    // MARK: - Authentication

    /// AuthenticateFirst (`70 BNr 00`, then `72`): a new session with TI and both counters 0.
    /// With `first` false, AuthenticateNonFirst (`76 BNr`): the session's TI and counters go on
    /// under new session keys. Throws `.authenticationFailed` when the card refuses the key or
    /// its answer shows it does not hold it.
    public func authenticate(_ number: UInt16, key: MifarePlusKey, first: Bool = true) throws {
        // Before the session: its reads and writes are counted and go once, in a proven form.
        try learnFraming()
        let previous = session
        session = nil
        authenticatedKey = nil
        authentications += 1
        let aes = try BlockCipher(.aes128, key: key.bytes)
        let step1 = first ? try send(0x70, MifarePlusSession.le(number) + [0x00]) : try send(0x76, MifarePlusSession.le(number))
        guard step1.isOK else {
            let hint = step1.status == .notInThisState ? "; the card is not in SL3 (an SL0 card must be personalised first: apdu plus info tells its level)" : ""
            throw MifarePlusError(.authenticationFailed, "the card refused authentication with \(MifarePlusBlockNumber.words(number)): \(step1.status?.description ?? Hex.encode([step1.statusByte]))\(hint)",
                                  status: step1.status, rawStatus: step1.statusByte)
        }
        guard step1.data.count == 16 else { throw MifarePlusError(.malformed, "the card's first authentication answer has \(step1.data.count) bytes; 16 expected") }
        let rndB = try aes.decrypt(cbc: step1.data, iv: [UInt8](repeating: 0, count: 16))
        let rndA = randomSource(16)
        let token = try aes.encrypt(cbc: rndA + Array(rndB[1...]) + [rndB[0]], iv: [UInt8](repeating: 0, count: 16))
        // Once: a second proof to a card that took the first is refused, and read as a wrong key.
        let step2 = try send(0x72, token, secretAnswer: true, counted: true)
        guard step2.isOK else {
            throw MifarePlusError(.authenticationFailed, "the card refused the key for \(MifarePlusBlockNumber.words(number)): \(step2.status?.description ?? Hex.encode([step2.statusByte]))",
                                  status: step2.status, rawStatus: step2.statusByte)
        }
        let expected = first ? 32 : 16
        guard step2.data.count == expected else { throw MifarePlusError(.malformed, "the card's last authentication answer has \(step2.data.count) bytes; \(expected) expected") }
        let plain = try aes.decrypt(cbc: step2.data, iv: [UInt8](repeating: 0, count: 16))
        let ti = first ? Array(plain[0..<4]) : (previous?.transactionIdentifier ?? [])
        let rndAEcho = first ? Array(plain[4..<20]) : Array(plain[0..<16])
        guard constantTimeEquals(rndAEcho, Array(rndA[1...]) + [rndA[0]]) else {
            throw MifarePlusError(.authenticationFailed, "the card's answer to authentication with \(MifarePlusBlockNumber.words(number)) does not carry RndA: it does not hold this key (or is not genuine)")
        }
        guard first || previous != nil else { throw MifarePlusError(.refused, "AuthenticateNonFirst needs a session") }
        var s = try MifarePlusSession(key: key.bytes, rndA: rndA, rndB: rndB, transactionIdentifier: ti)
        if !first, let previous {
            s.readCounter = previous.readCounter
            s.writeCounter = previous.writeCounter
        }
        session = s
        authenticatedKey = number
    }

    /// Forgets the session (the card drops it on any error and when it leaves the field).
    public func forgetSession() {
        session = nil
        authenticatedKey = nil
    }

    // MARK: - Reads and writes

    /// How a read is protected: the command MACed (always, here) and the answer's data plain
    /// with a MAC (`33`, the default) or enciphered with a MAC (`31`).
    public enum ReadMode: String, Sendable, Hashable, CaseIterable {
        case plain, encrypted
        var code: UInt8 { self == .plain ? 0x33 : 0x31 }
    }

    /// Reads `count` blocks from `block` (one sector, at most `blocksPerRead`) in the open
    /// session, the command MACed and the answer's MAC checked.
    public func read(block: UInt16, count: Int, mode: ReadMode = .plain) throws -> [UInt8] {
        guard var s = session else { throw MifarePlusError(.refused, "reading block \(block) needs an authentication first") }
        guard (1...15).contains(count) else { throw MifarePlusError(.refused, "a read takes 1 to 15 blocks, not \(count)") }
        let code = mode.code
        let mac = try s.readCommandMAC(code: code, block: block, count: UInt8(count))
        let answer = try send(code, MifarePlusSession.le(block) + [UInt8(count)] + mac, counted: true)
        guard answer.isOK else {
            forgetSession()
            try check(answer, "reading \(count) block\(count == 1 ? "" : "s") from \(block)")
            return []
        }
        guard answer.data.count == 16 * count + 8 else {
            forgetSession()
            throw MifarePlusError(.malformed, "the card answered a read of \(count) block\(count == 1 ? "" : "s") with \(answer.data.count) bytes; \(16 * count + 8) expected")
        }
        let data = Array(answer.data.prefix(16 * count)), answerMAC = Array(answer.data.suffix(8))
        s.readDone()
        guard constantTimeEquals(try s.readAnswerMAC(block: block, count: UInt8(count), data: data), answerMAC) else {
            forgetSession()
            throw MifarePlusError(.macMismatch, "the MAC of the card's answer to reading block \(block) does not verify: the data is not trusted")
        }
        session = s
        return mode == .plain ? data : try s.decipherAnswerData(data)
    }

    /// How a write is protected: data enciphered (`A1`, the default) or plain (`A3`); the
    /// command MACed and the answer's MAC checked either way.
    public enum WriteMode: String, Sendable, Hashable, CaseIterable {
        case encrypted, plain
        var code: UInt8 { self == .encrypted ? 0xA1 : 0xA3 }
    }

    /// Writes one 16-byte block (a data block, trailer or configuration block the session's key
    /// may write) in the open session.
    public func write(block: UInt16, data: [UInt8], mode: WriteMode = .encrypted) throws {
        guard var s = session else { throw MifarePlusError(.refused, "writing block \(block) needs an authentication first") }
        guard data.count == 16 else { throw MifarePlusError(.refused, "a block is 16 bytes, not \(data.count)") }
        let code = mode.code
        let sent = mode == .encrypted ? try s.encipherCommandData(data) : data
        let mac = try s.writeCommandMAC(code: code, block: block, data: sent)
        let answer = try send(code, MifarePlusSession.le(block) + sent + mac, secret: mode == .plain ? 2..<18 : nil, counted: true)
        guard answer.isOK else {
            forgetSession()
            try check(answer, "writing block \(MifarePlusBlockNumber.words(block))")
            return
        }
        s.writeDone()
        guard answer.data.count == 8, constantTimeEquals(try s.writeAnswerMAC(), answer.data) else {
            forgetSession()
            throw MifarePlusError(.macMismatch, "the MAC of the card's answer to writing block \(block) does not verify: the write is not confirmed")
        }
        session = s
    }
}
