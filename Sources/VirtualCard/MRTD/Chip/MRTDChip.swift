// An emulated eMRTD chip (ICAO 9303, BSI TR-03110): its state, the secure messaging pipeline
// every command passes through, and dispatch to the handlers in its extensions.
import CardCrypto
import ISO7816

/// An eMRTD chip (passport or ID card) as ICAO 9303 Parts 10 and 11 and BSI TR-03110 describe
/// it, for tests and `apdu emulate --mrtd`: the master file with EF.CardAccess, EF.DIR and
/// EF.ATR/INFO, the eMRTD application `A0000002471001` with EF.COM, EF.SOD and the data groups,
/// BAC and PACE (Generic and Chip Authentication Mapping over ECDH, Generic Mapping over DH),
/// secure messaging in 3DES and AES checked on every command, Active Authentication and Chip
/// Authentication.
///
/// Written from the specification apart from the library's reader (the `MRTD` module), so a
/// test of the one against the other can fail. What real chips do differently is a
/// `Configuration` switch: BAC-only, PACE-only, no extended length, a small largest Le, a bare
/// `6700` for too large an Le.
///
/// The chip is volatile as a real one is: a reset, a power-off or a pulled card (the vpcd
/// connection closed) ends any session, and the keys are gone.
public final class MRTDChip: EmulatedCard, @unchecked Sendable {
    public let document: MRTDDocument
    public let configuration: Configuration
    public var atr: [UInt8] { configuration.atr }

    let random: ChipRandomSource
    /// The PACEInfos of EF.CardAccess that this chip can run (empty: no PACE).
    let paceOffers: [SecurityInfos.PACEInfo]
    let chipAuthenticationInfo: SecurityInfos.ChipAuthenticationInfo?
    let activeAuthenticationAlgorithm: String?
    /// BAC's K_enc and K_mac (Part 11 §4.3.2), derived once from the MRZ.
    let bacKeys: (encryption: [UInt8], mac: [UInt8])?

    private let state = Locked(State())

    /// The eMRTD application's AID (Part 10 §3.2.1).
    public static let applicationIdentifier: [UInt8] = [0xA0, 0x00, 0x00, 0x02, 0x47, 0x10, 0x01]

    /// `3B 80 80 01 01`: the ATR a PC/SC reader builds for an ISO 14443-4 card with no
    /// historical bytes, as it shows for many passports.
    public static let defaultATR: [UInt8] = [0x3B, 0x80, 0x80, 0x01, 0x01]

    /// - Parameters:
    ///   - document: the files and keys to serve.
    ///   - configuration: how the chip behaves where real chips differ.
    ///   - random: where RND.IC, K.IC, PACE's nonce and keys and AA's nonce come from.
    public init(document: MRTDDocument, configuration: Configuration = Configuration(), random: ChipRandomSource = .system) {
        self.document = document
        self.configuration = configuration
        self.random = random
        let cardAccess = document.files[.cardAccess].flatMap { try? SecurityInfos($0) } ?? SecurityInfos()
        paceOffers = configuration.accessControl == .bac ? [] : cardAccess.pace.filter { info in
            guard let p = PACEProtocol(oid: info.protocolOID), let id = info.parameterID, let parameters = StandardDomainParameters(id: id) else { return false }
            switch p.mapping {
            case .genericECDH, .chipAuthenticationECDH: return parameters.isElliptic
            case .genericDH: return !parameters.isElliptic
            case .integratedDH, .integratedECDH: return false
            }
        }
        let dg14 = document.files[.dataGroup(14)].flatMap { try? SecurityInfos($0) } ?? SecurityInfos()
        chipAuthenticationInfo = document.chipAuthenticationKey == nil ? nil : dg14.chipAuthentication.first {
            ChipAuthenticationProtocol(oid: $0.protocolOID) != nil
        }
        activeAuthenticationAlgorithm = dg14.activeAuthenticationSignatureAlgorithm
        if configuration.accessControl != .pace, let key = document.effectiveAccessKey {
            let seed = Array(Digest.sha1.hash(Array(key.information.utf8)).prefix(16))
            bacKeys = (KeyDerivation.key(seed, counter: KeyDerivation.encryption, for: .tdes2),
                       KeyDerivation.key(seed, counter: KeyDerivation.mac, for: .tdes2))
        } else {
            bacKeys = nil
        }
    }

