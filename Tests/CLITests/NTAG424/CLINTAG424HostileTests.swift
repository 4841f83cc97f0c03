import Foundation
import Testing
import TestSupport
import VirtualCard

/// Hostile NTAG 424 DNA tags through pcscd (`apdu emulate ntag424 --hostile …`, the same
/// emulator as the hostile matrix's): a tag that answers a change with its MAC and keeps what it
/// had is never reported changed.
@Suite("apdu ntag424 on hostile tags through pcscd")
struct CLINTAG424HostileTests {
    let zeroKey = String(repeating: "0", count: 32)

    @Test("sdm on a tag that drops ChangeFileSettings: exit 1, 'while enabling SDM', never 'SDM enabled'; change-key on one that drops ChangeKey: not 'changed'")
    func droppedChanges() async throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("n424-hostile-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: state) }
        try await withEmptySlot { slot in
            let card = try startAPDU(["emulate", "ntag424", "--hostile", "change-file-settings-dropped", "--port", String(slot.port)])
            defer { card.terminate(); card.waitUntilExit(); try? waitForCard(in: slot.reader, present: false) }
            try waitForCard(in: slot.reader, present: true)
            let sdm = try runAPDU(["ntag424", "sdm", "--url", "https://example.com/t?e={picc}&c={mac}", "-r", slot.reader],
                                  environment: ["APDU_NTAG424_KEY": zeroKey, "XDG_STATE_HOME": state])
            #expect(sdm.status == 1 && sdm.stderr.contains("while enabling SDM") && sdm.stderr.contains("reads them back")
                    && !sdm.stdout.contains("SDM enabled"), "\(sdm.status): \(sdm.stdout)\(sdm.stderr)")
            let info = try runAPDU(["ntag424", "info", "--json", "-r", slot.reader])
            #expect(info.status == 0 && !info.stdout.contains("mirrorsUID"), "the tag kept SDM off: \(info.stdout)")
        }
        try await withEmptySlot { slot in
            let card = try startAPDU(["emulate", "ntag424", "--hostile", "change-key-dropped", "--port", String(slot.port)])
            defer { card.terminate(); card.waitUntilExit(); try? waitForCard(in: slot.reader, present: false) }
            try waitForCard(in: slot.reader, present: true)
            let old = state + "-old", new = state + "-new"
            defer { for p in [old, new] { try? FileManager.default.removeItem(atPath: p) } }
            try zeroKey.write(toFile: old, atomically: true, encoding: .utf8)
            try String(repeating: "5A", count: 16).write(toFile: new, atomically: true, encoding: .utf8)
            let change = try runAPDU(["ntag424", "change-key", "--key-number", "2", "--old-key-file", old, "--new-key-file", new, "-r", slot.reader],
                                     environment: ["APDU_NTAG424_KEY": zeroKey, "XDG_STATE_HOME": state])
            #expect(change.status == 1 && change.stderr.contains("does not authenticate with the new key") && !change.stdout.contains("changed"),
                    "\(change.status): \(change.stdout)\(change.stderr)")
        }
    }
}
