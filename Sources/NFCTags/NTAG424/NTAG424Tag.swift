// An NTAG 424 DNA over any channel: detection by GetVersion, EV2 authentication, file settings,
// key changes and the plain read a phone makes.
import CardCrypto
import ISO7816
import NDEF
import SUN

/// An NTAG 424 DNA (NT4H2421Gx) over any `CardChannel`: the NDEF application, GetVersion, EV2
/// authentication and secure messaging, file settings with Secure Dynamic Messaging, and key
/// changes. Its NDEF file is also an ordinary Type 4 tag's (`Type4Tag`), which writes it with the
/// NFC Forum's do-no-harm procedure.
public final class NTAG424Tag {
    public static let applicationID: [UInt8] = [0xD2, 0x76, 0x00, 0x00, 0x85, 0x01, 0x01]
    /// File numbers: 01 CC (E103), 02 NDEF (E104), 03 proprietary (E105).
    public static let ccFile: UInt8 = 1, ndefFile: UInt8 = 2, proprietaryFile: UInt8 = 3

    public let transport: APDUTransport
    public let version: NTAG424Version
    /// The EV2 session after `authenticate`, nil before (and after key 0 changed).
    public private(set) var session: EV2Session?

    init(transport: APDUTransport, version: NTAG424Version) {
        self.transport = transport
        self.version = version
    }

    /// Selects the NDEF application and asks GetVersion: the tag when it is an NTAG 424 DNA
    /// (vendor NXP, type 04), nil for any other card (no application, or another chip).
    public static func detect(_ transport: APDUTransport) throws -> NTAG424Tag? {
        guard try selectApplication(transport) else { return nil }
        var bytes: [UInt8] = []
        var r = try transport.send(CommandAPDU(cla: 0x90, ins: 0x60, p1: 0, p2: 0, ne: 256))
        var frames = 0
        while r.statusWord == StatusWord(rawValue: 0x91AF), frames < 3 {
            bytes += r.data
            frames += 1
            r = try transport.send(CommandAPDU(cla: 0x90, ins: 0xAF, p1: 0, p2: 0, ne: 256))
        }
        guard r.statusWord == StatusWord(rawValue: 0x9100) else { return nil }
        bytes += r.data
        guard let version = try? NTAG424Version(bytes: bytes), version.hardwareVendor == 0x04, version.hardwareType == 0x04 else { return nil }
        return NTAG424Tag(transport: transport, version: version)
    }

    static func selectApplication(_ transport: APDUTransport) throws -> Bool {
        let r = try transport.send(CommandAPDU(cla: 0x00, ins: 0xA4, p1: 0x04, p2: 0x0C, data: applicationID))
        return r.statusWord == .success
    }

    /// AuthenticateEV2First with `keyNumber`; the session it opens signs and encrypts what
    /// follows. With `nonFirst` and a session open, AuthenticateEV2NonFirst: another key in the
    /// same transaction (TI and command counter kept).
    public func authenticate(keyNumber: UInt8, key: [UInt8], nonFirst: Bool = false) throws {
        if nonFirst, let current = session {
            session = try EV2Authentication.nonFirst(transport, session: current, keyNumber: keyNumber, key: key)
            return
        }
        session = nil
        session = try EV2Authentication.first(transport, keyNumber: keyNumber, key: key)
    }

    /// Forgets the session (a SELECT of the application ended it on the tag).
    func endSession() { session = nil }

    /// Sends a native command in `mode` (plain without a session) and checks its answer.
    /// `secret`: the command's data carries key material (encrypted, but traces and recordings
    /// show it as `**` all the same).
    func command(_ ins: UInt8, header: [UInt8] = [], data: [UInt8] = [], mode: CommMode, what: String, secret: Bool = false) throws -> [UInt8] {
        guard let session else {
            let r = try transport.send(CommandAPDU(cla: 0x90, ins: ins, p1: 0, p2: 0, data: header + data, ne: 256))
            guard r.statusWord == StatusWord(rawValue: 0x9100) else { throw NTAG424Error.status(r.statusWord, what) }
            return r.data
        }
        let r = try send(try session.wrap(ins: ins, header: header, data: data, mode: mode), secretAfter: secret ? header.count : nil)
        return try session.unwrap(r, mode: mode, what: what)
    }

    /// Sends `apdu`, its data after `secretAfter` bytes marked secret for observers.
    func send(_ apdu: CommandAPDU, secretAfter: Int?) throws -> ResponseAPDU {
        guard let skip = secretAfter else { return try transport.send(apdu) }
        let length = apdu.bytes.count
        return try transport.send(apdu, secret: (5 + skip)..<(length - 1))
    }

    /// GetFileSettings (CommMode.MAC in a session, plain outside one).
    public func fileSettings(_ file: UInt8) throws -> NTAG424FileSettings {
        try NTAG424FileSettings(parsing: command(0xF5, header: [file], mode: .mac, what: "GetFileSettings of file \(file)"))
    }

