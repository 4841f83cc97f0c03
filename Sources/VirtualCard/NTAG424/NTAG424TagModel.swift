// An emulated NTAG 424 DNA (NT4H2421Gx): its files and keys, EV2 authentication and secure
// messaging, the native and ISO commands, and SDM mirroring on every read.
import ISO7816
import SUN

/// An NTAG 424 DNA as NXP's datasheet (NT4H2421Gx) and AN12196 describe it, for tests and
/// `apdu emulate --ntag424`: the NDEF application `D2 76 00 00 85 01 01` with its three files
/// (CC E103, NDEF E104 of 256 bytes, proprietary E105), five AES keys (all zero as shipped),
/// AuthenticateEV2First / NonFirst, secure messaging (CmdCtr, session keys, MACs checked
/// before anything is done), GetVersion, GetFileSettings, ChangeFileSettings, ChangeKey,
/// GetCardUID, Read_Sig, ReadData / WriteData, ISO SELECT / READ BINARY / UPDATE BINARY, and
/// Secure Dynamic Messaging: every read of a file with SDM enabled increments SDMReadCtr and
/// mirrors the PICC data (or UID and counter), the encrypted file data and the MAC into the text
/// read.
///
/// The SDM and secure-messaging computations are written here from the datasheet, apart from
/// the library's reader side, so a test of the one against the other can fail.
public final class NTAG424TagModel: CardApplication, @unchecked Sendable {
    public let aid: [UInt8] = [0xD2, 0x76, 0x00, 0x00, 0x85, 0x01, 0x01]
    public let uid: [UInt8]
    /// What Read_Sig answers: NXP's 56-byte ECDSA signature (r ‖ s, secp224r1) over the UID.
    /// All zeros unless given: an emulator holds no NXP private key, so it is a signature only
    /// when a published one is given with its UID (AN12196 Table 30's, say).
    public let originalitySignature: [UInt8]
    /// Random ID (SetConfiguration option 00h bit 1): GetVersion then shows no UID; GetCardUID,
    /// after an authentication, gives it. The reader's UID is the host's (a 4-byte 08 xx xx xx).
    public let randomID: Bool

    /// A file's settings as the tag keeps them (its own representation, not the library's).
    public struct File: Sendable, Hashable {
        public var id: [UInt8]
        public var commMode: UInt8        // 0 plain, 1 MAC, 3 full
        public var read: UInt8, write: UInt8, readWrite: UInt8, change: UInt8
        public var data: [UInt8]
        public var sdmEnabled = false
        public var sdm: [UInt8] = []       // SDMOptions … as ChangeFileSettings gave them
    }

    struct State {
        var keys = [[UInt8]](repeating: [UInt8](repeating: 0, count: 16), count: 5)
        var keyVersions = [UInt8](repeating: 0, count: 5)
        var files: [UInt8: File]
        var selectedFile: UInt8?
        var readCounter = 0
        // Authentication in progress, then the session (EV2 secure messaging, shared with the
        // DESFire emulator). The session's TI and counter outlive `authenticated`, as on the chip:
        // AuthenticateEV2NonFirst continues them.
        var pendingAuth: EV2ChipAuthentication?
        var authenticated: Int?
        var session: EV2ChipSession?
        var versionFrame = 0
        var failedAuthentications = 0
    }
    private let state: Locked<State>
    /// Called with the NDEF file after every change (for `emulate --memory`-style tests).
    public var onChange: (@Sendable ([UInt8]) -> Void)?

