import CardCrypto
import ISO7816
import VirtualCard

// A reader for the tests of the emulated eMRTD chip, written here from ICAO 9303 Part 11 apart
// from the chip's code: BAC, secure messaging (3DES and AES), file reads. Straightforward on
// purpose; the library's reader (the MRTD module) is the one meant for use.

/// The terminal's side of secure messaging (Part 11 §9.8).
struct TestSecureMessaging {
    let cipher: CipherAlgorithm
    let encryptionKey: [UInt8]
    let macKey: [UInt8]
    var ssc: [UInt8]

    init(cipher: CipherAlgorithm, encryptionKey: [UInt8], macKey: [UInt8], ssc: [UInt8]) {
        self.cipher = cipher
        self.encryptionKey = encryptionKey
        self.macKey = macKey
        self.ssc = ssc
    }

    enum Answer: Equatable {
        /// A protected answer whose MAC checked out, unwrapped.
        case success(ResponseAPDU)
        /// A bare status word (an SM error, or a chip refusing before secure messaging).
        case unprotected(StatusWord)
        /// Anything else: a wrong MAC, missing objects.
        case broken([UInt8])
    }

    var block: Int { cipher.blockSize }

    mutating func step() {
        for i in stride(from: ssc.count - 1, through: 0, by: -1) {
            ssc[i] &+= 1
            if ssc[i] != 0 { break }
        }
    }

    func mac(_ data: [UInt8]) -> [UInt8] {
        let padded = Padding.pad(data, blockSize: block)
        if cipher.isAES { return Array(try! CMAC(cipher, key: macKey).mac(padded).prefix(8)) }
        return try! RetailMAC.mac(key: macKey, data: padded)
    }

    func iv() -> [UInt8] {
        cipher.isAES ? try! BlockCipher(cipher, key: encryptionKey).encrypt(block: ssc) : [UInt8](repeating: 0, count: block)
    }

    static func tlv(_ tag: UInt8, _ value: [UInt8]) -> [UInt8] { [tag] + BERTLV.encodeLength(value.count) + value }

    /// The protected form of `command`; `extended` forces an extended APDU (Le 0000).
    mutating func protect(_ command: CommandAPDU, extended: Bool = false) -> [UInt8] {
        step()
        var objects: [UInt8] = []
        if !command.data.isEmpty {
            let cryptogram = try! BlockCipher(cipher, key: encryptionKey).encrypt(cbc: Padding.pad(command.data, blockSize: block), iv: iv())
            objects += command.ins & 1 == 1 ? Self.tlv(0x85, cryptogram) : Self.tlv(0x87, [0x01] + cryptogram)
        }
        if let ne = command.ne {
            let long = extended || ne > 256
            objects += Self.tlv(0x97, long ? [UInt8(ne >> 8 & 0xFF), UInt8(ne & 0xFF)] : [UInt8(ne & 0xFF)])
        }
        let cla = command.cla | 0x0C
        let header = Padding.pad([cla, command.ins, command.p1, command.p2], blockSize: block)
        objects += Self.tlv(0x8E, mac(ssc + header + objects))
        let long = extended || objects.count > 255 || (command.ne ?? 0) > 256
        return CommandAPDU(cla: cla, ins: command.ins, p1: command.p1, p2: command.p2, data: objects, ne: long ? 65536 : 256, forceExtended: long).bytes
    }

