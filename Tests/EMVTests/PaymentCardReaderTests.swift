import Foundation
import ISO7816
import Testing
import VirtualCard
@testable import EMV

/// The reader against the emulated payment cards (written apart from it, from the specs):
/// every selection rule, each PDOL, both GPO formats, records that do not start at 1, the log,
/// each ODA verdict, and that nothing but the five read-only instructions is ever sent.
@Suite("EMV: reading the emulated payment cards")
struct PaymentCardReaderTests {
    static let keys = CAPublicKeys(try! CAPublicKeys.parse(capkFile: PaymentCardModel.caKeyFile, test: true))

    func reader(_ card: any EmulatedCard, keys: CAPublicKeys = keys, un: [UInt8] = [0x11, 0x22, 0x33, 0x44]) -> PaymentCardReader {
        PaymentCardReader(transport: APDUTransport(channel: EmulatedChannel(card: card)), caKeys: keys,
                          terminal: TerminalData(date: [0x26, 0x11, 0x27], unpredictableNumber: un))
    }

    @Test("Visa: PPSE, the PDOL filled, GPO format 77 with track 2, records 2-3 of SFI 2, fDDA verified, the DF60 log decoded")
    func visa() throws {
        let card = PaymentCardModel(.visa)
        let r = reader(card)
        let apps = try r.applications()
        #expect(apps.count == 1 && apps[0].label == "VISA CREDIT" && apps[0].kernel == .visa && apps[0].source == .ppse)
        let read = try reader(card).read()
        #expect(read.pan == card.pan && read.expiry == EMVMonth(year: 2049, month: 12))
        #expect(read.oda.method == .fdda && read.oda.result == .verified, "\(read.oda)")
        #expect(read.records.map { "\($0.sfi).\($0.record)" } == ["2.2", "2.3", "3.1"])
        #expect(read.log.count == 3 && read.log[0].amount == 1234 && read.log[0].currency == "0978" && read.log[0].date == "2026-11-20" && read.log[0].country == "0250")
        #expect(read.pinTriesLeft == 3 && read.atc == card.atc && read.lastOnlineATC == nil)
        #expect(card.forbiddenCommands.isEmpty && Set(card.receivedInstructions).isSubset(of: PaymentCardReader.instructions))
    }

    @Test("Mastercard: no PDOL, GPO format 80, DDA by INTERNAL AUTHENTICATE (CDA offered too), the 9F4D log")
    func mastercard() throws {
        let card = PaymentCardModel(.mastercard)
        let read = try reader(card).read()
        #expect(read.oda.method == .dda && read.oda.result == .verified && read.oda.offered.contains(.cda), "\(read.oda)")
        #expect(read.oda.iccDynamicNumber?.count == 8 && read.log.count == 3 && read.pan == card.pan)
        #expect(card.receivedInstructions.filter { $0 == 0xA8 }.count == 1 && card.receivedInstructions.contains(0x88))
    }

    @Test("Amex: the PDOL asks for 9F35 and 9F6E (non-zero, or GPO is refused), records 2-4, SDA verified (DAC DAC1)")
    func amex() throws {
        let card = PaymentCardModel(.amex)
        let read = try reader(card).read()
        #expect(read.oda.method == .sda && read.oda.result == .verified && read.oda.dataAuthenticationCode == [0xDA, 0xC1], "\(read.oda)")
        #expect(read.records.map(\.record) == [2, 3, 4])
        // The card itself refuses a zero 9F6E: what a naive PDOL filler gets.
        let raw = PaymentCardModel(.amex)
        _ = raw.process([0x00, 0xA4, 0x04, 0x00, 0x08, 0xA0, 0x00, 0x00, 0x00, 0x25, 0x01, 0x08, 0x01, 0x00])
        #expect(raw.process([0x80, 0xA8, 0x00, 0x00, 0x11, 0x83, 0x0F] + [UInt8](repeating: 0, count: 15) + [0x00]).suffix(2) == [0x69, 0x85])
    }

    @Test("a contact card: no PPSE (6A82), the PSE's records; a blocked application (62 83) listed and skipped; no ODA offered")
    func contact() throws {
        let card = PaymentCardModel(.contact)
        let apps = try reader(card).applications()
        #expect(apps.map(\.label) == ["MAESTRO", "DEBIT MASTERCARD"] && apps.allSatisfy { $0.source == .pse })
        let read = try reader(card).read()
        #expect(read.application.label == "DEBIT MASTERCARD" && read.oda.result == .notOffered && read.oda.method == .none)
    }