    public init(uid: [UInt8] = [0x04, 0x3A, 0x51, 0x6A, 0x71, 0x80, 0x90], keys: [[UInt8]]? = nil,
                originalitySignature: [UInt8] = [UInt8](repeating: 0, count: 56), randomID: Bool = false) {
        self.uid = uid
        self.originalitySignature = originalitySignature
        self.randomID = randomID
        // CC (NT4H2421Gx §8.1.4): CCLEN 0017, mapping 2.0, MLe 0100, MLc 00FF, the NDEF file
        // control TLV (E104, 256 bytes, read and write free) and the proprietary file's (E105, 128
        // bytes, read and write with keys 2 and 3).
        var cc: [UInt8] = [0x00, 0x17, 0x20, 0x01, 0x00, 0x00, 0xFF, 0x04, 0x06, 0xE1, 0x04, 0x01, 0x00, 0x00, 0x00,
                           0x05, 0x06, 0xE1, 0x05, 0x00, 0x80, 0x82, 0x83]
        cc += [UInt8](repeating: 0, count: 32 - cc.count)
        var s = State(files: [
            1: File(id: [0xE1, 0x03], commMode: 0, read: 0xE, write: 0x0, readWrite: 0x0, change: 0x0, data: cc),
            2: File(id: [0xE1, 0x04], commMode: 0, read: 0xE, write: 0xE, readWrite: 0xE, change: 0x0, data: [UInt8](repeating: 0, count: 256)),
            3: File(id: [0xE1, 0x05], commMode: 3, read: 0x2, write: 0x3, readWrite: 0x3, change: 0x0, data: [UInt8](repeating: 0, count: 128)),
        ])
        if let keys { for (i, k) in keys.prefix(5).enumerated() { s.keys[i] = k } }
        state = Locked(s)
    }

    /// Takes `other`'s non-volatile state: files, keys, key versions and the read counter.
    public func restoreState(from other: NTAG424TagModel) {
        let s = other.state.current
        state.withLock { $0.files = s.files; $0.keys = s.keys; $0.keyVersions = s.keyVersions; $0.readCounter = s.readCounter }
    }

    /// The NDEF file's bytes as stored (without SDM mirroring).
    public var ndefFile: [UInt8] { state.current.files[2]!.data }
    public var readCounter: Int { state.current.readCounter }
    public func file(_ number: UInt8) -> File? { state.current.files[number] }
    public var keys: [[UInt8]] { state.current.keys }
    public var keyVersions: [UInt8] { state.current.keyVersions }

    public func select(_ command: CommandAPDU) -> ResponseAPDU {
        state.withLock { $0.selectedFile = nil; $0.authenticated = nil; $0.pendingAuth = nil }
        return ResponseAPDU(statusWord: .success)
    }

    public func deselect() { state.withLock { $0.selectedFile = nil; $0.authenticated = nil; $0.pendingAuth = nil } }

    static let ok = StatusWord(rawValue: 0x9100), more = StatusWord(rawValue: 0x91AF)
    /// A command refused before it is done: the answer to give.
    struct Refusal: Error { let response: ResponseAPDU; init(_ r: ResponseAPDU) { response = r } }
    static func err(_ sw2: UInt8) -> ResponseAPDU { ResponseAPDU(statusWord: StatusWord(0x91, sw2)) }

    public func process(_ command: CommandAPDU) -> ResponseAPDU {
        state.withLock { s in
            if command.cla == 0x90 { return native(command, &s) }
            guard command.cla == 0x00 else { return ResponseAPDU(statusWord: .claNotSupported) }
            switch command.ins {
            case 0xA4: return isoSelect(command, &s)
            case 0xB0: return isoRead(command, &s)
            case 0xD6: return isoUpdate(command, &s)
            default: return ResponseAPDU(statusWord: .insNotSupported)
            }
        }
    }

    // MARK: ISO 7816-4

    func isoSelect(_ c: CommandAPDU, _ s: inout State) -> ResponseAPDU {
        guard c.p1 == 0x00 || c.p1 == 0x02, c.data.count == 2 else { return ResponseAPDU(statusWord: .incorrectP1P2) }
        guard let (n, _) = s.files.first(where: { $0.value.id == c.data }) else { return ResponseAPDU(statusWord: .fileNotFound) }
        s.selectedFile = n
        return ResponseAPDU(statusWord: .success)
    }

