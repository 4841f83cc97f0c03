// A tag's own commands carried through the reader's dialect (PC/SC Part 3 transparent
// exchange, ACR122U InCommunicateThru): dialect probing, RF protocol, sessions and answers.
import ISO7816

/// How a contactless reader lets the host reach a tag's own commands (READ, WRITE, GET_VERSION,
/// PWD_AUTH…), beyond the PC/SC Part 3 storage pseudo-APDUs every reader has.
public enum ReaderDialect: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// PC/SC Part 3 transparent session: `FF C2 00 00` manages the session, `FF C2 00 01`
    /// carries the tag command in DO 95 and brings the answer back in DO 97, the reader's
    /// status in DO C0. ACS ACR1252U / ACR1552U, Identiv uTrust, HID OMNIKEY 5x22.
    case transparent
    /// ACS ACR122U (PN532 inside): `FF 00 00 00 Lc D4 42 frame` (InCommunicateThru), answer
    /// `D5 43 status data`.
    case acr122u
    /// Storage pseudo-APDUs only: no path for a tag's own commands.
    case storageOnly = "storage"

    public var description: String {
        switch self {
        case .transparent: return "PC/SC Part 3 transparent exchange"
        case .acr122u: return "ACR122U direct transmit (PN532 InCommunicateThru)"
        case .storageOnly: return "storage pseudo-APDUs only"
        }
    }

    /// The dialect a reader's name announces, when the name is one we know; nil: probe.
    public static func guess(readerName: String) -> ReaderDialect? {
        let name = readerName.lowercased()
        if name.contains("acr122") { return .acr122u }
        let transparent = ["acr1252", "acr1552", "acr1255", "acr1281", "utrust", "identiv", "scm micro", "omnikey 5022", "omnikey 5422", "omnikey 5122",
                           "omnikey 5x22", "sony felica", "rc-s300", "rc-s660"]
        if transparent.contains(where: name.contains) { return .transparent }
        return nil
    }
}

/// A tag's answer to one native command.
public enum TagAnswer: Sendable, Hashable, CustomStringConvertible {
    /// A frame of whole bytes (the reader checked and removed the CRC).
    case data([UInt8])
    /// The 4-bit ACK (`A`).
    case ack
    /// A 4-bit NAK: 0 invalid argument, 1 CRC error, 4 counter overflow (or invalid
    /// authentication), 5 EEPROM write error (NTAG21x datasheet).
    case nak(UInt8)
    /// Nothing came back in time. For SECTOR_SELECT's second step this is success.
    case noAnswer

    public var description: String {
        switch self {
        case let .data(bytes): return bytes.hexString
        case .ack: return "ACK"
        case let .nak(code): return "NAK \(Hex.encode([code]).dropFirst())"
        case .noAnswer: return "no answer (timeout)"
        }
    }

    /// What a NAK code means on NTAG21x / Ultralight.
    public static func nakMeaning(_ code: UInt8) -> String {
        switch code {
        case 0x0: return "invalid argument (page out of range or access denied)"
        case 0x1: return "parity or CRC error"
        case 0x4: return "invalid authentication counter overflow"
        case 0x5: return "EEPROM write error"
        default: return "NAK \(code)"
        }
    }

    /// The answer's kind, as scripts and JSON name it.
    public var kind: APDUScript.TagAnswerKind {
        switch self {
        case .data: return .data
        case .ack: return .ack
        case .nak: return .nak
        case .noAnswer: return .none
        }
    }

    /// The bytes, or nil for ACK / NAK / no answer.
    public var bytes: [UInt8]? { if case let .data(b) = self { return b } else { return nil } }

    /// A one-byte answer of 4 valid bits (or any value below 10h, which no whole-byte answer of
    /// these tags is) is an ACK or NAK.
    init(frame: [UInt8], validBits: Int? = nil) {
        if frame.count == 1, validBits == 4 || frame[0] <= 0x0F {
            self = frame[0] & 0x0F == 0x0A ? .ack : .nak(frame[0] & 0x0F)
        } else {
            self = .data(frame)
        }
    }
}

