// An emulated ISO 7816 card hosting applications by AID: SELECT, command chaining, and the T=0
// behaviours a host must cope with.
import ISO7816

/// An application on an emulated ISO 7816 card, selected by its AID.
public protocol CardApplication: AnyObject, Sendable {
    var aid: [UInt8] { get }
    /// Answers SELECT by this AID; the response data is the FCI (may be empty).
    func select(_ command: CommandAPDU) -> ResponseAPDU
    /// Answers any other command while this application is selected.
    func process(_ command: CommandAPDU) -> ResponseAPDU
    /// The application lost the selection (another SELECT, reset).
    func deselect()
}

extension CardApplication {
    public func deselect() {}
}

/// How an `ApplicationHost` behaves on the wire, beyond its applications.
public struct HostBehaviour: Sendable, Hashable {
    /// T=0 style: never return data directly; answer `61xx` and serve it through GET RESPONSE.
    public var usesGetResponse = false
    /// Most bytes one GET RESPONSE answer carries (`61xx` says how many remain, at most 256).
    public var getResponseChunk = 256
    /// Refuse (`6E00`) a GET RESPONSE whose CLA differs from the command that produced the data,
    /// as some cards do (and as pcsc-sharp gets wrong).
    public var requiresGetResponseCLA = false
    /// Answer `6Cxx` when Le does not equal the number of bytes available (T=0 cards).
    public var answersWrongLe = false
    /// Largest data field one command may carry; longer gets `6700`, so hosts must chain.
    public var maxCommandData = 65535
    /// Whether command chaining (CLA bit b5, 0x10) is accepted.
    public var acceptsChaining = true
    /// Whether extended-length APDUs are accepted (else `6700`).
    public var acceptsExtendedLength = true

    public init() {}
}

/// An emulated ISO 7816 card hosting applications by AID, with SELECT semantics (exact or
/// partial AID, first occurrence), command chaining, and optional T=0 behaviours.
public final class ApplicationHost: EmulatedCard, @unchecked Sendable {
    /// A contact-style T=1 ATR with historical bytes "swift-apdu": 3B 8A 80 01 …
    public static let defaultATR: [UInt8] = {
        let historical = Array("swift-apdu".utf8)
        var atr: [UInt8] = [0x3B, 0x80 | UInt8(historical.count), 0x80, 0x01] + historical
        atr.append(atr.dropFirst().reduce(0, ^))
        return atr
    }()

    public let atr: [UInt8]
    public let applications: [any CardApplication]
    public let behaviour: HostBehaviour
    /// When set, the card sits behind a contactless PC/SC reader that answers GET DATA
    /// `FF CA 00 00` with this UID (PC/SC Part 3), as an NFC tag's reader does.
    public let uid: [UInt8]?

    struct Session {
        var selected: (any CardApplication)?
        var pending: [UInt8] = []
        var pendingStatus = StatusWord.success
        var pendingCLA: UInt8 = 0
        var chain: [UInt8] = []
        var chainHeader: [UInt8]? = nil
        var log: [[UInt8]] = []
    }
    private let session = Locked(Session())

    public init(atr: [UInt8] = ApplicationHost.defaultATR, applications: [any CardApplication], behaviour: HostBehaviour = HostBehaviour(), uid: [UInt8]? = nil) {
        self.atr = atr
        self.applications = applications
        self.behaviour = behaviour
        self.uid = uid
    }

    /// Every APDU the card received, in order: proof of what did (or did not) reach the card.
    public var log: [[UInt8]] { session.current.log }

    public func reset() {
        session.withLock { s in
            s.selected?.deselect()
            let log = s.log
            s = Session()
            s.log = log
        }
    }

    public func process(_ apdu: [UInt8]) -> [UInt8] {
        session.withLock { s in
            s.log.append(apdu)
            return respond(apdu, &s).bytes
        }
    }