    func isoRead(_ c: CommandAPDU, _ s: inout State) -> ResponseAPDU {
        guard let n = s.selectedFile, let f = s.files[n] else { return ResponseAPDU(statusWord: StatusWord(rawValue: 0x6986)) }
        // ISO READ BINARY serves plain files readable without a key (or with the key in use).
        guard f.commMode == 0, f.read == 0xE || f.readWrite == 0xE || s.authenticated.map({ UInt8($0) == f.read || UInt8($0) == f.readWrite }) == true else {
            return ResponseAPDU(statusWord: .securityStatusNotSatisfied)
        }
        let offset = Int(c.p1 & 0x7F) << 8 | Int(c.p2)
        let content = offset == 0 ? served(n, &s) : servedWithoutCounting(n, s)
        guard offset <= content.count else { return ResponseAPDU(statusWord: .wrongP1P2) }
        let ne = c.ne ?? 256
        let end = min(content.count, offset + ne)
        return ResponseAPDU(data: Array(content[offset..<end]), statusWord: end - offset < ne ? .endOfFileReached : .success)
    }

    func isoUpdate(_ c: CommandAPDU, _ s: inout State) -> ResponseAPDU {
        guard let n = s.selectedFile, var f = s.files[n] else { return ResponseAPDU(statusWord: StatusWord(rawValue: 0x6986)) }
        guard f.commMode == 0, f.write == 0xE || f.readWrite == 0xE else { return ResponseAPDU(statusWord: .securityStatusNotSatisfied) }
        let offset = Int(c.p1 & 0x7F) << 8 | Int(c.p2)
        guard offset + c.data.count <= f.data.count else { return ResponseAPDU(statusWord: .wrongP1P2) }
        f.data.replaceSubrange(offset..<(offset + c.data.count), with: c.data)
        s.files[n] = f
        if n == 2 { onChange?(f.data) }
        return ResponseAPDU(statusWord: .success)
    }

    // MARK: SDM

    /// The file as a read serves it: SDM mirrors applied and SDMReadCtr incremented first.
    func served(_ n: UInt8, _ s: inout State) -> [UInt8] {
        if s.files[n]?.sdmEnabled == true { s.readCounter = min(s.readCounter + 1, 0xFF_FFFF) }
        return servedWithoutCounting(n, s)
    }

    func servedWithoutCounting(_ n: UInt8, _ s: State) -> [UInt8] {
        guard let f = s.files[n], f.sdmEnabled, let sdm = Self.parseSDM(f.sdm) else { return s.files[n]?.data ?? [] }
        var out = f.data
        let ctr = [UInt8(s.readCounter & 0xFF), UInt8(s.readCounter >> 8 & 0xFF), UInt8(s.readCounter >> 16)]
        func put(_ text: [UInt8], at offset: Int?) {
            guard let offset, offset + text.count <= out.count else { return }
            out.replaceSubrange(offset..<(offset + text.count), with: text)
        }
        let uidOn = sdm.options & 0x80 != 0, ctrOn = sdm.options & 0x40 != 0
        let data = (uidOn ? uid : []) + (ctrOn ? ctr : [])
        if sdm.metaRead == 0xE {
            if uidOn { put(Self.ascii(uid), at: sdm.uidOffset) }
            if ctrOn { put(Self.ascii(ctr.reversed()), at: sdm.counterOffset) }
        } else if sdm.metaRead < 5 {
            var picc: [UInt8] = [(uidOn ? 0x80 : 0) | (ctrOn ? 0x40 : 0) | (uidOn ? 0x07 : 0)] + data
            while picc.count < 16 { picc.append(UInt8.random(in: 0...255)) }
            put(Self.ascii(try! (try! AES128(key: s.keys[Int(sdm.metaRead)])).cbcEncrypt(picc)), at: sdm.piccOffset)
        }
        if sdm.fileRead < 5 {
            let fileKey = try! AES128(key: s.keys[Int(sdm.fileRead)])
            if sdm.options & 0x10 != 0, let at = sdm.encOffset, let length = sdm.encLength, at + length <= out.count {
                // The plaintext is what the file holds there (its first length/2 bytes), encrypted
                // with the session ENC key, IV = E(K, SDMReadCtr ‖ 0¹³).
                let sesENC = try! AES128(key: fileKey.cmac(Self.vector([0xC3, 0x3C, 0x00, 0x01, 0x00, 0x80], data)))
                let plain = Array(f.data[at..<(at + length / 2)])
                let iv = sesENC.encrypt(block: ctr + [UInt8](repeating: 0, count: 13))
                if plain.count % 16 == 0 { put(Self.ascii(try! sesENC.cbcEncrypt(plain, iv: iv)), at: at) }
            }
            if let macAt = sdm.macOffset, let inputAt = sdm.macInputOffset, inputAt <= macAt, macAt + 16 <= out.count {
                let sesMAC = try! AES128(key: fileKey.cmac(Self.vector([0x3C, 0xC3, 0x00, 0x01, 0x00, 0x80], data)))
                let full = sesMAC.cmac(Array(out[inputAt..<macAt]))
                put(Self.ascii(stride(from: 1, to: 16, by: 2).map { full[$0] }), at: macAt)
            }
        }
        return out
    }