    @Test("the AID list: 62 85 with an FCI accepted (Interac); partial selection with SELECT next finds both Visa applications")
    func aidList() throws {
        let card = PaymentCardModel(.interac)
        let apps = try reader(card).applications()
        #expect(apps.map(\.aid.hexString) == ["A0000002771010", "A000000003101001", "A000000003101002"], "\(apps.map(\.aid.hexString))")
        #expect(apps.allSatisfy { $0.source == .aidList })
        #expect(card.receivedInstructions.allSatisfy { $0 == 0xA4 }, "info sends SELECT only")
        #expect(try reader(card).read().application.label == "INTERAC")
    }

    @Test("no key of the card's scheme: no-ca-key, not checked; the scheme's keys without the index 8F names: unknown-ca-index, unproven (issue 48)")
    func noCAKey() throws {
        let none = try reader(PaymentCardModel(.visa), keys: CAPublicKeys()).read()
        #expect(none.oda.result == .noCAKey && none.oda.caIndex == 0xE1, "\(none.oda)")
        let builtIn = try reader(PaymentCardModel(.visa), keys: CAPublicKeys.builtIn).read()
        #expect(builtIn.oda.result == .unknownCAIndex && builtIn.oda.caIndex == 0xE1 && builtIn.oda.reason?.contains("A000000003") == true, "\(builtIn.oda)")
        #expect(!builtIn.covered([0x5A]) && !builtIn.expiryProven, "an unproven read vouches for nothing")
    }

    @Test("a directory that lists the card under another scheme (a middle passing the SELECT on under the real AID) fails ODA on the FCI's DF name, never 'no key' (issue 48 review)")
    func directoryNamesAnotherScheme() throws {
        // The middle lists Mastercard's application as JCB's (a RID we hold no key of) and
        // selects the real one when asked for JCB's: the FCI still names A0000000041010.
        final class SchemeSwap: EmulatedCard, @unchecked Sendable {
            let card = PaymentCardModel(.mastercard)
            let real: [UInt8] = [0xA0, 0x00, 0x00, 0x00, 0x04, 0x10, 0x10]
            let fake: [UInt8] = [0xA0, 0x00, 0x00, 0x00, 0x65, 0x10, 0x10]
            var atr: [UInt8] { card.atr }
            func reset() { card.reset() }
            func replacing(_ bytes: [UInt8], _ from: [UInt8], _ to: [UInt8]) -> [UInt8] {
                var out = bytes
                var i = 0
                while i + from.count <= out.count {
                    if Array(out[i..<(i + from.count)]) == from { out.replaceSubrange(i..<(i + from.count), with: to); i += to.count } else { i += 1 }
                }
                return out
            }
            func process(_ apdu: [UInt8]) -> [UInt8] {
                guard apdu.count > 4, apdu[1] == 0xA4 else { return card.process(apdu) }
                let answer = card.process(replacing(apdu, fake, real))
                // Only the directory's answer is changed: the application's FCI is the card's own.
                let directory = Array("2PAY.SYS.DDF01".utf8)
                let isDirectory = apdu.count >= 5 + directory.count && Array(apdu[5..<(5 + directory.count)]) == directory
                return isDirectory ? replacing(answer, real, fake) : answer
            }
        }
        let honest = try reader(PaymentCardModel(.mastercard)).read()
        #expect(honest.oda.result == .verified)
        let swapped = try reader(SchemeSwap()).read()
        #expect(swapped.application.aid == [0xA0, 0x00, 0x00, 0x00, 0x65, 0x10, 0x10], "the middle's list was followed")
        #expect(swapped.oda.result == .failed && swapped.oda.reason?.contains("DF name (84) A0000000041010") == true, "\(swapped.oda)")
    }

    @Test("an AIP offering CDA alone (its DDA bit cleared on the way) still gets INTERNAL AUTHENTICATE: the card proves its key (DDA verified); a card that refuses it leaves CDA not verified, never failed (issue 48 review)")
    func cdaAloneStillAuthenticates() throws {
        final class AIPChange: EmulatedCard, @unchecked Sendable {
            let card = PaymentCardModel(.mastercard)
            let refusesInternalAuthenticate: Bool
            init(refusesInternalAuthenticate: Bool) { self.refusesInternalAuthenticate = refusesInternalAuthenticate }
            var atr: [UInt8] { card.atr }
            func reset() { card.reset() }
            func process(_ apdu: [UInt8]) -> [UInt8] {
                if refusesInternalAuthenticate, apdu.count > 1, apdu[1] == 0x88 { return [0x6A, 0x81] }
                var answer = card.process(apdu)
                // GPO's format 80 answer: 80 L AIP(2) AFL; the DDA bit (byte 1, b6) cleared, CDA kept.
                if apdu.count > 1, apdu[1] == 0xA8, answer.count > 4, answer[0] == 0x80 { answer[2] &= ~0x20 }
                return answer
            }
        }
        let changed = AIPChange(refusesInternalAuthenticate: false)
        let proven = try reader(changed).read()
        #expect(proven.oda.offered == [.cda] && proven.oda.method == .dda && proven.oda.result == .verified, "\(proven.oda)")
        #expect(changed.card.receivedInstructions.contains(0x88))
        let clone = try reader(AIPChange(refusesInternalAuthenticate: true)).read()
        #expect(clone.oda.method == .cda && clone.oda.result == .notVerified && clone.oda.reason?.contains("refused INTERNAL AUTHENTICATE") == true, "\(clone.oda)")
    }