    // MARK: What tests and tools may see

    /// How the current secure messaging session came about.
    public enum Access: String, Sendable, Hashable {
        case bac, pace, chipAuthentication
    }

    /// The access control that established the current session; nil when there is none.
    public var access: Access? { state.current.session?.access }
    /// The cipher of the current session.
    public var sessionCipher: CipherAlgorithm? { state.current.session?.channel.algorithm }
    /// Whether the eMRTD application is selected.
    public var applicationSelected: Bool { state.current.applicationSelected }
    /// Commands received since the chip was made.
    public var commandCount: Int { state.current.commands }
    /// Every session key (K_Enc and K_MAC) this chip has used since it was made, in order: for
    /// tests that prove they never reach a trace, a recording or any output. An emulated chip's
    /// keys protect nothing; a real chip never tells.
    public var sessionKeysUsed: [[UInt8]] { state.current.keysUsed }

    // MARK: EmulatedCard

    public func reset() {
        state.withLock { s in
            let (commands, keys) = (s.commands, s.keysUsed)
            s = State()
            (s.commands, s.keysUsed) = (commands, keys)
        }
    }

    public func powerOff() { reset() }

    public func process(_ apdu: [UInt8]) -> [UInt8] {
        state.withLock { s in
            s.commands += 1
            return respond(apdu, &s)
        }
    }

    // MARK: The pipeline

    struct Session {
        var channel: ChipSecureChannel
        var access: Access
        /// PACE opened the chip (chip authentication may have changed the keys since).
        var openedByPACE: Bool
    }

    struct State {
        var applicationSelected = false
        var currentFile: MRTDFile?
        var session: Session?
        /// RND.IC, between GET CHALLENGE and EXTERNAL AUTHENTICATE.
        var challenge: [UInt8]?
        var pace: PACERun?
        var chipAuthenticationSetup: ChipAuthenticationSetup?
        var commands = 0
        var keysUsed: [[UInt8]] = []
    }

    /// One command's answer, and what it changes beyond the file system.
    struct Outcome {
        var response: ResponseAPDU
        /// A new session, in force from the next command (the answer still goes out under the
        /// keys it came in with: Part 11 §6.2 for chip authentication).
        var newSession: Session?
        /// Too large an Le: answered as `Configuration.oversizedLe` says.
        var oversizedLe = false

        init(_ statusWord: StatusWord) { response = ResponseAPDU(statusWord: statusWord) }
        init(data: [UInt8], _ statusWord: StatusWord = .success) { response = ResponseAPDU(data: data, statusWord: statusWord) }
        static func oversized() -> Outcome { var o = Outcome(.wrongLength); o.oversizedLe = true; return o }
    }

    /// What a handler knows about the exchange it answers.
    struct Exchange {
        /// The command came under secure messaging (its MAC checked).
        var secured: Bool
        /// The most plain bytes the answer can carry (the APDU's limit, less secure messaging's
        /// own bytes).
        var capacity: Int
        /// CLA b5: more commands of a chain follow.
        var chained: Bool
    }

