// NTAG 424 DNA's EV2 secure messaging from the reader's side: AuthenticateEV2First and
// NonFirst, session keys, and commands and answers in CommMode MAC and FULL.
import ISO7816
import SUN

/// How a native command's data travels on NTAG 424 DNA (NT4H2421Gx datasheet §8.2.4) and
/// MIFARE DESFire (a file's communication settings: 00 plain, 01 MAC, 11 full).
public enum CommMode: String, Sendable, Hashable, CustomStringConvertible {
    /// In the clear.
    case plain
    /// In the clear, with an 8-byte truncated CMAC (SesAuthMACKey) on the command and the answer.
    case mac
    /// Encrypted (SesAuthENCKey, AES-CBC, ISO 9797-1 padding method 2) and MACed.
    case full

    public var description: String {
        switch self {
        case .plain: return "plain"
        case .mac: return "MAC"
        case .full: return "full (encrypted)"
        }
    }
}

/// An authenticated EV2 session (AuthenticateEV2First / NonFirst): the transaction identifier,
/// the session keys and the command counter, and the wrapping of commands and answers in
/// CommMode.MAC and CommMode.FULL (NXP AN12196 §5, whose worked examples are its tests). One
/// implementation for NTAG 424 DNA and MIFARE DESFire EV2/EV3 (NXP AN12343's examples pin it too).
public final class EV2Session: @unchecked Sendable {
    /// TI: the transaction identifier the card chose.
    public let transactionIdentifier: [UInt8]
    public let keyNumber: UInt8
    /// CmdCtr: commands sent since the authentication.
    public private(set) var commandCounter: UInt16
    let encryption: AES128
    let macKey: AES128

    public init(transactionIdentifier: [UInt8], encryptionKey: [UInt8], macKey: [UInt8], keyNumber: UInt8 = 0, commandCounter: UInt16 = 0) throws(SUNError) {
        self.transactionIdentifier = transactionIdentifier
        encryption = try AES128(key: encryptionKey)
        self.macKey = try AES128(key: macKey)
        self.keyNumber = keyNumber
        self.commandCounter = commandCounter
    }

    /// AuthenticateEV2First's session keys: SV1 = A5 5A 00 01 00 80 ‖ RndA[15..14] ‖
    /// (RndA[13..8] ⊕ RndB[15..10]) ‖ RndB[9..0] ‖ RndA[7..0] (bytes numbered from the right),
    /// SV2 the same with 5A A5; each CMACed with the key.
    static func sessionKeys(key: AES128, rndA: [UInt8], rndB: [UInt8]) -> (enc: [UInt8], mac: [UInt8]) {
        var mix = Array(rndA[0..<2])
        for i in 0..<6 { mix.append(rndA[2 + i] ^ rndB[i]) }
        mix += rndB[6...] + rndA[8...]
        return (key.cmac([0xA5, 0x5A, 0x00, 0x01, 0x00, 0x80] + mix), key.cmac([0x5A, 0xA5, 0x00, 0x01, 0x00, 0x80] + mix))
    }

    /// The truncated CMAC (odd bytes) over `data` with SesAuthMACKey.
    func mac(_ data: [UInt8]) -> [UInt8] { SUNMessage.truncate(macKey.cmac(data)) }

    var counterBytes: [UInt8] { [UInt8(commandCounter & 0xFF), UInt8(commandCounter >> 8)] }

    /// The IV of FULL mode: E(SesAuthENC, A5 5A ‖ TI ‖ CmdCtr ‖ 0⁸) for a command, 5A A5 for an
    /// answer (proxmark3 `DesfireEV2FillIV`'s vectors pin it).
    func iv(command: Bool) -> [UInt8] {
        encryption.encrypt(block: (command ? [0xA5, 0x5A] : [0x5A, 0xA5]) + transactionIdentifier + counterBytes + [UInt8](repeating: 0, count: 8))
    }

