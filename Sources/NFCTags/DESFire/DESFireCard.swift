// A DESFire over any CardChannel: native commands in ISO 7816 wrapping, continuation frames, typed
// statuses, the session's protection on every frame.
import CardCrypto
import ISO7816

/// A MIFARE DESFire (MF3ICD40, EV1, EV2, EV3, Light) over any `CardChannel`: its native commands
/// wrapped in ISO 7816 (`90 INS 00 00 Lc data 00` → `data 91 SW2`), `91 AF` continuation frames
/// in both directions, every status typed (`DESFireError`), and the secure channel of whichever
/// authentication was made (legacy, ISO, AES, EV2) applied to every command and answer, with
/// every answer's MAC or CRC checked.
///
/// SelectApplication ends any authentication, as on the card; so does any error status.
public final class DESFireCard {
    public let transport: APDUTransport
    /// What GetVersion said, once asked.
    public private(set) var version: DESFireVersion?
    /// The open secure channel; nil before an authentication and after anything that ends it.
    public private(set) var session: DESFireSession?
    /// The selected application; nil while unknown (a fresh connection may find any selected).
    public private(set) var application: DESFireApplicationID?
    /// The largest data field one command frame carries. 54: a card with 64-byte frames, less
    /// the APDU header, Le, PCB, CID and CRC (proxmark3 `DESFIRE_TX_FRAME_MAX_LEN`).
    public var frameSize = 54
    /// The largest answer this tool assembles from `91 AF` frames (a card that never stops).
    public var maxAnswer = 70_000

    /// Where RndA comes from: the CSPRNG; tests of published traces replay the trace's.
    var randomSource: (Int) -> [UInt8] = { secureRandomBytes($0) }

    /// How far the last command got, for naming what a card pulled mid-command holds.
    public enum CommandProgress: Sendable, Hashable {
        /// No frame of it was sent, or only frames before the last (the card runs a command on
        /// its last frame, and drops a half-received one when it leaves the field).
        case notRun
        /// Its last frame was on the way: it ran, or not.
        case mayHaveRun
        /// The card answered it.
        case answered
    }
    /// How far the last command got.
    public private(set) var progress = CommandProgress.answered

    public init(transport: APDUTransport) {
        self.transport = transport
    }

    /// GetVersion, and the card when it names itself a DESFire (NXP, type 01/08/81/83/91/A1); nil
    /// for any other card (no answer to the native command, or another chip such as NTAG 424 DNA).
    ///
    /// A PC/SC connection does not reset the card: it may still be in the session another
    /// program left (an EV2 session refuses an unMACed GetVersion) or in the middle of its frames
    /// (91 CA). A DESFire status other than 91 AF is answered by selecting the card level, which
    /// ends any session, and asking again.
    public static func detect(_ transport: APDUTransport) throws -> DESFireCard? {
        let card = DESFireCard(transport: transport)
        var r = try transport.send(CommandAPDU(cla: 0x90, ins: 0x60, p1: 0, p2: 0, ne: 256))
        if r.statusWord.sw1 == 0x91, r.statusWord.sw2 != 0xAF {
            let select = try transport.send(CommandAPDU(cla: 0x90, ins: 0x5A, p1: 0, p2: 0, data: DESFireApplicationID.picc.wire, ne: 256))
            guard select.statusWord == StatusWord(rawValue: 0x9100) else { return nil }
            card.application = .picc
            r = try transport.send(CommandAPDU(cla: 0x90, ins: 0x60, p1: 0, p2: 0, ne: 256))
        }
        guard r.statusWord == StatusWord(rawValue: 0x91AF) else { return nil }
        var bytes = r.data
        var last = r
        for _ in 0..<4 where last.statusWord == StatusWord(rawValue: 0x91AF) {
            last = try transport.send(CommandAPDU(cla: 0x90, ins: 0xAF, p1: 0, p2: 0, ne: 256))
            bytes += last.data
        }
        guard last.statusWord == StatusWord(rawValue: 0x9100), let version = try? DESFireVersion(bytes: bytes), version.isDESFire else { return nil }
        card.version = version
        return card
    }

    // MARK: - Frames