    static func vector(_ label: [UInt8], _ data: [UInt8]) -> [UInt8] {
        var v = label + data
        while v.count % 16 != 0 { v.append(0) }
        return v
    }

    static func ascii(_ bytes: [UInt8]) -> [UInt8] { Array(Hex.encode(bytes).utf8) }

    /// SDM settings as ChangeFileSettings gives them (NT4H2421Gx §10.7.1), read here apart from
    /// the library's encoder.
    struct SDM {
        var options: UInt8, counterRetrieval: UInt8, metaRead: UInt8, fileRead: UInt8
        var uidOffset: Int?, counterOffset: Int?, piccOffset: Int?, macInputOffset: Int?, encOffset: Int?, encLength: Int?, macOffset: Int?, limit: Int?
        var length: Int
    }

    static func parseSDM(_ b: [UInt8]) -> SDM? {
        guard b.count >= 3 else { return nil }
        var p = 3
        func le() -> Int? {
            guard p + 3 <= b.count else { return nil }
            defer { p += 3 }
            return Int(b[p]) | Int(b[p + 1]) << 8 | Int(b[p + 2]) << 16
        }
        var s = SDM(options: b[0], counterRetrieval: b[1] & 0x0F, metaRead: b[2] >> 4, fileRead: b[2] & 0x0F, length: 0)
        if s.metaRead == 0xE {
            if s.options & 0x80 != 0 { guard let v = le() else { return nil }; s.uidOffset = v }
            if s.options & 0x40 != 0 { guard let v = le() else { return nil }; s.counterOffset = v }
        } else if s.metaRead < 5 {
            guard let v = le() else { return nil }
            s.piccOffset = v
        }
        if s.fileRead != 0xF {
            guard let a = le() else { return nil }
            s.macInputOffset = a
            if s.options & 0x10 != 0 { guard let o = le(), let l = le() else { return nil }; (s.encOffset, s.encLength) = (o, l) }
            guard let m = le() else { return nil }
            s.macOffset = m
        }
        if s.options & 0x20 != 0 { guard let v = le() else { return nil }; s.limit = v }
        s.length = p
        return s
    }

    // MARK: Native commands

    func native(_ c: CommandAPDU, _ s: inout State) -> ResponseAPDU {
        switch c.ins {
        case 0x60:
            s.versionFrame = 1
            return ResponseAPDU(data: [0x04, 0x04, 0x02, 0x30, 0x00, 0x11, 0x05], statusWord: Self.more)
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
        s.files[header[0]] = f
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
        guard Array(data[17..<21]) == Self.crc32(new) else { return Self.err(0x1E) }
        s.keys[number] = new
        s.keyVersions[number] = data[16]
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

    /// DESFire's CRC32 of a changed key: reflected IEEE polynomial, preset FFFFFFFF, no final
    /// inversion, least significant byte first (written here apart from the library's).
    static func crc32(_ data: [UInt8]) -> [UInt8] {
        var crc: UInt32 = 0xFFFF_FFFF
        for b in data {
            crc ^= UInt32(b)
            for _ in 0..<8 { crc = (crc >> 1) ^ (0xEDB8_8320 & (0 &- (crc & 1))) }
        }
        return withUnsafeBytes(of: crc.littleEndian, Array.init)
    }
}
