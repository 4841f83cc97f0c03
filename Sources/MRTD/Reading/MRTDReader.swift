// Reading an eMRTD over any APDU transport: the application, access control (PACE or BAC), and
// files in the largest pieces the reader and chip accept (ICAO 9303 Parts 10 and 11).
import ISO7816

/// How access control is chosen.
public enum MRTDAccessMethod: String, Sendable, Hashable, CustomStringConvertible {
    /// PACE when EF.CardAccess offers a usable PACEInfo, else BAC.
    case auto
    /// PACE only.
    case pace
    /// BAC only.
    case bac
    public var description: String { rawValue }
}

/// What access control did.
public struct MRTDAccessResult: CustomStringConvertible {
    /// The PACE run, when PACE established the session.
    public let pace: PACEResult?
    /// Whether BAC established the session.
    public let usedBAC: Bool
    /// Why PACE failed when BAC was used after it (only with `allowBACFallback`).
    public let paceFailure: MRTDProtocolError?

    /// True when PACE failed and BAC was used instead: the output must say so.
    public var fellBackToBAC: Bool { usedBAC && paceFailure != nil }

    public var description: String {
        if let pace { return pace.description }
        if let paceFailure { return "BAC after PACE failed (\(paceFailure.message))" }
        return "BAC"
    }
}

/// How a file read ended.
public enum MRTDFileContent: Sendable, Hashable {
    /// The whole file.
    case read([UInt8])
    /// The chip refuses it without terminal authentication (DG3/DG4 under EAC: `69 82`).
    case protected(StatusWord)
    /// The chip has no such file (`6A 82`).
    case notFound
}

/// Exchanges and bytes on the wire, for comparing with the minimum a read needs.
public struct MRTDReadStatistics: Sendable, Hashable, CustomStringConvertible {
    /// Physical exchanges (every APDU, GET RESPONSE and re-send included).
    public var exchanges = 0
    /// Command bytes sent.
    public var bytesSent = 0
    /// Response bytes received (status words included).
    public var bytesReceived = 0
    /// READ BINARY commands sent (B0 and B1).
    public var readCommands = 0
    /// Times the session was re-established: after secure messaging broke mid-read, or after
    /// the chip refused a command outside it (a bare status word ends the session).
    public var sessionRestarts = 0
    public var description: String { "\(exchanges) exchanges, \(bytesSent) bytes sent, \(bytesReceived) received, \(readCommands) reads" }
}

/// Reads a passport or ID card chip through an `APDUTransport`.
///
/// ```
/// let reader = MRTDReader(transport: transport)
/// let access = try reader.establishAccess(.auto, key: key)
/// if case let .read(com) = try reader.readFile(.com) { … }
/// ```
///
/// Reads use the largest piece the reader and chip accept: extended length when the transport
/// allows it and the chip announced it (`Options.chipSupportsExtendedLength`), else a ladder of
/// sizes learned once per connection. The first read of a file uses its short EF identifier;
/// offsets past 32767 use READ BINARY B1 with DO 54. When secure messaging breaks mid-read, the
/// session is re-established with the same key and the read goes on, at most once per file.
public final class MRTDReader {
    /// Reader settings.
    public struct Options: Sendable {
        /// After a failed PACE, run BAC (the result says it happened). Off: a failed PACE is an error.
        public var allowBACFallback = false
        /// Whether the chip announced extended length (its ATR/ATS historical bytes or EF.ATR/INFO:
        /// see `ChipCapabilities`); nil or false: short APDUs only.
        public var chipSupportsExtendedLength: Bool?
        /// READ BINARY sizes, largest first; those over 256 are used only with extended length.
        public var readSizes: [Int] = [65536, 4096, 1024, 256, 224, 192, 160, 128, 64]
        /// Nonces and ephemeral keys.
        public var random: RandomSource = .system
        /// The defaults: no BAC fallback, short APDUs unless the chip announced extended length.
        public init() {}
    }

    /// The channel, protected once access control ran.
    public let channel: MRTDChannel
    /// The settings in force.
    public var options: Options
    /// Counted from this reader's creation.
    public private(set) var statistics = MRTDReadStatistics()
    /// EF.CardAccess, once read.
    public private(set) var cardAccess: SecurityInfos?
    /// The access result, once access control ran.
    public private(set) var access: MRTDAccessResult?
    /// True when the session was opened again after the chip proved itself (chip authentication
    /// or PACE-CAM) and it did not prove itself again: what was read since travelled under
    /// keys the chip never proved it holds (issue 48). Cleared by `establishAccess`.
    public private(set) var chipProofLapsed = false

