import Foundation
import Testing
import TestSupport
import VirtualCard

/// Hostile MIFARE Plus cards through pcscd (`apdu emulate plus --hostile …`, the hostile
/// matrix's emulator): each answers a write or a personalisation as done and does otherwise,
/// and the CLI never says done.
@Suite("apdu plus on hostile cards through pcscd")
struct CLIMifarePlusHostileTests {
    static let ndefKey = "A:" + String(repeating: "D3F7", count: 8)
    static let keyHex = String(repeating: "5A", count: 16)

    /// Runs `body` with `apdu emulate plus <level> --hostile <hostile>` (nil: an honest card) in a vpcd slot.
    func withHostile(_ level: String, _ hostile: String?, _ body: (String) throws -> Void) async throws {
        try await withEmptySlot { slot in
            let card = try startAPDU(["emulate", "plus", level] + (hostile.map { ["--hostile", $0] } ?? []) + ["--port", String(slot.port)])
            defer { card.terminate(); card.waitUntilExit(); try? waitForCard(in: slot.reader, present: false) }
            try waitForCard(in: slot.reader, present: true)
            try body(slot.reader)
        }
    }

    @Test("write-dropped: an SL3 write answered 90 with its MAC and dropped is never 'written'; the block reads as before")
    func writeDropped() async throws {
        try await withHostile("sl3", "write-dropped") { r in
            let before = try runAPDU(["plus", "read", "--block", "5", "--json", "-r", r], environment: ["APDU_MIFARE_PLUS_KEY": Self.ndefKey])
            #expect(before.status == 0, "\(before.stderr)")
            let w = try runAPDU(["plus", "write", "--block", "5", "--hex", String(repeating: "A1", count: 16), "-r", r], environment: ["APDU_MIFARE_PLUS_KEY": Self.ndefKey])
            #expect(w.status != 0 && w.stderr.contains("reads back") && !w.stdout.contains("reads back as written"), "\(w.status): \(w.stdout)\(w.stderr)")
            let after = try runAPDU(["plus", "read", "--block", "5", "--json", "-r", r], environment: ["APDU_MIFARE_PLUS_KEY": Self.ndefKey])
            #expect(after.status == 0 && after.stdout == before.stdout, "\(after.stdout) \(before.stdout)")
        }
    }

    @Test("key-write-dropped: a key write answered 90 with its MAC and dropped is no 'wrote' (exit 1, old or new; the old key still opens the sector); on an honest card the answer's MAC and the new key opening the sector (exit 0, JSON proof)")
    func keyWriteDropped() async throws {
        // Sector 1's key A written under its key B (B0…B0), which may write it (AN10787's 7F 07 88).
        let keyB = "B:" + String(repeating: "B0", count: 16), oldA = Self.ndefKey, newKey = String(repeating: "C4", count: 16)
        let write = ["plus", "write", "--block", "0x4002", "--hex", newKey, "--yes", "--json"]
        try await withHostile("sl3", "key-write-dropped") { r in
            let w = try runAPDU(write + ["-r", r], environment: ["APDU_MIFARE_PLUS_KEY": keyB])
            #expect(w.status == 1 && w.stderr.contains("old value or the new one") && w.stderr.contains("apdu plus read --block 4 --key A:") && w.stdout.isEmpty,
                    "\(w.status): \(w.stdout)\(w.stderr)")
            let old = try runAPDU(["plus", "read", "--block", "4", "-r", r], environment: ["APDU_MIFARE_PLUS_KEY": oldA])
            #expect(old.status == 0, "\(old.stderr)")
        }
        try await withHostile("sl3", nil) { r in
            let w = try runAPDU(write + ["-r", r], environment: ["APDU_MIFARE_PLUS_KEY": keyB])
            #expect(w.status == 0 && (try? w.json() as? [String: Any])?["proof"] as? String == "answer MAC and new key opens the sector", "\(w.status): \(w.stdout)\(w.stderr)")
            #expect(!w.stdout.contains(newKey) && !w.stderr.contains(newKey))
            let new = try runAPDU(["plus", "read", "--block", "4", "-r", r], environment: ["APDU_MIFARE_PLUS_KEY": "A:" + newKey])
            #expect(new.status == 0, "\(new.stderr)")
            let old = try runAPDU(["plus", "read", "--block", "4", "-r", r], environment: ["APDU_MIFARE_PLUS_KEY": oldA])
            #expect(old.status == 1, "\(old.status): \(old.stdout)\(old.stderr)")
            // Key B written under itself: the same proof.
            let b = try runAPDU(["plus", "write", "--block", "0x4003", "--hex", newKey, "--yes", "--json", "-r", r], environment: ["APDU_MIFARE_PLUS_KEY": keyB])
            #expect(b.status == 0 && (try? b.json() as? [String: Any])?["proof"] as? String == "answer MAC and new key opens the sector", "\(b.status): \(b.stdout)\(b.stderr)")
        }
    }

    @Test("perso-drops-key and commit-stays-sl0: personalize --commit sl3 --yes ends non-zero, never 'in SL3'")
    func personalization() async throws {
        for (hostile, words) in [("perso-drops-key", "does not authenticate"), ("commit-stays-sl0", "as in SL0")] {
            try await withHostile("sl0", hostile) { r in
                let p = try runAPDU(["plus", "personalize", "--commit", "sl3", "--yes", "-r", r], environment: ["APDU_MIFARE_PLUS_PERSO_KEY": Self.keyHex])
                #expect(p.status != 0 && p.stderr.contains(words) && !p.stdout.contains("in SL3 (checked"), "\(hostile): \(p.status) \(p.stdout)\(p.stderr)")
            }
        }
    }
}