/// The radio protocol a tag speaks, as PC/SC Part 3's switch-protocol data object names it
/// (`8F 02 std layer`: std 00 ISO 14443 A, 02 ISO 15693, 03 FeliCa).
public enum RFProtocol: String, Sendable, Hashable, CustomStringConvertible {
    /// NFC-A: Type 2 tags (answers may be a 4-bit ACK/NAK).
    case iso14443A
    /// NFC-V: Type 5 tags. Every answer is whole bytes, its first the response flags.
    case iso15693
    /// NFC-F: Type 3 tags. Every frame starts with its length byte.
    case felica

    public var description: String {
        switch self {
        case .iso14443A: return "ISO 14443 A"
        case .iso15693: return "ISO 15693"
        case .felica: return "FeliCa"
        }
    }

    /// The standard and layer bytes of DO 8F (PC/SC Part 3 §3.2.2.1.7.3); ISO 15693 layer 3
    /// as ACS's ACR1552U takes it.
    var switchObject: [UInt8] {
        switch self {
        case .iso14443A: return [0x8F, 0x02, 0x00, 0x03]
        case .iso15693: return [0x8F, 0x02, 0x02, 0x03]
        case .felica: return [0x8F, 0x02, 0x03, 0x00]
        }
    }
}

/// Why a native tag command could not be carried.
public struct TagCommandError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        /// The reader has no raw path (storage pseudo-APDUs only).
        case noRawPath
        /// The reader refused the pseudo-APDU (its status word), or reported an error.
        case readerRefused
        /// The reader's answer could not be parsed.
        case malformed
    }
    public var kind: Kind
    public var message: String
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }
    public var description: String { message }
}

/// Carries native tag frames through a reader's dialect, over any `CardChannel` (a PC/SC card
/// handle, an emulated reader). The reader adds and checks the CRC.
///
/// A transparent session is started on the first command and must be ended: run the work in
/// `session(_:)`, which ends it on every exit path (a pulled card included: the end is then
/// tried and its failure ignored, as the reader resets the session with the card anyway).
/// Run it inside a card transaction so no other program's commands fall into the session.
public final class TagCommandChannel {
    public let transport: APDUTransport
    public let dialect: ReaderDialect
    /// The reader's name, for messages.
    public let readerName: String
    /// Timer for each exchange in a transparent session (the tag's answer time; SECTOR_SELECT's
    /// passive ACK costs this long).
    public var timeout: Duration = .milliseconds(50)
    /// Bytes one answer may carry: a short APDU's 256, less the data objects around it.
    public var maxAnswerBytes = 240
    /// Native frames sent (not counting session management): what `Scripts/bench` counts.
    public private(set) var framesSent = 0
    /// Pseudo-APDUs sent, session management included.
    public private(set) var apdusSent = 0
    public private(set) var sessionOpen = false
    /// The last answer was a NAK or silence: an NTAG / Ultralight is now IDLE or HALT.
    public private(set) var tagIdle = false
    /// The sector SECTOR_SELECT left the tag in (a tag starts, and is woken, in sector 0).
    public private(set) var sector = 0
    /// PWD_AUTH succeeded since the tag was last woken.
    public private(set) var authenticated = false
    /// The tag holds state another program must not inherit: authenticated by PWD_AUTH, or in a
    /// sector other than 0. The session's end wakes it afresh (field off and on).
    public var tagStateChanged: Bool { authenticated || sector != 0 }
    private var lastFrame: [UInt8] = []
    /// The protocol the tag speaks (`use(_:)` sets it): decides how answers are read, and on a
    /// transparent session which protocol the reader is switched to.
    public private(set) var rfProtocol = RFProtocol.iso14443A
    private var protocolSwitched = false
    public init(transport: APDUTransport, dialect: ReaderDialect, readerName: String = "the reader") {
        self.transport = transport
        self.dialect = dialect
        self.readerName = readerName
    }

