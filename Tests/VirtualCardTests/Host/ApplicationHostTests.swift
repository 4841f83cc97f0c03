import ISO7816
import Testing
import VirtualCard

/// The emulated card's wire behaviour, driven directly (no pcscd): these are the behaviours
/// the integration tests rely on.
@Suite("ISO 7816 application host")
struct ApplicationHostTests {
    let select: [UInt8] = [0x00, 0xA4, 0x04, 0x00, 0x06] + DemoApplication.defaultAID + [0x00]

    func host(_ configure: (inout HostBehaviour) -> Void = { _ in }) -> ApplicationHost {
        var b = HostBehaviour()
        configure(&b)
        return ApplicationHost(applications: [DemoApplication()], behaviour: b)
    }

    @Test("SELECT by full and partial AID, unknown AID is 6A82, nothing selected is 6D00")
    func selection() {
        let card = host()
        #expect(card.process([0x00, 0xEE, 0x00, 0x00, 0x01, 0x01]) == [0x6D, 0x00])
        #expect(card.process([0x00, 0xA4, 0x04, 0x00, 0x03, 0xA0, 0x00, 0x00]) == [0x6A, 0x82])
        let fci = card.process(select)
        #expect(fci.first == 0x6F && fci.suffix(2) == [0x90, 0x00])
        #expect(card.process([0x00, 0xA4, 0x04, 0x0C, 0x03, 0xF0, 0x61, 0x70]) == [0x90, 0x00])
        #expect(card.process([0x00, 0xEE, 0x00, 0x00, 0x01, 0x2A]) == [0x2A, 0x90, 0x00])
        #expect(card.log.count == 5)
    }

    @Test("T=0 style: 61xx then GET RESPONSE in chunks, CLA checked when asked")
    func getResponse() {
        let card = host { $0.usesGetResponse = true; $0.getResponseChunk = 100; $0.requiresGetResponseCLA = true }
        _ = card.process(select)
        _ = card.process([0x00, 0xC0, 0x00, 0x00, 0x00])
        #expect(card.process([0x80, 0xEE, 0x00, 0xFA, 0x00]) == [0x61, 100])
        #expect(card.process([0x00, 0xC0, 0x00, 0x00, 100]) == [0x6E, 0x00])
        let first = card.process([0x80, 0xC0, 0x00, 0x00, 100])
        #expect(first.count == 102 && first.suffix(2) == [0x61, 100])
        let second = card.process([0x80, 0xC0, 0x00, 0x00, 100])
        #expect(second.suffix(2) == [0x61, 50])
        let last = card.process([0x80, 0xC0, 0x00, 0x00, 50])
        #expect(last.count == 52 && last.suffix(2) == [0x90, 0x00] && last[0] == UInt8(200 & 0xFF))
    }

    @Test("wrong Le gets 6Cxx with the exact length")
    func wrongLe() {
        let card = host { $0.answersWrongLe = true }
        _ = card.process([0x00, 0xA4, 0x04, 0x0C, 0x06] + DemoApplication.defaultAID)
        #expect(card.process([0x00, 0xCA, 0x00, 0x00, 0x00]) == [0x6C, 0x07])
        #expect(card.process([0x00, 0xCA, 0x00, 0x00, 0x07]).suffix(2) == [0x90, 0x00])
    }

    @Test("command chaining joins data; too much data in one APDU is 6700")
    func chaining() {
        let card = host { $0.maxCommandData = 6 }
        _ = card.process([0x00, 0xA4, 0x04, 0x0C, 0x06] + DemoApplication.defaultAID)
        #expect(card.process([0x00, 0xEE, 0x00, 0x00, 0x07, 1, 2, 3, 4, 5, 6, 7]) == [0x67, 0x00])
        #expect(card.process([0x10, 0xEE, 0x00, 0x00, 0x03, 1, 2, 3]) == [0x90, 0x00])
        #expect(card.process([0x00, 0xEE, 0x00, 0x00, 0x02, 4, 5]) == [1, 2, 3, 4, 5, 0x90, 0x00])
    }

    @Test("PIN tries count down and block")
    func pin() {
        let card = host()
        _ = card.process(select)
        #expect(card.process([0x00, 0x20, 0x00, 0x81]) == [0x63, 0xC3])
        #expect(card.process([0x00, 0x20, 0x00, 0x81, 0x04, 0x30, 0x30, 0x30, 0x30]) == [0x63, 0xC2])
        #expect(card.process([0x00, 0x20, 0x00, 0x81, 0x04, 0x31, 0x32, 0x33, 0x34]) == [0x90, 0x00])
        for _ in 0..<2 { _ = card.process([0x00, 0x20, 0x00, 0x81, 0x01, 0x00]) }
        #expect(card.process([0x00, 0x20, 0x00, 0x81, 0x01, 0x00]) == [0x69, 0x83])
    }

    @Test("scripted card: wildcards, trailing star, first match wins, errors name the line")
    func scripted() throws {
        let card = try ScriptedCard(script: """
            # a comment
            atr 3B 00
            00 A4 04 00 02 A0 00 => 90 00
            80 CA ?? ?? 00 => 01 02 90 00
            00 B0 * => 6A 82
            * => 6F 00
            """)
        #expect(card.atr == [0x3B, 0x00])
        #expect(card.process([0x00, 0xA4, 0x04, 0x00, 0x02, 0xA0, 0x00]) == [0x90, 0x00])
        #expect(card.process([0x80, 0xCA, 0x9F, 0x7F, 0x00]) == [0x01, 0x02, 0x90, 0x00])
        #expect(card.process([0x00, 0xB0]) == [0x6A, 0x82])
        #expect(card.process([0x00, 0xB0, 0x00, 0x00, 0x10]) == [0x6A, 0x82])
        #expect(card.process([0x00, 0xA4, 0x04, 0x00]) == [0x6F, 0x00])
        #expect(card.log.count == 5)
        #expect(throws: ScriptedCard.ParseError(line: 2, reason: "a response needs at least SW1 SW2")) {
            try ScriptedCard(script: "# x\n00 => 90")
        }
        #expect(throws: ScriptedCard.ParseError.self) { try ScriptedCard(script: "0G => 9000") }
        #expect(throws: ScriptedCard.ParseError.self) { try ScriptedCard(script: "00A4") }
    }

    @Test("the default ATR has a correct TCK")
    func atr() {
        let atr = ApplicationHost.defaultATR
        #expect(atr.dropFirst().reduce(0, ^) == 0)
    }
}
