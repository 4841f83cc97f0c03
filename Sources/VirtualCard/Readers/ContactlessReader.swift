// Emulated contactless readers: the transparent, ACR122U and storage-only dialects in front of
// a tag model, with the ways real readers differ, and the front of an ISO 14443-4 card.
import ISO7816

/// A contactless PC/SC reader with a tag on it, as pcscd sees it through vpcd: the reader's
/// pseudo-APDUs go to the reader model, and the tag answers the native frames the reader's
/// dialect carries. The storage pseudo-APDUs (`FF CA`, `FF B0`, `FF D6`) go to the tag model,
/// as every contactless reader has them.
///
/// - `.transparent`: PC/SC Part 3 §3.2.2.1.7 `FF C2 00 00` (manage session: DO 80 version,
///   81 start, 82 end, 83 RF off, 84 RF on, 5F46 timer) and `FF C2 00 01` (transparent
///   exchange: DO 95 transceive), answering DO C0 (status), 92 (valid bits of a 4-bit answer)
///   and 97 (the tag's answer). An exchange outside a session is refused.
/// - `.acr122u`: `FF 00 00 00 Lc D4 …` to the PN532: 02 GetFirmwareVersion, 42
///   InCommunicateThru, 32 RFConfiguration (field off/on), 4A InListPassiveTarget.
/// - `.storageOnly`: none of those (`6A 81`, function not supported).
///
/// Tags of ISO 15693 and FeliCa: a transparent session switches to their protocol with
/// `FF C2 00 02` (DO 8F; another protocol than the tag's is an error in DO C0), and their
/// answers are whole bytes. The ACR122U reaches FeliCa (InListPassiveTarget at 212 kbps) but
/// has no ISO 15693: frames to such a tag time out.
///
/// Readers differ where PC/SC Part 3 and the vendors leave room; `Model` holds each such axis, and
/// `Model.generated()` makes readers along all of them for the tests.
public final class ContactlessReader: EmulatedCard, @unchecked Sendable {
    public enum Dialect: String, Sendable, CaseIterable {
        case transparent, acr122u, storageOnly = "storage"
    }

    /// How one reader behaves where real readers differ (sources in docs/readers.md).
    public struct Model: Sendable, Hashable, CustomStringConvertible {
        public var dialect: Dialect
        /// Storage READ BINARY's Le: anything (Le 00 = up to 256), or exactly the block size,
        /// refused with `67 00` or with `6C size`.
        public enum ReadLe: String, Sendable, Hashable, CaseIterable { case any, exactWrongLength, exactCorrectLength }
        public var readLe: ReadLe = .any
        /// The status word for a pseudo-APDU the reader does not have (`6A 81`, `6E 00`,
        /// `6D 00`, `63 00`, `68 00` are all seen).
        public var unsupported: [UInt8] = [0x6A, 0x81]
        /// A tag's 4-bit ACK in a transparent exchange: `92 01 04 97 01 0A`, or the valid-bits
        /// object alone (`92 01 04`, no DO 97).
        public enum ACKReport: String, Sendable, Hashable, CaseIterable { case dataObject, validBitsOnly }
        public var ackReport: ACKReport = .dataObject
        /// BER lengths of the answer objects: minimal, or `81 xx` for every length.
        public var longLengths = false
        /// A tag that does not answer: `C0 03 01 64 01`, or a plain `C0 03 00 90 00` without DO 97.
        public enum Silence: String, Sendable, Hashable, CaseIterable { case status6401, noAnswerObject }
        public var silence: Silence = .status6401
        /// DO C0 after the answer's objects instead of before them.
        public var statusLast = false
        /// ACR122U: a 4-bit ACK as `D5 43 00 0A`, or dropped (`D5 43 00`).
        public var acrDropsACK = false
        /// ACR122U: a direct transmit with a trailing Le refused with `67 00`.
        public var acrRefusesLe = false
        /// Extended-length APDUs refused with `67 00`.
        public var refusesExtended = false

        public init(_ dialect: Dialect) { self.dialect = dialect }

        public var description: String {
            var parts = [dialect.rawValue, "READ BINARY Le \(readLe.rawValue)", "unsupported \(unsupported.hexString)"]
            if dialect == .transparent {
                parts += ["ACK \(ackReport.rawValue)", longLengths ? "lengths 81 xx" : "minimal lengths", "silence \(silence.rawValue)", statusLast ? "C0 last" : "C0 first"]
            }
            if dialect == .acr122u { parts += [acrDropsACK ? "ACK dropped" : "ACK 0A", acrRefusesLe ? "Le refused" : "Le accepted"] }
            if refusesExtended { parts.append("no extended APDUs") }
            return parts.joined(separator: ", ")
        }

