import CardCrypto
import ISO7816
@testable import MRTD
import Testing

/// Part 11 §9.8 rules around Appendix D.4's session (K_Enc 979EC13B…, K_MAC F1CB1F1F…, SSC
/// 887022120C06C226).
@Suite("Secure messaging rules (ICAO 9303 Part 11 §9.8)")
struct SecureMessagingTests {
    static func session(_ ssc: String = "887022120C06C226") throws -> SecureMessaging {
        try SecureMessaging(keys: SessionKeys(cipher: .tdes2, encryption: h("979EC13B1CBFE9DCD01AB0FED307EAE5"),
                                              mac: h("F1CB1F1FB5ADF208806B89DC579DC1F8"), sendSequenceCounter: h(ssc)))
    }
    static let selectAnswer = "990290008E08FA855A5D4C50A8ED9000"

    @Test("D.4: the protected SELECT is byte for byte; its answer verifies")
    func select() throws {
        let sm = try Self.session()
        let protected = try sm.protect(CommandAPDU(cla: 0, ins: 0xA4, p1: 2, p2: 0x0C, data: [0x01, 0x1E]))
        #expect(protected.bytes == h("0CA4020C158709016375432908C044F68E08BF8B92D635FF24F800"))
        guard case let .protected(answer) = try sm.unprotect(try ResponseAPDU(bytes: h(Self.selectAnswer))) else { Issue.record("not protected"); return }
        #expect(answer.statusWord == .success)
    }

    @Test("a response MAC that does not verify ends the session; nothing is sent after")
    func badMAC() throws {
        let sm = try Self.session()
        _ = try sm.protect(CommandAPDU(cla: 0, ins: 0xA4, p1: 2, p2: 0x0C, data: [0x01, 0x1E]))
        var bytes = h(Self.selectAnswer)
        bytes[13] ^= 1
        #expect(throws: MRTDProtocolError.self) { try sm.unprotect(try ResponseAPDU(bytes: bytes)) }
        #expect(sm.hasEnded)
        do { _ = try sm.protect(CommandAPDU(cla: 0, ins: 0xB0, p1: 0, p2: 0, ne: 4)); Issue.record("sent after the end") } catch let e as MRTDProtocolError {
            #expect(e.kind == .secureMessagingEnded)
        }
    }

    @Test("a status altered under a valid-looking MAC is refused (DO 99 is MACed)")
    func alteredStatus() throws {
        let sm = try Self.session()
        _ = try sm.protect(CommandAPDU(cla: 0, ins: 0xA4, p1: 2, p2: 0x0C, data: [0x01, 0x1E]))
        #expect(throws: MRTDProtocolError.self) { try sm.unprotect(try ResponseAPDU(bytes: h("990262828E08FA855A5D4C50A8ED9000"))) }
    }

    @Test("a bare 67 00 (gmrtd #457) or 6A 82 ends the session: no later command can carry the refused one's SSC")
    func bareErrorEndsSession() throws {
        for bare in [StatusWord.wrongLength, .fileNotFound, .securityStatusNotSatisfied] {
            let sm = try Self.session()
            // Command A, answered with a bare error (by the chip, or by someone in the middle who holds A back).
            let commandA = try sm.protect(CommandAPDU(cla: 0, ins: 0xA4, p1: 2, p2: 0x0C, data: [0x01, 0x1E]))
            #expect(commandA.bytes == h("0CA4020C158709016375432908C044F68E08BF8B92D635FF24F800"))
            #expect(try sm.unprotect(ResponseAPDU(statusWord: bare)) == .unprotected(bare))
            #expect(sm.hasEnded)
            // Were the SSC wound back, command B would carry A's SSC, and the chip's answer to A
            // (forwarded in B's place) would verify as B's. Nothing more goes under these keys.
            #expect(throws: MRTDProtocolError.self) { _ = try sm.protect(CommandAPDU(cla: 0, ins: 0xB0, p1: 0, p2: 0, ne: 4)) }
            #expect(throws: MRTDProtocolError.self) { _ = try sm.unprotect(try ResponseAPDU(bytes: h(Self.selectAnswer))) }
        }
    }

