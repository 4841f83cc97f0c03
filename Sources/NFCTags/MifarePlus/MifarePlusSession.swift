// MIFARE Plus security level 3, the crypto of EV0 secure messaging: the session keys
// AuthenticateFirst agrees, the MAC (the odd bytes of AES-CMAC), the read and write counters and
// the IVs as NXP lays them out (proxmark3's write IV is right only while the write counter is 0).
import CardCrypto

/// The state of an SL3 session after AuthenticateFirst: TI, the session keys, the counters.
///
/// Every MAC covers the command code, the counter of its kind, TI and the command's own bytes,
/// so a replayed or reordered frame does not verify. The counters move only on success: the card
/// increments R_Ctr after each read and W_Ctr after each write it carries out, and the reader
/// side mirrors that (`readDone()`, `writeDone()`).
public struct MifarePlusSession: Sendable {
    public var transactionIdentifier: [UInt8]
    public let encryptionKey: [UInt8]
    public let macKey: [UInt8]
    /// Counters, each 16 bits and sent LSB first; AuthenticateFirst sets both to 0,
    /// AuthenticateNonFirst keeps them.
    public var readCounter: UInt16 = 0
    public var writeCounter: UInt16 = 0

    /// The keys AuthenticateFirst (and NonFirst) derive from the sector key `key` and both random
    /// numbers: Kenc = E(K, RndA[11..15] ‖ RndB[11..15] ‖ (RndA[4..8] ⊕ RndB[4..8]) ‖ 11),
    /// Kmac = E(K, RndA[7..11] ‖ RndB[7..11] ‖ (RndA[0..4] ⊕ RndB[0..4]) ‖ 22).
    public init(key: [UInt8], rndA: [UInt8], rndB: [UInt8], transactionIdentifier: [UInt8]) throws(CryptoError) {
        let aes = try BlockCipher(.aes128, key: key)
        func xor(_ r: Range<Int>) -> [UInt8] { r.map { rndA[$0] ^ rndB[$0] } }
        encryptionKey = try aes.encrypt(block: Array(rndA[11..<16]) + Array(rndB[11..<16]) + xor(4..<9) + [0x11])
        macKey = try aes.encrypt(block: Array(rndA[7..<12]) + Array(rndB[7..<12]) + xor(0..<5) + [0x22])
        self.transactionIdentifier = transactionIdentifier
    }

    /// The 8-byte MAC: bytes 1, 3, …, 15 of AES-CMAC(Kmac, message).
    public func mac(_ message: [UInt8]) throws(CryptoError) -> [UInt8] {
        let full = try CMAC(.aes128, key: macKey).mac(message)
        return stride(from: 1, to: 16, by: 2).map { full[$0] }
    }

    static func le(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }

    /// R_Ctr ‖ W_Ctr, each LSB first.
    var counters: [UInt8] { Self.le(readCounter) + Self.le(writeCounter) }

    /// The IV of a command (PCD to PICC): TI ‖ (R_Ctr ‖ W_Ctr) × 3.
    public var commandIV: [UInt8] { transactionIdentifier + counters + counters + counters }
    /// The IV of an answer (PICC to PCD): (R_Ctr ‖ W_Ctr) × 3 ‖ TI.
    public var answerIV: [UInt8] { counters + counters + counters + transactionIdentifier }

    /// The MAC of a read command `3x BNr Ext`: over cmd ‖ R_Ctr ‖ TI ‖ BNr ‖ Ext.
    public func readCommandMAC(code: UInt8, block: UInt16, count: UInt8) throws(CryptoError) -> [UInt8] {
        try mac([code] + Self.le(readCounter) + transactionIdentifier + Self.le(block) + [count])
    }

    /// The MAC of a read's answer, with R_Ctr already moved on: over 90 ‖ R_Ctr ‖ TI ‖ BNr ‖ Ext ‖
    /// the data as sent (enciphered or plain).
    public func readAnswerMAC(block: UInt16, count: UInt8, data: [UInt8]) throws(CryptoError) -> [UInt8] {
        try mac([0x90] + Self.le(readCounter) + transactionIdentifier + Self.le(block) + [count] + data)
    }

    /// The MAC of a write command `Ax BNr data`: over cmd ‖ W_Ctr ‖ TI ‖ BNr ‖ the data as sent.
    public func writeCommandMAC(code: UInt8, block: UInt16, data: [UInt8]) throws(CryptoError) -> [UInt8] {
        try mac([code] + Self.le(writeCounter) + transactionIdentifier + Self.le(block) + data)
    }

    /// The MAC of a write's answer, with W_Ctr already moved on: over 90 ‖ W_Ctr ‖ TI.
    public func writeAnswerMAC() throws(CryptoError) -> [UInt8] {
        try mac([0x90] + Self.le(writeCounter) + transactionIdentifier)
    }

    /// Enciphers a write's data (whole blocks) under Kenc with the command IV of the counters now.
    public func encipherCommandData(_ data: [UInt8]) throws(CryptoError) -> [UInt8] {
        try BlockCipher(.aes128, key: encryptionKey).encrypt(cbc: data, iv: commandIV)
    }

    /// Deciphers a read's data under Kenc with the answer IV of the counters now (R_Ctr moved on).
    public func decipherAnswerData(_ data: [UInt8]) throws(CryptoError) -> [UInt8] {
        try BlockCipher(.aes128, key: encryptionKey).decrypt(cbc: data, iv: answerIV)
    }

    /// The card carried out a read: R_Ctr moves on (16 bits, wrapping as the card's does).
    public mutating func readDone() { readCounter &+= 1 }
    /// The card carried out a write: W_Ctr moves on.
    public mutating func writeDone() { writeCounter &+= 1 }
}
