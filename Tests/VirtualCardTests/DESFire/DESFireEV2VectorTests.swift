import CardCrypto
import ISO7816
import Testing
@testable import VirtualCard

/// EV2 secure messaging of the emulator against NXP's published worked examples, byte for byte.
@Suite("DESFire emulator: EV2 against AN12196 and AN12343, byte for byte")
struct DESFireEV2VectorTests {
    let zero = [UInt8](repeating: 0, count: 16)

    /// An EV2 card with one AES application laid out as AN12196's examples need: file 02 (256
    /// bytes, FULL, written with key 0) and file 03 (128 bytes, FULL, read key 2, write key 3).
    func card(random: [UInt8]) -> DESFireCard {
        var app = DESFireCard.Application(aid: 0x2424D4, keySettings: 0x0F, keyType: .aes, keyCount: 5)
        app.files = [
            DESFireCard.File(number: 0x02, commMode: .full, access: DESFireCard.AccessRights(read: 0xE, write: 0, readWrite: 0, change: 0),
                             content: .standard([UInt8](repeating: 0, count: 256))),
            DESFireCard.File(number: 0x03, commMode: .full, access: DESFireCard.AccessRights(read: 2, write: 3, readWrite: 3, change: 0),
                             content: .standard([UInt8](repeating: 0, count: 128))),
        ]
        let chip = DESFireCard.Chip(generation: .ev2)
        return DESFireCard(image: DESFireCard.Image(chip: chip, applications: [app]), random: .fixed(random))
    }

    /// The tag's RndB of an AN12196 example: what it enciphered under the all-zero key.
    func rndB(_ challenge: String) throws -> [UInt8] { try BlockCipher(.aes128, key: zero).decrypt(cbc: h(challenge)) }