    /// Checks and unwraps the chip's answer; a bare status word is passed on without touching
    /// the counter (the command never reached secure messaging, or the session is over).
    mutating func unprotect(_ raw: [UInt8]) -> Answer {
        guard raw.count >= 2 else { return .broken(raw) }
        let sw = StatusWord(raw[raw.count - 2], raw[raw.count - 1])
        let body = Array(raw.dropLast(2))
        if body.isEmpty { return .unprotected(sw) }
        step()
        guard let objects = try? BERTLV.decode(body), let last = objects.last, last.tag == [0x8E] else { return .broken(raw) }
        var covered: [UInt8] = []
        var data: [UInt8] = []
        var inner: StatusWord?
        for o in objects.dropLast() {
            covered += o.tag + BERTLV.encodeLength(o.value.count) + o.value
            switch o.tag {
            case [0x87]:
                guard o.value.first == 1, let plain = try? BlockCipher(cipher, key: encryptionKey).decrypt(cbc: Array(o.value.dropFirst()), iv: iv()),
                      let unpadded = Padding.unpad(plain, blockSize: block) else { return .broken(raw) }
                data = unpadded
            case [0x85]:
                guard let plain = try? BlockCipher(cipher, key: encryptionKey).decrypt(cbc: o.value, iv: iv()),
                      let unpadded = Padding.unpad(plain, blockSize: block) else { return .broken(raw) }
                data = unpadded
            case [0x99]:
                guard o.value.count == 2 else { return .broken(raw) }
                inner = StatusWord(o.value[0], o.value[1])
            default:
                return .broken(raw)
            }
        }
        guard constantTimeEquals(mac(ssc + covered), last.value), let inner, inner == sw else { return .broken(raw) }
        return .success(ResponseAPDU(data: data, statusWord: inner))
    }

    mutating func send(_ command: CommandAPDU, to card: some EmulatedCard, extended: Bool = false) -> Answer {
        unprotect(card.process(protect(command, extended: extended)))
    }
}

/// The ICAO KDF (Part 11 §9.7.1), written again here.
enum TestKDF {
    static func key(_ secret: [UInt8], _ counter: UInt8, _ cipher: CipherAlgorithm) -> [UInt8] {
        let input = secret + [0, 0, 0, counter]
        switch cipher {
        case .aes192, .aes256: return Array(Digest.sha256.hash(input).prefix(cipher.keySize))
        case .aes128: return Array(Digest.sha1.hash(input).prefix(16))
        default:
            return Digest.sha1.hash(input).prefix(16).map { b in
                var v = b & 0xFE
                if (v.nonzeroBitCount & 1) == 0 { v |= 1 }
                return v
            }
        }
    }

    /// The MRZ information's check digits (Part 3 §4.9).
    static func checkDigit(_ s: String) -> String {
        let weights = [7, 3, 1]
        var sum = 0
        for (i, c) in s.utf8.enumerated() {
            let v: Int = c >= 0x30 && c <= 0x39 ? Int(c - 0x30) : c >= 0x41 && c <= 0x5A ? Int(c - 0x41) + 10 : 0
            sum += v * weights[i % 3]
        }
        return String(sum % 10)
    }

    static func mrzInformation(_ number: String, _ birth: String, _ expiry: String) -> [UInt8] {
        Array((number + checkDigit(number) + birth + checkDigit(birth) + expiry + checkDigit(expiry)).utf8)
    }
}

/// A terminal that opens the chip with BAC and reads files.
struct TestReader<Card: EmulatedCard> {
    let card: Card
    var sm: TestSecureMessaging?
    /// The chip's PACE mapping key of the last run (CAM checks it).
    var lastChipMappingKey: [UInt8] = []

    init(_ card: Card) { self.card = card }

    enum Failure: Error, Equatable { case status(StatusWord), broken([UInt8]), notOpen }

    mutating func selectApplication() throws(Failure) {
        let r = card.process([0x00, 0xA4, 0x04, 0x0C, 0x07] + MRTDChip.applicationIdentifier)
        guard r == [0x90, 0x00] else { throw .broken(r) }
    }