    /// The dialect for this reader: `override` when given; else the name when it names a known
    /// reader, checked with a harmless probe; else whichever probe the reader answers
    /// (a Part 3 session version request, then the PN532 firmware version). Nothing reaches
    /// the tag: both probes stay in the reader.
    public static func open(transport: APDUTransport, readerName: String, override: ReaderDialect? = nil) throws -> TagCommandChannel {
        if let override { return TagCommandChannel(transport: transport, dialect: override, readerName: readerName) }
        var order: [ReaderDialect] = [.transparent, .acr122u]
        if let guess = ReaderDialect.guess(readerName: readerName) { order = [guess] + order.filter { $0 != guess } }
        for dialect in order where try probe(dialect, transport) {
            return TagCommandChannel(transport: transport, dialect: dialect, readerName: readerName)
        }
        return TagCommandChannel(transport: transport, dialect: .storageOnly, readerName: readerName)
    }

    static func probe(_ dialect: ReaderDialect, _ transport: APDUTransport) throws -> Bool {
        switch dialect {
        case .transparent:
            // Manage session, DO 80: the version of the transparent interface.
            let r = try transport.send(CommandAPDU(cla: 0xFF, ins: 0xC2, p1: 0, p2: 0, data: [0x80, 0x00], ne: 256))
            return r.statusWord == .success && r.data.first == 0xC0
        case .acr122u:
            // PN532 GetFirmwareVersion: D4 02 → D5 03 IC Ver Rev Support (with Le, and without
            // where the reader refuses a trailing Le).
            for ne in [256, nil] as [Int?] {
                let r = try transport.send(CommandAPDU(cla: 0xFF, ins: 0x00, p1: 0, p2: 0, data: [0xD4, 0x02], ne: ne))
                if r.statusWord == .wrongLength { continue }
                return r.statusWord == .success && r.data.starts(with: [0xD5, 0x03])
            }
            return false
        case .storageOnly:
            return true
        }
    }

    /// Speaks `rfProtocol` from now on. A transparent session switches the reader to it (DO 8F)
    /// when the session starts. The ACR122U (PN532) has no ISO 15693: that is refused here,
    /// before anything is sent.
    public func use(_ rfProtocol: RFProtocol) throws(TagCommandError) {
        if rfProtocol == .iso15693 && dialect == .acr122u {
            throw TagCommandError(.noRawPath, "\(readerName) is an ACR122U (PN532), which has no ISO 15693: a Type 5 tag needs a reader with a PC/SC Part 3 transparent exchange")
        }
        self.rfProtocol = rfProtocol
        protocolSwitched = false
    }

    /// Runs `body` and ends the transparent session it may have started, on every path.
    public func session<R>(_ body: (TagCommandChannel) throws -> R) throws -> R {
        defer { endSession() }
        return try body(self)
    }

    /// Leaves the reader as it was: wakes a tag left idle by a NAK, then ends the transparent
    /// session (best effort: a card already gone ends it too).
    public func endSession() {
        if tagIdle || tagStateChanged { try? reactivate() }
        guard sessionOpen else { return }
        sessionOpen = false
        protocolSwitched = false
        _ = try? manage([0x82, 0x00])
    }

    /// Wakes a tag that a NAK or silence sent to IDLE or HALT (NTAG21x, Ultralight ignore
    /// everything after one): the field off and on, and on the ACR122U a new activation.
    public func reactivate() throws {
        defer { tagIdle = false; authenticated = false; sector = 0 }
        switch dialect {
        case .storageOnly: return
        case .transparent:
            guard sessionOpen else { return }
            try manage([0x83, 0x00, 0x84, 0x00])
        case .acr122u:
            // InListPassiveTarget: 106 kbps type A, or 212 kbps FeliCa with a polling request.
            let list: [UInt8] = rfProtocol == .felica ? [0xD4, 0x4A, 0x01, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x00] : [0xD4, 0x4A, 0x01, 0x00]
            for command: [UInt8] in [[0xD4, 0x32, 0x01, 0x00], [0xD4, 0x32, 0x01, 0x01], list] {
                let r = try directTransmit(command)
                guard r.statusWord == .success else {
                    throw TagCommandError(.readerRefused, "\(readerName) refused \(command.hexString) while waking the tag: \(r.statusWord)")
                }
                if command[1] == 0x4A, r.data.count < 3 || r.data[2] == 0 {
                    throw TagCommandError(.readerRefused, "\(readerName) found no tag to wake again (the tag may have been removed)")
                }
            }
        }
    }

