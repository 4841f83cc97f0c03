// An emulated GlobalPlatform card manager (Issuer Security Domain), written from Card
// Specification 2.3 and Amendment D apart from the GlobalPlatform module: its own session
// keys, cryptograms, MAC checks and encryption, so a test of the library against it is a test
// of two readings of the specification. It keeps a registry, life cycles, privileges, a
// failed-authentication counter that locks the card after N (10, as real cards), PUT KEY, and
// applets that answer SELECT; CAP files are recorded (package and applets), never run.
import CardCrypto
import ISO7816

public final class CardManagerModel: EmulatedCard, @unchecked Sendable {
    /// The secure channel protocol the card offers.
    public enum SCP: String, Sendable, CaseIterable {
        case scp02, scp03
    }

    /// Ways the card misbehaves, for the hostile matrix.
    public enum Hostile: String, Sendable, CaseIterable {
        /// INITIALIZE UPDATE's cryptogram made with other keys.
        case wrongCryptogram = "wrong-cryptogram"
        /// GET STATUS answers 63 10 (more data) forever.
        case endlessMoreData = "endless-more-data"
        /// GET STATUS's answer cut inside an entry.
        case truncatedRegistry = "truncated-registry"
        /// LOAD blocks refused with 6A 80.
        case refuseLoad = "refuse-load"
        /// Speaks only the legacy GET STATUS format (6A 86 to P2 02).
        case legacyOnly = "legacy-only"
    }

    public struct KeySet: Sendable, Hashable {
        public var version: UInt8
        public var enc: [UInt8], mac: [UInt8], dek: [UInt8]
        public init(version: UInt8, enc: [UInt8], mac: [UInt8], dek: [UInt8]) {
            self.version = version
            self.enc = enc
            self.mac = mac
            self.dek = dek
        }
    }

    public struct Entry: Sendable, Hashable {
        public enum Kind: Sendable, Hashable { case isd, securityDomain, application, loadFile }
        public var kind: Kind
        public var aid: [UInt8]
        public var lifeCycle: UInt8
        public var privileges: UInt8
        public var loadFile: [UInt8]?
        public var modules: [[UInt8]] = []
        public var version: [UInt8]?
    }

    public let scp: SCP
    /// The i parameter: 15 (SCP02) or 70 (SCP03) unless given.
    public let i: UInt8
    public let hostile: Hostile?
    public let maxFailures: Int
    /// GET STATUS entries per answer before 63 10.
    public let pageSize: Int
    public static let isdAID: [UInt8] = [0xA0, 0x00, 0x00, 0x01, 0x51, 0x00, 0x00, 0x00]
    public let atr: [UInt8] = [0x3B, 0x8C, 0x80, 0x01] + Array("GP-EMULATOR!".utf8) + [0x00]

    struct Session {
        var level: UInt8 = 0
        var authenticated = false
        var sEnc: [UInt8] = [], sMac: [UInt8] = [], sRmac: [UInt8] = [], sDek: [UInt8] = []
        var hostChallenge: [UInt8] = [], cardChallenge: [UInt8] = []
        var chaining: [UInt8] = []
        /// SCP02: the last R-MAC sent (zeros before the first).
        var rmacChaining = [UInt8](repeating: 0, count: 8)
        var counter = 0
        var macs = 0
        var keyVersion: UInt8 = 0
    }

    public struct State: Sendable {
        public var keySets: [KeySet]
        public var entries: [Entry]
        public var failedAuthentications = 0
        public var externalAuthenticates = 0
        public var cardLifeCycle: UInt8 = 0x0F
        public var sequenceCounter = 1
        /// INS bytes received, in order.
        public var received: [UInt8] = []
        /// LOAD blocks of the load file being loaded, and its AID.
        public var loading: [UInt8]?
        public var loadData: [UInt8] = []
        public var loadBlocks = 0
        var session: Session? = nil
        var selected: [UInt8]? = nil
        var statusCursor = 0
    }

    private let state: Locked<State>
    public var current: State { state.current }

