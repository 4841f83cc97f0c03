import CardCrypto
import ISO7816
@testable import MRTD

/// A small BAC-only eMRTD chip for reader tests, written from Part 10/11 (not from the reader's
/// code): files in the MF and the application, BAC, 3DES secure messaging on the chip's side,
/// and the faults real chips show (a size limit answered with a bare or protected 67 00, no SFI,
/// EAC-protected files, an SM error mid-read, fewer bytes than asked).
final class TestPassportChip: CardChannel {
    var appFiles: [UInt16: [UInt8]] = [:]
    var mfFiles: [UInt16: [UInt8]] = [:]
    var eacProtected: Set<UInt16> = []
    /// The largest Le the chip takes; larger reads are answered 67 00.
    var maximumRead = 65536
    /// Answer an oversized read with a bare 67 00 outside secure messaging (gmrtd #457).
    var bareWrongLength = false
    /// Answer every error status (6A 82, 69 82, 67 00 …) bare, outside secure messaging.
    var bareErrors = false
    /// The most plaintext bytes one answer carries (a chip that answers Le 256 with 223).
    var maximumAnswer = 65536
    var supportsShortIdentifiers = true
    /// Answer 67 00 when Le goes past the end of the file (instead of ISO's 62 82).
    var wrongLengthPastEnd = false
    var supportsExtendedLength = false
    /// Answer the n-th protected READ BINARY with 69 88 and drop the session.
    var failReadNumber: Int?
    var keySeed: [UInt8]
    var exchanges = 0
    var log: [[UInt8]] = []

    private var inApplication = false
    private var selected: UInt16?
    private var rndICC: [UInt8] = []
    private var session: (enc: BlockCipher, mac: [UInt8], ssc: [UInt8])?
    /// Chip authentication: the static private key on `caCurve`, and the chip's answer to it.
    var caCurve: (any KeyAgreementGroup)?
    /// Active authentication: signs the challenge (nil: INTERNAL AUTHENTICATE unsupported).
    var activeAuthentication: (([UInt8]) -> [UInt8])?
    var caPrivateKey: [UInt8] = []
    private var caCipher: CipherAlgorithm = .tdes2
    private var pendingKeys: (CipherAlgorithm, [UInt8])?
    private var reads = 0

    init(key: MRTDAccessKey) { keySeed = key.bacKeySeed ?? [] }

    func transmit(_ bytes: [UInt8]) throws -> [UInt8] {
        exchanges += 1
        log.append(bytes)
        guard var command = try? CommandAPDU(bytes: bytes) else { return [0x67, 0x00] }
        let secured = command.cla & 0x0C == 0x0C
        if secured {
            guard session != nil else { return [0x69, 0x88] }
            guard let plain = unwrap(command) else { session = nil; return [0x69, 0x88] }
            command = plain
        } else if session != nil && command.ins != 0x84 {
            // A plain command ends secure messaging.
            session = nil
        }
        let (data, sw) = process(command, secured: secured)
        let error = sw != 0x9000 && sw >> 8 != 0x61 && sw >> 8 != 0x62 && sw >> 8 != 0x63 && sw != 0x6988
        if secured && ((sw == 0x6700 && bareWrongLength) || (error && bareErrors)) {
            // Refused before secure messaging: the chip's SSC did not move for the command.
            decrement()
            return [UInt8(sw >> 8), UInt8(sw & 0xFF)]
        }
        if sw == 0x6988 { session = nil; return [0x69, 0x88] }
        let answer = secured && session != nil ? wrap(data, sw) : data + [UInt8(sw >> 8), UInt8(sw & 0xFF)]
        if let (cipher, secret) = pendingKeys {
            // Chip authentication: the answer went under the old keys; the new ones start now (SSC 0).
            pendingKeys = nil
            if let enc = try? BlockCipher(cipher, key: KeyDerivation.derive(secret, purpose: .encryption, cipher: cipher)) {
                session = (enc, KeyDerivation.derive(secret, purpose: .mac, cipher: cipher), [UInt8](repeating: 0, count: cipher.blockSize))
            }
        }
        return answer
    }