    /// BAC (Part 11 §4.3.3), the terminal's half.
    mutating func openBAC(number: String, birth: String, expiry: String, rndIFD: [UInt8] = secureRandomBytes(8), kIFD: [UInt8] = secureRandomBytes(16)) throws(Failure) {
        let seed = Array(Digest.sha1.hash(TestKDF.mrzInformation(number, birth, expiry)).prefix(16))
        let kEnc = TestKDF.key(seed, 1, .tdes2), kMac = TestKDF.key(seed, 2, .tdes2)
        let challenge = card.process([0x00, 0x84, 0x00, 0x00, 0x08])
        guard challenge.count == 10, challenge.suffix(2) == [0x90, 0x00] else { throw .broken(challenge) }
        let rndIC = Array(challenge.prefix(8))
        let e = try! BlockCipher(.tdes2, key: kEnc).encrypt(cbc: rndIFD + rndIC + kIFD)
        let m = try! RetailMAC.mac(key: kMac, data: Padding.pad(e, blockSize: 8))
        let answer = card.process([0x00, 0x82, 0x00, 0x00, 0x28] + e + m + [0x28])
        guard answer.count == 42, answer.suffix(2) == [0x90, 0x00] else { throw .status(StatusWord(answer[answer.count - 2], answer[answer.count - 1])) }
        let eIC = Array(answer[0..<32])
        guard constantTimeEquals(try! RetailMAC.mac(key: kMac, data: Padding.pad(eIC, blockSize: 8)), Array(answer[32..<40])) else { throw .broken(answer) }
        let r = try! BlockCipher(.tdes2, key: kEnc).decrypt(cbc: eIC)
        guard Array(r[0..<8]) == rndIC, Array(r[8..<16]) == rndIFD else { throw .broken(answer) }
        let kSeed = zip(kIFD, r[16..<32]).map { $0 ^ $1 }
        sm = TestSecureMessaging(cipher: .tdes2, encryptionKey: TestKDF.key(kSeed, 1, .tdes2), macKey: TestKDF.key(kSeed, 2, .tdes2),
                                 ssc: Array(rndIC[4..<8]) + Array(rndIFD[4..<8]))
    }

    mutating func send(_ command: CommandAPDU, extended: Bool = false) throws(Failure) -> ResponseAPDU {
        guard var s = sm else { throw .notOpen }
        let answer = s.send(command, to: card, extended: extended)
        sm = s
        switch answer {
        case .success(let r): return r
        case .unprotected(let sw): throw .status(sw)
        case .broken(let b): throw .broken(b)
        }
    }

    /// Reads a whole EF of the application (selected by its FID), `chunk` bytes at a time;
    /// B1 past 32 767 bytes.
    mutating func read(fileIdentifier fid: UInt16, chunk: Int = 224) throws(Failure) -> [UInt8] {
        let select = try send(CommandAPDU(cla: 0, ins: 0xA4, p1: 0x02, p2: 0x0C, data: [UInt8(fid >> 8), UInt8(fid & 0xFF)]))
        guard select.statusWord == .success else { throw .status(select.statusWord) }
        let head = try send(CommandAPDU(cla: 0, ins: 0xB0, p1: 0, p2: 0, ne: 4))
        guard head.data.count == 4 else { throw .status(head.statusWord) }
        // The outer TLV's length says how long the file is.
        var total = 0
        if head.data[1] < 0x80 { total = 2 + Int(head.data[1]) } else {
            let n = Int(head.data[1] & 0x7F)
            for i in 0..<n { total = total << 8 | Int(head.data[2 + i]) }
            total += 2 + n
        }
        var bytes = head.data
        while bytes.count < total {
            let want = min(chunk, total - bytes.count)
            let r: ResponseAPDU
            if bytes.count > 0x7FFF {
                let o = bytes.count
                r = try send(CommandAPDU(cla: 0, ins: 0xB1, p1: 0, p2: 0, data: [0x54, 0x03, UInt8(o >> 16), UInt8(o >> 8 & 0xFF), UInt8(o & 0xFF)], ne: want + 4))
                guard let d = try? BERTLV.decode(r.data).first, d.tag == [0x53] else { throw .broken(r.data) }
                bytes += d.value
            } else {
                r = try send(CommandAPDU(cla: 0, ins: 0xB0, p1: UInt8(bytes.count >> 8), p2: UInt8(bytes.count & 0xFF), ne: want))
                guard !r.data.isEmpty else { throw .status(r.statusWord) }
                bytes += r.data
            }
        }
        return bytes
    }
}
