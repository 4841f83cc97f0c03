// The Issuer Security Domain of a card: what it says of itself, authentication with the keys
// checked as far as the card lets them be before anything counted, and the registry.
import ISO7816

/// The card manager (Issuer Security Domain) of a GlobalPlatform card, over any channel.
///
/// ```swift
/// let manager = CardManager(transport: APDUTransport(channel: channel))
/// let info = try manager.information()           // no authentication
/// try manager.authenticate(keys: StaticKeys(master: key))
/// for entry in try manager.registry() { print(entry.kind, entry.aid.hexString) }
/// ```
public final class CardManager {
    public let transport: APDUTransport
    public private(set) var isdAID: [UInt8]?
    /// Whether `isdAID` came from the SELECT answer's FCI (tag 84) rather than the SELECT command.
    public private(set) var isdAIDFromFCI = false
    public private(set) var selectAnswer: [UInt8] = []
    /// Open after `authenticate`.
    public internal(set) var secureChannel: SecureChannel?
    /// What the key information template said, once read.
    public private(set) var keyInformation: [KeyInformation]?
    public private(set) var recognition: CardRecognitionData?
    /// GET STATUS commands the last `registry()` sent.
    public private(set) var getStatusCommands = 0
    /// The kinds the last `registry()` found none of because the card answered `6A 88`: under
    /// SCP03 an error status word carries no R-MAC, so even in a session with R-MAC that absence
    /// is the card's unauthenticated word (a man in the middle can answer it), while every entry
    /// listed is authenticated. Under SCP02 with R-MAC every answer carries one, the 6A 88 too:
    /// none are listed here.
    public private(set) var unprovenEmptyKinds: [RegistryEntry.Kind] = []
    var _loadCount = 0
    /// The keys the open channel was made with (for PUT KEY's check after a cut).
    var authenticatedKeys: StaticKeys?
    /// The most `63 10` continuations followed before an answer is judged endless.
    public var maxContinuations = 64

    /// AIDs tried for the ISD after the default selection: GlobalPlatform's, then Open
    /// Platform 2.0.1's (Visa).
    public static let knownISDAIDs: [[UInt8]] = [[0xA0, 0x00, 0x00, 0x01, 0x51, 0x00, 0x00, 0x00], [0xA0, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00]]

    public init(transport: APDUTransport) {
        self.transport = transport
    }

    /// Selects the ISD: the default application first (SELECT with no AID), then the known AIDs.
    @discardableResult
    public func selectISD(aid: [UInt8]? = nil) throws -> [UInt8] {
        var last = StatusWord.fileNotFound
        let candidates: [[UInt8]] = aid.map { [$0] } ?? ([[]] + Self.knownISDAIDs)
        for candidate in candidates {
            let answer = try transport.send(CommandAPDU(cla: 0x00, ins: 0xA4, p1: 0x04, p2: 0x00, data: candidate, ne: 256))
            if answer.statusWord == .success {
                let fciAID = (try? BERTLV.decode(answer.data))?.first?.children?.first { $0.tag == [0x84] }?.value
                isdAID = fciAID ?? (candidate.isEmpty ? nil : candidate)
                isdAIDFromFCI = fciAID != nil
                selectAnswer = answer.data
                guard isdAID != nil else { continue }
                return answer.data
            }
            last = answer.statusWord
        }
        if last.rawValue == 0x6283 || last.rawValue == 0x6A81 {
            throw GlobalPlatformError(.locked, "the card's Security Domain is locked or terminated (SELECT: \(last.hex)); nothing was sent that counts", statusWord: last)
        }
        throw GlobalPlatformError(.refused, "no GlobalPlatform Security Domain answers SELECT (\(last.hex))", statusWord: last)
    }

    /// GET DATA (80 CA) for `tag`; nil when the card does not have it.
    public func getData(_ tag: UInt16) throws -> [UInt8]? {
        let answer = try send(CommandAPDU(cla: 0x80, ins: 0xCA, p1: UInt8(tag >> 8), p2: UInt8(tag & 0xFF), ne: 256))
        guard answer.statusWord == .success else { return nil }
        // The answer comes with its tag (and length); some cards leave them off.
        if let objects = try? BERTLV.decode(answer.data), objects.count == 1, objects[0].tag == (tag > 0xFF ? [UInt8(tag >> 8), UInt8(tag & 0xFF)] : [UInt8(tag)]) {
            return tag == 0x00E0 ? answer.data : objects[0].value
        }
        return answer.data
    }