    /// Sends `frame` to the tag and returns its answer. `secretFrom`: the frame's bytes from
    /// this index on are a password; the transport's observer (traces) sees them marked secret.
    public func transceive(_ frame: [UInt8], secretFrom: Int? = nil) throws -> TagAnswer {
        let answer = try marked(frame, secretFrom: secretFrom)
        guard rfProtocol == .iso14443A else {
            tagIdle = answer == .noAnswer
            return answer
        }
        // SECTOR_SELECT's second step answers by silence and leaves the tag active.
        tagIdle = answer == .noAnswer ? lastFrame != [0xC2, 0xFF] : { if case .nak = answer { return true } else { return false } }()
        if frame.first == 0x1B, answer.bytes != nil { authenticated = true }
        if lastFrame == [0xC2, 0xFF], answer == .noAnswer || answer == .ack, frame.count == 4 { sector = Int(frame[0]) }
        lastFrame = frame
        return answer
    }

    private func marked(_ frame: [UInt8], secretFrom: Int?) throws -> TagAnswer {
        guard let secretFrom, let observer = transport.observer, secretFrom < frame.count else { return try exchange(frame) }
        // Where the frame sits inside the pseudo-APDU: after the header and DO 95's tag and
        // length, or after the header and D4 42.
        let offset = dialect == .transparent ? 5 + 1 + BERTLV.encodeLength(frame.count).count : 7
        let range = (offset + secretFrom)..<(offset + frame.count)
        transport.observer = { exchange in
            var marked = exchange
            if exchange.purpose == .command, exchange.command.count >= range.upperBound, exchange.command.count > 5,
               exchange.command[1] == (self.dialect == .transparent ? 0xC2 : 0x00) {
                marked.secretRange = range
            }
            observer(marked)
        }
        defer { transport.observer = observer }
        return try exchange(frame)
    }

    private func exchange(_ frame: [UInt8]) throws -> TagAnswer {
        switch dialect {
        case .storageOnly:
            throw TagCommandError(.noRawPath, "\(readerName) offers no raw tag-command path (storage pseudo-APDUs only); this needs a reader with a PC/SC Part 3 transparent exchange or an ACR122U (--reader-dialect overrides the detection)")
        case .transparent:
            if !sessionOpen {
                let micros = UInt32(clamping: timeout.components.seconds * 1_000_000 + timeout.components.attoseconds / 1_000_000_000_000)
                _ = try manage([0x81, 0x00, 0x5F, 0x46, 0x04] + withUnsafeBytes(of: micros.littleEndian, Array.init))
                sessionOpen = true
            }
            if rfProtocol != .iso14443A && !protocolSwitched {
                _ = try send(ins: 0xC2, p2: 0x02, data: rfProtocol.switchObject, what: "switch to \(rfProtocol)")
                protocolSwitched = true
            }
            framesSent += 1
            let objects = try send(ins: 0xC2, p2: 0x01, data: [0x95] + BERTLV.encodeLength(frame.count) + frame, what: "transparent exchange")
            let status = objects.first { $0.tag == [0xC0] }?.value
            if let status, status.count == 3, status[0] != 0 {
                if status[1] == 0x64 && status[2] == 0x01 { return .noAnswer }
                throw TagCommandError(.readerRefused, "\(readerName) reports error \(status.hexString) for the tag command")
            }
            let bits = objects.first { $0.tag == [0x92] }?.value.first.map { Int($0) }
            guard let answer = objects.first(where: { $0.tag == [0x97] })?.value else {
                // Some readers report a 4-bit ACK by its valid bits alone (DO 92, no DO 97): a
                // NAK always comes with its value, so 4 bits without data are the ACK.
                return rfProtocol == .iso14443A && bits == 4 ? .ack : .noAnswer
            }
            return rfProtocol == .iso14443A ? TagAnswer(frame: answer, validBits: bits) : .data(answer)
        case .acr122u:
            framesSent += 1
            var r = try directTransmit([0xD4, 0x42] + frame)
            // Some ACR122U firmware answers 61xx and wants GET RESPONSE with CLA FF.
            if r.statusWord.sw1 == 0x61 {
                apdusSent += 1
                r = try transport.send(CommandAPDU(cla: 0xFF, ins: 0xC0, p1: 0, p2: 0, ne: r.statusWord.sw2 == 0 ? 256 : Int(r.statusWord.sw2)))
            }
            guard r.statusWord == .success else {
                throw TagCommandError(.readerRefused, "\(readerName) refused direct transmit: \(r.statusWord) (\(r.statusWord.meaning.text))")
            }
            guard r.data.count >= 3, r.data[0] == 0xD5, r.data[1] == 0x43 else {
                throw TagCommandError(.malformed, "\(readerName) answered direct transmit with \(r.data.hexString), not D5 43 …")
            }
            switch r.data[2] & 0x3F {
            case 0x00: break
            case 0x01: return .noAnswer
            case let e: throw TagCommandError(.readerRefused, "\(readerName) (PN532) reports error \(Hex.encode([e])) for the tag command")
            }
            let answer = Array(r.data[3...])
            if rfProtocol != .iso14443A { return answer.isEmpty ? .noAnswer : .data(answer) }
            // The PN532 passes a 4-bit ACK as one byte 0A, or drops it (status 00, no data).
            return answer.isEmpty ? .ack : TagAnswer(frame: answer)
        }
    }

