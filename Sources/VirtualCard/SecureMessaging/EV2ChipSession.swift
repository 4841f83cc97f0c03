import CardCrypto

/// The chip side of NXP's EV2 secure messaging, as MIFARE DESFire EV2/EV3 and NTAG 424 DNA run it
/// (NT4H2421Gx §9, AN12196 §6, AN12343 §5): the three-pass AuthenticateEV2First/NonFirst, the
/// session keys, the command counter, and the MACs and encryption of CommMode.MAC and FULL.
///
/// Written from the datasheets apart from the library's reader side, so that a test of the one
/// against the other can fail. Key sizes are fixed here (AES-128), so the cipher calls cannot
/// fail on data from the wire; a failure would mean libcrypto itself refused, and is reported
/// as `nil` (the caller answers with an integrity error), never a trap.
struct EV2ChipSession: Sendable {
    /// TI, chosen by the chip at AuthenticateEV2First and kept by NonFirst.
    let transactionIdentifier: [UInt8]
    /// CmdCtr, the number of commands answered in the session (reset by EV2First only).
    private(set) var commandCounter: UInt16
    private let encryption: BlockCipher
    private let macKey: CMAC

    /// SesAuthENCKey and SesAuthMACKey (NT4H2421Gx §9.1.7, AN12343 §5.1.3): CMAC(K, SV) with
    /// SV = label ‖ 00 01 00 80 ‖ RndA[15..14] ‖ (RndA[13..8] ⊕ RndB[15..10]) ‖ RndB[9..0] ‖ RndA[7..0],
    /// most significant byte first.
    static func sessionKeys(key: [UInt8], rndA: [UInt8], rndB: [UInt8]) -> (encryption: [UInt8], mac: [UInt8])? {
        guard rndA.count == 16, rndB.count == 16, let k = try? CMAC(.aes128, key: key) else { return nil }
        var mix = Array(rndA[0..<2])
        for i in 0..<6 { mix.append(rndA[2 + i] ^ rndB[i]) }
        mix += rndB[6...] + rndA[8...]
        guard let enc = try? k.mac([0xA5, 0x5A, 0x00, 0x01, 0x00, 0x80] + mix),
              let mac = try? k.mac([0x5A, 0xA5, 0x00, 0x01, 0x00, 0x80] + mix) else { return nil }
        return (enc, mac)
    }

    init?(transactionIdentifier: [UInt8], commandCounter: UInt16 = 0, key: [UInt8], rndA: [UInt8], rndB: [UInt8]) {
        guard let keys = Self.sessionKeys(key: key, rndA: rndA, rndB: rndB) else { return nil }
        self.init(transactionIdentifier: transactionIdentifier, commandCounter: commandCounter, encryptionKey: keys.encryption, macKey: keys.mac)
    }

    /// A session from its keys (for the published examples that start from them).
    init?(transactionIdentifier: [UInt8], commandCounter: UInt16 = 0, encryptionKey: [UInt8], macKey: [UInt8]) {
        guard transactionIdentifier.count == 4, let enc = try? BlockCipher(.aes128, key: encryptionKey),
              let mac = try? CMAC(.aes128, key: macKey) else { return nil }
        self.transactionIdentifier = transactionIdentifier
        self.commandCounter = commandCounter
        encryption = enc
        self.macKey = mac
    }

    /// IV of FULL command data: E(SesAuthENCKey, A5 5A ‖ TI ‖ CmdCtr ‖ 0⁸).
    var commandIV: [UInt8]? { try? encryption.encrypt(block: [0xA5, 0x5A] + transactionIdentifier + counterBytes + [UInt8](repeating: 0, count: 8)) }

    /// CmdCtr as it goes on the wire: two bytes, least significant first.
    var counterBytes: [UInt8] { [UInt8(commandCounter & 0xFF), UInt8(commandCounter >> 8)] }

    /// MACt: the CMAC's bytes 1, 3, 5 … 15 (NT4H2421Gx §9.1.3).
    private func truncatedMAC(_ message: [UInt8]) -> [UInt8]? {
        guard let full = try? macKey.mac(message) else { return nil }
        return stride(from: 1, to: 16, by: 2).map { full[$0] }
    }

    /// The MAC a command must carry: over Cmd ‖ CmdCtr ‖ TI ‖ CmdHeader ‖ CmdData (the data as
    /// sent: enciphered in FULL mode).
    func commandMAC(command: UInt8, body: [UInt8]) -> [UInt8]? {
        truncatedMAC([command] + counterBytes + transactionIdentifier + body)
    }