    /// The read size learned on this connection (index into `options.readSizes`).
    private var sizeIndex = 0
    /// nil until learned: whether READ BINARY with a short EF identifier works.
    private var shortIdentifiersWork: Bool?
    private var key: MRTDAccessKey?
    private var method: MRTDAccessMethod = .auto
    /// Whether the eMRTD application is the current DF; nil until this reader selects one: a new
    /// connection finds the chip as the last program left it (`apdu mrtd info` leaves the
    /// application selected, and EF.CardAccess is not found there by its short identifier).
    private var inApplication: Bool?
    /// EF.CardAccess was looked for on this connection (found or not).
    private var cardAccessProbed = false
    /// The chip answered a bare status word under secure messaging, which ended the session:
    /// the next read opens the chip again first.
    private var reopenBeforeNextRead = false
    /// How the chip proved itself on this reader's session, so that a session opened again can
    /// be proven again before anything more is read (ICAO 9303 Part 11 §7.1: the holder's data
    /// travels under chip authentication's keys).
    enum ChipProofKey {
        case chipAuthentication(ChipAuthenticationPublicKeyInfo, ChipAuthenticationInfo?)
        case mapping(ChipAuthenticationPublicKeyInfo)
    }
    var provenChipKey: ChipProofKey?
    /// PACE-CAM's proof of every session opened since `establishAccess`: each must verify
    /// against the chip's key, or what was read in that session is not the chip's (issue 48).
    var mappingsSinceAccess: [ChipAuthenticationMappingData] = []
    /// Whether a session of this read opened without PACE-CAM's proof (BAC, or PACE without the
    /// mapping, after a restart): data read in it is not covered by a mapping's proof, so PACE-CAM
    /// cannot make the chip proven (review of issue 48: a restart fell back to BAC on a clone).
    var sessionWithoutMapping = false
    /// Whether a session of this read opened with BAC under `.auto` because EF.CardAccess offered
    /// no PACE it could run (absent, withheld, undecodable): what a man in the middle answering
    /// `6A 82` to EF.CardAccess brings about (issue 48). Checked against DG14's signed PACEInfos.
    var bacWithoutPACEOffer = false
    static let applicationIdentifier: [UInt8] = [0xA0, 0x00, 0x00, 0x02, 0x47, 0x10, 0x01]

    /// A reader on `transport`, counting its exchanges (the transport's observer still sees each one).
    public init(transport: APDUTransport, options: Options = Options()) {
        channel = MRTDChannel(transport: transport)
        self.options = options
        let previous = transport.observer
        transport.observer = { [weak self] exchange in
            self?.statistics.exchanges += 1
            self?.statistics.bytesSent += exchange.command.count
            self?.statistics.bytesReceived += exchange.response.count
            previous?(exchange)
        }
    }

    /// The read size now in use: the largest size not refused on this connection that the
    /// channel can carry (over 256 only with extended length on both sides).
    public var currentReadSize: Int { options.readSizes[effectiveSizeIndex] }

    private var effectiveSizeIndex: Int {
        var i = min(sizeIndex, options.readSizes.count - 1)
        while options.readSizes[i] > 256 && !extendedAllowed && i + 1 < options.readSizes.count { i += 1 }
        return i
    }

    var extendedAllowed: Bool { options.chipSupportsExtendedLength == true && channel.extendedLengthUsable }

    // MARK: Application and access control

    /// SELECT the eMRTD application A0000002471001 (P2 0C, no Le: NFCPassportReader PR #153),
    /// protected when a session is up.
    public func selectApplication() throws {
        let answer = try channel.send(CommandAPDU(cla: 0x00, ins: 0xA4, p1: 0x04, p2: 0x0C, data: Self.applicationIdentifier))
        guard answer.statusWord == .success else { throw MRTDProtocolError.status(answer.statusWord, "SELECT eMRTD application") }
        inApplication = true
    }

    /// EF.CardAccess at MF level, without access control; nil when the chip has none (BAC-only
    /// chips). Parsed into `cardAccess` when it parses.
    public func readCardAccess() throws -> [UInt8]? {
        cardAccessProbed = true
        guard case let .read(bytes) = try readFile(.cardAccess) else { return nil }
        cardAccess = try? SecurityInfos(encoded: bytes)
        return bytes
    }