    /// Sends one native command: the data in frames of `frameSize` (`90 AF` for each after the
    /// first, the card answering `91 AF` to each), then the answer's frames (`90 AF` while the
    /// card answers `91 AF`). Returns the answer's frames and final status.
    /// - Parameter secretFrom: bytes of `payload` from this index on are marked secret for
    ///   traces and recordings (ChangeKey's cryptogram).
    func exchange(_ ins: UInt8, _ payload: [UInt8], secretFrom: Int? = nil) throws -> (frames: [[UInt8]], status: StatusWord) {
        var sent = 0
        var command = ins
        var response: ResponseAPDU
        progress = .notRun
        repeat {
            let piece = Array(payload[sent..<min(payload.count, sent + frameSize)])
            if sent + piece.count >= payload.count { progress = .mayHaveRun }
            let apdu = CommandAPDU(cla: 0x90, ins: command, p1: 0, p2: 0, data: piece, ne: 256)
            if let from = secretFrom, sent + piece.count > from {
                // Header 5 bytes, then the piece; the trailing Le stays visible.
                let start = 5 + max(0, from - sent)
                response = try transport.send(apdu, secret: start..<(5 + piece.count))
            } else {
                response = try transport.send(apdu)
            }
            sent += piece.count
            command = 0xAF
            if sent < payload.count {
                // 91 00 before the last frame is no DESFire answer (a command runs only once all
                // of it has come): the card never got the rest (the second review of issue 49).
                if response.statusWord == StatusWord(rawValue: 0x9100) {
                    throw DESFireError(.malformed, "the card answered 91 00 before the command's last frame (\(sent) of \(payload.count) bytes sent): it did not run")
                }
                guard response.statusWord == StatusWord(rawValue: 0x91AF), response.data.isEmpty else { return ([response.data], response.statusWord) }
            }
        } while sent < payload.count
        progress = .answered
        var frames = [response.data]
        var total = response.data.count
        while response.statusWord == StatusWord(rawValue: 0x91AF) {
            // Every answer frame carries data: an empty 91 AF after the whole command asks for
            // more than it holds (a card, or a middle's settings, that took the mode for another),
            // and asking again would never end (the hostile matrix's legacy session).
            guard !response.data.isEmpty else {
                throw DESFireError(.malformed, "the card answered 91 AF with no data after the whole command: it asks for more than the command holds")
            }
            guard total <= maxAnswer else {
                throw DESFireError(.malformed, "the card kept answering 91 AF past \(maxAnswer) bytes")
            }
            response = try transport.send(CommandAPDU(cla: 0x90, ins: 0xAF, p1: 0, p2: 0, ne: 256))
            frames.append(response.data)
            total += response.data.count
        }
        return (frames, response.statusWord)
    }

    /// One command through the secure channel: protected as `security` says, sent in frames,
    /// its status checked (an error status ends the authentication, as on the card), its answer
    /// verified and unwrapped.
    /// - Parameters:
    ///   - length: the answer's plain length when known (enciphered answers).
    ///   - secret: the data carries key material (traces show it as `**`).
    ///   - lengthIsExpected: `length` is only what the card should send (see `DESFireSession.verify`).
    func command(_ ins: UInt8, header: [UInt8] = [], data: [UInt8] = [], security: DESFireSecurity = .management,
                 length: Int? = nil, lengthIsExpected: Bool = false, what: String, secret: Bool = false) throws -> [UInt8] {
        try commandFrames(ins, header: header, data: data, security: security, length: length, lengthIsExpected: lengthIsExpected,
                          what: what, secret: secret).flatMap { $0 }
    }

    /// `command`, the plain answer cut where the card's frames were cut (GetDFNames sends one
    /// application per frame).
    func commandFrames(_ ins: UInt8, header: [UInt8] = [], data: [UInt8] = [], security: DESFireSecurity = .management,
                       length: Int? = nil, lengthIsExpected: Bool = false, what: String, secret: Bool = false) throws -> [[UInt8]] {
        let payload = try session.map { try $0.protect(ins: ins, header: header, data: data, security: security) } ?? header + data
        let (frames, status) = try exchange(ins, payload, secretFrom: secret ? header.count : nil)
        guard status == StatusWord(rawValue: 0x9100) else {
            session = nil
            throw DESFireError.status(status, what)
        }
        guard let session else { return frames }
        let plain: [UInt8]
        do {
            plain = try session.verify(frames.flatMap { $0 }, ins: ins, security: security, length: length, lengthIsExpected: lengthIsExpected, what: what)
        } catch {
            // An answer that does not verify ends the session here as well: its IV is lost.
            self.session = nil
            throw error
        }
        var out: [[UInt8]] = [], at = 0
        for frame in frames where at < plain.count {
            let n = min(frame.count, plain.count - at)
            out.append(Array(plain[at..<(at + n)]))
            at += n
        }
        return out
    }

    /// Forgets the session (the card forgot it: a key it was made with changed, or the card went).
    func endSession() { session = nil }

    /// Opens `session` (an authentication just made).
    func begin(_ session: DESFireSession) { self.session = session }

