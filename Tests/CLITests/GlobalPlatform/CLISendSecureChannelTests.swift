import Foundation
import Testing
import TestSupport
import VirtualCard

/// `apdu send --scp 02|03` through pcscd against the emulated card manager (issue 52): any APDU
/// through the secure channel at every protocol and level, printed in the clear; a wrong key that
/// stops at the card's cryptogram with the counter untouched; keys in no output; the allowlist on
/// the clear APDUs; the help.
@Suite("apdu send --scp through pcscd")
struct CLISendSecureChannelTests {
    static let testKey = "404142434445464748494A4B4C4D4E4F"
    /// GET DATA 66 (card recognition data) and GET STATUS of the ISD in the tag format: the card
    /// manager answers GET STATUS only inside an authenticated session.
    static let getData = "80CA006600", getStatus = "80F28002024F0000"

    struct Level: Sendable, CustomStringConvertible {
        var scp: CardManagerModel.SCP, i: UInt8, level: String?, expected: String
        var description: String { "\(scp) i=\(String(format: "%02X", i)) level \(level ?? "default")" }
    }

    @Test("each APDU through the secure channel, printed in the clear, at every protocol and level",
          arguments: [Level(scp: .scp02, i: 0x15, level: "01", expected: "01"), Level(scp: .scp02, i: 0x15, level: "03", expected: "03"),
                      Level(scp: .scp02, i: 0x55, level: nil, expected: "03"),
                      Level(scp: .scp02, i: 0x75, level: nil, expected: "13"), Level(scp: .scp02, i: 0x35, level: "11", expected: "11"),
                      Level(scp: .scp03, i: 0x00, level: "01", expected: "01"), Level(scp: .scp03, i: 0x10, level: "03", expected: "03"),
                      Level(scp: .scp03, i: 0x70, level: "13", expected: "13"), Level(scp: .scp03, i: 0x70, level: nil, expected: "33")])
    func levels(_ setup: Level) async throws {
        let card = CLIGlobalPlatformTests.card(setup.scp, i: setup.i)
        let version = setup.scp == .scp02 ? "02" : "03"
        try await withInsertedCard(card) { inserted in
            // The clear answer to GET DATA 66, outside any session, to compare with the unwrapped one.
            let plain = try runAPDU(["send", "--json", Self.getData, "-r", inserted.reader])
            let plainData = try #require(((try plain.json() as? [String: Any])?["exchanges"] as? [[String: Any]])?.first?["data"] as? String)
            let r = try runAPDU(["send", "--scp", version, "--test-keys", "--json", "-r", inserted.reader, Self.getData, Self.getStatus]
                                + (setup.level.map { ["--level", $0] } ?? []))
            #expect(r.status == 0, "\(r.stderr)")
            let doc = try #require(try r.json() as? [String: Any])
            #expect(doc["securityLevel"] as? String == setup.expected && doc["scp"] as? Int == (setup.scp == .scp02 ? 2 : 3), "\(doc)")
            let exchanges = try #require(doc["exchanges"] as? [[String: Any]])
            #expect(exchanges.map { $0["command"] as? String } == [Self.getData, Self.getStatus])
            #expect(exchanges.map { $0["sw"] as? String } == ["9000", "9000"], "\(exchanges)")
            #expect(exchanges[0]["data"] as? String == plainData, "the answer unwrapped: \(exchanges[0])")
            #expect((exchanges[1]["data"] as? String)?.hasPrefix("E3") == true && (exchanges[1]["data"] as? String)?.contains("A000000151000000") == true)
            let text = try runAPDU(["send", "--scp=\(version)", "--test-keys", "-r", inserted.reader, Self.getStatus] + (setup.level.map { ["--level", $0] } ?? []))
            #expect(text.status == 0 && text.stdout.contains("secure channel: SCP0\(setup.scp == .scp02 ? 2 : 3) i=") && text.stdout.contains("> 80 F2 80 02 02 4F 00 00")
                    && text.stdout.contains("< E3 ") && text.stdout.contains("(9000: "), "\(text.stdout)")
        }
        #expect(card.current.failedAuthentications == 0 && card.current.externalAuthenticates == 2)
    }

    @Test("a wrong key stops at the card's cryptogram: exit 1, one line, the counter untouched, nothing of the line sent",
          arguments: [(CardManagerModel.SCP.scp02, "none"), (.scp02, "emv"), (.scp03, "none"), (.scp03, "kdf3")])
    func wrongKey(_ scp: CardManagerModel.SCP, _ diversify: String) async throws {
        let card = CLIGlobalPlatformTests.card(scp)
        try await withInsertedCard(card) { inserted in
            let r = try runAPDU(["send", "--scp", scp == .scp02 ? "02" : "03", "--key", "00112233445566778899AABBCCDDEEFF", "--diversify", diversify,
                                 "-r", inserted.reader, Self.getStatus])
            #expect(r.status == 1 && r.stderr.split(separator: "\n").count == 1 && r.stderr.contains("counter untouched")
                    && r.stderr.contains("diversification \(diversify)"), "\(r.status) \(r.stderr)")
            #expect(!r.stdout.contains(">"), "\(r.stdout)")
        }
        #expect(card.current.externalAuthenticates == 0 && card.current.failedAuthentications == 0)
        #expect(!card.current.received.contains(0xF2))
    }

    @Test("a protocol the card does not speak is refused before INITIALIZE UPDATE; usage errors exit 64 before connecting")
    func refusals() async throws {
        let card = CLIGlobalPlatformTests.card(.scp03)
        try await withInsertedCard(card) { inserted in
            let other = try runAPDU(["send", "--scp", "02", "--test-keys", "-r", inserted.reader, Self.getStatus])
            #expect(other.status == 77 && other.stderr.contains("SCP02") && other.stderr.split(separator: "\n").count == 1, "\(other.stderr)")
            for bad in [["--scp", "04", "--test-keys"], ["--scp", "03"], ["--scp", "02", "--key", String(repeating: "40", count: 32)],
                        ["--scp", "03", "--test-keys", "--level", "20"], ["--scp", "03", "--test-keys", "ZZ"]] {
                let r = try runAPDU(["send"] + bad + ["-r", inserted.reader] + (bad.last == "ZZ" ? [] : [Self.getStatus]))
                #expect(r.status == 64, "\(bad): \(r.status) \(r.stderr)")
            }
            let refused = try runAPDU(["send", "--scp", "03", "--test-keys", "--allow-aid", "A000000151000000", "-r", inserted.reader,
                                       "00A4040007D0D1D2D3D4D50101"])
            #expect(refused.status == 77 && refused.stderr.contains("allowlist"), "\(refused.stderr)")
        }
        #expect(!card.current.received.contains(0x50) && card.current.externalAuthenticates == 0)
    }

    @Test("keys never reach the output, the JSON, the trace or the recording")
    func keysHidden() async throws {
        let key: [UInt8] = [0x5A, 0x1B, 0x2C, 0x3D, 0x4E, 0x5F, 0x60, 0x71, 0x82, 0x93, 0xA4, 0xB5, 0xC6, 0xD7, 0xE8, 0xF9]
        for scp in [CardManagerModel.SCP.scp02, .scp03] {
            let card = CLIGlobalPlatformTests.card(scp, key: key)
            let recording = FileManager.default.temporaryDirectory.appendingPathComponent("send-scp-\(UUID()).jsonl").path
            defer { try? FileManager.default.removeItem(atPath: recording) }
            try await withInsertedCard(card) { inserted in
                for json in [true, false] {
                    let r = try runAPDU(["send", "--scp", scp == .scp02 ? "02" : "03", "--key", CLIGlobalPlatformTests.hex(key), "--trace", "--record", recording,
                                         "-r", inserted.reader, Self.getData, Self.getStatus] + (json ? ["--json"] : []))
                    #expect(r.status == 0, "\(r.stderr)")
                    let all = (r.stdout + r.stderr + ((try? String(contentsOfFile: recording, encoding: .utf8)) ?? "")).uppercased().filter(\.isHexDigit)
                    #expect(!all.isEmpty && !all.contains(CLIGlobalPlatformTests.hex(key)) && !all.contains(CLIGlobalPlatformTests.hex(Array(key.prefix(8))))
                            && !all.contains(CLIGlobalPlatformTests.hex(Array(key.suffix(8)))))
                }
            }
        }
    }

    @Test("apdu emulate gp scp02 --i 35 serves R-MAC: apdu send --scp 02 takes level 13 by default and prints the answers unwrapped")
    func emulatorRMAC() async throws {
        try await withEmptySlot { slot in
            let (r, stderr) = try withEmulator(["gp", "scp02", "--i", "35"], in: slot) {
                try runAPDU(["send", "--scp", "02", "--test-keys", "--json", "-r", slot.reader, Self.getData, Self.getStatus])
            }
            #expect(stderr.contains("SCP02 i=35"), "\(stderr)")
            #expect(r.status == 0, "\(r.stderr)")
            let doc = try #require(try r.json() as? [String: Any])
            #expect(doc["securityLevel"] as? String == "13" && doc["i"] as? String == "35", "\(doc)")
            let exchanges = try #require(doc["exchanges"] as? [[String: Any]])
            #expect(exchanges.map { $0["sw"] as? String } == ["9000", "9000"] && (exchanges[1]["data"] as? String)?.hasPrefix("E3") == true, "\(exchanges)")
        }
    }

    @Test("the help: apdu send names --scp; apdu send --scp 03 --help shows the key options of apdu gp")
    func help() throws {
        // The help is wrapped to the terminal's width: compared with its runs of blanks as one.
        func words(_ text: String) -> String { text.split(whereSeparator: \.isWhitespace).joined(separator: " ") }
        let core = try runAPDU(["send", "--help"])
        #expect(core.status == 0 && words(core.stdout).contains("With --scp 02|03") && words(core.stdout).contains("apdu send --scp 03 --help"), "\(core.stdout)")
        let secure = try runAPDU(["send", "--scp", "03", "--help"])
        for option in ["--scp <02|03>", "--key <hex>", "--enc <hex>", "--key-version <hex>", "--diversify <method>", "--test-keys", "--level <hex>", "--allow-aid", "--expect"] {
            #expect(secure.stdout.contains(option), "\(option): \(secure.stdout)")
        }
        #expect(secure.status == 0 && words(secure.stdout).contains("the card's counter untouched"), "\(secure.stdout)")
    }
}