    @Test("69 87 and 69 88 end the session; so does a bare 90 00, and a missing DO 99 or DO 8E")
    func smErrors() throws {
        for answer in ["6987", "6988", "9000", "8E08FA855A5D4C50A8ED9000", "990290009000", "99029000 8E08FA855A5D4C50A8ED 00 9000",
                       "8709019FF0EC34F992265199 9000", "8E 9000", "87FF01 9000", "87820000 9000", "998401020304 9000"] {
            let sm = try Self.session()
            _ = try sm.protect(CommandAPDU(cla: 0, ins: 0xA4, p1: 2, p2: 0x0C, data: [0x01, 0x1E]))
            let response = try ResponseAPDU(bytes: h(answer))
            do {
                _ = try sm.unprotect(response)
                Issue.record("\(answer) accepted")
            } catch let e as MRTDProtocolError {
                #expect(e.kind == .secureMessagingEnded, "\(answer)")
            }
            #expect(sm.hasEnded, "\(answer)")
        }
    }

    @Test("odd INS (B1) carries DO 85; Le over 256 goes as two bytes in DO 97 and an extended APDU")
    func oddInstructionAndExtended() throws {
        let sm = try Self.session()
        let b1 = try sm.protect(CommandAPDU(cla: 0, ins: 0xB1, p1: 0, p2: 0, data: [0x54, 0x03, 0x00, 0x80, 0x00], ne: 1024))
        #expect(b1.data.first == 0x85 && b1.data[1] == 8)
        #expect(Array(b1.data[10..<14]) == [0x97, 0x02, 0x04, 0x00])
        #expect(b1.isExtended && b1.bytes.suffix(2) == [0, 0])
        let short = try sm.protect(CommandAPDU(cla: 0, ins: 0xB0, p1: 0, p2: 0, ne: 256))
        #expect(Array(short.data[0..<3]) == [0x97, 0x01, 0x00] && !short.isExtended)
    }

    @Test("an answer whose MAC verifies but whose decrypted data lacks 80 00… padding is refused")
    func badPadding() throws {
        let sm = try Self.session()
        _ = try sm.protect(CommandAPDU(cla: 0, ins: 0xB0, p1: 0, p2: 0, ne: 8))
        // The chip's side of the answer, made with the same keys at the answer's SSC (…C228).
        let chip = try Self.session("887022120C06C228")
        let cryptogram = try chip.encryption.encrypt(cbc: h("0102030405060708"))
        let objects = [0x87, 0x09, 0x01] + cryptogram + [0x99, 0x02, 0x90, 0x00]
        let answer = ResponseAPDU(data: objects + [0x8E, 0x08] + (try chip.mac(objects)), statusWord: .success)
        do {
            _ = try sm.unprotect(answer)
            Issue.record("unpadded data accepted")
        } catch let e as MRTDProtocolError {
            #expect(e.kind == .secureMessagingEnded && e.message.contains("padding"))
        }
        // The same answer with padding goes through: the test's MAC is right.
        let good = try Self.session()
        _ = try good.protect(CommandAPDU(cla: 0, ins: 0xB0, p1: 0, p2: 0, ne: 8))
        let padded = try chip.encryption.encrypt(cbc: Padding.pad(h("0102030405060708"), blockSize: 8))
        let objects2 = [0x87, 0x11, 0x01] + padded + [0x99, 0x02, 0x90, 0x00]
        let answer2 = ResponseAPDU(data: objects2 + [0x8E, 0x08] + (try chip.mac(objects2)), statusWord: .success)
        #expect(try good.unprotect(answer2) == .protected(ResponseAPDU(data: h("0102030405060708"), statusWord: .success)))
    }

    @Test("SSC wraps as an unsigned counter")
    func counterWraps() throws {
        let sm = try Self.session("00000000FFFFFFFF")
        sm.incrementCounter()
        #expect(sm.sendSequenceCounter == h("0000000100000000"))
        sm.decrementCounter()
        #expect(sm.sendSequenceCounter == h("00000000FFFFFFFF"))
    }
}