    /// Takes the chip's word on extended length from its ATR or ATS historical bytes (card
    /// capabilities); leaves the setting alone when they do not say.
    public func learnExtendedLength(historicalBytes: [UInt8]) {
        if let announced = ChipCapabilities.extendedLength(historicalBytes: historicalBytes) { options.chipSupportsExtendedLength = announced }
    }

    /// Reads EF.ATR/INFO at MF level (only when asked) and takes its extended-length information;
    /// nil when the chip has no such file.
    public func readATRInfo() throws -> [UInt8]? {
        guard case let .read(bytes) = try readFile(.atrInfo) else { return nil }
        if let info = ChipCapabilities.extendedLength(atrInfo: bytes) { options.chipSupportsExtendedLength = info.supported }
        return bytes
    }

    /// EF.DIR at MF level. Only when asked: a BAC-only chip may refuse it before BAC (gmrtd #226).
    public func readDirectory() throws -> [UInt8]? {
        guard case let .read(bytes) = try readFile(.dir) else { return nil }
        return bytes
    }

    /// Runs access control and selects the application.
    ///
    /// `.auto`: PACE when EF.CardAccess (read now if not yet) offers a usable PACEInfo, else BAC.
    /// A failed PACE is an error unless `options.allowBACFallback`, in which case BAC runs and
    /// the result says so.
    public func establishAccess(_ method: MRTDAccessMethod, key: MRTDAccessKey) throws -> MRTDAccessResult {
        self.key = key
        self.method = method
        provenChipKey = nil
        chipProofLapsed = false
        mappingsSinceAccess = []
        let result = try runAccessControl(method, key: key)
        access = result
        return result
    }

    private func runAccessControl(_ method: MRTDAccessMethod, key: MRTDAccessKey) throws -> MRTDAccessResult {
        let result = try openSession(method, key: key)
        if result.pace?.chipAuthenticationMapping == nil { sessionWithoutMapping = true }
        return result
    }

    private func openSession(_ method: MRTDAccessMethod, key: MRTDAccessKey) throws -> MRTDAccessResult {
        channel.secureMessaging = nil
        reopenBeforeNextRead = false
        if method == .bac { return try runBAC(key, after: nil) }
        if cardAccess == nil && !cardAccessProbed { _ = try readCardAccess() }
        guard let infos = cardAccess, let info = Self.preferredPACEInfo(infos) else {
            if method == .pace { throw MRTDProtocolError(.unsupported, "the chip offers no usable PACE protocol in EF.CardAccess") }
            bacWithoutPACEOffer = true
            return try runBAC(key, after: nil)
        }
        do {
            inApplication = false
            let pace = try PACE.perform(on: channel, key: key, info: info, securityInfos: infos, random: options.random)
            try selectApplication()
            if let mapping = pace.chipAuthenticationMapping { mappingsSinceAccess.append(mapping) }
            return MRTDAccessResult(pace: pace, usedBAC: false, paceFailure: nil)
        } catch let error as MRTDProtocolError {
            guard options.allowBACFallback, key.supportsBAC, error.kind != .invalidAccessKey else { throw error }
            return try runBAC(key, after: error)
        }
    }

    private func runBAC(_ key: MRTDAccessKey, after failure: MRTDProtocolError?) throws -> MRTDAccessResult {
        guard key.supportsBAC else {
            throw MRTDProtocolError(.unsupported, "the chip offers no PACE, and BAC needs the MRZ, not a CAN")
        }
        channel.secureMessaging = nil
        inApplication = false
        try selectApplication()
        try BasicAccessControl.perform(on: channel, key: key, random: options.random)
        return MRTDAccessResult(pace: nil, usedBAC: true, paceFailure: failure)
    }

    /// The PACEInfo to run: one whose parameters libcrypto can build; Chip Authentication
    /// Mapping first (it proves the chip), then generic, then integrated mapping; ECDH before DH;
    /// the stronger cipher first.
    static func preferredPACEInfo(_ infos: SecurityInfos) -> PACEInfo? {
        func rank(_ i: PACEInfo) -> Int {
            let mapping = [PACEMapping.chipAuthentication: 0, .generic: 1, .integrated: 2][i.mapping] ?? 3
            let agreement = i.keyAgreement == .ecdh ? 0 : 1
            let cipher = [ProtocolCipher.aes256: 0, .aes192: 1, .aes128: 2, .tdes: 3][i.cipher] ?? 4
            return mapping * 100 + agreement * 10 + cipher
        }
        return infos.paceInfos.filter { (try? infos.domainParameters(for: $0)) != nil }.min { rank($0) < rank($1) }
    }

