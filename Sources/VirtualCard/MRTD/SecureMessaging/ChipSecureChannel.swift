// The chip side of ICAO 9303 secure messaging (Part 11 §9.8) in 3DES and AES: commands
// unwrapped and checked, answers wrapped.
import CardCrypto
import ISO7816

/// Secure messaging as the chip keeps it (ICAO 9303 Part 11 §9.8): the session keys, the send
/// sequence counter, and the wrapping of answers and unwrapping of commands. 3DES (BAC, PACE
/// and chip authentication with 3DES) and AES (PACE and chip authentication with AES).
struct ChipSecureChannel: Sendable {
    let algorithm: CipherAlgorithm
    private let encryption: BlockCipher
    /// K_Enc, kept only so that tests can look for it where it must never appear.
    let encryptionKey: [UInt8]
    let macKey: [UInt8]
    private let cmac: CMAC?
    /// The send sequence counter: 8 bytes for 3DES, 16 for AES.
    private(set) var ssc: [UInt8]

    init(algorithm: CipherAlgorithm, encryptionKey: [UInt8], macKey: [UInt8], ssc: [UInt8]? = nil) throws(CryptoError) {
        self.algorithm = algorithm
        encryption = try BlockCipher(algorithm, key: encryptionKey)
        self.encryptionKey = encryptionKey
        self.macKey = macKey
        cmac = algorithm.isAES ? try CMAC(algorithm, key: macKey) : nil
        if algorithm == .tdes2 && macKey.count != 16 { throw CryptoError(.badKey, "a retail MAC key is 16 bytes") }
        self.ssc = ssc ?? [UInt8](repeating: 0, count: algorithm.blockSize)
    }

    var blockSize: Int { algorithm.blockSize }

    mutating func incrementSSC() {
        for i in stride(from: ssc.count - 1, through: 0, by: -1) {
            ssc[i] &+= 1
            if ssc[i] != 0 { break }
        }
    }

    /// Puts the counter back (an answer the chip sends unprotected, as if the command had
    /// never reached secure messaging).
    mutating func restore(ssc old: [UInt8]) { ssc = old }

    /// The 8-byte MAC over `data` padded (method 2): the retail MAC for 3DES, CMAC truncated
    /// to 8 bytes for AES (Part 11 §9.8.6).
    func mac(_ data: [UInt8]) -> [UInt8] {
        let padded = Padding.pad(data, blockSize: blockSize)
        if let cmac { return Array(((try? cmac.mac(padded)) ?? []).prefix(8)) }
        return (try? RetailMAC.mac(key: macKey, data: padded)) ?? []
    }

    /// IV: zeros for 3DES, E(K_enc, SSC) for AES (Part 11 §9.8.6.1).
    private var iv: [UInt8] {
        if algorithm.isAES { return (try? encryption.encrypt(block: ssc)) ?? [] }
        return [UInt8](repeating: 0, count: blockSize)
    }

    func encrypt(_ plain: [UInt8]) -> [UInt8] {
        (try? encryption.encrypt(cbc: Padding.pad(plain, blockSize: blockSize), iv: iv)) ?? []
    }

    /// nil when the cryptogram is not whole blocks or its padding is wrong.
    func decrypt(_ cryptogram: [UInt8]) -> [UInt8]? {
        guard !cryptogram.isEmpty, cryptogram.count % blockSize == 0,
              let plain = try? encryption.decrypt(cbc: cryptogram, iv: iv) else { return nil }
        return Padding.unpad(plain, blockSize: blockSize)
    }

    // MARK: Commands

    /// Why a protected command is refused: the answer goes out unprotected (Part 11 §9.8.7)
    /// and the session ends.
    enum Refusal: Error { case dataObjects, mac }

