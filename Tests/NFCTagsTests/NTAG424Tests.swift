import ISO7816
@testable import NFCTags
import Testing

/// A card that answers with canned responses, in order, and keeps the commands it got.
final class CannedCard: CardChannel {
    var responses: [[UInt8]]
    var commands: [[UInt8]] = []
    let supportsExtendedLength = false
    init(_ responses: [[UInt8]]) { self.responses = responses }
    func transmit(_ command: [UInt8]) throws -> [UInt8] {
        commands.append(command)
        return responses.isEmpty ? [0x6F, 0x00] : responses.removeFirst()
    }
}

func h(_ s: String) -> [UInt8] { try! Hex.decode(s) }

/// EV2 authentication and secure messaging against NXP AN12196's worked examples, byte for byte.
@Suite("NTAG 424 DNA: AuthenticateEV2First and CommMode.MAC / FULL, AN12196's examples")
struct NTAG424SecureMessagingTests {
    @Test("AuthenticateEV2First with key 0 (AN12196 §6.6) and key 3 (§6.10): the second command, TI and both session keys")
    func authenticate() throws {
        for v in [(rndA: "13C5DB8A5930439FC3DEF9A4C675360F", r1: "A04C124213C186F22399D33AC2A30215", c2: "35C3E05A752E0144BAC0DE51C1F22C56B34408A23D8AEA266CAB947EA8E0118D",
                   r2: "3FA64DB5446D1F34CD6EA311167F5E4985B89690C04A05F17FA7AB2F08120663", ti: "9D00C4DF", enc: "1309C877509E5A215007FF0ED19CA564", mac: "4C6626F5E72EA694202139295C7A7FC7"),
                  (rndA: "B98F4C50CF1C2E084FD150E33992B048", r1: "B875CEB0E66A6C5CD00898DC371F92D1", c2: "FF0306E47DFBC50087C4D8A78E88E62DE1E8BE457AA477C707E2F0874916A8B1",
                   r2: "0CC9A8094A8EEA683ECAAC5C7BF20584206D0608D477110FC6B3D5D3F65C3A6A", ti: "7614281A", enc: "7A93D6571E4B180FCA6AC90C9A7488D4", mac: "FC4AF159B62E549B5812394CAB1918CC")] {
            let card = CannedCard([h(v.r1) + [0x91, 0xAF], h(v.r2) + [0x91, 0x00]])
            let session = try EV2Authentication.first(APDUTransport(channel: card), keyNumber: 0, key: [UInt8](repeating: 0, count: 16), rndA: h(v.rndA))
            #expect(card.commands[0] == h("9071000002000000"))
            #expect(card.commands[1] == h("90AF000020") + h(v.c2) + [0x00])
            #expect(session.transactionIdentifier == h(v.ti))
            #expect(session.encryption.encrypt(block: [UInt8](repeating: 0, count: 16)) == (try SUNTestKeys.aes(v.enc)).encrypt(block: [UInt8](repeating: 0, count: 16)))
            #expect(session.macKey.cmac([]) == (try SUNTestKeys.aes(v.mac)).cmac([]))
        }
    }