    /// A card with one key set, the ISD SECURED, an empty registry but for the ISD.
    public init(_ scp: SCP = .scp03, keys: KeySet? = nil, i: UInt8? = nil, maxFailures: Int = 10, pageSize: Int = 8, hostile: Hostile? = nil) {
        self.scp = scp
        self.i = i ?? (scp == .scp02 ? 0x15 : 0x70)
        self.maxFailures = maxFailures
        self.pageSize = max(1, pageSize)
        self.hostile = hostile
        let test = Array<UInt8>(0x40...0x4F)
        let keySet = keys ?? KeySet(version: scp == .scp02 ? 0x20 : 0x30, enc: test, mac: test, dek: test)
        state = Locked(State(keySets: [keySet], entries: [Entry(kind: .isd, aid: Self.isdAID, lifeCycle: 0x0F, privileges: 0x9E)]))
    }

    /// Adds a load file and applications made from it, as if installed before.
    public func preinstall(package: [UInt8], modules: [[UInt8]], instances: [[UInt8]]) {
        state.withLock { s in
            s.entries.append(Entry(kind: .loadFile, aid: package, lifeCycle: 0x01, privileges: 0, modules: modules, version: [1, 0]))
            for aid in instances { s.entries.append(Entry(kind: .application, aid: aid, lifeCycle: 0x07, privileges: 0, loadFile: package)) }
        }
    }

    public func reset() {
        state.withLock { s in
            s.session = nil
            s.selected = Self.isdAID
        }
    }

    public func process(_ apdu: [UInt8]) -> [UInt8] {
        state.withLock { s in answer(apdu, &s) }
    }

