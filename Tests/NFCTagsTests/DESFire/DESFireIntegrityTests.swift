import CardCrypto
import ISO7816
@testable import NFCTags
import SUN
import Testing

/// Every MAC and CRC on an answer is checked: a card's answer built here from the primitives
/// (the layouts libfreefare's `mifare_cryto_postprocess_data` and the DESFire data sheets give)
/// is accepted; the same answer with one bit flipped is refused as a bad cryptogram and ends the
/// session. Each test fails when the check it names is removed.
@Suite("DESFire: every answer's MAC and CRC checked, one flipped bit refused")
struct DESFireIntegrityTests {
    static let sessionKey = h("40E7D271626FFBD49C530E3D304F5B17")
    static let zero16 = [UInt8](repeating: 0, count: 16)

    /// A card in an EV1 AES session (`sessionKey`, IV zero) whose answer `respond` builds.
    static func ev1(_ respond: @escaping (_ command: [UInt8]) throws -> [UInt8]) throws -> DESFireCard {
        let card = DESFireCard(transport: APDUTransport(channel: ComputedCard { (try? respond($0)) ?? [0x6F, 0x00] }))
        card.begin(try DESFireSession(scheme: .aes, keyNumber: 1, keyType: .aes, sessionKey: sessionKey))
        return card
    }

    static func flip(_ b: [UInt8], at i: Int) -> [UInt8] {
        var out = b
        out[i] ^= 0x01
        return out
    }

    @Test("EV1 CMAC on a plain answer (GetFileIDs): data ‖ first 8 bytes of CMAC(data ‖ 00), IV = the command's CMAC")
    func ev1CMAC() throws {
        let cmac = try CMAC(.aes128, key: Self.sessionKey)
        let ivAfterCommand = try cmac.mac([0x6F], iv: Self.zero16)
        let good = [UInt8]([1, 2, 5]) + Array(try cmac.mac([1, 2, 5, 0x00], iv: ivAfterCommand).prefix(8))
        #expect(try Self.ev1 { _ in good + [0x91, 0x00] }.fileIDs() == [1, 2, 5])
        for i in [0, 3, 10] {
            let card = try Self.ev1 { _ in Self.flip(good, at: i) + [0x91, 0x00] }
            do {
                _ = try card.fileIDs()
                Issue.record("a flipped bit at \(i) was accepted")
            } catch let e as DESFireError {
                #expect(e.kind == .badCryptogram && card.session == nil)
            }
        }
    }

    @Test("EV1 enciphered answer (GetCardUID): E(UID ‖ CRC32(UID ‖ 00) ‖ 00…), IV = the command's CMAC")
    func ev1Enciphered() throws {
        let uid = h("04063F72633480")
        let cmac = try CMAC(.aes128, key: Self.sessionKey)
        let iv = try cmac.mac([0x51], iv: Self.zero16)
        let plain = uid + CRC.crc32(uid + [0x00]) + [0, 0, 0, 0, 0]
        let good = try BlockCipher(.aes128, key: Self.sessionKey).encrypt(cbc: plain, iv: iv)
        #expect(try Self.ev1 { _ in good + [0x91, 0x00] }.cardUID() == uid)
        // A CRC over the UID alone (the status byte left out) is not DESFire's.
        let wrongCRC = try BlockCipher(.aes128, key: Self.sessionKey).encrypt(cbc: uid + CRC.crc32(uid) + [0, 0, 0, 0, 0], iv: iv)
        for answer in [Self.flip(good, at: 5), Self.flip(good, at: 12), wrongCRC] {
            let card = try Self.ev1 { _ in answer + [0x91, 0x00] }
            #expect(throws: DESFireError.self) { try card.cardUID() }
            #expect(card.session == nil)
        }
    }

    @Test("EV1 MAC-mode write: the command carries the first 8 bytes of its CMAC; the answer's CMAC (IV = the full CMAC) checked")
    func ev1MACWrite() throws {
        let cmac = try CMAC(.aes128, key: Self.sessionKey)
        let data: [UInt8] = [9, 8, 7, 6]
        let commandMAC = try cmac.mac([0x3D] + h("01000000040000") + data, iv: Self.zero16)
        let answerMAC = Array(try cmac.mac([0x00], iv: commandMAC).prefix(8))
        var sent: [UInt8] = []
        let card = try Self.ev1 { c in sent = c; return answerMAC + [0x91, 0x00] }
        try card.writeData(1, offset: 0, data: data, mode: .mac)
        #expect(sent == [0x90, 0x3D, 0, 0, 19] + h("01000000040000") + data + Array(commandMAC.prefix(8)) + [0x00])
        let bad = try Self.ev1 { _ in Self.flip(answerMAC, at: 7) + [0x91, 0x00] }
        #expect(throws: DESFireError.self) { try bad.writeData(1, offset: 0, data: data, mode: .mac) }
    }