    @Test("a tag that does not hold the key: its RndA' does not match, refused as a bad cryptogram")
    func wrongKey() throws {
        let card = CannedCard([h("A04C124213C186F22399D33AC2A30215") + [0x91, 0xAF], h("3FA64DB5446D1F34CD6EA311167F5E4985B89690C04A05F17FA7AB2F08120663") + [0x91, 0x00]])
        #expect(throws: NTAG424Error.self) {
            try EV2Authentication.first(APDUTransport(channel: card), keyNumber: 0, key: [UInt8](repeating: 0, count: 16), rndA: h("03C5DB8A5930439FC3DEF9A4C675360F"))
        }
        let refused = CannedCard([[0x91, 0xAE]])
        do {
            _ = try EV2Authentication.first(APDUTransport(channel: refused), keyNumber: 0, key: [UInt8](repeating: 0, count: 16))
            Issue.record("91 AE accepted")
        } catch let e as NTAG424Error {
            #expect(e.kind == .authenticationError)
        }
    }

    @Test("CommMode.MAC (AN12196 §5.3): GetFileSettings 02 signed, the answer's MAC checked; one bit off refused")
    func macMode() throws {
        let s = try EV2Session(transactionIdentifier: h("7A21085E"), encryptionKey: [UInt8](repeating: 0, count: 16), macKey: h("8248134A386E86EB7FAF54A52E536CB6"))
        #expect(try s.wrap(ins: 0xF5, header: [0x02], mode: .mac).bytes == h("90F5000009026597A457C8CD442C00"))
        let answer = h("0040EEEE000100D1FE001F00004400004400002000006A0000")
        #expect(try s.unwrap(ResponseAPDU(data: answer + h("2A474282E7A47986"), statusWord: StatusWord(rawValue: 0x9100)), mode: .mac, what: "GetFileSettings") == answer)
        let t = try EV2Session(transactionIdentifier: h("7A21085E"), encryptionKey: [UInt8](repeating: 0, count: 16), macKey: h("8248134A386E86EB7FAF54A52E536CB6"))
        _ = try t.wrap(ins: 0xF5, header: [0x02], mode: .mac)
        #expect(throws: NTAG424Error.self) { try t.unwrap(ResponseAPDU(data: answer + h("2A474282E7A47987"), statusWord: StatusWord(rawValue: 0x9100)), mode: .mac, what: "GetFileSettings") }
    }

    @Test("CommMode.FULL (AN12196 §5.4, §6.12, §7.3): WriteData encrypted and MACed, GetCardUID's answer decrypted")
    func fullMode() throws {
        let s = try EV2Session(transactionIdentifier: h("9D00C4DF"), encryptionKey: h("1309C877509E5A215007FF0ED19CA564"), macKey: h("4C6626F5E72EA694202139295C7A7FC7"))
        // The plain WriteData of AN12196 §5.4: header 02 000000 800000, 128 bytes of NDEF file.
        let plain = h("908D000087020000008000000051D1014D550463686F6F73652E75726C2E636F6D2F6E7461673432343F653D3030303030303030303030303030303030303030"
                      + "30303030303030303030303026633D30303030303030303030303030303030000000000000000000000000000000000000000000000000000000000000000000"
                      + "00000000000000000000000000")
        let ndef = Array(plain[12..<(plain.count - 1)])
        let wrapped = try s.wrap(ins: 0x8D, header: h("02000000800000"), data: ndef, mode: .full)
        #expect(wrapped.bytes == h("908D00009F02000000800000421C73A27D827658AF481FDFF20A5025B559D0E3AA21E58D347F343CFFC768BFE596C706BC00F2176781D4B0242642A0FF5A42C461AAF894D9A1284B8C76BCFA658ACD40555D362E08DB15CF421B51283F9064BCBE20E96CAE545B407C9D651A3315B27373772E5DA2367D2064AE054AF996C6F1F669170FA88CE8C4E3A4A7BBBEF0FD971FF532C3A802AF745660F2B4D1D9A8499661EBF300"))
        #expect(try s.unwrap(ResponseAPDU(data: h("FC222E5F7A542452"), statusWord: StatusWord(rawValue: 0x9100)), mode: .full, what: "WriteData") == [])
        let t = try EV2Session(transactionIdentifier: h("7614281A"), encryptionKey: h("7A93D6571E4B180FCA6AC90C9A7488D4"), macKey: h("FC4AF159B62E549B5812394CAB1918CC"))
        #expect(try t.wrap(ins: 0x8D, header: h("030000000A0000"), data: h("0102030405060708090A"), mode: .full).bytes == h("908D00001F030000000A00006B5E6804909962FC4E3FF5522CF0F8436C0C53315B9C73AA00"))
        #expect(try t.unwrap(ResponseAPDU(data: h("C26D236E4A7C046D"), statusWord: StatusWord(rawValue: 0x9100)), mode: .full, what: "WriteData") == [])
        let u = try EV2Session(transactionIdentifier: h("DF055522"), encryptionKey: h("2B4D963C014DC36F24F69A50A394F875"), macKey: h("379D32130CE61705DD5FD8C36B95D764"))
        #expect(try u.wrap(ins: 0x51, mode: .full).bytes == h("90510000088E2C155ADDA99BE300"))
        #expect(try u.unwrap(ResponseAPDU(data: h("70756055688505B52A5E26E59E329CD6595F672298EA41B7"), statusWord: StatusWord(rawValue: 0x9100)), mode: .full, what: "GetCardUID") == h("04958CAA5C5E80"))
    }
}

import SUN
enum SUNTestKeys { static func aes(_ hex: String) throws -> AES128 { try AES128(key: h(hex)) } }