    /// What the card selected by itself (the card level after DeleteApplication of the selected one).
    func setApplication(_ aid: DESFireApplicationID?) { application = aid }

    // MARK: - Card level

    /// GetVersion (`90 60`): hardware, software, UID, batch, production date.
    public func getVersion() throws -> DESFireVersion {
        let v = try DESFireVersion(bytes: command(0x60, what: "GetVersion"))
        version = v
        return v
    }

    /// GetCardUID (`90 51`, EV1 and later, after an authentication): the real UID, also with
    /// random ID on. Enciphered; its CRC checked.
    public func cardUID() throws -> [UInt8] {
        guard session != nil else { throw DESFireError(.authenticationError, "GetCardUID needs an authentication first") }
        let answer = try command(0x51, security: .read(.full), length: session?.scheme == .ev2 ? nil : 7, what: "GetCardUID")
        guard answer.count == 7 || answer.count == 10 else { throw DESFireError(.malformed, "GetCardUID answered \(answer.count) bytes") }
        return answer
    }

    /// FreeMemory (`90 6E`): bytes free on the card.
    public func freeMemory() throws -> Int {
        let a = try command(0x6E, what: "FreeMemory")
        guard a.count == 3 else { throw DESFireError(.malformed, "FreeMemory answered \(a.count) bytes, not 3") }
        return Int(a[0]) | Int(a[1]) << 8 | Int(a[2]) << 16
    }

    /// GetApplicationIDs (`90 6A`): the applications on the card (card level selected).
    public func applicationIDs() throws -> [DESFireApplicationID] {
        let a = try command(0x6A, what: "GetApplicationIDs")
        guard a.count % 3 == 0 else { throw DESFireError(.malformed, "GetApplicationIDs answered \(a.count) bytes, not whole AIDs") }
        return stride(from: 0, to: a.count, by: 3).map { DESFireApplicationID(wire: a[$0..<($0 + 3)]) }
    }

    /// An application's ISO names (GetDFNames).
    public struct DFName: Sendable, Hashable {
        public var aid: DESFireApplicationID
        public var isoFileID: UInt16
        public var name: [UInt8]
    }

    /// GetDFNames (`90 6D`, EV1): the applications created with ISO names; one frame each.
    public func dfNames() throws -> [DFName] {
        try commandFrames(0x6D, what: "GetDFNames").filter { !$0.isEmpty }.map { f throws(DESFireError) -> DFName in
            guard f.count >= 5 else { throw DESFireError(.malformed, "a GetDFNames entry of \(f.count) bytes") }
            return DFName(aid: DESFireApplicationID(wire: f[0..<3]), isoFileID: UInt16(f[3]) | UInt16(f[4]) << 8, name: Array(f[5...]))
        }
    }

    /// SelectApplication (`90 5A`): the application (or `.picc`, the card level). Ends any
    /// authentication. Costs nothing when the application is selected already and no session
    /// needs to end.
    public func selectApplication(_ aid: DESFireApplicationID) throws {
        if application == aid && session == nil { return }
        session = nil
        application = nil
        _ = try command(0x5A, header: aid.wire, security: .none, what: "SelectApplication \(aid)")
        application = aid
    }

    /// GetKeySettings (`90 45`) of the selected application (or the card).
    public func keySettings() throws -> DESFireKeyInfo {
        try DESFireKeyInfo(parsing: command(0x45, what: "GetKeySettings"))
    }

    /// GetKeyVersion (`90 64`).
    public func keyVersion(_ number: UInt8) throws -> UInt8 {
        let a = try command(0x64, header: [number], what: "GetKeyVersion \(number)")
        guard a.count == 1 else { throw DESFireError(.malformed, "GetKeyVersion answered \(a.count) bytes") }
        return a[0]
    }

    /// GetFileIDs (`90 6F`) of the selected application.
    public func fileIDs() throws -> [UInt8] {
        try command(0x6F, what: "GetFileIDs")
    }

    /// GetISOFileIDs (`90 61`, EV1): the ISO identifiers of the application's files.
    public func isoFileIDs() throws -> [UInt16] {
        let a = try command(0x61, what: "GetISOFileIDs")
        guard a.count % 2 == 0 else { throw DESFireError(.malformed, "GetISOFileIDs answered \(a.count) bytes") }
        return stride(from: 0, to: a.count, by: 2).map { UInt16(a[$0]) | UInt16(a[$0 + 1]) << 8 }
    }

    /// GetFileSettings (`90 F5`).
    public func fileSettings(_ file: UInt8) throws -> DESFireFileSettings {
        try DESFireFileSettings(parsing: command(0xF5, header: [file], what: "GetFileSettings of file \(file)"))
    }
}