    /// ChangeFileSettings (CommMode.FULL): one command, so the file has its old settings or the
    /// new ones, never a mix. Needs a session with the file's Change key.
    public func changeFileSettings(_ file: UInt8, to settings: NTAG424FileSettings) throws {
        guard session != nil else { throw NTAG424Error(.permissionDenied, "ChangeFileSettings needs an authentication with the file's change key first") }
        _ = try command(0x5F, header: [file], data: settings.changeData, mode: .full, what: "ChangeFileSettings of file \(file)")
    }

    /// ChangeKey (CommMode.FULL), in a session opened with key 0. Key 0 itself: the new key and
    /// its version (the session ends with it). Another key: new ⊕ old, the version and the
    /// CRC32 of the new key, so a wrong old key is refused (91 1E) instead of leaving a key
    /// nobody knows.
    ///
    /// A refusal, or an answer whose MAC fails, is only an answer: a reader or a man in the middle
    /// can put it in place of the tag's `91 00` after the tag changed the key (issue 49). After
    /// one, authentications decide: the old key (the refusal is thrown: nothing changed), else the
    /// new key (the change happened: `answerContradicted`, the session now that key's), else an
    /// error that claims neither.
    @discardableResult
    public func changeKey(_ number: UInt8, to new: [UInt8], from old: [UInt8], version: UInt8) throws -> DESFireKeyChange {
        guard let session, session.keyNumber == 0 else { throw NTAG424Error(.permissionDenied, "ChangeKey needs an authentication with key 0 first") }
        guard new.count == 16, old.count == 16, number < 5 else { throw NTAG424Error(.lengthError, "keys are 16 bytes and numbered 0-4") }
        do {
            if number == 0 {
                // The answer carries no MAC: the session's keys are gone with key 0.
                let r = try send(try session.wrap(ins: 0xC4, header: [0], data: new + [version], mode: .full), secretAfter: 1)
                self.session = nil
                guard r.statusWord == StatusWord(rawValue: 0x9100) else { throw NTAG424Error.status(r.statusWord, "ChangeKey 0") }
            } else {
                _ = try command(0xC4, header: [number], data: zip(new, old).map { $0 ^ $1 } + [version] + CRC.crc32(new), mode: .full,
                                what: "ChangeKey \(number)", secret: true)
            }
        } catch let refusal as NTAG424Error where refusal.statusWord != nil || refusal.kind == .badCryptogram || refusal.kind == .malformed {
            // Each claim its own proof (the review of issue 49: a faked failure of the new key's
            // authentication had turned a change into "refused"): the old key authenticates,
            // the new one does, or neither does.
            if (try? authenticate(keyNumber: number, key: old)) != nil { throw refusal }
            do {
                try authenticate(keyNumber: number, key: new)
            } catch {
                throw NTAG424Error(.badCryptogram, "\(refusal.message); and neither the old key given nor the new one authenticates now: not confirmed, key \(number) may be either (a 91 1E from the card itself means the old key given is not the key's value)")
            }
            return DESFireKeyChange(keyNumber: number, version: version, proved: true, answerContradicted: refusal.message)
        }
        return DESFireKeyChange(keyNumber: number, version: version, proved: false)
    }

    /// GetKeyVersion of `number`.
    public func keyVersion(_ number: UInt8) throws -> UInt8 {
        let answer = try command(0x64, header: [number], mode: .mac, what: "GetKeyVersion \(number)")
        guard answer.count == 1 else { throw NTAG424Error(.malformed, "GetKeyVersion answered \(answer.count) bytes") }
        return answer[0]
    }

    /// GetCardUID (CommMode.FULL): the real UID even with random ID on.
    /// GetTTStatus (NTAG 424 DNA TagTamper, `F7`, full mode in an authenticated session): the
    /// permanent and the current status letters, as the chip reads its loop now.
    public func tagTamperStatus() throws -> SUNTagTamperStatus {
        let answer = try command(0xF7, mode: .full, what: "GetTTStatus")
        guard let status = SUNTagTamperStatus(bytes: answer) else {
            throw NTAG424Error(.malformed, "GetTTStatus brought \(answer.count) bytes; 2 expected")
        }
        return status
    }

    public func cardUID() throws -> [UInt8] {
        try command(0x51, mode: .full, what: "GetCardUID")
    }

    /// The NDEF file as a phone reads it without a key: ISO SELECT E104 and READ BINARY of
    /// `length` bytes — with SDM on, the mirrors filled and the read counter moved on.
    public func plainRead(length: Int) throws -> [UInt8] {
        let s = try transport.send(CommandAPDU(cla: 0x00, ins: 0xA4, p1: 0x00, p2: 0x0C, data: [0xE1, 0x04]))
        guard s.statusWord == .success else { throw NTAG424Error.status(s.statusWord, "SELECT of the NDEF file") }
        var out: [UInt8] = []
        while out.count < length {
            let want = min(255, length - out.count)
            let r = try transport.send(CommandAPDU(cla: 0, ins: 0xB0, p1: UInt8(out.count >> 8), p2: UInt8(out.count & 0xFF), ne: want))
            guard r.statusWord == .success || r.statusWord == .endOfFileReached, !r.data.isEmpty else { throw NTAG424Error.status(r.statusWord, "READ BINARY of the NDEF file") }
            out += r.data
            if r.statusWord == .endOfFileReached { break }
        }
        return out
    }
}