    /// A card in a legacy session of a 2K3DES session key.
    static let legacyKey = h("0123456789ABCDEFFEDCBA9876543210")
    static func legacy(_ respond: @escaping ([UInt8]) -> [UInt8]) throws -> DESFireCard {
        let card = DESFireCard(transport: APDUTransport(channel: ComputedCard(respond)))
        card.begin(try DESFireSession(scheme: .legacy, keyNumber: 0, keyType: .tdes2, sessionKey: legacyKey))
        return card
    }

    @Test("legacy MAC on a read: 4 bytes, the first of the last block of E-CBC(data ‖ 00…) from a zero IV")
    func legacyMAC() throws {
        let data = h("0102030405060708090A")
        let mac = Array(try BlockCipher(.tdes2, key: Self.legacyKey).encrypt(cbc: data + [0, 0, 0, 0, 0, 0]).suffix(8).prefix(4))
        #expect(try Self.legacy { _ in data + mac + [0x91, 0x00] }.readData(1, length: 10, mode: .mac) == data)
        let bad = try Self.legacy { _ in data + Self.flip(mac, at: 2) + [0x91, 0x00] }
        #expect(throws: DESFireError.self) { try bad.readData(1, length: 10, mode: .mac) }
        let badData = try Self.legacy { _ in Self.flip(data, at: 0) + mac + [0x91, 0x00] }
        #expect(throws: DESFireError.self) { try badData.readData(1, length: 10, mode: .mac) }
    }

    @Test("legacy enciphered read: the card's E-CBC(data ‖ CRC16(data) ‖ 00…) from a zero IV; legacy enciphered write in send mode")
    func legacyEnciphered() throws {
        let cipher = try BlockCipher(.tdes2, key: Self.legacyKey)
        let data = h("A1A2A3A4A5A6A7A8A9")
        let answer = try cipher.encrypt(cbc: data + CRC.crc16(data) + [0, 0, 0, 0, 0])
        #expect(try Self.legacy { _ in answer + [0x91, 0x00] }.readData(2, length: 9, mode: .full) == data)
        // A bit flipped in the first block garbles it and flips the same bit of the second: the
        // padding stays intact, only the CRC notices.
        for i in [0, 9] {
            let bad = try Self.legacy { _ in Self.flip(answer, at: i) + [0x91, 0x00] }
            #expect(throws: DESFireError.self) { try bad.readData(2, length: 9, mode: .full) }
        }
        // The write: data ‖ CRC16(data) ‖ 00…, each block XORed with the previous result and deciphered.
        let plain = data + CRC.crc16(data) + [0, 0, 0, 0, 0]
        var previous = [UInt8](repeating: 0, count: 8), expected: [UInt8] = []
        for start in stride(from: 0, to: plain.count, by: 8) {
            previous = try cipher.decrypt(block: zip(plain[start..<(start + 8)], previous).map { $0 ^ $1 })
            expected += previous
        }
        var sent: [UInt8] = []
        try Self.legacy { c in sent = c; return [0x91, 0x00] }.writeData(2, offset: 0, data: data, mode: .full)
        #expect(Array(sent.dropFirst(5 + 7).dropLast()) == expected)
    }

    @Test("EV2 through DESFireCard: a management answer's MAC (MAC mode) checked, one bit off refused")
    func ev2() throws {
        let ti = h("7A21085E"), macKey = h("8248134A386E86EB7FAF54A52E536CB6")
        func card(_ flip: Bool) throws -> DESFireCard {
            let c = DESFireCard(transport: APDUTransport(channel: ComputedCard { _ in
                // The answer's MAC: CMAC(SesAuthMAC, 00 ‖ CmdCtr+1 ‖ TI ‖ data), odd bytes.
                let data: [UInt8] = [1, 2]
                var mac = SUNMessage.truncate((try! AES128(key: macKey)).cmac([0x00, 0x01, 0x00] + ti + data))
                if flip { mac[0] ^= 1 }
                return data + mac + [0x91, 0x00]
            }))
            c.begin(DESFireSession(ev2: try EV2Session(transactionIdentifier: ti, encryptionKey: Self.zero16, macKey: macKey), keyNumber: 0))
            return c
        }
        #expect(try card(false).fileIDs() == [1, 2])
        #expect(throws: DESFireError.self) { try card(true).fileIDs() }
    }

    @Test("an authentication whose RndA' does not match is refused (ISO, AES): the card does not hold the key")
    func wrongProof() throws {
        // RFDoorLock's AES authentication with the factory key, answered with another card's RndA'.
        let card = ComputedCard { c in
            if c == h("90AA0000010000") { return h("B969FDFE56FD91FC9DE6F6F213B8FD1E") + [0x91, 0xAF] }
            return h("800DB680BC146BD121D6578F2D2E2058") + [0x91, 0x00]
        }
        let d = DESFireCard(transport: APDUTransport(channel: card))
        d.randomSource = { _ in h("F44B26F5686F3A391CD38EBD10772281") }
        do {
            try d.authenticate(keyNumber: 0, key: .zero(.aes), scheme: .aes)
            Issue.record("a wrong RndA' was accepted")
        } catch let e as DESFireError {
            #expect(e.kind == .badCryptogram && d.session == nil)
        }
    }
}