    /// Runs chip authentication with DG14's key (the first ChipAuthenticationPublicKeyInfo whose
    /// key id matches a ChipAuthenticationInfo, or the only one), then confirms it with a
    /// protected SELECT of the application under the new keys.
    public func performChipAuthentication(dg14 infos: SecurityInfos) throws -> ChipAuthenticationResult {
        guard let key = infos.chipAuthenticationPublicKeyInfos.first(where: { k in
            infos.chipAuthenticationInfos.isEmpty || infos.chipAuthenticationInfos.contains { $0.keyId == nil || $0.keyId == k.keyId }
        }) else { throw MRTDProtocolError(.unsupported, "DG14 holds no chip authentication public key") }
        let info = infos.chipAuthenticationInfos.first { $0.keyId == nil || $0.keyId == key.keyId }
        let result = try ChipAuthentication.perform(on: channel, publicKey: key, info: info, random: options.random)
        try selectApplication()
        if result.isConfirmed { provenChipKey = .chipAuthentication(key, info) }
        return result
    }

    /// Runs active authentication with DG15's key (and DG14's ActiveAuthenticationInfo for ECDSA).
    public func performActiveAuthentication(dg15: ChipPublicKey, dg14 infos: SecurityInfos?) throws -> ActiveAuthenticationResult {
        try ActiveAuthentication.perform(on: channel, publicKey: dg15, info: infos?.activeAuthenticationInfos.first, random: options.random,
                                         extendedLength: extendedAllowed)
    }

    // MARK: Files

    /// Reads a whole file. EF.CardAccess and the other MF files are read where they are (before
    /// access control, they are read in the clear).
    public func readFile(_ file: MRTDFile) throws -> MRTDFileContent {
        var restarted = false
        var data: [UInt8] = []
        var total: Int?
        var selected = false
        var locationUnknown = file.inMasterFile && inApplication == nil
        while true {
            do {
                let content = try continueReading(file, data: &data, total: &total, selected: &selected)
                var found = false
                if case .read = content { found = true }
                if locationUnknown && !found {
                    // Not found, or refused (an application answers 69 82 before access control):
                    // perhaps not at MF level (a new connection finds the chip where the last
                    // program left it): SELECT MF once and look again. A fresh chip is at MF
                    // level, so the common case costs nothing (recorded sessions start with
                    // READ BINARY 9C, no SELECT).
                    locationUnknown = false
                    let answer = try statusOf { try channel.send(CommandAPDU(cla: 0x00, ins: 0xA4, p1: 0x00, p2: 0x0C, data: [0x3F, 0x00])) }
                    guard answer.statusWord == .success else { return .notFound }
                    inApplication = false
                    (data, total, selected) = ([], nil, false)
                    continue
                }
                return content
            } catch let error as MRTDProtocolError where error.kind == .secureMessagingEnded && !restarted && key != nil {
                // Once per file: access control again with the same key, then on from `data.count`.
                restarted = true
                try reopen()
                selected = false
            }
        }
    }

    /// Access control again with the key and method that opened the chip last.
    private func reopen() throws {
        guard let key else { throw MRTDProtocolError(.secureMessagingEnded, "secure messaging has ended: access control must run again") }
        statistics.sessionRestarts += 1
        let again = method == .auto && access?.pace == nil ? .bac : method
        access = try runAccessControl(again, key: key)
        guard let proven = provenChipKey else { return }
        // A restart drops chip authentication's keys: prove the chip again before reading on,
        // or the rest would travel under keys only the password vouches for (issue 48).
        switch proven {
        case let .chipAuthentication(publicKey, info):
            do {
                let result = try ChipAuthentication.perform(on: channel, publicKey: publicKey, info: info, random: options.random)
                try selectApplication()
                if result.isConfirmed { return }
            } catch is MRTDProtocolError {}
            provenChipKey = nil
            chipProofLapsed = true
            // Chip authentication did not hold: a working session to read on, and the verdict says so.
            access = try runAccessControl(again, key: key)
        case let .mapping(publicKey):
            if let mapping = access?.pace?.chipAuthenticationMapping, (try? mapping.verify(against: publicKey)) == true { return }
            provenChipKey = nil
            chipProofLapsed = true
        }
    }