    @Test("AuthenticateEV2First with key 0 (AN12196 §6.6), then WriteData FULL of 128 bytes (§5.4): every byte of the tag's answers")
    func key0WriteFull() throws {
        let card = card(random: try rndB("A04C124213C186F22399D33AC2A30215") + h("9D00C4DF"))
        #expect(card.process(h("905A000003D4242400")) == h("9100"))
        #expect(card.process(h("9071000002000000")) == h("A04C124213C186F22399D33AC2A30215") + h("91AF"))
        #expect(card.process(h("90AF000020") + h("35C3E05A752E0144BAC0DE51C1F22C56B34408A23D8AEA266CAB947EA8E0118D") + [0x00])
                == h("3FA64DB5446D1F34CD6EA311167F5E4985B89690C04A05F17FA7AB2F08120663") + h("9100"))
        let write = h("908D00009F02000000800000421C73A27D827658AF481FDFF20A5025B559D0E3AA21E58D347F343CFFC768BFE596C706BC00F2176781D4B0242642A0FF5A42C461AAF894D9A1284B8C76BCFA658ACD40555D362E08DB15CF421B51283F9064BCBE20E96CAE545B407C9D651A3315B27373772E5DA2367D2064AE054AF996C6F1F669170FA88CE8C4E3A4A7BBBEF0FD971FF532C3A802AF745660F2B4D1D9A8499661EBF300")
        #expect(card.process(write) == h("FC222E5F7A542452") + h("9100"))
        // The same WriteData in plain (AN12196 §5.4): header 02 000000 800000, 128 bytes of NDEF file.
        let plain = h("908D000087020000008000000051D1014D550463686F6F73652E75726C2E636F6D2F6E7461673432343F653D3030303030303030303030303030303030303030"
                      + "30303030303030303030303026633D30303030303030303030303030303030000000000000000000000000000000000000000000000000000000000000000000"
                      + "00000000000000000000000000")
        let ndef = Array(plain[12..<(plain.count - 1)])
        #expect(ndef.count == 128)
        guard case .standard(let stored) = card.image.application(0x2424D4)?.file(0x02)?.content else { Issue.record("file 02 gone"); return }
        #expect(Array(stored.prefix(128)) == ndef)
    }

    @Test("AuthenticateEV2First with key 3 (AN12196 §6.10), then WriteData FULL of 10 bytes (§7.3); one bit off in the MAC is refused with 91 1E")
    func key3WriteFull() throws {
        let card = card(random: try rndB("B875CEB0E66A6C5CD00898DC371F92D1") + h("7614281A"))
        #expect(card.process(h("905A000003D4242400")) == h("9100"))
        #expect(card.process(h("9071000002030000")) == h("B875CEB0E66A6C5CD00898DC371F92D1") + h("91AF"))
        #expect(card.process(h("90AF000020") + h("FF0306E47DFBC50087C4D8A78E88E62DE1E8BE457AA477C707E2F0874916A8B1") + [0x00])
                == h("0CC9A8094A8EEA683ECAAC5C7BF20584206D0608D477110FC6B3D5D3F65C3A6A") + h("9100"))
        let write = h("908D00001F030000000A00006B5E6804909962FC4E3FF5522CF0F8436C0C53315B9C73AA00")
        var tampered = write
        tampered[tampered.count - 2] ^= 0x01
        let copy = card.image
        #expect(card.process(tampered) == h("911E"))
        #expect(card.image == copy, "a refused command changes nothing")
        #expect(!card.isAuthenticated, "an integrity error ends the session")
        // Again, from a fresh card: the untouched command is taken.
        let again = self.card(random: try rndB("B875CEB0E66A6C5CD00898DC371F92D1") + h("7614281A"))
        _ = again.process(h("905A000003D4242400"))
        _ = again.process(h("9071000002030000"))
        _ = again.process(h("90AF000020") + h("FF0306E47DFBC50087C4D8A78E88E62DE1E8BE457AA477C707E2F0874916A8B1") + [0x00])
        #expect(again.process(write) == h("C26D236E4A7C046D") + h("9100"))
        guard case .standard(let stored) = again.image.application(0x2424D4)?.file(0x03)?.content else { Issue.record("file 03 gone"); return }
        #expect(Array(stored.prefix(10)) == h("0102030405060708090A"))
    }

    @Test("a reader that does not hold the key: RndB' wrong, 91 AE, no session")
    func wrongKey() throws {
        let card = card(random: try rndB("A04C124213C186F22399D33AC2A30215") + h("9D00C4DF"))
        _ = card.process(h("905A000003D4242400"))
        _ = card.process(h("9071000002000000"))
        var c2 = h("35C3E05A752E0144BAC0DE51C1F22C56B34408A23D8AEA266CAB947EA8E0118D")
        c2[31] ^= 0x80
        #expect(card.process(h("90AF000020") + c2 + [0x00]) == h("91AE"))
        #expect(!card.isAuthenticated)
    }

    @Test("the IV of FULL command data (proxmark3 desfiretest.c TestEV2IVEncode: TI ED56F6E6 counter 0, TI 11223344 counter 5)")
    func commandIV() throws {
        let a = try #require(EV2ChipSession(transactionIdentifier: h("ED56F6E6"), encryptionKey: h("66A8CB93269DC9BC2885B7A91B9C697B"), macKey: zero))
        #expect(a.commandIV == h("DA0F644A4986275957CF1EC3AF4CCE53"))
        let b = try #require(EV2ChipSession(transactionIdentifier: h("11223344"), commandCounter: 5, encryptionKey: h("445A8626B3338459321232FADF6ADE2B"), macKey: zero))
        #expect(b.commandIV == h("177494FCC4F1DAB2AFBE8FAE2057A9D2"))
    }

    @Test("command and answer MACs (AN12343 p. 54, as proxmark3's desfiretest.c quotes it): WriteData, its answer, ReadData, its answer")
    func macs() throws {
        var s = try #require(EV2ChipSession(transactionIdentifier: h("E2D3AF69"), encryptionKey: zero, macKey: h("9366FA195EB566F5BD2BAD4020B83002")))
        let write = h("00000000190000") + [UInt8](repeating: 0x22, count: 25)
        #expect(s.commandMAC(command: 0x8D, body: write) == h("68F2C28C575A1628"))
        #expect(s.verifyCommand(command: 0x8D, write + h("68F2C28C575A1628")) == write)
        #expect(s.verifyCommand(command: 0x8D, write + h("68F2C28C575A1629")) == nil)
        s.advance()
        #expect(s.responseMAC(status: 0x00, body: []) == h("0820F68898C2A7F1"))
        #expect(s.commandMAC(command: 0xAD, body: h("00000000300000")) == h("0D9BE191D5960834"))
        s.advance()
        let read = [UInt8](repeating: 0x22, count: 25) + [UInt8](repeating: 0, count: 23)
        #expect(s.responseMAC(status: 0x00, body: read) == h("A49A44222D926666"))
    }

    /// Key 01…01 is a DES weak key (E and D agree), so this pins the block cipher and the zero
    /// IV; the direction of the legacy chaining is pinned by the RFDoorLock traces and the test reader.
    @Test("the legacy scheme's receive mode: libfreefare test_mifare_desfire_des_send, key 01…01: the reader's D659E17043A84068 is 730DDFADA4D20789")
    func legacyReceive() throws {
        let des = try BlockCipher(.tdes2, key: [UInt8](repeating: 0x01, count: 16))
        #expect(try DESFireChannel.legacyReceive(h("D659E17043A84068"), des) == h("730DDFADA4D20789"))
    }

    @Test("session keys from RndA and RndB (AN12343 p. 33-34, as proxmark3's desfiretest.c quotes it)")
    func sessionKeys() throws {
        let keys = try #require(EV2ChipSession.sessionKeys(key: zero, rndA: h("B04D0787C93EE0CC8CACC8E86F16C6FE"), rndB: h("FA659AD0DCA738DD65DC7DC38612AD81")))
        #expect(keys.encryption == h("63DC07286289A7A6C0334CA31C314A04"))
        #expect(keys.mac == h("774F26743ECE6AF5033B6AE8522946F6"))
    }
}
