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

    @Test("commit-ignored: a backup write and a credit end exit 1, 'did not commit', never 'committed'; the card holds the old contents",
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
                #expect(write.status == 1 && write.stderr.contains("did not commit") && !write.stdout.contains("\"committed\":true"),
                        "\(args): \(write.status) \(write.stdout)\(write.stderr)")
            }
            let value = try runAPDU(["desfire", "read", "--app", "F00001", "--file", "2", "-r", r], environment: Self.appKey)
            #expect(value.status == 0 && value.stdout.contains("value 10"), "\(value.stdout)\(value.stderr)")
            let data = try runAPDU(["desfire", "read", "--app", "F00001", "--file", "1", "--length", "5", "-r", r], environment: Self.appKey)
            #expect(data.status == 0 && data.stdout.contains("00 00 00 00 00"), "\(data.stdout)\(data.stderr)")
        }
    }
}
