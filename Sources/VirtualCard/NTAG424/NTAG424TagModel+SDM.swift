// Secure Dynamic Messaging on the emulated NTAG 424 DNA: the mirrors a read of an SDM file serves
// (PICC data or UID and counter, encrypted file data, the MAC) and the SDM settings they follow.
import ISO7816
import SUN

extension NTAG424TagModel {
    /// The file as a read serves it: SDM mirrors applied and SDMReadCtr incremented first.
    func served(_ n: UInt8, _ s: inout State) -> [UInt8] {
        if s.files[n]?.sdmEnabled == true {
            s.readCounter = min(s.readCounter + 1, 0xFF_FFFF)
            _ = readTamperStatus(&s)
        }
        return servedWithoutCounting(n, s)
    }

    func servedWithoutCounting(_ n: UInt8, _ s: State) -> [UInt8] {
        guard let f = s.files[n], f.sdmEnabled, let sdm = Self.parseSDM(f.sdm) else { return s.files[n]?.data ?? [] }
        var out = f.data
        let ctr = [UInt8(s.readCounter & 0xFF), UInt8(s.readCounter >> 8 & 0xFF), UInt8(s.readCounter >> 16)]
        func put(_ text: [UInt8], at offset: Int?) {
            guard let offset, offset + text.count <= out.count else { return }
            out.replaceSubrange(offset..<(offset + text.count), with: text)
        }
        let uidOn = sdm.options & 0x80 != 0, ctrOn = sdm.options & 0x40 != 0
        let data = (uidOn ? uid : []) + (ctrOn ? ctr : [])
        if sdm.metaRead == 0xE {
            if uidOn { put(Self.ascii(uid), at: sdm.uidOffset) }
            if ctrOn { put(Self.ascii(ctr.reversed()), at: sdm.counterOffset) }
        } else if sdm.metaRead < 5 {
            var picc: [UInt8] = [(uidOn ? 0x80 : 0) | (ctrOn ? 0x40 : 0) | (uidOn ? 0x07 : 0)] + data
            while picc.count < 16 { picc.append(UInt8.random(in: 0...255)) }
            put(Self.ascii(try! (try! AES128(key: s.keys[Int(sdm.metaRead)])).cbcEncrypt(picc)), at: sdm.piccOffset)
        }
        // TTStatus (NT4H2421Tx): the letters go into the clear text, or into the plain file data
        // before it is encrypted.
        let letters = tagTamper ? Self.tamperLetters(s) : [UInt8(ascii: "I"), UInt8(ascii: "I")]
        var plainFile = f.data
        if let t = sdm.ttOffset, t + 2 <= out.count {
            plainFile.replaceSubrange(t..<(t + 2), with: letters)
            put(letters, at: t)
        }
        if sdm.fileRead < 5 {
            let fileKey = try! AES128(key: s.keys[Int(sdm.fileRead)])
            if sdm.options & 0x10 != 0, let at = sdm.encOffset, let length = sdm.encLength, at + length <= out.count {
                // The plaintext is what the file holds there (its first length/2 bytes), encrypted
                // with the session ENC key, IV = E(K, SDMReadCtr ‖ 0¹³).
                let sesENC = try! AES128(key: fileKey.cmac(Self.vector([0xC3, 0x3C, 0x00, 0x01, 0x00, 0x80], data)))
                let plain = Array(plainFile[at..<(at + length / 2)])
                let iv = sesENC.encrypt(block: ctr + [UInt8](repeating: 0, count: 13))
                if plain.count % 16 == 0 { put(Self.ascii(try! sesENC.cbcEncrypt(plain, iv: iv)), at: at) }
            }
            if let macAt = sdm.macOffset, let inputAt = sdm.macInputOffset, inputAt <= macAt, macAt + 16 <= out.count {
                let sesMAC = try! AES128(key: fileKey.cmac(Self.vector([0x3C, 0xC3, 0x00, 0x01, 0x00, 0x80], data)))
                let full = sesMAC.cmac(Array(out[inputAt..<macAt]))
                put(Self.ascii(stride(from: 1, to: 16, by: 2).map { full[$0] }), at: macAt)
            }
        }
        return out
    }

    static func vector(_ label: [UInt8], _ data: [UInt8]) -> [UInt8] {
        var v = label + data
        while v.count % 16 != 0 { v.append(0) }
        return v
    }

    static func ascii(_ bytes: [UInt8]) -> [UInt8] { Array(Hex.encode(bytes).utf8) }

    /// SDM settings as ChangeFileSettings gives them (NT4H2421Gx §10.7.1), read here apart from
    /// the library's encoder.
    struct SDM {
        var options: UInt8, counterRetrieval: UInt8, metaRead: UInt8, fileRead: UInt8
        var uidOffset: Int?, counterOffset: Int?, piccOffset: Int?, ttOffset: Int?, macInputOffset: Int?, encOffset: Int?, encLength: Int?, macOffset: Int?, limit: Int?
        var length: Int
    }

    static func parseSDM(_ b: [UInt8]) -> SDM? {
        guard b.count >= 3 else { return nil }
        var p = 3
        func le() -> Int? {
            guard p + 3 <= b.count else { return nil }
            defer { p += 3 }
            return Int(b[p]) | Int(b[p + 1]) << 8 | Int(b[p + 2]) << 16
        }
        var s = SDM(options: b[0], counterRetrieval: b[1] & 0x0F, metaRead: b[2] >> 4, fileRead: b[2] & 0x0F, length: 0)
        if s.metaRead == 0xE {
            if s.options & 0x80 != 0 { guard let v = le() else { return nil }; s.uidOffset = v }
            if s.options & 0x40 != 0 { guard let v = le() else { return nil }; s.counterOffset = v }
        } else if s.metaRead < 5 {
            guard let v = le() else { return nil }
            s.piccOffset = v
        }
        if s.options & 0x08 != 0 { guard let v = le() else { return nil }; s.ttOffset = v }
        if s.fileRead != 0xF {
            guard let a = le() else { return nil }
            s.macInputOffset = a
            if s.options & 0x10 != 0 { guard let o = le(), let l = le() else { return nil }; (s.encOffset, s.encLength) = (o, l) }
            guard let m = le() else { return nil }
            s.macOffset = m
        }
        if s.options & 0x20 != 0 { guard let v = le() else { return nil }; s.limit = v }
        s.length = p
        return s
    }
}
