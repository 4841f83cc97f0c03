import Foundation
import Testing
import TestSupport
import VirtualCard

/// Hostile DESFire cards through pcscd (`apdu emulate desfire --hostile …`, the hostile matrix's
/// emulator): a card that answers CommitTransaction 91 00 with its MAC and drops the change is
/// never reported committed, and a file whose settings announce another size is never shown as
/// the file's contents.
@Suite("apdu desfire on hostile cards through pcscd")
struct CLIDESFireHostileTests {
    static let desZero = "0:des:" + String(repeating: "0", count: 16)
    static let appKey = ["APDU_DESFIRE_KEY": "0:aes:" + String(repeating: "0", count: 32)]

    @Test("commit-ignored: a backup write and a credit end exit 1, 'did not make the change', never 'committed'; the card holds the old contents",
          arguments: ["ev1", "ev2"])
    func commitIgnored(_ generation: String) async throws {
        try await withEmptySlot { slot in
            let card = try startAPDU(["emulate", "desfire", "factory", "--generation", generation, "--hostile", "commit-ignored", "--port", String(slot.port)])
            defer { card.terminate(); card.waitUntilExit(); try? waitForCard(in: slot.reader, present: false) }
            try waitForCard(in: slot.reader, present: true)
            let r = slot.reader
            let create = try runAPDU(["desfire", "create-app", "--aid", "F00001", "--keys", "1", "--key-type", "aes", "-r", r], environment: ["APDU_DESFIRE_KEY": Self.desZero])
            #expect(create.status == 0, "\(create.stderr)")
            for args in [["--file", "1", "--type", "backup", "--size", "32", "--comm", "full", "--access", "0000"],
                         ["--file", "2", "--type", "value", "--upper", "500", "--value", "10", "--comm", "mac", "--access", "0000"]] {
                let made = try runAPDU(["desfire", "create-file", "--app", "F00001"] + args + ["-r", r], environment: Self.appKey)
                #expect(made.status == 0, "\(args): \(made.stderr)")
            }
            for args in [["--file", "1", "--data", "0102030405"], ["--file", "2", "--credit", "25"]] {
                let write = try runAPDU(["desfire", "write", "--app", "F00001"] + args + ["--json", "-r", r], environment: Self.appKey)
                #expect(write.status == 1 && write.stderr.contains("did not make the change") && !write.stdout.contains("\"committed\":true"),
                        "\(args): \(write.status) \(write.stdout)\(write.stderr)")
            }
            let value = try runAPDU(["desfire", "read", "--app", "F00001", "--file", "2", "-r", r], environment: Self.appKey)
            #expect(value.status == 0 && value.stdout.contains("value 10"), "\(value.stdout)\(value.stderr)")
            let data = try runAPDU(["desfire", "read", "--app", "F00001", "--file", "1", "--length", "5", "-r", r], environment: Self.appKey)
            #expect(data.status == 0 && data.stdout.contains("00 00 00 00 00"), "\(data.stdout)\(data.stderr)")
        }
    }

    /// A keyless middle (the review of issue 49): GetVersion's hardware major version made 00, so
    /// that the tool takes the card for an MF3ICD40 and opens a legacy (0A) session with a DES
    /// key; CommitTransaction, when `dropsCommit`, never passed on and answered 91 00.
    final class Downgrade: EmulatedCard, @unchecked Sendable {
        let card: DESFireCard
        let dropsCommit: Bool
        init(_ card: DESFireCard, dropsCommit: Bool) { self.card = card; self.dropsCommit = dropsCommit }
        var atr: [UInt8] { card.atr }
        func reset() { card.reset() }
        func process(_ apdu: [UInt8]) -> [UInt8] {
            if dropsCommit, apdu.count >= 2, apdu[0] == 0x90, apdu[1] == 0xC7 { return [0x91, 0x00] }
            var answer = card.process(apdu)
            if apdu.count >= 2, apdu[0] == 0x90, apdu[1] == 0x60, answer.count == 9 { answer[3] = 0x00 }
            return answer
        }
    }

    @Test("a middle that makes an EV1 look like an MF3ICD40 and answers CommitTransaction itself: never 'committed' with exit 0; the read-back that disagrees proves nothing in a legacy session (exit 74, all or none); an honest legacy commit is 'unproven' (exit 1)")
    func legacyDowngrade() async throws {
        let des = ["APDU_DESFIRE_KEY": "0:des:" + String(repeating: "0", count: 16)]
        for dropsCommit in [true, false] {
            let card = DESFireCard.factory(DESFireCard.Chip(generation: .ev1))
            try await withInsertedCard(Downgrade(card, dropsCommit: dropsCommit)) { inserted in
                let r = inserted.reader
                let create = try runAPDU(["desfire", "create-app", "--aid", "F00001", "--keys", "1", "--key-type", "des", "-r", r], environment: des)
                #expect(create.status == 0, "\(create.stderr)")
                for args in [["--file", "1", "--type", "backup", "--size", "32", "--comm", "full", "--access", "0000"],
                             ["--file", "2", "--type", "value", "--upper", "500", "--value", "10", "--comm", "mac", "--access", "0000"],
                             ["--file", "3", "--type", "backup", "--size", "32", "--comm", "plain", "--access", "0000"]] {
                    let made = try runAPDU(["desfire", "create-file", "--app", "F00001"] + args + ["-r", r], environment: des)
                    #expect(made.status == 0, "\(args): \(made.stderr)")
                }
                let files = [["--file", "1", "--data", "0102030405"], ["--file", "2", "--credit", "25"], ["--file", "3", "--data", "0102030405"]]
                let writes: [([String], Int32, String)] = files.map { dropsCommit ? ($0, 74, "prove nothing") : ($0, 1, "unproven") }
                for (args, status, words) in writes {
                    let w = try runAPDU(["desfire", "write", "--app", "F00001"] + args + ["--json", "-r", r], environment: des)
                    #expect(w.status == status && (words.isEmpty || w.stderr.contains(words)), "drops commit \(dropsCommit), \(args): \(w.status) \(w.stdout)\(w.stderr)")
                    if status != 0 { #expect(!w.stdout.contains("\"proven\":true"), "\(w.stdout)") }
                }
            }
            let committed = card.image.application(0xF00001)?.file(1)?.content == .backup([1, 2, 3, 4, 5] + [UInt8](repeating: 0, count: 27))
            #expect(committed == !dropsCommit, "drops commit \(dropsCommit): file 1 is \(String(describing: card.image.application(0xF00001)?.file(1)?.content))")
        }
    }
}
