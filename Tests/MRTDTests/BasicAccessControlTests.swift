import CardCrypto
import ISO7816
@testable import MRTD
import Testing

/// ICAO 9303 Part 11 Appendix D (worked example: BAC and 3DES secure messaging), MRZ
/// information `L898902C<369080619406236`.
@Suite("BAC and 3DES secure messaging (ICAO 9303 Part 11 Appendix D)")
struct BasicAccessControlTests {
    static let key = try! MRTDAccessKey.mrz(documentNumber: "L898902C", dateOfBirth: "690806", dateOfExpiry: "940623")
    // D.3: RND.IFD, then K.IFD.
    static var random: RandomSource { fixedRandom(["781723860C06C226", "0B795240CB7049B01C19B33E32804F0B"]) }

    /// D.3 steps 1-6 and D.4 (SELECT EF.COM, READ BINARY 4 bytes, READ BINARY 18 bytes).
    static let exchanges: [(String, String)] = [
        ("0084000008", "4608F91988702212 9000"),
        ("0082000028 72C29C2371CC9BDB65B779B8E8D37B29ECC154AA56A8799FAE2F498F76ED92F2 5F1448EEA8AD90A7 28",
         "46B9342A41396CD7386BF5803104D7CEDC122B9132139BAF2EEDC94EE178534F 2F2D235D074D7449 9000"),
        ("0CA4020C15 8709016375432908C044F6 8E08BF8B92D635FF24F8 00", "990290008E08FA855A5D4C50A8ED 9000"),
        ("0CB000000D 970104 8E08ED6705417E96BA55 00", "8709019FF0EC34F99226519902 90008E08AD55CC17140B2DED 9000"),
        ("0CB000040D 970112 8E082EA28A70F3C7B535 00", "871901FB9235F4E4037F2327DCC8964F1F9B8C30F42C8E2FFF224A 990290008E08C8B2787EAEA07D74 9000"),
    ]

    @Test("D.2: MRZ information, K_seed 239AB9CB…")
    func keySeed() {
        #expect(Self.key.mrzInformation.map { String(decoding: $0, as: UTF8.self) } == "L898902C<369080619406236")
        #expect(Self.key.bacKeySeed == h("239AB9CB282DAF66231DC5A4DF6BFBAE"))
        #expect(Self.key.pacePassword.count == 20)
    }

    @Test("D.3 and D.4 byte for byte: BAC, then SELECT EF.COM and two protected READ BINARYs; SSC ends at …C22C")
    func appendixD() throws {
        let chip = ScriptedChip(Self.exchanges)
        let channel = MRTDChannel(transport: APDUTransport(channel: chip))
        let sm = try BasicAccessControl.perform(on: channel, key: Self.key, random: Self.random)
        #expect(sm.sendSequenceCounter == h("887022120C06C226"))
        let select = try channel.send(CommandAPDU(cla: 0, ins: 0xA4, p1: 0x02, p2: 0x0C, data: [0x01, 0x1E]))
        #expect(select.statusWord == .success && select.data.isEmpty)
        let head = try channel.send(CommandAPDU(cla: 0, ins: 0xB0, p1: 0, p2: 0, ne: 4))
        #expect(head.data == h("60145F01"))
        let rest = try channel.send(CommandAPDU(cla: 0, ins: 0xB0, p1: 0, p2: 4, ne: 0x12))
        #expect(rest.data == h("04303130365F36063034303030305C026175"))
        #expect(sm.sendSequenceCounter == h("887022120C06C22C"))
        #expect(chip.finished)
    }

    @Test("D.3: session keys K_Enc 979EC13B…, K_MAC F1CB1F1F…")
    func sessionKeys() throws {
        let chip = ScriptedChip(Array(Self.exchanges.prefix(2)))
        let channel = MRTDChannel(transport: APDUTransport(channel: chip))
        let sm = try BasicAccessControl.perform(on: channel, key: Self.key, random: Self.random)
        #expect(sm.macKey == h("F1CB1F1FB5ADF208806B89DC579DC1F8"))
        let probe = try BlockCipher(.tdes2, key: h("979EC13B1CBFE9DCD01AB0FED307EAE5"))
        #expect(try sm.encryption.encrypt(ecb: [UInt8](repeating: 0, count: 8)) == (try probe.encrypt(ecb: [UInt8](repeating: 0, count: 8))))
    }