    /// Records that PACE-CAM's proof verified against `key`, so that a restart proves it again.
    func rememberMappingProof(_ key: ChipAuthenticationPublicKeyInfo) { provenChipKey = .mapping(key) }

    /// Opens the chip again when a bare status word ended the session (not counted against the
    /// once-a-file restart for a broken session: a refusal is an answer, not a break).
    /// - Returns: whether it did (the current file is no longer selected).
    private func reopenAfterRefusal() throws -> Bool {
        guard reopenBeforeNextRead else { return false }
        reopenBeforeNextRead = false
        guard key != nil, let sm = channel.secureMessaging, sm.hasEnded else { return false }
        try reopen()
        return true
    }

    private func continueReading(_ file: MRTDFile, data: inout [UInt8], total: inout Int?, selected: inout Bool) throws -> MRTDFileContent {
        if try reopenAfterRefusal() { selected = false }
        try enterDirectory(of: file, selected: &selected)
        var trySFI = file.shortIdentifier != nil && shortIdentifiersWork != false
        var toEnd = !file.isSingleObject
        // Last resort for a chip that answers 67 00 to any Le past the end of a short file (ISO
        // says 62 82): read the header alone, then exactly the rest.
        var headerProbe = false, probed = false
        while total.map({ data.count < $0 }) ?? true {
            if try reopenAfterRefusal() {
                // Access control selected the application: find the file again, on from `data.count`.
                selected = false
                try enterDirectory(of: file, selected: &selected)
            }
            let offset = data.count
            let useShortIdentifier = trySFI && !selected && offset == 0
            if !selected && !useShortIdentifier {
                let fid = [UInt8(file.fileIdentifier >> 8), UInt8(file.fileIdentifier & 0xFF)]
                let answer = try statusOf { try channel.send(CommandAPDU(cla: 0x00, ins: 0xA4, p1: 0x02, p2: 0x0C, data: fid)) }
                switch answer.statusWord {
                case .success: selected = true
                case .fileNotFound: return .notFound
                case .securityStatusNotSatisfied, .conditionsNotSatisfied: return .protected(answer.statusWord)
                default: throw MRTDProtocolError.status(answer.statusWord, "SELECT \(file)")
                }
            }
            let size = headerProbe ? 8 : currentReadSize
            headerProbe = false
            let wanted = min(size, total.map { $0 - offset } ?? size)
            let odd = offset > 0x7FFF
            let command: CommandAPDU
            if useShortIdentifier, let sfi = file.shortIdentifier {
                command = CommandAPDU(cla: 0x00, ins: 0xB0, p1: 0x80 | sfi, p2: 0, ne: wanted)
            } else if odd {
                // B1 with the offset in DO 54; the answer is DO 53, whose header takes up to 4 bytes.
                let offsetBytes = [UInt8(offset >> 16 & 0xFF), UInt8(offset >> 8 & 0xFF), UInt8(offset & 0xFF)]
                command = CommandAPDU(cla: 0x00, ins: 0xB1, p1: 0, p2: 0, data: [0x54, 0x03] + offsetBytes, ne: min(size, wanted + 4))
            } else {
                command = CommandAPDU(cla: 0x00, ins: 0xB0, p1: UInt8(offset >> 8), p2: UInt8(offset & 0xFF), ne: wanted)
            }
            statistics.readCommands += 1
            let answer = try statusOf { try channel.send(command) }
            let sw = answer.statusWord
            if sw == .wrongLength || sw.sw1 == 0x6C {
                // Too large for the reader or the chip: the next size down, kept for this connection.
                if stepDown() { continue }
                guard total == nil, !probed, !toEnd else { throw MRTDProtocolError.status(sw, "READ BINARY \(file) at \(offset)") }
                probed = true
                headerProbe = true
                continue
            }
            if useShortIdentifier && sw != .success && sw != .endOfFileReached {
                switch sw {
                case .securityStatusNotSatisfied, .conditionsNotSatisfied: return .protected(sw)
                case .fileNotFound where shortIdentifiersWork == true: return .notFound
                default:
                    // SFI refused, or not known to this chip: SELECT by file identifier (for every
                    // file from now on, unless the chip only lacks this one).
                    if sw != .fileNotFound { shortIdentifiersWork = false }
                    trySFI = false
                    continue
                }
            }
            switch sw {
            case .success, .endOfFileReached: break
            case .securityStatusNotSatisfied where offset == 0, .conditionsNotSatisfied where offset == 0: return .protected(sw)
            case .fileNotFound where offset == 0: return .notFound
            case .incorrectP1P2 where toEnd && offset > 0, .wrongP1P2 where toEnd && offset > 0:
                // Past the end of a file read to its end.
                return .read(data)
            default: throw MRTDProtocolError.status(sw, "READ BINARY \(file) at \(offset)")
            }
            if useShortIdentifier { shortIdentifiersWork = true; selected = true }
            var piece = answer.data
            if odd {
                guard let objects = try? BERTLV.decode(piece, maxDepth: 0), let first = objects.first, first.tag == [0x53] else {
                    throw MRTDProtocolError(.malformed, "READ BINARY B1 \(file) at \(offset): the answer is not a DO 53")
                }
                piece = first.value
            }
            if piece.count > wanted { piece = Array(piece.prefix(wanted)) }
            data += piece
            if total == nil && !toEnd {
                switch Self.objectLength(data) {
                case let .known(length):
                    total = length
                    if data.count > length { data = Array(data.prefix(length)) }
                case .incomplete: break
                case .unknown:
                    // Indefinite length (US EF.SOD, proxmark3 PR #1145) or no TLV: read to the end.
                    toEnd = true
                }
            }
            if piece.isEmpty || sw == .endOfFileReached || (toEnd && piece.count < wanted) {
                if let total, data.count < total {
                    throw MRTDProtocolError(.malformed, "\(file) ends at \(data.count) bytes, its header says \(total)")
                }
                return .read(data)
            }
        }
        return .read(data)
    }