    /// Everything the card says without authentication: CPLC, card recognition data, key
    /// information, IIN, CIN, key diversification data, the sequence counter. Not the ISD's life
    /// cycle: only GET STATUS gives it, in a secure channel (`issuerSecurityDomainEntry()`).
    public func information() throws -> CardInformation {
        if isdAID == nil { try selectISD() }
        let cplc = try getData(0x9F7F).flatMap { try? CPLC($0) }
        let recognition = try getData(0x0066).flatMap { try? CardRecognitionData($0) }
        self.recognition = recognition
        let keys = try readKeyInformation()
        return CardInformation(isdAID: isdAID ?? [], isdAIDFromFCI: isdAIDFromFCI, keyDiversificationData: try getData(0x00CF),
                               sequenceCounter: try getData(0x00C1), cplc: cplc, recognition: recognition, keys: keys,
                               iin: try getData(0x0042), cin: try getData(0x0045), selectAnswer: selectAnswer)
    }

    /// The ISD's registry entry (its life cycle and privileges): GET STATUS 80, which cards
    /// answer only in a secure channel, so `authenticate` first.
    public func issuerSecurityDomainEntry() throws -> RegistryEntry? {
        guard secureChannel != nil else {
            throw GlobalPlatformError(.policy, "the ISD's life cycle comes from GET STATUS, which needs a secure channel: authenticate first")
        }
        return try getStatus(p1: 0x80, kind: .issuerSecurityDomain).first
    }

    func readKeyInformation() throws -> [KeyInformation] {
        if let keyInformation { return keyInformation }
        let keys = try getData(0x00E0).flatMap { try? KeyInformation.parse($0) } ?? []
        keyInformation = keys
        return keys
    }

    /// Opens a secure channel with `keys`. Before INITIALIZE UPDATE it reads the key
    /// information template and refuses a key version the card does not list; the card's
    /// cryptogram is checked before EXTERNAL AUTHENTICATE; nothing is retried.
    /// - Parameters:
    ///   - keys: the static keys (and their version) to open the channel with.
    ///   - level: the security level asked for; nil for the highest the card offers.
    ///   - protocolVersion: the secure channel protocol asked for (2 or 3); a card whose
    ///     recognition data names only others is refused before INITIALIZE UPDATE, one whose
    ///     INITIALIZE UPDATE names another before EXTERNAL AUTHENTICATE. Nil: the card's.
    ///   - hostChallenge: for tests with published vectors; random otherwise.
    public func authenticate(keys: StaticKeys, level: SecurityLevel? = nil, protocolVersion: UInt8? = nil, hostChallenge: [UInt8]? = nil) throws {
        if isdAID == nil { try selectISD() }
        let held = try readKeyInformation()
        if keys.version != 0, !held.isEmpty, !held.contains(where: { $0.version == keys.version }) {
            let versions = Set(held.map(\.version)).sorted().map(hex).joined(separator: ", ")
            throw GlobalPlatformError(.keyVersionNotHeld, "the card holds no key version \(hex(keys.version)) (it lists \(versions)); nothing counted was sent")
        }
        if recognition == nil { recognition = try getData(0x0066).flatMap { try? CardRecognitionData($0) } }
        if let protocolVersion, let named = recognition?.protocols, !named.isEmpty, !named.contains(where: { $0.version == protocolVersion }) {
            throw GlobalPlatformError(.policy, "asked for SCP0\(protocolVersion), the card speaks \(named.map(\.description).joined(separator: ", ")) (its card recognition data); nothing counted was sent")
        }
        let scp02i = recognition?.protocols.first { $0.version == 2 }?.i ?? 0x15
        // The level a session takes by default is the highest SCP03's i offers, and INITIALIZE
        // UPDATE's i is outside the cryptogram: held against the recognition data's (when it names
        // one), so a lowered i stops the session. A level asked for is the card's to enforce.
        let named: [SecureChannelProtocol] = (recognition?.protocols ?? []).filter { $0.version == 3 }
        let scp03i = level == nil && named.count == 1 ? named[0].i : nil
        secureChannel = try SecureChannel.open(over: transport, keys: keys, level: level, scp02i: scp02i, scp03i: scp03i,
                                               protocolVersion: protocolVersion, hostChallenge: hostChallenge)
        authenticatedKeys = keys
    }