        /// Readers along every axis: for each dialect, six models in which every value of
        /// every axis that dialect has appears at least once, the axes turning at different
        /// rates so that the values meet in different combinations.
        public static func generated() -> [Model] {
            let unsupported: [[UInt8]] = [[0x6A, 0x81], [0x6E, 0x00], [0x6D, 0x00], [0x63, 0x00], [0x68, 0x00]]
            var out: [Model] = []
            for dialect in Dialect.allCases {
                for i in 0..<6 {
                    var m = Model(dialect)
                    m.readLe = ReadLe.allCases[i % 3]
                    m.unsupported = unsupported[i % 5]
                    m.refusesExtended = i % 2 == 1
                    if dialect == .transparent {
                        m.ackReport = ACKReport.allCases[i / 3 % 2]
                        m.longLengths = i % 2 == 0
                        m.silence = Silence.allCases[(i + 1) / 2 % 2]
                        m.statusLast = i / 2 % 2 == 1
                    }
                    if dialect == .acr122u {
                        m.acrDropsACK = i / 3 % 2 == 1
                        m.acrRefusesLe = i % 2 == 0
                    }
                    out.append(m)
                }
            }
            return out
        }
    }

    public let model: Model
    public var dialect: Dialect { model.dialect }
    public let tag: any NativeTagModel
    private struct State {
        var session = false
        var fieldOn = true
        var exchanges = 0
        var frames: [[UInt8]] = []
    }
    private let state = Locked(State())

    public init(_ dialect: Dialect, tag: any NativeTagModel) {
        self.model = Model(dialect)
        self.tag = tag
    }

    public init(model: Model, tag: any NativeTagModel) {
        self.model = model
        self.tag = tag
    }

    public var atr: [UInt8] { tag.atr }
    /// Whether a transparent session is open now (tests check that every path ends it).
    public var sessionOpen: Bool { state.current.session }
    /// Native frames the tag has received, in order.
    public var frames: [[UInt8]] { state.current.frames }
    /// Pseudo-APDUs received.
    public var exchanges: Int { state.current.exchanges }

    public func reset() {
        state.withLock { $0.session = false; $0.fieldOn = true }
        tag.reset()
    }

    public func process(_ apdu: [UInt8]) -> [UInt8] {
        state.withLock { $0.exchanges += 1 }
        // Extended length: Lc or Le in three bytes, the first 00 (ISO 7816-4 §5.1).
        if model.refusesExtended, apdu.count > 5, apdu[4] == 0x00 { return [0x67, 0x00] }
        guard apdu.count >= 4, apdu[0] == 0xFF else { return tag.process(apdu) }
        switch (apdu[1], dialect) {
        case (0xC2, .transparent): return transparent(apdu)
        case (0x00, .acr122u) where apdu.count >= 7 && apdu[5] == 0xD4:
            if model.acrRefusesLe, apdu.count > 5 + Int(apdu[4]) { return [0x67, 0x00] }
            return pn532(apdu)
        case (0xC2, _), (0x00, _): return model.unsupported
        case (0xB0, _) where apdu.count == 5 && model.readLe != .any && Int(apdu[4]) != tag.storageBlockSize % 256:
            return model.readLe == .exactWrongLength ? [0x67, 0x00] : [0x6C, UInt8(tag.storageBlockSize % 256)]
        default:
            return state.current.fieldOn ? tag.process(apdu) : [0x64, 0x01]
        }
    }

    /// A transparent exchange's answer objects, in this reader's form.
    private func exchangeAnswer(_ answer: NativeAnswer) -> [UInt8] {
        func object(_ tag: UInt8, _ value: [UInt8]) -> [UInt8] {
            [tag] + (model.longLengths && value.count < 0x80 ? [0x81, UInt8(value.count)] : BERTLV.encodeLength(value.count)) + value
        }
        var status = Self.ok, objects: [UInt8] = []
        switch answer {
        case let .data(bytes): objects = object(0x97, bytes)
        case .ack: objects = object(0x92, [0x04]) + (model.ackReport == .dataObject ? object(0x97, [0x0A]) : [])
        case let .nak(code): objects = object(0x92, [0x04]) + object(0x97, [code])
        case .silence: if model.silence == .status6401 { status = [0xC0, 0x03, 0x01, 0x64, 0x01] }
        }
        return (model.statusLast ? objects + status : status + objects) + [0x90, 0x00]
    }

    private func send(_ frame: [UInt8]) -> NativeAnswer {
        state.withLock { $0.frames.append(frame) }
        return state.current.fieldOn ? tag.transceive(frame) : .silence
    }

    // MARK: PC/SC Part 3 transparent session

    static let ok: [UInt8] = [0xC0, 0x03, 0x00, 0x90, 0x00]