    private func process(_ c: CommandAPDU, secured: Bool) -> ([UInt8], UInt16) {
        switch (c.ins, c.p1) {
        case (0xA4, 0x04):
            guard c.data == MRTDReader.applicationIdentifier else { return ([], 0x6A82) }
            inApplication = true; selected = nil
            return ([], 0x9000)
        case (0xA4, 0x00):
            inApplication = false; selected = nil
            return ([], 0x9000)
        case (0xA4, 0x02):
            guard c.data.count == 2 else { return ([], 0x6700) }
            let fid = UInt16(c.data[0]) << 8 | UInt16(c.data[1])
            return select(fid) ? ([], 0x9000) : ([], 0x6A82)
        case (0x84, _):
            rndICC = (0..<8).map { UInt8($0 * 17 + 3) }
            return (rndICC, 0x9000)
        case (0x82, _):
            return externalAuthenticate(c.data)
        case (0xB0, _), (0xB1, _):
            return read(c, secured: secured)
        case (0x88, _):
            guard let sign = activeAuthentication, c.data.count == 8 else { return ([], 0x6D00) }
            return (sign(c.data), 0x9000)
        case (0x22, 0x41) where c.p2 == 0xA6:
            guard let point = (try? BERTLV.decode(c.data))?.first(where: { $0.tag == [0x91] })?.value else { return ([], 0x6A80) }
            return agree(point, cipher: .tdes2)
        case (0x22, 0x41) where c.p2 == 0xA4:
            guard let oid = (try? BERTLV.decode(c.data))?.first(where: { $0.tag == [0x80] })?.value, let last = oid.last else { return ([], 0x6A80) }
            caCipher = [2: .aes128, 3: .aes192, 4: .aes256][last] ?? .tdes2
            return ([], 0x9000)
        case (0x86, _):
            guard let point = (try? BERTLV.decode(c.data))?.first?.children?.first(where: { $0.tag == [0x80] })?.value else { return ([], 0x6A80) }
            let (_, sw) = agree(point, cipher: caCipher)
            return sw == 0x9000 ? ([0x7C, 0x00], sw) : ([], sw)
        default:
            return ([], 0x6D00)
        }
    }

    private func agree(_ point: [UInt8], cipher: CipherAlgorithm) -> ([UInt8], UInt16) {
        guard let curve = caCurve, let pair = try? curve.keyPair(privateKey: caPrivateKey),
              let secret = try? curve.sharedSecret(privateKey: pair.privateKey, peer: point) else { return ([], 0x6A80) }
        pendingKeys = (cipher, secret)
        return ([], 0x9000)
    }

    private func select(_ fid: UInt16) -> Bool {
        let files = inApplication ? appFiles : mfFiles
        guard files[fid] != nil || eacProtected.contains(fid) else { return false }
        selected = fid
        return true
    }

    private func read(_ c: CommandAPDU, secured: Bool) -> ([UInt8], UInt16) {
        if inApplication && session == nil { return ([], 0x6982) }
        var offset: Int
        if c.ins == 0xB0 && c.p1 & 0x80 != 0 {
            guard supportsShortIdentifiers else { return ([], 0x6A86) }
            let sfi = c.p1 & 0x1F
            // MF: EF.DIR 1E, EF.CardAccess 1C, EF.CardSecurity 1D; the application: the FID's low byte.
            let mf: [UInt8: UInt16] = [0x1E: 0x2F00, 0x1C: 0x011C, 0x1D: 0x011D, 0x01: 0x2F01]
            let fid: UInt16? = inApplication ? (appFiles.keys.first { UInt8($0 & 0xFF) == sfi } ?? eacProtected.first { UInt8($0 & 0xFF) == sfi }) : mf[sfi]
            guard let fid, select(fid) else { return ([], 0x6A82) }
            offset = Int(c.p2)
        } else if c.ins == 0xB0 {
            offset = Int(c.p1) << 8 | Int(c.p2)
        } else {
            guard c.data.count == 5, c.data[0] == 0x54, c.data[1] == 3 else { return ([], 0x6A80) }
            offset = Int(c.data[2]) << 16 | Int(c.data[3]) << 8 | Int(c.data[4])
        }
        guard let fid = selected else { return ([], 0x6986) }
        if eacProtected.contains(fid) { return ([], 0x6982) }
        guard let file = (inApplication ? appFiles : mfFiles)[fid] else { return ([], 0x6A82) }
        let le = c.ne ?? 256
        if le > maximumRead { return ([], 0x6700) }
        if wrongLengthPastEnd && offset + le > file.count { return ([], 0x6700) }
        if secured {
            reads += 1
            if reads == failReadNumber { return ([], 0x6988) }
        }
        guard offset <= file.count else { return ([], 0x6B00) }
        var count = min(le, maximumAnswer, file.count - offset)
        if c.ins == 0xB1 { count = max(0, min(count, le - 4)) }
        let piece = Array(file[offset..<(offset + count)])
        let body = c.ins == 0xB1 ? [0x53] + BERTLV.encodeLength(piece.count) + piece : piece
        return (body, offset + count >= file.count && count < le && c.ins == 0xB0 ? 0x6282 : 0x9000)
    }