    private func respond(_ raw: [UInt8], _ s: inout State) -> [UInt8] {
        // A command that does not parse never reaches secure messaging: the counter stays.
        guard let command = try? CommandAPDU(bytes: raw) else { return StatusWord.wrongLength.bytes }
        // Without extended length the chip refuses an extended APDU before reading it: a bare
        // 6700, the session and its counter untouched (gmrtd #457: a Chinese passport).
        if command.isExtended && !configuration.extendedLength { return StatusWord.wrongLength.bytes }
        guard [0x00, 0x10, 0x0C, 0x1C].contains(command.cla) else { return StatusWord.claNotSupported.bytes }
        let limit = command.isExtended ? 65536 : 256

        if command.cla & 0x0C == 0x0C {
            // No keys, or keys that do not check out: SM data objects incorrect, answered bare
            // (Part 11 §9.8.7), and the session is over.
            guard var session = s.session else { return StatusWord(rawValue: 0x6988).bytes }
            let counter = session.channel.ssc
            let inner: CommandAPDU
            do { inner = try session.channel.unwrap(command) } catch {
                endSession(&s)
                return StatusWord(rawValue: 0x6988).bytes
            }
            let odd = inner.ins & 1 == 1
            let exchange = Exchange(secured: true, capacity: session.channel.capacity(within: limit, oddINS: odd), chained: inner.cla & 0x10 != 0)
            s.session = session
            let outcome = execute(inner, exchange, &s)
            if outcome.oversizedLe && configuration.oversizedLe == .unprotected {
                // As if the command had never passed secure messaging: bare, counter back.
                session.channel.restore(ssc: counter)
                s.session = session
                return StatusWord.wrongLength.bytes
            }
            // The answer goes out under the keys the command came with, unless the handler
            // ended the session (then bare).
            guard var current = s.session else { return outcome.response.bytes }
            let wrapped = current.channel.wrap(outcome.response, oddINS: odd)
            if let new = outcome.newSession { s.keysUsed += [new.channel.encryptionKey, new.channel.macKey] }
            s.session = outcome.newSession ?? current
            return wrapped.bytes
        }

        // A plain command ends secure messaging: the keys are gone (ISO 7816-4 §10.2: the
        // security status of secure messaging lasts only while it is used).
        if s.session != nil { endSession(&s) }
        let exchange = Exchange(secured: false, capacity: limit, chained: command.cla & 0x10 != 0)
        let outcome = execute(command, exchange, &s)
        if let new = outcome.newSession {
            s.keysUsed += [new.channel.encryptionKey, new.channel.macKey]
            s.session = new
        }
        return outcome.response.bytes
    }

    func endSession(_ s: inout State) {
        s.session = nil
        s.pace = nil
        s.chipAuthenticationSetup = nil
        s.challenge = nil
    }

    private func execute(_ command: CommandAPDU, _ exchange: Exchange, _ s: inout State) -> Outcome {
        if exchange.chained && command.ins != 0x86 { return Outcome(StatusWord(rawValue: 0x6884)) }
        switch command.ins {
        case 0xA4: return select(command, exchange, &s)
        case 0xB0, 0xB1: return readBinary(command, exchange, &s)
        case 0x84: return getChallenge(command, exchange, &s)
        case 0x82: return externalAuthenticate(command, exchange, &s)
        case 0x22: return manageSecurityEnvironment(command, exchange, &s)
        case 0x86: return generalAuthenticate(command, exchange, &s)
        case 0x88: return internalAuthenticate(command, exchange, &s)
        default: return Outcome(.insNotSupported)
        }
    }

    // MARK: Random numbers

    /// A scalar in [1, limit−1] drawn as `limit`'s byte length from the random source, so a
    /// fixed value from a worked example is taken as it is.
    func randomScalar(below limit: BigNumber) -> BigNumber {
        for _ in 0..<64 {
            let k = BigNumber.candidate(below: limit, random.bytes)
            if !k.isZero && k < limit { return k }
        }
        return BigNumber(1)
    }
}

extension BigNumber {
    /// `limit`'s byte length of random bytes with the bits above `limit`'s bit length cleared:
    /// for P-521 (a 521-bit order in 66 bytes) a plain draw is below the order once in 128
    /// tries, and 64 tries failed most of the time (the interop tests' ECDSA active
    /// authentication on P-521). A value from a worked example, below the limit, is unchanged.
    static func candidate(below limit: BigNumber, _ bytes: (Int) -> [UInt8]) -> BigNumber {
        var draw = bytes(limit.byteCount)
        let excess = limit.byteCount * 8 - limit.bitCount
        if excess > 0, !draw.isEmpty { draw[0] &= 0xFF >> excess }
        return BigNumber(bytes: draw)
    }
}

extension StatusWord {
    var bytes: [UInt8] { [sw1, sw2] }
}