    private func transparent(_ apdu: [UInt8]) -> [UInt8] {
        guard apdu[2] == 0x00, apdu.count >= 5 else { return [0x6A, 0x86] }
        let lc = Int(apdu[4])
        guard apdu.count >= 5 + lc else { return [0x67, 0x00] }
        guard let objects = try? BERTLV.decode(Array(apdu[5..<(5 + lc)]), maxDepth: 0) else { return [0x6A, 0x80] }
        switch apdu[3] {
        case 0x00:
            var out = Self.ok
            for o in objects {
                switch o.tag {
                case [0x80]: out += [0x80, 0x03, 0x01, 0x00, 0x00]   // version 1.0.0
                case [0x81]: state.withLock { $0.session = true }
                case [0x82]: state.withLock { $0.session = false; $0.fieldOn = true }
                case [0x83]: state.withLock { $0.fieldOn = false }; tag.reset()
                case [0x84]: state.withLock { $0.fieldOn = true }; tag.reset()
                case [0x5F, 0x46]: break
                default: return Self.ok.prefix(2) + [0x01, 0x6A, 0x81, 0x90, 0x00]
                }
            }
            return out + [0x90, 0x00]
        case 0x01:
            guard state.current.session else { return [0xC0, 0x03, 0x01, 0x69, 0x85, 0x90, 0x00] }
            guard let frame = objects.first(where: { $0.tag == [0x95] })?.value else { return [0xC0, 0x03, 0x01, 0x6A, 0x80, 0x90, 0x00] }
            return exchangeAnswer(send(frame))
        case 0x02:
            guard let object = objects.first(where: { $0.tag == [0x8F] })?.value, object.count == 2 else {
                return [0xC0, 0x03, 0x01, 0x6A, 0x80, 0x90, 0x00]
            }
            guard object[0] == tag.air.rawValue else { return [0xC0, 0x03, 0x01, 0x6A, 0x81, 0x90, 0x00] }
            return Self.ok + [0x90, 0x00]
        default:
            return [0x6A, 0x81]
        }
    }

    // MARK: ACR122U / PN532

    private func pn532(_ apdu: [UInt8]) -> [UInt8] {
        let lc = Int(apdu[4])
        guard apdu.count >= 5 + lc, lc >= 2 else { return [0x67, 0x00] }
        let command = Array(apdu[5..<(5 + lc)])
        switch command[1] {
        case 0x02: return [0xD5, 0x03, 0x32, 0x01, 0x06, 0x07, 0x90, 0x00]
        case 0x32 where command.count >= 4 && command[2] == 0x01:
            state.withLock { $0.fieldOn = command[3] & 0x01 != 0 }
            tag.reset()
            return [0xD5, 0x33, 0x90, 0x00]
        case 0x4A:
            state.withLock { $0.fieldOn = true }
            tag.reset()
            let wantsFeliCa = command.count >= 4 && command[3] == 0x01
            guard wantsFeliCa == (tag.air == .felica), tag.air != .iso15693 else { return [0xD5, 0x4B, 0x00, 0x90, 0x00] }
            if wantsFeliCa, case let .data(polled) = send(Array(command[4...])) {
                return [0xD5, 0x4B, 0x01, 0x01] + polled + [0x90, 0x00]
            }
            let uid = tag.uid
            return [0xD5, 0x4B, 0x01, 0x01, 0x00, 0x44, 0x00, UInt8(uid.count)] + uid + [0x90, 0x00]
        case 0x42 where tag.air == .iso15693:
            return [0xD5, 0x43, 0x01, 0x90, 0x00]
        case 0x42:
            switch send(Array(command[2...])) {
            case let .data(bytes): return [0xD5, 0x43, 0x00] + bytes + [0x90, 0x00]
            case .ack: return model.acrDropsACK ? [0xD5, 0x43, 0x00, 0x90, 0x00] : [0xD5, 0x43, 0x00, 0x0A, 0x90, 0x00]
            case let .nak(code): return [0xD5, 0x43, 0x00, code, 0x90, 0x00]
            case .silence: return [0xD5, 0x43, 0x01, 0x90, 0x00]
            }
        default:
            return [0xD5, command[1] &+ 1, 0x90, 0x00]
        }
    }
}

/// An ISO 14443-4 card (a Type 4 tag) behind a reader model: the card's APDUs pass through as the
/// reader carries them (extended ones refused where the model refuses them), and the reader's
/// own pseudo-APDUs it does not have (`FF C2`, `FF 00`) get the model's status word.
public final class ReaderFront: EmulatedCard, @unchecked Sendable {
    public let model: ContactlessReader.Model
    public let card: any EmulatedCard
    public init(model: ContactlessReader.Model, card: any EmulatedCard) {
        self.model = model
        self.card = card
    }
    public var atr: [UInt8] { card.atr }
    public func reset() { card.reset() }
    public func process(_ apdu: [UInt8]) -> [UInt8] {
        if model.refusesExtended, apdu.count > 5, apdu[4] == 0x00 { return [0x67, 0x00] }
        if apdu.count >= 4, apdu[0] == 0xFF, apdu[1] == 0xC2 || apdu[1] == 0x00 { return model.unsupported }
        return card.process(apdu)
    }
}