    private func externalAuthenticate(_ data: [UInt8]) -> ([UInt8], UInt16) {
        guard data.count == 40 else { return ([], 0x6700) }
        let kEnc = KeyDerivation.derive(keySeed, purpose: .encryption, cipher: .tdes2)
        let kMac = KeyDerivation.derive(keySeed, purpose: .mac, cipher: .tdes2)
        guard let cipher = try? BlockCipher(.tdes2, key: kEnc),
              let mac = try? RetailMAC.mac(key: kMac, data: Padding.pad(Array(data[0..<32]), blockSize: 8)),
              mac == Array(data[32..<40]), let s = try? cipher.decrypt(cbc: Array(data[0..<32])), Array(s[8..<16]) == rndICC else {
            return ([], 0x6300)
        }
        let kICC = (0..<16).map { UInt8($0 * 7 + 1) }
        let e = (try? cipher.encrypt(cbc: rndICC + Array(s[0..<8]) + kICC)) ?? []
        let m = (try? RetailMAC.mac(key: kMac, data: Padding.pad(e, blockSize: 8))) ?? []
        let seed = zip(Array(s[16..<32]), kICC).map { $0 ^ $1 }
        if let enc = try? BlockCipher(.tdes2, key: KeyDerivation.derive(seed, purpose: .encryption, cipher: .tdes2)) {
            session = (enc, KeyDerivation.derive(seed, purpose: .mac, cipher: .tdes2), Array(rndICC.suffix(4) + s[4..<8]))
        }
        return (e + m, 0x9000)
    }

    // Chip-side secure messaging (Part 11 §9.8), 3DES.
    private func increment() { guard var s = session else { return }; for i in stride(from: s.ssc.count - 1, through: 0, by: -1) { s.ssc[i] &+= 1; if s.ssc[i] != 0 { break } }; session = s }
    private func decrement() { guard var s = session else { return }; for i in stride(from: s.ssc.count - 1, through: 0, by: -1) { s.ssc[i] &-= 1; if s.ssc[i] != 0xFF { break } }; session = s }
    private var block: Int { session?.enc.blockSize ?? 8 }
    private var iv: [UInt8]? { guard let s = session, s.enc.blockSize == 16 else { return nil }; return try? s.enc.encrypt(block: s.ssc) }
    private func mac(_ data: [UInt8]) -> [UInt8] {
        guard let s = session else { return [] }
        let input = Padding.pad(s.ssc + data, blockSize: s.enc.blockSize)
        if s.enc.blockSize == 16 { return (try? CMAC(s.enc.algorithm, key: s.mac).mac(input)).map { Array($0.prefix(8)) } ?? [] }
        return (try? RetailMAC.mac(key: s.mac, data: input)) ?? []
    }

    private func unwrap(_ c: CommandAPDU) -> CommandAPDU? {
        increment()
        guard let objects = try? BERTLV.decode(c.data), let last = objects.last, last.tag == [0x8E] else { return nil }
        let covered = Array(c.data.prefix(c.data.count - 10))
        guard mac(Padding.pad(c.header, blockSize: block) + covered) == last.value else { return nil }
        var plain = CommandAPDU(cla: c.cla & ~0x0C, ins: c.ins, p1: c.p1, p2: c.p2)
        for o in objects {
            if o.tag == [0x87] || o.tag == [0x85], let s = session {
                let body = o.tag == [0x87] ? Array(o.value.dropFirst()) : o.value
                guard let d = try? s.enc.decrypt(cbc: body, iv: iv), let u = Padding.unpad(d, blockSize: block) else { return nil }
                plain.data = u
            }
            if o.tag == [0x97] {
                let v = o.value.reduce(0) { $0 << 8 | Int($1) }
                plain.ne = v == 0 ? (o.value.count == 1 ? 256 : 65536) : v
            }
        }
        return plain
    }

    private func wrap(_ data: [UInt8], _ sw: UInt16) -> [UInt8] {
        increment()
        var objects: [UInt8] = []
        if !data.isEmpty, let s = session, let e = try? s.enc.encrypt(cbc: Padding.pad(data, blockSize: block), iv: iv) {
            objects += [0x87] + BERTLV.encodeLength(e.count + 1) + [0x01] + e
        }
        objects += [0x99, 0x02, UInt8(sw >> 8), UInt8(sw & 0xFF)]
        // The trailer repeats the status, as chips send it.
        return objects + [0x8E, 0x08] + mac(objects) + [UInt8(sw >> 8), UInt8(sw & 0xFF)]
    }
}