    /// The command APDU `90 ins 00 00 Lc header ‖ data ‖ MAC 00` in `mode`: in FULL the data
    /// is encrypted (IV = E(K, A5 5A ‖ TI ‖ CmdCtr ‖ 0⁸), padding 80 00…); in MAC and FULL the
    /// MAC covers ins ‖ CmdCtr ‖ TI ‖ header ‖ data. The counter moves on when the answer is
    /// checked (`unwrap`).
    public func wrap(ins: UInt8, header: [UInt8] = [], data: [UInt8] = [], mode: CommMode) throws(SUNError) -> CommandAPDU {
        var body = data
        if mode == .full && !data.isEmpty {
            var padded = data + [0x80]
            while padded.count % 16 != 0 { padded.append(0) }
            body = try encryption.cbcEncrypt(padded, iv: iv(command: true))
        }
        var payload = header + body
        if mode != .plain { payload += mac([ins] + counterBytes + transactionIdentifier + payload) }
        return CommandAPDU(cla: 0x90, ins: ins, p1: 0, p2: 0, data: payload, ne: 256)
    }

    /// Checks the answer to the command just wrapped: `91 00`, its MAC over status ‖ CmdCtr+1
    /// ‖ TI ‖ data (MAC and FULL; compared in constant time), and in FULL decrypts the data
    /// (IV = E(K, 5A A5 ‖ TI ‖ CmdCtr+1 ‖ 0⁸)) and removes its padding. The counter moves on
    /// with every `91 00`, as the card's does.
    public func unwrap(_ response: ResponseAPDU, mode: CommMode, what: String) throws -> [UInt8] {
        guard response.statusWord == StatusWord(rawValue: 0x9100) else { throw DESFireError.status(response.statusWord, what) }
        commandCounter &+= 1
        guard mode != .plain else { return response.data }
        guard response.data.count >= 8 else { throw DESFireError(.malformed, "\(what): the answer has no MAC (\(response.data.count) bytes)") }
        let data = Array(response.data.dropLast(8))
        guard constantTimeEqual(mac([0x00] + counterBytes + transactionIdentifier + data), Array(response.data.suffix(8))) else {
            throw DESFireError(.badCryptogram, "\(what): the answer's MAC does not verify (a card without this session's keys, or an altered answer)")
        }
        guard mode == .full, !data.isEmpty else { return data }
        var plain = try encryption.cbcDecrypt(data, iv: iv(command: false))
        guard let marker = plain.lastIndex(where: { $0 != 0 }), plain[marker] == 0x80 else {
            throw DESFireError(.malformed, "\(what): the decrypted answer has no 80 00… padding")
        }
        plain.removeSubrange(marker...)
        return plain
    }
}