    /// What this connection's reader turned out to speak: its dialect, the READ BINARY Le form
    /// and extended length (`APDUTransport.forms`), and on an ACR122U the direct-transmit Le.
    public var spokenForms: [(name: String, value: String?)] {
        let forms = transport.forms
        var out: [(String, String?)] = [("dialect", dialect.rawValue), ("readBinaryLe", forms.readBinaryLe?.rawValue),
                                         ("extendedLength", forms.extendedLength.map { $0 ? "accepted" : "refused" })]
        if dialect == .acr122u { out.append(("directTransmitLe", directTransmitLe.map { $0 ? "accepted" : "refused" })) }
        return out
    }

    /// Whether this ACR122U takes a trailing Le on direct transmit (nil: not asked yet). Most
    /// do; where one answers `67 00`, the command goes again without, once per connection.
    public private(set) var directTransmitLe: Bool?

    /// `FF 00 00 00 Lc command [Le]`, in the form this reader takes.
    func directTransmit(_ command: [UInt8]) throws -> ResponseAPDU {
        apdusSent += 1
        let r = try transport.send(CommandAPDU(cla: 0xFF, ins: 0x00, p1: 0, p2: 0, data: command, ne: directTransmitLe == false ? nil : 256))
        guard directTransmitLe == nil else { return r }
        guard r.statusWord == .wrongLength else { directTransmitLe = true; return r }
        directTransmitLe = false
        apdusSent += 1
        return try transport.send(CommandAPDU(cla: 0xFF, ins: 0x00, p1: 0, p2: 0, data: command))
    }

    @discardableResult
    private func manage(_ objects: [UInt8]) throws -> [TLV] {
        try send(ins: 0xC2, p2: 0x00, data: objects, what: "transparent session management")
    }

    private func send(ins: UInt8, p2: UInt8, data: [UInt8], what: String) throws -> [TLV] {
        apdusSent += 1
        let r = try transport.send(CommandAPDU(cla: 0xFF, ins: ins, p1: 0, p2: p2, data: data, ne: 256))
        guard r.statusWord == .success else {
            throw TagCommandError(.readerRefused, "\(readerName) refused the \(what): \(r.statusWord) (\(r.statusWord.meaning.text))")
        }
        let objects: [TLV]
        do { objects = try BERTLV.decode(r.data, maxDepth: 1) } catch {
            throw TagCommandError(.malformed, "\(readerName) answered the \(what) with \(r.data.hexString), which is not a list of data objects: \(error)")
        }
        if let status = objects.first(where: { $0.tag == [0xC0] })?.value, status.count == 3, status[0] != 0, p2 != 1 {
            throw TagCommandError(.readerRefused, "\(readerName) reports error \(status.hexString) for the \(what)")
        }
        return objects
    }
}
