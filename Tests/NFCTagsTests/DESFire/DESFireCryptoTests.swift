import CardCrypto
import ISO7816
@testable import NFCTags
import SUN
import Testing

/// A card whose answers a closure computes from the command (and the test's own arithmetic).
final class ComputedCard: CardChannel {
    var answer: ([UInt8]) -> [UInt8]
    private(set) var commands: [[UInt8]] = []
    let supportsExtendedLength = false
    init(_ answer: @escaping ([UInt8]) -> [UInt8]) { self.answer = answer }
    func transmit(_ command: [UInt8]) throws -> [UInt8] {
        commands.append(command)
        return answer(command)
    }
}

/// The published vectors of DESFire's cryptography, byte for byte.
@Suite("DESFire: CMAC, CRC, AN10922, EV2 (AN12343) and legacy vectors")
struct DESFireVectorTests {
    /// NIST SP 800-38B's example message (proxmark3 `desfiretest.c` CMACData).
    static let message = h("6BC1BEE22E409F96E93D7E117393172AAE2D8A571E03AC9C9EB76FAC45AF8E51")

    @Test("CMAC over DES, 2TDEA and 3TDEA (NIST TDES_CMAC examples as proxmark3 desfiretest.c tests them), AES (libfreefare test_mifare_desfire_aes.c)")
    func cmac() throws {
        let cases: [(CipherAlgorithm, String, [String])] = [
            (.tdes2, "0123456789ABCDEF0123456789ABCDEF", ["86F79C13FD306E67", "BEA4212292462A85", "3E2F8310C569275E", "9D1FC4D4C0259132"]),
            (.tdes2, "0123456789ABCDEF23456789ABCDEF01", ["79CE52A7F786A960", "CC18A0B79AF2413B", "C06D377ECD101969", "9CD33580F9B64DFB"]),
            (.tdes3, "0123456789ABCDEF23456789ABCDEF01456789ABCDEF0123", ["7DB0D37DF936C550", "30239CF1F52E6609", "6C9F3EE4923F6BE2", "99429BD0BF7904E5"]),
        ]
        for (algorithm, key, macs) in cases {
            let c = try CMAC(algorithm, key: h(key))
            for (length, mac) in zip([0, 16, 20, 32], macs) {
                #expect(try c.mac(Array(Self.message.prefix(length))) == h(mac), "\(algorithm) over \(length) bytes")
            }
        }
        let aes = try CMAC(.aes128, key: h("2B7E151628AED2A6ABF7158809CF4F3C"))
        #expect(try aes.mac(h("6BC1BEE22E409F96E93D7E117393172AAE2D8A571E03AC9C9EB76FAC45AF8E5130C81C46A35CE411E5FBC1191A0A52EFF69F2445DF4F9B17AD2B417BE66C3710"))
                == h("51F0BEBF7E3B9D92FC497417 79363CFE".replacingOccurrences(of: " ", with: "")))
    }

    @Test("CRC16 and CRC32 in enciphered answers (proxmark3 desfiretest.c TestCRC16/TestCRC32: the legacy CRC over the data, EV1's over data ‖ status 00)")
    func crcs() {
        #expect(CRC.crc16(h("04440F32763180")) == h("2798"))
        #expect(CRC.crc32(h("04440F32763180") + [0x00]) == h("99CE1AD4"))
        // RFDoorLock: ChangeKeySettings(0D) enciphers 0D ‖ CRC32(54 0D) = 0D ED09401E.
        #expect(CRC.crc32(h("540D")) == h("ED09401E"))
    }

    @Test("AN10922 diversification: AES (§2.2, through the SUN module), 2K3DES (§2.4) and 3K3DES (§2.5) — raw as proxmark3 prints them, with versions as libfreefare does")
    func an10922() throws {
        let master = h("00112233445566778899AABBCCDDEEFF")
        let aes = try DESFireKey(.aes, master, version: 16).diversified(input: h("04782E21801D803042F54E585020416275"))
        #expect(aes.bytes == h("A8DD63A3B89D54B37CA802473FDA9175") && aes.version == 16)
        let two = try DESFireKey(.tdes2, master)
        #expect(try two.diversifiedBytes(input: h("04782E21801D803042F54E58502041")) == h("16F8597C9E8910C86B9648D006107DD7"))
        #expect(try two.diversified(input: h("04782E21801D803042F54E58502041")).bytes == h("16F9587D9E8910C96B9649D007107DD6"))
        let three = try DESFireKey(.tdes3, master + h("0102030405060708"))
        #expect(try three.diversifiedBytes(input: h("04782E21801D803042F54E5850")) == h("2F0DD03675D3FB9A5705AB0BDA91CA0B55B8E07FCDBF10EC"))
        #expect(try three.diversified(input: h("04782E21801D803042F54E5850")).bytes == h("2E0DD03774D3FA9B5705AB0BDA91CA0B55B8E07FCDBF10EC"))
        #expect(throws: DESFireError.self) { try two.diversified(input: h("0478")) }
    }

    @Test("EV2 session keys (AN12343 pp. 33-34, as proxmark3 TestEV2SessionKeys checks them) through the shared EV2 session")
    func ev2SessionKeys() throws {
        let keys = EV2Session.sessionKeys(key: try AES128(key: [UInt8](repeating: 0, count: 16)),
                                          rndA: h("B04D0787C93EE0CC8CACC8E86F16C6FE"), rndB: h("FA659AD0DCA738DD65DC7DC38612AD81"))
        #expect(keys.enc == h("63DC07286289A7A6C0334CA31C314A04"))
        #expect(keys.mac == h("774F26743ECE6AF5033B6AE8522946F6"))
    }

    @Test("EV2 IV of FULL mode (proxmark3 TestEV2IVEncode): E(SesAuthENC, A5 5A ‖ TI ‖ CmdCtr ‖ 0⁸)")
    func ev2IV() throws {
        let a = try EV2Session(transactionIdentifier: h("ED56F6E6"), encryptionKey: h("66A8CB93269DC9BC2885B7A91B9C697B"), macKey: [UInt8](repeating: 0, count: 16))
        #expect(a.iv(command: true) == h("DA0F644A4986275957CF1EC3AF4CCE53"))
        let b = try EV2Session(transactionIdentifier: h("11223344"), encryptionKey: h("445A8626B3338459321232FADF6ADE2B"), macKey: [UInt8](repeating: 0, count: 16), commandCounter: 5)
        #expect(b.iv(command: true) == h("177494FCC4F1DAB2AFBE8FAE2057A9D2"))
    }

    @Test("EV2 MACs (AN12343 p. 54, proxmark3 TestEV2MAC): WriteData and ReadData in MAC mode, both answers checked")
    func ev2MAC() throws {
        let s = try EV2Session(transactionIdentifier: h("E2D3AF69"), encryptionKey: [UInt8](repeating: 0, count: 16), macKey: h("9366FA195EB566F5BD2BAD4020B83002"))
        let data = [UInt8](repeating: 0x22, count: 25)
        let write = try s.wrap(ins: 0x8D, header: h("00000000190000"), data: data, mode: .mac)
        #expect(Array(write.data.suffix(8)) == h("68F2C28C575A1628"))
        _ = try s.unwrap(ResponseAPDU(data: h("0820F68898C2A7F1"), statusWord: StatusWord(rawValue: 0x9100)), mode: .mac, what: "WriteData")
        let read = try s.wrap(ins: 0xAD, header: h("00000000300000"), mode: .mac)
        #expect(Array(read.data.suffix(8)) == h("0D9BE191D5960834"))
        let answer = data + [UInt8](repeating: 0, count: 23)
        #expect(try s.unwrap(ResponseAPDU(data: answer + h("A49A44222D926666"), statusWord: StatusWord(rawValue: 0x9100)), mode: .mac, what: "ReadData") == answer)
    }

    @Test("legacy authentication (0A) of a real card (mifare.net forum, 2018): DES factory key, RndA 00…00; the token deciphered in send mode from a zero IV")
    func legacyAuthentication() throws {
        let card = ComputedCard { c in
            if c == h("900A0000010000") { return h("A48300FB5E29FD78") + [0x91, 0xAF] }
            if c == h("90AF0000108CA64DE9C1B123A7EDBFCE53486B6D0000") { return h("8CA64DE9C1B123A7") + [0x91, 0x00] }
            return [0x91, 0x1E]
        }
        let desfire = DESFireCard(transport: APDUTransport(channel: card))
        desfire.randomSource = { [UInt8](repeating: 0, count: $0) }
        try desfire.authenticate(keyNumber: 0, key: .zero(.des), scheme: .legacy)
        #expect(desfire.session?.scheme == .legacy && card.commands.count == 2)
    }

    @Test("key versions: DES-family keys in their parity bits (RFDoorLock's 0010203140… is version 10), AES a byte; a key never shows its bytes")
    func keyVersions() throws {
        let k = try DESFireKey(.tdes2, h("00102031405060708090A0B0B0A09080"))
        #expect(k.version == 0x10)
        #expect(k.settingVersion(0xA5).version == 0xA5 && !k.settingVersion(0xA5).runsAsSingleDES)
        #expect(DESFireKey.zero(.des).settingVersion(0x42).runsAsSingleDES)
        #expect(!"\(k)".contains("0010") && "\(k)" == "2K3DES key, version 16")
        var dumped = ""
        dump(k, to: &dumped)
        #expect(String(reflecting: k) == "\(k)" && Mirror(reflecting: k).children.isEmpty && !dumped.contains("160"))
        #expect(throws: DESFireError.self) { try DESFireKey(.aes, [1, 2, 3]) }
    }
}
