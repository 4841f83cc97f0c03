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
public final class ContactlessReader: EmulatedCard, @unchecked Sendable {
    public enum Dialect: String, Sendable, CaseIterable {
        case transparent, acr122u, storageOnly = "storage"
    }

    public let dialect: Dialect
    public let tag: any NativeTagModel
    private struct State {
        var session = false
        var fieldOn = true
        var exchanges = 0
        var frames: [[UInt8]] = []
    }
    private let state = Locked(State())

    public init(_ dialect: Dialect, tag: any NativeTagModel) {
        self.dialect = dialect
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

    static let notSupported: [UInt8] = [0x6A, 0x81]

    public func process(_ apdu: [UInt8]) -> [UInt8] {
        state.withLock { $0.exchanges += 1 }
        guard apdu.count >= 4, apdu[0] == 0xFF else { return tag.process(apdu) }
        switch (apdu[1], dialect) {
        case (0xC2, .transparent): return transparent(apdu)
        case (0x00, .acr122u) where apdu.count >= 7 && apdu[5] == 0xD4: return pn532(apdu)
        case (0xC2, _), (0x00, _): return Self.notSupported
        default:
            return state.current.fieldOn ? tag.process(apdu) : [0x64, 0x01]
        }
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
            switch send(frame) {
            case let .data(bytes): return Self.ok + [0x97] + BERTLV.encodeLength(bytes.count) + bytes + [0x90, 0x00]
            case .ack: return Self.ok + [0x92, 0x01, 0x04, 0x97, 0x01, 0x0A, 0x90, 0x00]
            case let .nak(code): return Self.ok + [0x92, 0x01, 0x04, 0x97, 0x01, code, 0x90, 0x00]
            case .silence: return [0xC0, 0x03, 0x01, 0x64, 0x01, 0x90, 0x00]
            }
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
            case .ack: return [0xD5, 0x43, 0x00, 0x0A, 0x90, 0x00]
            case let .nak(code): return [0xD5, 0x43, 0x00, code, 0x90, 0x00]
            case .silence: return [0xD5, 0x43, 0x01, 0x90, 0x00]
            }
        default:
            return [0xD5, command[1] &+ 1, 0x90, 0x00]
        }
    }
}