/// AuthenticateEV2First (`90 71`) from the reader's side, for NTAG 424 DNA and DESFire EV2/EV3
/// alike: the card's E(K, RndB), our
/// E(K, RndA ‖ RndB<<<1), the card's E(K, TI ‖ RndA<<<1 ‖ PDcap2 ‖ PCDcap2), RndA checked in
/// constant time, then the session keys.
public enum EV2Authentication {
    /// - Parameters:
    ///   - transport: the channel, with the application selected (NTAG 424 DNA: the NDEF application).
    ///   - keyNumber: the key in the selected application (0-4 on NTAG 424 DNA, 0-13 on DESFire).
    ///   - key: the AES-128 key (never logged: the exchanges carry only cryptograms).
    ///   - rndA: 16 random bytes (a fixed value only in tests of published vectors).
    public static func first(_ transport: APDUTransport, keyNumber: UInt8, key: [UInt8], rndA: [UInt8]? = nil) throws -> EV2Session {
        let k = try AES128(key: key)
        let what = "AuthenticateEV2First with key \(keyNumber)"
        let r1 = try transport.send(CommandAPDU(cla: 0x90, ins: 0x71, p1: 0, p2: 0, data: [keyNumber, 0x00], ne: 256))
        guard r1.statusWord == StatusWord(rawValue: 0x91AF) else { throw DESFireError.status(r1.statusWord, what) }
        guard r1.data.count == 16 else { throw DESFireError(.malformed, "\(what): E(K, RndB) is \(r1.data.count) bytes, not 16") }
        let rndB = try k.cbcDecrypt(r1.data)
        let a = rndA ?? randomBytes(16)
        let r2 = try transport.send(CommandAPDU(cla: 0x90, ins: 0xAF, p1: 0, p2: 0, data: try k.cbcEncrypt(a + rndB[1...] + [rndB[0]]), ne: 256))
        guard r2.statusWord == StatusWord(rawValue: 0x9100) else { throw DESFireError.status(r2.statusWord, what) }
        guard r2.data.count == 32 else { throw DESFireError(.malformed, "\(what): the card's answer is \(r2.data.count) bytes, not 32") }
        let answer = try k.cbcDecrypt(r2.data)
        guard constantTimeEqual(Array(answer[4..<20]), Array(a[1...]) + [a[0]]) else {
            throw DESFireError(.badCryptogram, "\(what): the card's RndA' does not match: it does not hold this key, or the exchange was tampered with")
        }
        let keys = EV2Session.sessionKeys(key: k, rndA: a, rndB: rndB)
        return try EV2Session(transactionIdentifier: Array(answer[0..<4]), encryptionKey: keys.enc, macKey: keys.mac, keyNumber: keyNumber)
    }

    /// AuthenticateEV2NonFirst (`90 77`): a new key inside the transaction `session` opened — the
    /// same TI and command counter, fresh session keys; the card's RndA' checked in constant time.
    public static func nonFirst(_ transport: APDUTransport, session: EV2Session, keyNumber: UInt8, key: [UInt8], rndA: [UInt8]? = nil) throws -> EV2Session {
        let k = try AES128(key: key)
        let what = "AuthenticateEV2NonFirst with key \(keyNumber)"
        let r1 = try transport.send(CommandAPDU(cla: 0x90, ins: 0x77, p1: 0, p2: 0, data: [keyNumber], ne: 256))
        guard r1.statusWord == StatusWord(rawValue: 0x91AF) else { throw DESFireError.status(r1.statusWord, what) }
        guard r1.data.count == 16 else { throw DESFireError(.malformed, "\(what): E(K, RndB) is \(r1.data.count) bytes, not 16") }
        let rndB = try k.cbcDecrypt(r1.data)
        let a = rndA ?? randomBytes(16)
        let r2 = try transport.send(CommandAPDU(cla: 0x90, ins: 0xAF, p1: 0, p2: 0, data: try k.cbcEncrypt(a + rndB[1...] + [rndB[0]]), ne: 256))
        guard r2.statusWord == StatusWord(rawValue: 0x9100) else { throw DESFireError.status(r2.statusWord, what) }
        guard r2.data.count == 16 else { throw DESFireError(.malformed, "\(what): the card's answer is \(r2.data.count) bytes, not 16") }
        guard constantTimeEqual(try k.cbcDecrypt(r2.data), Array(a[1...]) + [a[0]]) else {
            throw DESFireError(.badCryptogram, "\(what): the card's RndA' does not match: it does not hold this key")
        }
        let keys = EV2Session.sessionKeys(key: k, rndA: a, rndB: rndB)
        return try EV2Session(transactionIdentifier: session.transactionIdentifier, encryptionKey: keys.enc, macKey: keys.mac,
                              keyNumber: keyNumber, commandCounter: session.commandCounter)
    }

    /// Random bytes from the kernel (getrandom through /dev/urandom semantics).
    static func randomBytes(_ n: Int) -> [UInt8] {
        var g = SystemRandomNumberGenerator()
        return (0..<n).map { _ in UInt8.random(in: 0...255, using: &g) }
    }
}