    private func respond(_ raw: [UInt8], _ s: inout Session) -> ResponseAPDU {
        guard var command = try? CommandAPDU(bytes: raw) else { return ResponseAPDU(statusWord: .wrongLength) }
        if command.cla == 0xFF {
            // CLA FF is invalid for cards (ISO 7816-4 §5.4.1); readers use it for their own
            // pseudo-APDUs, such as GET DATA for the UID.
            guard let uid, command.ins == 0xCA, command.p1 == 0, command.p2 == 0 else { return ResponseAPDU(statusWord: .claNotSupported) }
            if let ne = command.ne, ne != 256, ne != uid.count { return ResponseAPDU(statusWord: StatusWord(0x6C, UInt8(uid.count))) }
            return ResponseAPDU(data: uid, statusWord: .success)
        }

        // GET RESPONSE serves pending data; an interindustry C0 with nothing pending is refused
        // there too. Any other command discards what was pending.
        if command.ins == 0xC0 && (!s.pending.isEmpty || command.cla & 0x80 == 0) {
            return getResponse(command, &s)
        }
        s.pending = []
        if command.isExtended && !behaviour.acceptsExtendedLength { return ResponseAPDU(statusWord: .wrongLength) }

        // Command chaining is CLA bit b5 of the interindustry class only: in a proprietary class
        // (90 for DESFire and NTAG 424 DNA native commands) the bit means nothing of the kind.
        if command.cla & 0x80 == 0, command.cla & 0x10 != 0 {
            guard behaviour.acceptsChaining else { return ResponseAPDU(statusWord: StatusWord(rawValue: 0x6884)) }
            if let h = s.chainHeader, h[1] != command.ins { s.chain = []; s.chainHeader = nil; return ResponseAPDU(statusWord: StatusWord(rawValue: 0x6883)) }
            guard command.data.count <= behaviour.maxCommandData else { return ResponseAPDU(statusWord: .wrongLength) }
            s.chain += command.data
            s.chainHeader = command.header
            return ResponseAPDU(statusWord: .success)
        }
        if let h = s.chainHeader {
            s.chainHeader = nil
            defer { s.chain = [] }
            guard h[1] == command.ins else { return ResponseAPDU(statusWord: StatusWord(rawValue: 0x6883)) }
            guard command.data.count <= behaviour.maxCommandData else { return ResponseAPDU(statusWord: .wrongLength) }
            command.data = s.chain + command.data
        } else if command.data.count > behaviour.maxCommandData {
            return ResponseAPDU(statusWord: .wrongLength)
        }

        var response: ResponseAPDU
        if command.ins == 0xA4 && command.p1 == 0x04 {
            response = selectByName(command, &s)
        } else if let app = s.selected {
            response = app.process(command)
        } else {
            response = ResponseAPDU(statusWord: .insNotSupported)
        }
        return deliver(response, for: command, &s)
    }

    private func selectByName(_ command: CommandAPDU, _ s: inout Session) -> ResponseAPDU {
        // P2 b2-b1: 00 first or only occurrence, 10 next; b4-b3: 00 FCI, 0C no response data.
        let occurrence = command.p2 & 0x03
        let candidates = applications.filter { $0.aid.starts(with: command.data) && !command.data.isEmpty }
        let chosen: (any CardApplication)?
        switch occurrence {
        case 0x00:
            chosen = candidates.first { $0.aid == command.data } ?? candidates.first
        case 0x02:
            if let current = s.selected, let i = candidates.firstIndex(where: { $0 === current }), i + 1 < candidates.count {
                chosen = candidates[i + 1]
            } else {
                chosen = nil
            }
        default:
            return ResponseAPDU(statusWord: .incorrectP1P2)
        }
        guard let app = chosen else { return ResponseAPDU(statusWord: .fileNotFound) }
        if let old = s.selected, old !== app { old.deselect() }
        s.selected = app
        var answer = app.select(command)
        if command.p2 & 0x0C == 0x0C { answer.data = [] }
        return answer
    }

    private func deliver(_ response: ResponseAPDU, for command: CommandAPDU, _ s: inout Session) -> ResponseAPDU {
        guard !response.data.isEmpty else { return response }
        if behaviour.usesGetResponse {
            s.pending = response.data
            s.pendingStatus = response.statusWord
            s.pendingCLA = command.cla
            return ResponseAPDU(statusWord: StatusWord(0x61, UInt8(min(response.data.count, behaviour.getResponseChunk, 256) & 0xFF)))
        }
        if behaviour.answersWrongLe, let ne = command.ne, ne != response.data.count, response.data.count <= 256, !command.isExtended {
            return ResponseAPDU(statusWord: StatusWord(0x6C, UInt8(response.data.count & 0xFF)))
        }
        return response
    }

    private func getResponse(_ command: CommandAPDU, _ s: inout Session) -> ResponseAPDU {
        guard !s.pending.isEmpty else { return ResponseAPDU(statusWord: .conditionsNotSatisfied) }
        if behaviour.requiresGetResponseCLA && command.cla != s.pendingCLA {
            return ResponseAPDU(statusWord: .claNotSupported)
        }
        guard command.p1 == 0, command.p2 == 0 else { return ResponseAPDU(statusWord: .wrongP1P2) }
        let wanted = command.ne ?? 256
        let available = min(s.pending.count, behaviour.getResponseChunk, 256)
        if wanted > available && behaviour.answersWrongLe {
            return ResponseAPDU(statusWord: StatusWord(0x6C, UInt8(available & 0xFF)))
        }
        let n = min(wanted, available)
        let chunk = Array(s.pending.prefix(n))
        s.pending.removeFirst(n)
        if s.pending.isEmpty { return ResponseAPDU(data: chunk, statusWord: s.pendingStatus) }
        return ResponseAPDU(data: chunk, statusWord: StatusWord(0x61, UInt8(min(s.pending.count, behaviour.getResponseChunk, 256) & 0xFF)))
    }
}
