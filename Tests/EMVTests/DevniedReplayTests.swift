import Foundation
import ISO7816
import Testing
import VirtualCard
@testable import EMV

/// Real cards' exchanges as devnied's EMV-NFC-Paycard-Enrollment recorded them (see
/// Tests/Fixtures/emv/devnied/SOURCES.md), answered by command: the values that project's own
/// tests assert must come out of our reader. A command the card was never asked gets "not
/// found" for its kind (SELECT 6A82, READ RECORD 6A83, GET DATA 6A88): the scripts hold only
/// what devnied's reader sent, which stops at the first track data.
@Suite("EMV: real cards replayed (devnied's recordings)")
struct DevniedReplayTests {
    final class Replay: EmulatedCard, @unchecked Sendable {
        var exchanges: [(command: [UInt8]?, response: [UInt8])] = []
        init(file: String) throws {
            let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../Fixtures/emv/devnied/\(file)").standardized
            var pending: [UInt8]?? = nil
            for line in try String(contentsOf: url, encoding: .utf8).split(separator: "\n") where !line.hasPrefix("#") {
                let hex = line.drop { $0 != ":" }.dropFirst().uppercased().filter { $0.isHexDigit }
                if line.hasPrefix("send:") {
                    pending = .some(hex.isEmpty ? nil : try Hex.decode(hex))
                } else if line.hasPrefix("resp:"), let command = pending {
                    exchanges.append((command, try Hex.decode(hex)))
                    pending = nil
                }
            }
        }
        let atr: [UInt8] = [0x3B, 0x65, 0x00, 0x00, 0x20, 0x63, 0xCB, 0xA0, 0x00]
        func reset() {}
        func process(_ apdu: [UInt8]) -> [UInt8] {
            if let hit = exchanges.first(where: { $0.command == apdu }) { return hit.response }
            if apdu[1] == 0xA8, let gpo = exchanges.first(where: { $0.command == nil }) { return gpo.response }
            switch apdu[1] {
            case 0xA4: return [0x6A, 0x82]
            case 0xB2: return [0x6A, 0x83]
            case 0xCA: return [0x6A, 0x88]
            default: return [0x6D, 0x00]
            }
        }
    }

    func read(_ file: String) throws -> PaymentCardRead {
        try PaymentCardReader(transport: APDUTransport(channel: EmulatedChannel(card: try Replay(file: file))), caKeys: .builtIn,
                              terminal: TerminalData(date: [0x26, 0x11, 0x27])).read()
    }

    @Test("VisaCardPse (testPSE): the PSE, PAN 4979670123453600, expiry 02/2016, ATC 1580, 3 PIN tries, 16 log entries of 4000 EUR in FR on 2014-07-16")
    func visaPSE() throws {
        let r = try read("VisaCardPse")
        #expect(r.application.aid.hexString == "A0000000421010")
        #expect(r.pan == "4979670123453600" && r.expiry == EMVMonth(year: 2016, month: 2) && r.atc == 1580 && r.pinTriesLeft == 3)
        #expect(r.log.count == 16 && r.log.allSatisfy { $0.amount == 4000 && $0.currency == "0978" && $0.country == "0250" && $0.date == "2014-07-16" })
        // The recording holds one of the AFL's records: DDA cannot pass without the others.
        #expect(!r.unreadableRecords.isEmpty && r.oda.result == .failed, "\(r.oda)")
    }

    @Test("MasterCardPpse2 (testPPSEMasterCard2): PAN 5200000000000000 from 9F6B, expiry 07/2002 from track 1, ATC 1580, 3 PIN tries, 10 log entries of 2200 TRY on 2011-01-12")
    func mastercard() throws {
        let r = try read("MasterCardPpse2")
        #expect(r.application.aid.hexString == "A0000000041010" && r.application.source == .ppse)
        #expect(r.pan == "5200000000000000" && r.expiry == EMVMonth(year: 2002, month: 7) && r.atc == 1580 && r.pinTriesLeft == 3)
        #expect(r.log.count == 10 && r.log.allSatisfy { $0.amount == 2200 && $0.currency == "0949" && $0.date == "2011-01-12" })
    }

    @Test("InteractPpse (testPPSEInteract): SELECT answered 62 85 with an FCI, the GPO answered with a 70 template (read, with a note), PAN 5200000000000000 from 9F6B, expiry 11/2019, 3 PIN tries, no ATC (69 85)")
    func interac() throws {
        let r = try read("InteractPpse")
        #expect(r.application.aid.hexString == "A0000002771010" && r.application.label == "INTERAC")
        #expect(r.pan == "5200000000000000" && r.expiry == EMVMonth(year: 2019, month: 11) && r.pinTriesLeft == 3 && r.atc == nil)
        #expect(r.notes.contains { $0.contains("70 template") } && r.oda.method == .none)
    }
}