    /// Checks the MAC at the end of `data` in constant time; returns the data before it.
    func verifyCommand(command: UInt8, _ data: [UInt8]) -> [UInt8]? {
        guard data.count >= 8, let expected = commandMAC(command: command, body: Array(data.dropLast(8))),
              constantTimeEquals(expected, Array(data.suffix(8))) else { return nil }
        return Array(data.dropLast(8))
    }

    /// Deciphers FULL command data: IV = E(SesAuthENCKey, A5 5A ‖ TI ‖ CmdCtr ‖ 0⁸), then strips
    /// ISO/IEC 9797-1 padding method 2. `nil` when the length or the padding is wrong.
    func decryptCommand(_ data: [UInt8]) -> [UInt8]? {
        decryptCommandPadded(data).flatMap { Padding.unpad($0, blockSize: 16) }
    }

    /// FULL command data deciphered, its padding left on (for a caller that checks it its own way).
    func decryptCommandPadded(_ data: [UInt8]) -> [UInt8]? {
        guard !data.isEmpty, data.count % 16 == 0, let iv = commandIV else { return nil }
        return try? encryption.decrypt(cbc: data, iv: iv)
    }

    /// Moves CmdCtr on: once for every command answered with success (NT4H2421Gx §9.1.2).
    mutating func advance() { commandCounter &+= 1 }

    /// The MAC on an answer, over RC ‖ CmdCtr ‖ TI ‖ RespData, with the counter already moved on.
    func responseMAC(status: UInt8, body: [UInt8]) -> [UInt8]? {
        truncatedMAC([status] + counterBytes + transactionIdentifier + body)
    }

    /// Enciphers FULL answer data: padding method 2, IV = E(SesAuthENCKey, 5A A5 ‖ TI ‖ CmdCtr ‖ 0⁸).
    func encryptResponse(_ data: [UInt8]) -> [UInt8]? {
        guard let iv = try? encryption.encrypt(block: [0x5A, 0xA5] + transactionIdentifier + counterBytes + [UInt8](repeating: 0, count: 8)) else { return nil }
        return try? encryption.encrypt(cbc: Padding.pad(data, blockSize: 16), iv: iv)
    }
}

/// The chip's half of AuthenticateEV2First / NonFirst with one AES key (AN12196 §6.6, NT4H2421Gx
/// §9.1.5): E(K, RndB) first, then the reader's E(K, RndA ‖ RndB') checked, then the answer.
struct EV2ChipAuthentication: Sendable {
    let keyNumber: UInt8
    let first: Bool
    let key: [UInt8]
    let rndB: [UInt8]

    /// Part 1: the chip's challenge E(K, RndB), IV zero.
    func challenge() -> [UInt8]? {
        guard let k = try? BlockCipher(.aes128, key: key) else { return nil }
        return try? k.encrypt(cbc: rndB)
    }

    enum Outcome {
        /// The reader proved the key: the answer to send and the session it opens.
        case authenticated(answer: [UInt8], session: EV2ChipSession)
        /// RndB' did not match (or the cryptogram was malformed).
        case refused
    }

    /// Part 2. `transactionIdentifier` is a fresh TI for EV2First; `previous` is the session
    /// NonFirst continues (its TI and CmdCtr are kept). `capabilities` is PDcap2 ‖ PCDcap2 (12 bytes).
    func respond(to cryptogram: [UInt8], transactionIdentifier: [UInt8], previous: EV2ChipSession?, capabilities: [UInt8]) -> Outcome {
        guard cryptogram.count == 32, let k = try? BlockCipher(.aes128, key: key),
              let plain = try? k.decrypt(cbc: cryptogram) else { return .refused }
        let rndA = Array(plain[0..<16])
        guard constantTimeEquals(Array(plain[16..<32]), Array(rndB[1...]) + [rndB[0]]) else { return .refused }
        let rotatedA = Array(rndA[1...]) + [rndA[0]]
        if first {
            guard let session = EV2ChipSession(transactionIdentifier: transactionIdentifier, key: key, rndA: rndA, rndB: rndB),
                  let answer = try? k.encrypt(cbc: transactionIdentifier + rotatedA + capabilities) else { return .refused }
            return .authenticated(answer: answer, session: session)
        }
        guard let previous, let session = EV2ChipSession(transactionIdentifier: previous.transactionIdentifier, commandCounter: previous.commandCounter,
                                                          key: key, rndA: rndA, rndB: rndB),
              let answer = try? k.encrypt(cbc: rotatedA) else { return .refused }
        return .authenticated(answer: answer, session: session)
    }
}