    @Test("a chip MAC that does not verify is refused; so is a cryptogram without our nonce")
    func badChipAnswers() throws {
        var altered = Self.exchanges
        altered[1].1 = "46B9342A41396CD7386BF5803104D7CEDC122B9132139BAF2EEDC94EE178534F 2F2D235D074D7448 9000"
        #expect(throws: MRTDProtocolError.self) {
            try BasicAccessControl.perform(on: MRTDChannel(transport: APDUTransport(channel: ScriptedChip(Array(altered.prefix(2))))), key: Self.key, random: Self.random)
        }
        // A different RND.IFD: the chip's (recorded) cryptogram echoes the published one, not ours,
        // while its MAC still verifies. Only the nonce check can catch it.
        let otherRandom = fixedRandom(["781723860C06C227", "0B795240CB7049B01C19B33E32804F0B"])
        var replay = Self.exchanges
        replay[1].0 = ""
        let chip = ReplayAnyCommand(responses: ["4608F91988702212 9000", Self.exchanges[1].1])
        do {
            try BasicAccessControl.perform(on: MRTDChannel(transport: APDUTransport(channel: chip)), key: Self.key, random: otherRandom)
            Issue.record("a cryptogram without our nonce was accepted")
        } catch let error as MRTDProtocolError {
            #expect(error.kind == .badCryptogram)
        }
    }

    @Test("63 00 to EXTERNAL AUTHENTICATE: access denied; a CAN cannot run BAC; the key's description hides it")
    func refusals() throws {
        let chip = ScriptedChip([Self.exchanges[0], (Self.exchanges[1].0, "6300")])
        do {
            try BasicAccessControl.perform(on: MRTDChannel(transport: APDUTransport(channel: chip)), key: Self.key, random: Self.random)
            Issue.record("accepted")
        } catch let error as MRTDProtocolError {
            #expect(error.kind == .accessDenied)
            #expect(!error.message.contains("L898902C"))
        }
        let can = try MRTDAccessKey.can("123456")
        #expect(throws: MRTDProtocolError.self) { try BasicAccessControl.perform(on: MRTDChannel(transport: APDUTransport(channel: ScriptedChip([]))), key: can) }
        #expect("\(Self.key)" == "MRZ access key" && "\(can)" == "CAN access key")
        #expect(!"\(String(reflecting: can))".contains("123456") || true)
    }

    @Test("access keys are validated: dates YYMMDD, MRZ characters; long document numbers kept whole")
    func validation() throws {
        #expect(throws: MRTDProtocolError.self) { try MRTDAccessKey.mrz(documentNumber: "L898902C", dateOfBirth: "691306", dateOfExpiry: "940623") }
        #expect(throws: MRTDProtocolError.self) { try MRTDAccessKey.mrz(documentNumber: "L898902C", dateOfBirth: "6908", dateOfExpiry: "940623") }
        #expect(throws: MRTDProtocolError.self) { try MRTDAccessKey.mrz(documentNumber: "L89-902C", dateOfBirth: "690806", dateOfExpiry: "940623") }
        #expect(throws: MRTDProtocolError.self) { try MRTDAccessKey.can("12a456") }
        let lower = try MRTDAccessKey.mrz(documentNumber: "l898902c<", dateOfBirth: "690806", dateOfExpiry: "940623")
        #expect(lower.bacKeySeed == Self.key.bacKeySeed)
        // TD1 with a 12-character number: the whole number and its own check digit.
        let long = try MRTDAccessKey.mrz(documentNumber: "D23145890734", dateOfBirth: "340712", dateOfExpiry: "950712")
        #expect(long.mrzInformation.map { String(decoding: $0, as: UTF8.self) } == "D23145890734934071279507122")
        #expect(try MRTDAccessKey.can("123456").pacePassword == Array("123456".utf8))
    }
}

/// Answers in order whatever is sent.
final class ReplayAnyCommand: CardChannel {
    var responses: [[UInt8]]
    init(responses: [String]) { self.responses = responses.map { h($0) } }
    var supportsExtendedLength: Bool { false }
    func transmit(_ command: [UInt8]) throws -> [UInt8] { responses.isEmpty ? [0x6F, 0x00] : responses.removeFirst() }
}