    /// A protected command's inner command: its data objects checked in the order Part 11
    /// §9.8.4 fixes ([DO'87' or DO'85'] [DO'97'] DO'8E', 87 for an even INS, 85 for an odd
    /// one), the MAC checked over SSC+1 ‖ padded header ‖ those objects, the data deciphered.
    /// The counter is advanced when the MAC is checked, whatever the outcome.
    mutating func unwrap(_ command: CommandAPDU) throws(Refusal) -> CommandAPDU {
        var objects: [(tag: UInt8, value: [UInt8], end: Int)] = []
        let data = command.data
        var i = 0
        while i < data.count {
            let tag = data[i]
            i += 1
            guard i < data.count else { throw .dataObjects }
            var length = Int(data[i])
            i += 1
            if length > 0x80 {
                let n = length & 0x7F
                guard n <= 2, data.count - i >= n else { throw .dataObjects }
                length = 0
                for _ in 0..<n { length = length << 8 | Int(data[i]); i += 1 }
            } else if length == 0x80 {
                throw .dataObjects
            }
            guard data.count - i >= length else { throw .dataObjects }
            objects.append((tag, Array(data[i..<(i + length)]), i + length))
            i += length
        }
        guard let last = objects.last, last.tag == 0x8E else { throw .mac }
        let odd = command.ins & 1 == 1
        var expected: [UInt8] = odd ? [0x85, 0x97] : [0x87, 0x97]
        for o in objects.dropLast() {
            guard let at = expected.firstIndex(of: o.tag) else { throw .dataObjects }
            expected.removeFirst(at + 1)
        }
        // The MAC covers every object before DO'8E' as sent.
        let macEnd = objects.count > 1 ? objects[objects.count - 2].end : 0
        incrementSSC()
        let header = Padding.pad([command.cla, command.ins, command.p1, command.p2], blockSize: blockSize)
        let expectedMAC = mac(ssc + header + Array(data[0..<macEnd]))
        guard last.value.count == 8, constantTimeEquals(expectedMAC, last.value) else { throw .mac }

        var inner = CommandAPDU(cla: command.cla & ~0x0C, ins: command.ins, p1: command.p1, p2: command.p2)
        for o in objects.dropLast() {
            switch o.tag {
            case 0x87:
                guard o.value.first == 0x01, let plain = decrypt(Array(o.value.dropFirst())) else { throw .dataObjects }
                inner.data = plain
            case 0x85:
                guard let plain = decrypt(o.value) else { throw .dataObjects }
                inner.data = plain
            case 0x97:
                switch o.value.count {
                case 0: inner.ne = command.isExtended ? 65536 : 256
                case 1: inner.ne = o.value[0] == 0 ? 256 : Int(o.value[0])
                case 2:
                    let n = Int(o.value[0]) << 8 | Int(o.value[1])
                    inner.ne = n == 0 ? 65536 : n
                default: throw .dataObjects
                }
            default:
                throw .dataObjects
            }
        }
        return inner
    }

    // MARK: Answers

    /// The protected answer (Part 11 §9.8.5): [DO'87' or DO'85'] DO'99' DO'8E', the MAC over
    /// SSC+1 ‖ those objects; the status outside is the status inside.
    mutating func wrap(_ response: ResponseAPDU, oddINS: Bool) -> ResponseAPDU {
        incrementSSC()
        var objects: [UInt8] = []
        if !response.data.isEmpty {
            let cryptogram = encrypt(response.data)
            objects += oddINS ? DER.element(0x85, cryptogram) : DER.element(0x87, [0x01] + cryptogram)
        }
        objects += [0x99, 0x02, response.statusWord.sw1, response.statusWord.sw2]
        objects += [0x8E, 0x08] + mac(ssc + objects)
        return ResponseAPDU(data: objects, statusWord: response.statusWord)
    }

    /// The most plain bytes an answer can carry when its protected form must fit `limit`
    /// bytes of response data (256 for a short APDU): the chip sends less rather than an answer
    /// the APDU cannot frame, as a passport answering 231 bytes to Le 00 under 3DES does
    /// (NFCPassportReader #86).
    func capacity(within limit: Int, oddINS: Bool) -> Int {
        let fixed = 4 + 10
        func protectedSize(_ n: Int) -> Int {
            if n == 0 { return fixed }
            let body = (n / blockSize + 1) * blockSize + (oddINS ? 0 : 1)
            return fixed + 1 + BERTLV.encodeLength(body).count + body
        }
        var n = max(0, limit - fixed)
        while n > 0 && protectedSize(n) > limit { n -= 1 }
        return n
    }
}