    /// Makes the file's directory current: the MF for EF.CardAccess and its kind, the
    /// application for the rest. A change of directory unselects the file.
    private func enterDirectory(of file: MRTDFile, selected: inout Bool) throws {
        if file.inMasterFile && inApplication == true {
            let answer = try channel.send(CommandAPDU(cla: 0x00, ins: 0xA4, p1: 0x00, p2: 0x0C, data: [0x3F, 0x00]))
            guard answer.statusWord == .success else { throw MRTDProtocolError.status(answer.statusWord, "SELECT MF") }
            inApplication = false
            selected = false
        } else if !file.inMasterFile && inApplication != true {
            try selectApplication()
            selected = false
        }
    }

    /// The next smaller read size that the channel can carry; false when none is left.
    private func stepDown() -> Bool {
        let current = effectiveSizeIndex
        guard current + 1 < options.readSizes.count else { return false }
        sizeIndex = current + 1
        return true
    }

    /// Runs `body`; a bare status word from the chip under secure messaging comes back as an
    /// answer with that status, not as an error, and the next read opens the chip again (the
    /// bare answer ended the session).
    private func statusOf(_ body: () throws -> ResponseAPDU) throws -> ResponseAPDU {
        do {
            return try body()
        } catch let error as MRTDProtocolError where error.kind == .unprotectedStatus {
            reopenBeforeNextRead = true
            return ResponseAPDU(statusWord: error.statusWord ?? .noPreciseDiagnosis)
        } catch TransmitError.extendedLengthUnsupported {
            return ResponseAPDU(statusWord: .wrongLength)
        }
    }

    enum ObjectLength: Equatable { case known(Int), incomplete, unknown }

    /// The total length of the BER-TLV object `bytes` starts with: known once its header is
    /// complete; unknown for an indefinite length or a header that is no BER.
    static func objectLength(_ bytes: [UInt8]) -> ObjectLength {
        guard let first = bytes.first else { return .incomplete }
        var i = 1
        if first & 0x1F == 0x1F {
            while true {
                guard i < bytes.count else { return .incomplete }
                if bytes[i] & 0x80 == 0 { break }
                i += 1
                if i > 3 { return .unknown }
            }
            i += 1
        }
        guard i < bytes.count else { return .incomplete }
        let lengthByte = bytes[i]
        if lengthByte < 0x80 { return .known(i + 1 + Int(lengthByte)) }
        let count = Int(lengthByte & 0x7F)
        guard (1...4).contains(count) else { return .unknown }
        guard bytes.count >= i + 1 + count else { return .incomplete }
        let length = bytes[(i + 1)...(i + count)].reduce(0) { $0 << 8 | Int($1) }
        return .known(i + 1 + count + length)
    }
}