    @Test("a replayed fDDA answer (signed for another unpredictable number) fails")
    func replayed() throws {
        let card = PaymentCardModel(.visa)
        final class Replay: EmulatedCard, @unchecked Sendable {
            let card: PaymentCardModel
            var recorded: [UInt8]?
            init(_ card: PaymentCardModel) { self.card = card }
            var atr: [UInt8] { card.atr }
            func reset() { card.reset() }
            func process(_ apdu: [UInt8]) -> [UInt8] {
                let answer = card.process(apdu)
                guard apdu.count > 1, apdu[1] == 0xA8 else { return answer }
                if recorded == nil { recorded = answer }
                return recorded!
            }
        }
        let replay = Replay(card)
        #expect(try reader(replay, un: [1, 2, 3, 4]).read().oda.result == .verified)
        let second = try reader(replay, un: [5, 6, 7, 8]).read().oda
        #expect(second.result == .failed && second.reason?.contains("replayed") == true, "\(second)")
    }

    @Test("issue 48: the PAN shown is proven by the verdict beside it (SDA: 5A in a signed record; DDA and fDDA: the ICC certificate's)")
    func panProven() throws {
        for profile in [PaymentCardModel.Profile.visa, .mastercard, .amex] {
            let read = try reader(PaymentCardModel(profile)).read()
            #expect(read.oda.result == .verified && read.panProven && read.conflicts.isEmpty, "\(profile): \(read.oda) \(read.conflicts)")
        }
        #expect(try reader(PaymentCardModel(.contact)).read().panProven == false)
    }

    @Test("issue 48: track 2 in the GPO answer with another PAN than the signed 5A is a conflict, and fDDA is failed, not verified")
    func panDisagreement() throws {
        final class OtherTrack2: EmulatedCard, @unchecked Sendable {
            let card = PaymentCardModel(.visa)
            var atr: [UInt8] { card.atr }
            func reset() { card.reset() }
            func process(_ apdu: [UInt8]) -> [UInt8] {
                var answer = card.process(apdu)
                guard apdu.count > 1, apdu[1] == 0xA8, let pan = try? Hex.decode(card.pan) else { return answer }
                // Track 2 (57) starts with the PAN in BCD: its last two digits changed.
                if let at = answer.indices.first(where: { answer[$0...].starts(with: pan) }) { answer[at + pan.count - 1] ^= 0x11 }
                return answer
            }
        }
        let read = try reader(OtherTrack2()).read()
        #expect(read.oda.method == .fdda && read.oda.result == .failed && read.conflicts.contains { $0.contains("PAN") }, "\(read.oda) \(read.conflicts)")
        #expect(!read.panProven)
    }

    @Test("the EMV code can send SELECT, READ RECORD, GPO, GET DATA and INTERNAL AUTHENTICATE, and no other instruction")
    func instructions() throws {
        #expect(PaymentCardReader.instructions == [0xA4, 0xB2, 0xA8, 0xCA, 0x88])
        let forbidden: Set<UInt8> = [0xAE, 0x20, 0x82, 0xDA, 0xDC, 0x24, 0x2C, 0x1E, 0x18, 0x16]
        #expect(PaymentCardReader.instructions.isDisjoint(with: forbidden))
        // Every instruction literal in the module's sources.
        let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Sources/EMV").standardized
        var found = Set<UInt8>()
        for file in try FileManager.default.contentsOfDirectory(atPath: dir.path) where file.hasSuffix(".swift") {
            let text = try String(contentsOfFile: dir.appendingPathComponent(file).path, encoding: .utf8)
            for match in text.matches(of: /ins: 0x([0-9A-F]{2})/) { found.insert(UInt8(match.1, radix: 16)!) }
        }
        #expect(found == PaymentCardReader.instructions, "instructions in Sources/EMV: \(found.map { String($0, radix: 16) })")
    }
}