    private static let ok: [UInt8] = [0x90, 0x00]
    private func sw(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xFF)] }

    private func answer(_ apdu: [UInt8], _ s: inout State) -> [UInt8] {
        guard let command = try? CommandAPDU(bytes: apdu) else { return sw(0x6700) }
        s.received.append(command.ins)
        if command.ins == 0xA4, command.p1 == 0x04 { return select(command, &s) }
        if let selected = s.selected, selected != Self.isdAID { return sw(0x6D00) }
        if s.selected == nil { s.selected = Self.isdAID }
        switch command.ins {
        case 0xCA where command.cla & 0x04 == 0: return getData(command, s)
        case 0x50: return initializeUpdate(command, &s)
        case 0x82: return externalAuthenticate(command, &s)
        default: break
        }
        // Every other command of the card manager needs an authenticated session (§10.6).
        guard var session = s.session, session.authenticated else { return sw(0x6982) }
        guard let clear = unwrap(command, &session) else {
            s.session = nil
            return sw(0x6982)
        }
        s.session = session
        let (data, status) = manage(clear, &s)
        return wrapAnswer(data, status, to: clear, &s)
    }

    // MARK: SELECT and GET DATA

    private func select(_ command: CommandAPDU, _ s: inout State) -> [UInt8] {
        s.session = nil
        let aid = command.data.isEmpty ? Self.isdAID : command.data
        if s.cardLifeCycle == 0xFF { return sw(0x6A82) }
        if aid == Self.isdAID {
            s.selected = aid
            let fci = tlv([0x6F], tlv([0x84], aid) + tlv([0xA5], tlv([0x9F, 0x6E], [0x06, 0x10]) + tlv([0x9F, 0x65], [0xFF])))
            return fci + Self.ok
        }
        // A locked card selects its ISD only (§5.1.1.4).
        guard s.cardLifeCycle != 0x7F,
              let entry = s.entries.first(where: { ($0.kind == .application || $0.kind == .securityDomain) && aid == $0.aid }) else { return sw(0x6A82) }
        guard entry.lifeCycle & 0x80 == 0, entry.lifeCycle & 0x07 == 0x07 else { return sw(0x6999) }
        s.selected = entry.aid
        return Self.ok
    }

    private func getData(_ command: CommandAPDU, _ s: State) -> [UInt8] {
        switch UInt16(command.p1) << 8 | UInt16(command.p2) {
        case 0x9F7F:
            let cplc: [UInt8] = [0x47, 0x90, 0xD3, 0x21, 0x47, 0x91, 0x62, 0x01, 0x00, 0x01, 0x62, 0x01, 0x12, 0x34, 0x56, 0x78, 0x00, 0x01]
                + [UInt8](repeating: 0, count: 24)
            return tlv([0x9F, 0x7F], cplc) + Self.ok
        case 0x0066:
            let gp: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xFC, 0x6B]
            let body = tlv([0x06], gp + [0x01]) + tlv([0x60], tlv([0x06], gp + [0x02, 0x02, 0x03, 0x01]))
                + tlv([0x63], tlv([0x06], gp + [0x03])) + tlv([0x64], tlv([0x06], gp + [0x04, scp == .scp02 ? 2 : 3, i]))
            return tlv([0x66], tlv([0x73], body)) + Self.ok
        case 0x00E0:
            var body: [UInt8] = []
            for set in s.keySets {
                let type: UInt8 = scp == .scp02 ? 0x80 : 0x88
                for (id, key) in [(UInt8(1), set.enc), (2, set.mac), (3, set.dek)] { body += tlv([0xC0], [id, set.version, type, UInt8(key.count)]) }
            }
            return tlv([0xE0], body) + Self.ok
        case 0x0042: return tlv([0x42], [0x91, 0x23, 0x45]) + Self.ok
        case 0x0045: return tlv([0x45], [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A]) + Self.ok
        default: return sw(0x6A88)
        }
    }

    // MARK: authentication

    private var keyLength: Int { state.current.keySets.first?.enc.count ?? 16 }

    private func initializeUpdate(_ command: CommandAPDU, _ s: inout State) -> [UInt8] {
        s.session = nil
        if s.cardLifeCycle == 0x7F || s.failedAuthentications >= maxFailures { return sw(0x6983) }
        guard command.data.count == 8 else { return sw(0x6700) }
        guard let set = command.p1 == 0 ? s.keySets.first : s.keySets.first(where: { $0.version == command.p1 }) else { return sw(0x6A88) }
        var session = Session()
        session.keyVersion = set.version
        session.hostChallenge = command.data
        let divData: [UInt8] = [0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99]
        var body = divData + [set.version]
        do {
            let cardKeys = hostile == .wrongCryptogram ? KeySet(version: set.version, enc: set.enc.map { $0 ^ 0x5A }, mac: set.mac.map { $0 ^ 0x5A }, dek: set.dek) : set
            if scp == .scp02 {
                let seq = [UInt8(s.sequenceCounter >> 8), UInt8(s.sequenceCounter & 0xFF)]
                s.sequenceCounter += 1
                session.cardChallenge = secureRandomBytes(6)
                func derive(_ key: [UInt8], _ c: [UInt8]) throws -> [UInt8] { try BlockCipher(.tdes2, key: key).encrypt(cbc: c + seq + [UInt8](repeating: 0, count: 12)) }
                session.sEnc = try derive(cardKeys.enc, [0x01, 0x82])
                session.sMac = try derive(cardKeys.mac, [0x01, 0x01])
                session.sRmac = try derive(cardKeys.mac, [0x01, 0x02])
                session.sDek = try derive(cardKeys.dek, [0x01, 0x81])
                let cryptogram = try desMAC(session.sEnc, session.hostChallenge + seq + session.cardChallenge)
                body += [0x02] + seq + session.cardChallenge + cryptogram
                session.chaining = [UInt8](repeating: 0, count: 8)
                session.cardChallenge = seq + session.cardChallenge
            } else {
                let seq = [UInt8(s.sequenceCounter >> 16), UInt8(s.sequenceCounter >> 8 & 0xFF), UInt8(s.sequenceCounter & 0xFF)]
                s.sequenceCounter += 1
                // Amendment D §6.2.2.1: a pseudo-random challenge from the counter and the AID.
                session.cardChallenge = i & 0x10 != 0 ? try kdf(cardKeys.enc, 0x02, seq + Self.isdAID, 64) : secureRandomBytes(8)
                let context = session.hostChallenge + session.cardChallenge
                session.sEnc = try kdf(cardKeys.enc, 0x04, context, cardKeys.enc.count * 8)
                session.sMac = try kdf(cardKeys.mac, 0x06, context, cardKeys.mac.count * 8)
                session.sRmac = try kdf(cardKeys.mac, 0x07, context, cardKeys.mac.count * 8)
                session.sDek = cardKeys.dek
                let cryptogram = try kdf(session.sMac, 0x00, context, 64)
                body += [0x03, i] + session.cardChallenge + cryptogram + (i & 0x10 != 0 ? seq : [])
                session.chaining = [UInt8](repeating: 0, count: 16)
            }
        } catch {
            return sw(0x6F00)
        }
        s.session = session
        return body + Self.ok
    }

    private func externalAuthenticate(_ command: CommandAPDU, _ s: inout State) -> [UInt8] {
        s.externalAuthenticates += 1
        guard var session = s.session, !session.authenticated, command.cla == 0x84, command.data.count == 16 else {
            s.session = nil
            return sw(0x6985)
        }
        let host = Array(command.data.prefix(8))
        let expected: [UInt8]
        do {
            if scp == .scp02 {
                let seq = Array(session.cardChallenge.prefix(2)), challenge = Array(session.cardChallenge.dropFirst(2))
                expected = try desMAC(session.sEnc, seq + challenge + session.hostChallenge)
            } else {
                expected = try kdf(session.sMac, 0x01, session.hostChallenge + session.cardChallenge, 64)
            }
        } catch { return sw(0x6F00) }
        let macOK = (try? verifyMAC(command, &session)) == true
        guard macOK, constantTimeEquals(host, expected) else {
            s.failedAuthentications += 1
            if s.failedAuthentications >= maxFailures { s.cardLifeCycle = 0x7F }
            s.session = nil
            return sw(0x6300)
        }
        let level = command.p1
        // R-MAC where i's b6 says so (SCP02 i=35 or 75; SCP03 i=30, 70); R-ENCRYPTION in SCP03 only.
        let offered: UInt8 = scp == .scp02 ? (i & 0x20 != 0 ? 0x13 : 0x03) : (i & 0x20 != 0 ? (i & 0x40 != 0 ? 0x33 : 0x13) : 0x03)
        guard level & ~offered == 0, level & 0x01 != 0 || level == 0 else {
            s.session = nil
            return sw(0x6A86)
        }
        session.level = level
        session.authenticated = true
        s.failedAuthentications = 0
        s.session = session
        return Self.ok
    }

    // MARK: the session's own crypto

    private func kdf(_ key: [UInt8], _ constant: UInt8, _ context: [UInt8], _ bits: Int) throws -> [UInt8] {
        let algorithm: CipherAlgorithm = key.count == 16 ? .aes128 : key.count == 24 ? .aes192 : .aes256
        let mac = try CMAC(algorithm, key: key)
        var out: [UInt8] = []
        var counter: UInt8 = 1
        while out.count < bits / 8 {
            out += try mac.mac([UInt8](repeating: 0, count: 11) + [constant, 0x00, UInt8(bits >> 8), UInt8(bits & 0xFF), counter] + context)
            counter += 1
        }
        return Array(out.prefix(bits / 8))
    }

    /// Full triple-DES CBC MAC with a zero ICV (the SCP02 cryptograms, E.4.2).
    private func desMAC(_ key: [UInt8], _ data: [UInt8]) throws -> [UInt8] {
        Array(try BlockCipher(.tdes2, key: key).encrypt(cbc: Padding.pad(data, blockSize: 8)).suffix(8))
    }

    private func aes(_ key: [UInt8]) throws -> BlockCipher {
        try BlockCipher(key.count == 16 ? .aes128 : key.count == 24 ? .aes192 : .aes256, key: key)
    }

    /// Checks the C-MAC of a command (CLA 84) and moves the chaining value.
    private func verifyMAC(_ command: CommandAPDU, _ session: inout Session) throws -> Bool {
        let n = 8
        guard command.cla & 0x04 != 0, command.data.count >= n else { return false }
        let body = Array(command.data.dropLast(n)), mac = Array(command.data.suffix(n))
        let header = [(command.cla & 0xF0) | 0x04, command.ins, command.p1, command.p2]
        if scp == .scp02 {
            var icv = session.chaining
            if i & 0x10 != 0, session.macs > 0 { icv = try BlockCipher(.des, key: Array(session.sMac.prefix(8))).encrypt(ecb: icv) }
            // SCP02 MACs the clear data: decipher first when the data is enciphered.
            var clear = body
            if session.level & 0x02 != 0, !body.isEmpty {
                guard let plain = Padding.unpad(try BlockCipher(.tdes2, key: session.sEnc).decrypt(cbc: body), blockSize: 8) else { return false }
                clear = plain
            }
            let padded = Padding.pad(header + [UInt8(clear.count + 8)] + clear, blockSize: 8)
            let k1 = try BlockCipher(.des, key: Array(session.sMac.prefix(8))), k2 = try BlockCipher(.des, key: Array(session.sMac.suffix(8)))
            let h = Array(try k1.encrypt(cbc: padded, iv: icv).suffix(8))
            let expected = try k1.encrypt(ecb: try k2.decrypt(ecb: h))
            session.macs += 1
            guard constantTimeEquals(mac, expected) else { return false }
            session.chaining = expected
            return true
        }
        let lc = command.data.count
        let lcBytes: [UInt8] = lc > 255 || command.isExtended ? [0, UInt8(lc >> 8), UInt8(lc & 0xFF)] : [UInt8(lc)]
        let full = try CMAC(aes(session.sMac).algorithm, key: session.sMac).mac(session.chaining + header + lcBytes + body)
        guard constantTimeEquals(mac, Array(full.prefix(n))) else { return false }
        session.chaining = full
        return true
    }

    /// The command in the clear, its MAC checked; nil when it does not check out.
    private func unwrap(_ command: CommandAPDU, _ session: inout Session) -> CommandAPDU? {
        guard session.level & 0x01 != 0 else { return command }
        guard (try? verifyMAC(command, &session)) == true else { return nil }
        var data = Array(command.data.dropLast(8))
        if session.level & 0x02 != 0 {
            if scp == .scp02 {
                if !data.isEmpty {
                    guard let plain = try? BlockCipher(.tdes2, key: session.sEnc).decrypt(cbc: data), let clear = Padding.unpad(plain, blockSize: 8) else { return nil }
                    data = clear
                }
            } else {
                session.counter += 1
                if !data.isEmpty {
                    var block = [UInt8](repeating: 0, count: 16)
                    var n = session.counter
                    for k in stride(from: 15, through: 8, by: -1) { block[k] = UInt8(n & 0xFF); n >>= 8 }
                    guard let cipher = try? aes(session.sEnc), let icv = try? cipher.encrypt(ecb: block),
                          let plain = try? cipher.decrypt(cbc: data, iv: icv), let clear = Padding.unpad(plain, blockSize: 16) else { return nil }
                    data = clear
                }
            }
        }
        return CommandAPDU(cla: command.cla & ~0x04, ins: command.ins, p1: command.p1, p2: command.p2, data: data, ne: command.ne)
    }

    /// The answer with R-MAC and R-ENCRYPTION at the session's level.
    private func wrapAnswer(_ data: [UInt8], _ status: UInt16, to command: CommandAPDU, _ s: inout State) -> [UInt8] {
        let status = sw(status)
        if scp == .scp02 { return wrapAnswerSCP02(data, status, to: command, &s) }
        guard scp == .scp03, var session = s.session, session.level & 0x10 != 0,
              status == Self.ok || status[0] == 0x62 || status[0] == 0x63 else { return data + status }
        var body = data
        do {
            if session.level & 0x20 != 0, !body.isEmpty {
                var block = [UInt8](repeating: 0, count: 16)
                var n = session.counter
                for k in stride(from: 15, through: 8, by: -1) { block[k] = UInt8(n & 0xFF); n >>= 8 }
                block[0] = 0x80
                let cipher = try aes(session.sEnc)
                body = try cipher.encrypt(cbc: Padding.pad(body, blockSize: 16), iv: try cipher.encrypt(ecb: block))
            }
            let mac = try CMAC(aes(session.sRmac).algorithm, key: session.sRmac).mac(session.chaining + body + status)
            s.session = session
            session.macs += 0
            return body + mac.prefix(8) + status
        } catch { return sw(0x6F00) }
    }

    /// SCP02's R-MAC (Card Specification 2.2 E.4.5) on every answer of an R-MAC session, error
    /// words included: single DES CBC under the R-MAC session key's first half from the last
    /// R-MAC, the final block through triple DES, over the command in the clear (CLA without its
    /// b3-b1, INS, P1, P2, Lc, data) and the answer (its data's length, data, status word).
    private func wrapAnswerSCP02(_ data: [UInt8], _ status: [UInt8], to command: CommandAPDU, _ s: inout State) -> [UInt8] {
        guard var session = s.session, session.level & 0x10 != 0 else { return data + status }
        let input = [command.cla & 0xF8, command.ins, command.p1, command.p2, UInt8(command.data.count & 0xFF)] + command.data
            + [UInt8(data.count & 0xFF)] + data + status
        do {
            let padded = Padding.pad(input, blockSize: 8)
            let k1 = try BlockCipher(.des, key: Array(session.sRmac.prefix(8))), k2 = try BlockCipher(.des, key: Array(session.sRmac.suffix(8)))
            let h = Array(try k1.encrypt(cbc: padded, iv: session.rmacChaining).suffix(8))
            let mac = try k1.encrypt(ecb: try k2.decrypt(ecb: h))
            session.rmacChaining = mac
            s.session = session
            return data + mac + status
        } catch { return sw(0x6F00) }
    }

    // MARK: card management

    private func manage(_ command: CommandAPDU, _ s: inout State) -> ([UInt8], UInt16) {
        switch command.ins {
        case 0xCA: let r = getData(command, s); return (Array(r.dropLast(2)), UInt16(r[r.count - 2]) << 8 | UInt16(r[r.count - 1]))
        case 0xF2: return getStatus(command, &s)
        case 0xE4: return delete(command, &s)
        case 0xE6: return install(command, &s)
        case 0xE8: return load(command, &s)
        case 0xF0: return setStatus(command, &s)
        case 0xD8: return putKey(command, &s)
        default: return ([], 0x6D00)
        }
    }

    private func getStatus(_ command: CommandAPDU, _ s: inout State) -> ([UInt8], UInt16) {
        let tagFormat = command.p2 & 0x02 != 0
        if tagFormat, hostile == .legacyOnly { return ([], 0x6A86) }
        let kinds: [Entry.Kind]
        switch command.p1 {
        case 0x80: kinds = [.isd]
        case 0x40: kinds = [.securityDomain, .application]
        case 0x20, 0x10: kinds = [.loadFile]
        default: return ([], 0x6A86)
        }
        if command.p2 & 0x01 == 0 { s.statusCursor = 0 }
        if hostile == .endlessMoreData { return (entryBytes(s.entries[0], tagFormat: tagFormat, modules: false), 0x6310) }
        let matching = s.entries.filter { kinds.contains($0.kind) }
        if matching.isEmpty { return ([], 0x6A88) }
        let page = matching.dropFirst(s.statusCursor).prefix(pageSize)
        s.statusCursor += page.count
        var out = page.flatMap { entryBytes($0, tagFormat: tagFormat, modules: command.p1 == 0x10) }
        if hostile == .truncatedRegistry { out = Array(out.dropLast(3)) }
        return (out, s.statusCursor < matching.count ? 0x6310 : 0x9000)
    }

    private func entryBytes(_ e: Entry, tagFormat: Bool, modules: Bool) -> [UInt8] {
        if tagFormat {
            var body = tlv([0x4F], e.aid) + tlv([0x9F, 0x70], [e.lifeCycle])
            if e.kind != .loadFile { body += tlv([0xC5], [e.privileges, 0, 0]) }
            if let lf = e.loadFile { body += tlv([0xC4], lf) }
            if let v = e.version { body += tlv([0xCE], v) }
            body += tlv([0xCC], Self.isdAID)
            if modules { for m in e.modules { body += tlv([0x84], m) } }
            return tlv([0xE3], body)
        }
        var out = [UInt8(e.aid.count)] + e.aid + [e.lifeCycle, e.kind == .loadFile ? 0 : e.privileges]
        if modules {
            out.append(UInt8(e.modules.count))
            for m in e.modules { out += [UInt8(m.count)] + m }
        }
        return out
    }

    private func delete(_ command: CommandAPDU, _ s: inout State) -> ([UInt8], UInt16) {
        guard command.data.count >= 2, command.data[0] == 0x4F, Int(command.data[1]) + 2 <= command.data.count else { return ([], 0x6A80) }
        let aid = Array(command.data[2..<(2 + Int(command.data[1]))])
        if aid == Self.isdAID { return ([], 0x6985) }
        if s.loading == aid {
            s.loading = nil
            s.loadData = []
            return ([0x00], 0x9000)
        }
        guard let entry = s.entries.first(where: { $0.aid == aid }) else { return ([], 0x6A88) }
        let related = command.p2 & 0x80 != 0
        if entry.kind == .loadFile {
            let instances = s.entries.filter { $0.loadFile == aid }
            if !instances.isEmpty && !related { return ([], 0x6985) }
            s.entries.removeAll { $0.aid == aid || $0.loadFile == aid }
        } else {
            s.entries.removeAll { $0.aid == aid }
        }
        return ([0x00], 0x9000)
    }

    private func install(_ command: CommandAPDU, _ s: inout State) -> ([UInt8], UInt16) {
        var fields: [[UInt8]] = []
        var i = 0
        let d = command.data
        while i < d.count {
            let n = Int(d[i])
            guard i + 1 + n <= d.count else { return ([], 0x6A80) }
            fields.append(Array(d[(i + 1)..<(i + 1 + n)]))
            i += 1 + n
        }
        if command.p1 & 0x02 != 0 {
            // [for load]: load file AID, SD AID, hash, parameters, token.
            guard let aid = fields.first, (5...16).contains(aid.count) else { return ([], 0x6A80) }
            if s.entries.contains(where: { $0.aid == aid }) { return ([], 0x6985) }
            s.loading = aid
            s.loadData = []
            s.loadBlocks = 0
            return ([0x00], 0x9000)
        }
        if command.p1 & 0x04 != 0 {
            // [for install (and make selectable)]: load file, module, application, privileges, parameters, token.
            guard fields.count >= 5, let package = s.entries.first(where: { $0.kind == .loadFile && $0.aid == fields[0] }) else { return ([], 0x6A88) }
            guard package.modules.contains(fields[1]) else { return ([], 0x6A88) }
            let aid = fields[2]
            guard (5...16).contains(aid.count), !s.entries.contains(where: { $0.aid == aid }) else { return ([], 0x6985) }
            let privileges = fields[3].first ?? 0
            s.entries.append(Entry(kind: privileges & 0x80 != 0 ? .securityDomain : .application, aid: aid,
                                   lifeCycle: command.p1 & 0x08 != 0 ? 0x07 : 0x03, privileges: privileges, loadFile: package.aid))
            return ([0x00], 0x9000)
        }
        return ([], 0x6A86)
    }

    private func load(_ command: CommandAPDU, _ s: inout State) -> ([UInt8], UInt16) {
        guard let aid = s.loading else { return ([], 0x6985) }
        if hostile == .refuseLoad { return ([], 0x6A80) }
        guard Int(command.p2) == s.loadBlocks else { return ([], 0x6A86) }
        s.loadBlocks += 1
        s.loadData += command.data
        guard command.p1 & 0x80 != 0 else { return ([], 0x9000) }
        // The last block: C4 L load file data; record the package and its applets.
        guard let file = try? BERTLV.decode(s.loadData).first(where: { $0.tag == [0xC4] }) else { return ([], 0x6A80) }
        let (package, applets, ok) = Self.recordLoadFile(file.value)
        guard ok, package == aid else { return ([], 0x6A80) }
        s.entries.append(Entry(kind: .loadFile, aid: aid, lifeCycle: 0x01, privileges: 0, modules: applets, version: nil))
        s.loading = nil
        s.loadData = []
        return ([0x00], 0x9000)
    }

    /// The package AID (Header component, tag 1) and the applet AIDs (Applet component, tag 3)
    /// of a load file; components are u1 tag, u2 size.
    static func recordLoadFile(_ data: [UInt8]) -> ([UInt8], [[UInt8]], Bool) {
        var package: [UInt8] = [], applets: [[UInt8]] = []
        var i = 0
        while i + 3 <= data.count {
            let tag = data[i], size = Int(data[i + 1]) << 8 | Int(data[i + 2])
            guard i + 3 + size <= data.count else { return ([], [], false) }
            let body = Array(data[(i + 3)..<(i + 3 + size)])
            if tag == 1, body.count >= 10 {
                // magic(4) minor major flags package: minor major AID_length AID
                let n = Int(body[9])
                if body.count >= 10 + n { package = Array(body[10..<(10 + n)]) }
            }
            if tag == 3, let count = body.first {
                var j = 1
                for _ in 0..<count {
                    guard j < body.count else { break }
                    let n = Int(body[j])
                    guard j + 1 + n + 2 <= body.count else { break }
                    applets.append(Array(body[(j + 1)..<(j + 1 + n)]))
                    j += 1 + n + 2
                }
            }
            i += 3 + size
        }
        return (package, applets, !package.isEmpty)
    }

    private func setStatus(_ command: CommandAPDU, _ s: inout State) -> ([UInt8], UInt16) {
        switch command.p1 {
        case 0x80:
            // The card: 7F locks it, FF terminates it.
            guard command.p2 == 0x7F || command.p2 == 0xFF || command.p2 == 0x0F else { return ([], 0x6A80) }
            s.cardLifeCycle = command.p2
            if let k = s.entries.firstIndex(where: { $0.kind == .isd }) { s.entries[k].lifeCycle = command.p2 }
            return ([], 0x9000)
        case 0x40, 0x60:
            guard let k = s.entries.firstIndex(where: { $0.aid == command.data && ($0.kind == .application || $0.kind == .securityDomain) }) else { return ([], 0x6A88) }
            s.entries[k].lifeCycle = command.p2 & 0x80 != 0 ? s.entries[k].lifeCycle | 0x80 : s.entries[k].lifeCycle & 0x7F
            return ([], 0x9000)
        default: return ([], 0x6A86)
        }
    }

    /// PUT KEY (§11.8): P1 the version to replace (0: a new set), P2 the first key id (bit 8:
    /// several keys); data the new version, then per key: type, length, key data under the
    /// DEK, check value length and check value.
    private func putKey(_ command: CommandAPDU, _ s: inout State) -> ([UInt8], UInt16) {
        guard let session = s.session, command.data.count > 1 else { return ([], 0x6A80) }
        let d = command.data
        let newVersion = d[0]
        var i = 1
        var keys: [[UInt8]] = []
        var checks: [UInt8] = []
        do {
            while i < d.count {
                guard i + 2 <= d.count else { return ([], 0x6A80) }
                let type = d[i]
                var n = Int(d[i + 1])
                i += 2
                var keyLength = n
                if type == 0x88 {
                    // AES: the key component is preceded by its own length (Amendment D §7.2.2.1).
                    guard i < d.count else { return ([], 0x6A80) }
                    keyLength = Int(d[i])
                    i += 1
                    n -= 1
                }
                guard i + n + 1 <= d.count else { return ([], 0x6A80) }
                let wrapped = Array(d[i..<(i + n)])
                i += n
                let key: [UInt8]
                if scp == .scp02 {
                    key = try BlockCipher(.tdes2, key: session.sDek).decrypt(ecb: wrapped)
                } else {
                    key = Array(try aes(session.sDek).decrypt(cbc: wrapped).prefix(keyLength))
                }
                let kcvLength = Int(d[i])
                i += 1
                guard i + kcvLength <= d.count else { return ([], 0x6A80) }
                let kcv = Array(d[i..<(i + kcvLength)])
                i += kcvLength
                let expected: [UInt8] = type == 0x88 ? Array(try aes(key).encrypt(ecb: [UInt8](repeating: 1, count: 16)).prefix(3))
                                                     : Array(try BlockCipher(.tdes2, key: key).encrypt(ecb: [UInt8](repeating: 0, count: 8)).prefix(3))
                guard kcvLength == 0 || constantTimeEquals(kcv, Array(expected.prefix(kcvLength))) else { return ([], 0x6A80) }
                keys.append(key)
                checks += expected
            }
        } catch { return ([], 0x6A80) }
        guard keys.count == 3 else { return ([], 0x6A80) }
        let set = KeySet(version: newVersion, enc: keys[0], mac: keys[1], dek: keys[2])
        if command.p1 == 0 {
            guard !s.keySets.contains(where: { $0.version == newVersion }) else { return ([], 0x6A80) }
            s.keySets.append(set)
        } else {
            guard let k = s.keySets.firstIndex(where: { $0.version == command.p1 }) else { return ([], 0x6A88) }
            s.keySets[k] = set
        }
        return ([newVersion] + checks, 0x9000)
    }

    private func tlv(_ tag: [UInt8], _ value: [UInt8]) -> [UInt8] {
        tag + (value.count < 0x80 ? [UInt8(value.count)] : value.count < 0x100 ? [0x81, UInt8(value.count)] : [0x82, UInt8(value.count >> 8), UInt8(value.count & 0xFF)]) + value
    }
}