    /// Sends through the secure channel when one is open.
    public func send(_ command: CommandAPDU, secret: Bool = false) throws -> ResponseAPDU {
        if let secureChannel { return try secureChannel.send(command, secret: secret) }
        return secret ? try transport.send(command, secret: 0..<command.encodedCount) : try transport.send(command)
    }

    /// The registry: the ISD, the security domains and applications, the load files and their
    /// modules, in the tag format where the card speaks it, else the legacy one, following
    /// `63 10` until the card is done.
    public func registry() throws -> [RegistryEntry] {
        getStatusCommands = 0
        unprovenEmptyKinds = []
        var out = try getStatus(p1: 0x80, kind: .issuerSecurityDomain)
        out += try getStatus(p1: 0x40, kind: .application)
        do {
            out += try getStatus(p1: 0x10, kind: .loadFile)
        } catch let e as GlobalPlatformError where e.statusWord == .incorrectP1P2 || e.statusWord == .wrongP1P2 {
            out += try getStatus(p1: 0x20, kind: .loadFile)
        }
        return out
    }

    private var tagFormat: Bool?
    var loadCount: Int { get { _loadCount } set { _loadCount = newValue } }

    func getStatus(p1: UInt8, kind: RegistryEntry.Kind) throws -> [RegistryEntry] {
        for format in tagFormat.map({ [$0] }) ?? [true, false] {
            var entries: [RegistryEntry] = []
            var p2: UInt8 = format ? 0x02 : 0x00
            var rounds = 0
            while true {
                let answer = try send(CommandAPDU(cla: 0x80, ins: 0xF2, p1: p1, p2: p2, data: [0x4F, 0x00], ne: 256))
                getStatusCommands += 1
                let sw = answer.statusWord
                // 6A 88 (referenced data not found) is how cards say no entry of that kind exists;
                // after 63 10 (more to come) it is a listing cut short, not an end.
                if sw == .fileNotFound || sw == .recordNotFound || sw.rawValue == 0x6A88 {
                    guard rounds == 0 else {
                        throw GlobalPlatformError(.malformed, "GET STATUS \(hex(p1)) answered \(sw.hex) after 63 10 (more data): the listing was cut short")
                    }
                    // Under SCP02 with R-MAC that 6A 88 carried its R-MAC (checked in the unwrap):
                    // the absence is the card's; elsewhere it is an unauthenticated word.
                    if !(secureChannel.map { $0.session.scp.version == 2 && $0.level.contains(.rMAC) } ?? false) { unprovenEmptyKinds.append(kind) }
                    return entries
                }
                if sw != .success && sw.rawValue != 0x6310 {
                    // A card without the tag format says so to the first command: try the legacy one.
                    if format, tagFormat == nil, rounds == 0, sw == .incorrectP1P2 || sw == .wrongP1P2 || sw == .wrongData { break }
                    throw GlobalPlatformError(.refused, "GET STATUS \(hex(p1)) refused: \(sw.hex)", statusWord: sw)
                }
                entries += format ? try RegistryParser.tagFormat(answer.data, kind: kind)
                                  : try RegistryParser.legacyFormat(answer.data, kind: kind, withModules: p1 == 0x10)
                tagFormat = format
                if sw == .success { return entries }
                rounds += 1
                guard rounds <= maxContinuations, !answer.data.isEmpty else {
                    throw GlobalPlatformError(.malformed, "GET STATUS \(hex(p1)) answered 63 10 (more data) \(rounds) times\(answer.data.isEmpty ? " with no data" : ""): stopped")
                }
                p2 |= 0x01
            }
        }
        throw GlobalPlatformError(.refused, "GET STATUS \(hex(p1)) refused in both the tag and the legacy format")
    }
}
