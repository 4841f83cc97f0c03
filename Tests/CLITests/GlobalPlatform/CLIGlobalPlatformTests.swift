import Foundation
import ISO7816
import Testing
import TestSupport
import VirtualCard

/// GlobalPlatform through pcscd (issue 52): `apdu gp info | list | delete | lock | unlock |
/// card-lock` against the emulated card manager at every protocol and level, a wrong key that
/// leaves the card's counter untouched, the hostile registries, and keys never in any output.
@Suite("GlobalPlatform (apdu gp) through pcscd")
struct CLIGlobalPlatformTests {
    static let hello: [UInt8] = [0xD0, 0xD1, 0xD2, 0xD3, 0xD4, 0xD5, 0x01]
    static let helloApplet: [UInt8] = hello + [0x01]

    static func card(_ scp: CardManagerModel.SCP = .scp03, i: UInt8? = nil, key: [UInt8] = Array(0x40...0x4F), hostile: CardManagerModel.Hostile? = nil,
                     pageSize: Int = 8) -> CardManagerModel {
        let card = CardManagerModel(scp, keys: .init(version: scp == .scp02 ? 0x20 : 0x30, enc: key, mac: key, dek: key), i: i, pageSize: pageSize, hostile: hostile)
        card.preinstall(package: hello, modules: [helloApplet], instances: [helloApplet])
        return card
    }

    static func hex(_ b: [UInt8]) -> String { b.map { String(format: "%02X", $0) }.joined() }

    @Test("info: CPLC, recognition data, key information without authenticating")
    func info() async throws {
        let card = Self.card(.scp03)
        try await withInsertedCard(card) { inserted in
            let r = try runAPDU(["gp", "info", "--json", "-r", inserted.reader])
            #expect(r.status == 0, "\(r.stderr)")
            let doc = try #require(try r.json() as? [String: Any])
            #expect(doc["isd"] as? String == "A000000151000000" && doc["globalPlatformVersion"] as? String == "2.3.1")
            let keys = try #require(doc["keys"] as? [[String: Any]])
            #expect(keys.count == 3 && keys[0]["type"] as? String == "AES-128" && keys[0]["version"] as? String == "30")
            #expect((doc["cplc"] as? [String: Any])?["IC fabricator"] as? String == "4790")
            let text = try runAPDU(["gp", "info", "-r", inserted.reader])
            #expect(text.status == 0 && text.stdout.contains("SCP03 i=70") && text.stdout.contains("CPLC:"), "\(text.stdout)")
        }
        #expect(!card.current.received.contains(0x50) && card.current.externalAuthenticates == 0)
    }

    struct Level: Sendable, CustomStringConvertible {
        var scp: CardManagerModel.SCP, i: UInt8, level: String?
        var description: String { "\(scp) i=\(String(format: "%02X", i)) level \(level ?? "default")" }
    }

    @Test("list at every protocol and level: the registry in words, continuation followed",
          arguments: [Level(scp: .scp02, i: 0x15, level: "01"), Level(scp: .scp02, i: 0x55, level: "03"), Level(scp: .scp02, i: 0x15, level: nil),
                      Level(scp: .scp03, i: 0x00, level: "01"), Level(scp: .scp03, i: 0x10, level: "03"), Level(scp: .scp03, i: 0x70, level: "13"),
                      Level(scp: .scp03, i: 0x70, level: "33"), Level(scp: .scp03, i: 0x70, level: nil)])
    func list(_ setup: Level) async throws {
        let card = Self.card(setup.scp, i: setup.i, pageSize: 1)
        card.preinstall(package: [1, 2, 3, 4, 5], modules: [[1, 2, 3, 4, 5, 1]], instances: [[1, 2, 3, 4, 5, 1], [1, 2, 3, 4, 5, 2]])
        try await withInsertedCard(card) { inserted in
            let r = try runAPDU(["gp", "list", "--json", "--test-keys", "-r", inserted.reader] + (setup.level.map { ["--level", $0] } ?? []))
            #expect(r.status == 0, "\(r.stderr)")
            let doc = try #require(try r.json() as? [String: Any])
            let entries = try #require(doc["entries"] as? [[String: Any]])
            #expect(entries.map { $0["kind"] as? String } == ["ISD", "APP", "APP", "APP", "PKG", "PKG"], "\(entries)")
            #expect(entries[0]["lifeCycle"] as? String == "SECURED" && (entries[0]["privileges"] as? [String])?.contains("SecurityDomain") == true)
            #expect(entries[1]["lifeCycle"] as? String == "SELECTABLE" && entries[4]["modules"] as? [String] == [Self.hex(Self.helloApplet)])
            let expected = setup.level ?? (setup.scp == .scp02 ? "03" : (setup.i == 0x70 ? "33" : "03"))
            #expect(doc["securityLevel"] as? String == expected)
            // Page size 1: 1 ISD + 3 applications + 2 packages.
            #expect(doc["getStatusCommands"] as? Int == 6)
            let three = try runAPDU(["gp", "list", "--enc", "404142434445464748494A4B4C4D4E4F", "--mac", "404142434445464748494A4B4C4D4E4F",
                                     "--dek", "404142434445464748494A4B4C4D4E4F", "-r", inserted.reader])
            #expect(three.status == 0, "\(three.stderr)")
            let text = try runAPDU(["gp", "list", "--test-keys", "-r", inserted.reader])
            #expect(text.stdout.contains("ISD  A000000151000000  SECURED") && text.stdout.contains("module D0D1D2D3D4D50101"), "\(text.stdout)")
        }
        #expect(card.current.failedAuthentications == 0)
    }

    @Test("a wrong key ends the run at the card's cryptogram: one line naming the key version and diversification, exit 1, the counter untouched",
          arguments: [(CardManagerModel.SCP.scp02, "none"), (.scp02, "emv"), (.scp02, "visa2"), (.scp03, "none"), (.scp03, "kdf3")])
    func wrongKey(_ scp: CardManagerModel.SCP, _ diversify: String) async throws {
        let card = Self.card(scp)
        try await withInsertedCard(card) { inserted in
            for command in [["gp", "list"], ["gp", "delete", Self.hex(Self.helloApplet)], ["gp", "lock", Self.hex(Self.helloApplet)], ["gp", "card-lock", "--yes"]] {
                let r = try runAPDU(command + ["--key", "00112233445566778899AABBCCDDEEFF", "--diversify", diversify, "-r", inserted.reader])
                #expect(r.status == 1 && r.stderr.split(separator: "\n").count == 1, "\(command): \(r.status) \(r.stderr)")
                #expect(r.stderr.contains("key version \(scp == .scp02 ? "20" : "30")") && r.stderr.contains("diversification \(diversify)")
                        && r.stderr.contains("counter untouched"), "\(r.stderr)")
            }
        }
        #expect(card.current.externalAuthenticates == 0 && card.current.failedAuthentications == 0 && card.current.cardLifeCycle == 0x0F)
        #expect(card.current.entries.count == 3, "nothing changed")
    }

    @Test("no keys is a usage error, never the test keys tried silently; a key version the card does not hold is refused before INITIALIZE UPDATE")
    func keyPolicy() async throws {
        let card = Self.card(.scp03)
        try await withInsertedCard(card) { inserted in
            let none = try runAPDU(["gp", "list", "-r", inserted.reader])
            #expect(none.status == 64 && none.stderr.contains("--test-keys"), "\(none.stderr)")
            let version = try runAPDU(["gp", "list", "--test-keys", "--key-version", "42", "-r", inserted.reader])
            #expect(version.status == 1 && version.stderr.contains("no key version 42") && version.stderr.split(separator: "\n").count == 1, "\(version.stderr)")
            let level = try runAPDU(["gp", "list", "--test-keys", "--level", "20", "-r", inserted.reader])
            #expect(level.status == 64, "\(level.stderr)")
        }
        #expect(!card.current.received.contains(0x50) && !card.current.received.contains(0xF2))
    }

    @Test("a card locked by failed authentications is reported as such with nothing counted sent")
    func lockedCard() async throws {
        let card = CardManagerModel(.scp03, maxFailures: 1)
        // One failed EXTERNAL AUTHENTICATE from a host that does not check the cryptogram.
        _ = card.process([0x00, 0xA4, 0x04, 0x00, 0x00])
        _ = card.process([0x80, 0x50, 0x00, 0x00, 0x08] + [UInt8](repeating: 1, count: 8) + [0x00])
        _ = card.process([0x84, 0x82, 0x01, 0x00, 0x10] + [UInt8](repeating: 0, count: 16))
        #expect(card.current.cardLifeCycle == 0x7F)
        let before = card.current.externalAuthenticates
        try await withInsertedCard(card) { inserted in
            let r = try runAPDU(["gp", "list", "--test-keys", "-r", inserted.reader])
            #expect(r.status == 1 && r.stderr.contains("locked") && r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
        }
        #expect(card.current.externalAuthenticates == before)
    }

    @Test("delete: never the ISD, a package with instances only with --deps; lock, unlock; card-lock only with --yes")
    func contentChanges() async throws {
        let card = Self.card(.scp03)
        card.preinstall(package: [1, 2, 3, 4, 5], modules: [[1, 2, 3, 4, 5, 1]], instances: [])
        try await withInsertedCard(card) { inserted in
            let r = inserted.reader
            let isd = try runAPDU(["gp", "delete", "A000000151000000", "--test-keys", "-r", r])
            #expect(isd.status == 77 && isd.stderr.contains("Issuer Security Domain"), "\(isd.stderr)")
            let withInstances = try runAPDU(["gp", "delete", Self.hex(Self.hello), "--test-keys", "-r", r])
            #expect(withInstances.status == 77 && withInstances.stderr.contains("--deps"), "\(withInstances.stderr)")
            #expect(card.current.entries.count == 4 && !card.current.received.contains(0xE4))
            let lock = try runAPDU(["gp", "lock", Self.hex(Self.helloApplet), "--test-keys", "-r", r])
            #expect(lock.status == 0, "\(lock.stderr)")
            #expect(card.current.entries.first { $0.aid == Self.helloApplet }?.lifeCycle == 0x87)
            let listed = try runAPDU(["gp", "list", "--json", "--test-keys", "-r", r])
            #expect(listed.stdout.contains("\"lifeCycle\":\"LOCKED\""), "\(listed.stdout)")
            let unlock = try runAPDU(["gp", "unlock", Self.hex(Self.helloApplet), "--test-keys", "-r", r])
            #expect(unlock.status == 0 && card.current.entries.first { $0.aid == Self.helloApplet }?.lifeCycle == 0x07, "\(unlock.stderr)")
            let deps = try runAPDU(["gp", "delete", Self.hex(Self.hello), "--deps", "--test-keys", "-r", r])
            #expect(deps.status == 0, "\(deps.stderr)")
            let single = try runAPDU(["gp", "delete", "0102030405", "--test-keys", "-r", r])
            #expect(single.status == 0, "\(single.stderr)")
            #expect(card.current.entries.count == 1, "\(card.current.entries)")
            let noYes = try runAPDU(["gp", "card-lock", "--test-keys", "-r", r])
            #expect(noYes.status == 77 && card.current.cardLifeCycle == 0x0F)
            let yes = try runAPDU(["gp", "card-lock", "--yes", "--test-keys", "-r", r])
            #expect(yes.status == 0 && card.current.cardLifeCycle == 0x7F, "\(yes.stderr)")
        }
    }

    @Test("hostile cards: a wrong card cryptogram, 63 10 forever, a truncated registry; one line, a documented exit code, never a trap",
          arguments: [(CardManagerModel.Hostile.wrongCryptogram, Int32(1)), (.endlessMoreData, 74), (.truncatedRegistry, 74), (.legacyOnly, 0)])
    func hostile(_ hostile: CardManagerModel.Hostile, _ code: Int32) async throws {
        let card = Self.card(.scp03, hostile: hostile)
        try await withInsertedCard(card) { inserted in
            let r = try runAPDU(["gp", "list", "--json", "--test-keys", "-r", inserted.reader])
            #expect(r.status == code && (code == 0 || r.stderr.split(separator: "\n").count == 1) && !r.stderr.contains("Fatal"), "\(hostile): \(r.status) \(r.stderr)")
        }
        if hostile == .wrongCryptogram { #expect(card.current.externalAuthenticates == 0) }
        if hostile == .endlessMoreData { #expect(card.current.received.filter { $0 == 0xF2 }.count <= 70) }
    }

    @Test("keys never reach the output, the trace or the recording")
    func keysHidden() async throws {
        let key: [UInt8] = [0x5A, 0x1B, 0x2C, 0x3D, 0x4E, 0x5F, 0x60, 0x71, 0x82, 0x93, 0xA4, 0xB5, 0xC6, 0xD7, 0xE8, 0xF9]
        let card = Self.card(.scp03, key: key)
        let recording = FileManager.default.temporaryDirectory.appendingPathComponent("gp-\(UUID()).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: recording) }
        try await withInsertedCard(card) { inserted in
            let r = try runAPDU(["gp", "list", "--json", "--key", Self.hex(key), "--trace", "--record", recording, "-r", inserted.reader])
            #expect(r.status == 0, "\(r.stderr)")
            let all = (r.stdout + r.stderr + ((try? String(contentsOfFile: recording, encoding: .utf8)) ?? "")).uppercased().filter(\.isHexDigit)
            #expect(!all.contains(Self.hex(key)) && !all.contains(Self.hex(Array(key.prefix(8)))))
        }
    }

    @Test("apdu emulate gp scp02|scp03 serves a card `apdu gp` reads")
    func emulateForm() async throws {
        for scp in ["scp02", "scp03"] {
            try await withEmptySlot { slot in
                let ((info, list), stderr) = try withEmulator(["gp", scp], in: slot) {
                    (try runAPDU(["gp", "info", "--json", "-r", slot.reader]), try runAPDU(["gp", "list", "--test-keys", "-r", slot.reader]))
                }
                #expect(stderr.contains("GlobalPlatform card manager, \(scp.uppercased()) i="), "\(stderr)")
                #expect(info.status == 0 && list.status == 0 && list.stdout.contains("ISD  A000000151000000"), "\(info.stderr) \(list.stderr)")
            }
        }
    }

    static func fixture(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("GlobalPlatformTests/Fixtures/\(name)").path
    }

    @Test("install each real CAP file: the package and applet in the registry, the applet selectable, fewest LOADs",
          arguments: ["gppro-Empty_0102030405.cap", "kaoh-helloworld.cap", "pysim-test_javacard.cap", "jcalgtest-AlgTest_v1.7_supportOnly_jc222.cap"])
    func install(_ name: String) async throws {
        let card = CardManagerModel(.scp03)
        try await withInsertedCard(card) { inserted in
            let r = try runAPDU(["gp", "install", Self.fixture(name), "--json", "--test-keys", "--level", "03", "-r", inserted.reader])
            #expect(r.status == 0, "\(r.stderr)")
            let doc = try #require(try r.json() as? [String: Any])
            let size = try #require(doc["loadFileBytes"] as? Int), block = try #require(doc["blockSize"] as? Int)
            #expect(block == 239 && doc["loads"] as? Int == (size + block - 1) / block, "\(doc)")
            let applet = try #require((doc["applets"] as? [String])?.first)
            #expect(card.current.entries.contains { $0.kind == .application && Self.hex($0.aid) == applet && $0.lifeCycle == 0x07 })
            let select = try runAPDU(["send", "--json", "00A40400" + String(format: "%02X", applet.count / 2) + applet, "-r", inserted.reader])
            #expect(select.stdout.contains("9000"), "\(select.stdout)")
            let again = try runAPDU(["gp", "install", Self.fixture(name), "--test-keys", "-r", inserted.reader])
            #expect(again.status == 77 && again.stderr.contains("--deps"), "\(again.stderr)")
        }
    }

    @Test("a LOAD refused with 6A 80: exit 1 naming the partial load file; delete removes it")
    func refusedLoad() async throws {
        let card = CardManagerModel(.scp03, hostile: .refuseLoad)
        try await withInsertedCard(card) { inserted in
            let r = try runAPDU(["gp", "install", Self.fixture("kaoh-helloworld.cap"), "--test-keys", "-r", inserted.reader])
            #expect(r.status == 1 && r.stderr.contains("apdu gp delete D0D1D2D3D4D501") && r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
            #expect(card.current.loading == Self.hello)
            let d = try runAPDU(["gp", "delete", "D0D1D2D3D4D501", "--test-keys", "-r", inserted.reader])
            #expect(d.status == 0 && card.current.loading == nil, "\(d.stderr)")
        }
    }

    @Test("a bad CAP file is bad data (65), nothing sent")
    func badCAP() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("bad-\(UUID()).cap").path
        try Data("not a zip".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let card = CardManagerModel(.scp03)
        try await withInsertedCard(card) { inserted in
            let r = try runAPDU(["gp", "install", path, "--test-keys", "-r", inserted.reader])
            #expect(r.status == 65 && r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
        }
        #expect(card.current.received.isEmpty)
    }

    @Test("put-key writes a key set the card then authenticates with; the key never in output or trace", arguments: CardManagerModel.SCP.allCases)
    func putKey(_ scp: CardManagerModel.SCP) async throws {
        let card = CardManagerModel(scp)
        let newKey = "0F1E2D3C4B5A69788796A5B4C3D2E1F0"
        try await withInsertedCard(card) { inserted in
            let r = try runAPDU(["gp", "put-key", "--new-key", newKey, "--new-version", "31", "--test-keys", "--trace", "-r", inserted.reader])
            #expect(r.status == 0 && r.stdout.contains("key set 31 written"), "\(r.stderr)")
            #expect(!(r.stdout + r.stderr).uppercased().filter(\.isHexDigit).contains(newKey))
            let list = try runAPDU(["gp", "list", "--key", newKey, "--key-version", "31", "-r", inserted.reader])
            #expect(list.status == 0, "\(list.stderr)")
        }
    }

    /// The fault matrix: the card pulled after every exchange of put-key (and of install and
    /// delete): one line, exit 74 or 69, and the card holds the old state or the new one; which
    /// one is then told by authenticating (a wrong key stops before anything counted).
    @Test("put-key, install and delete cut after every exchange: old or new, told by authenticating, the counter untouched",
          arguments: ["put-key", "install", "delete"])
    func faultMatrix(_ operation: String) async throws {
        let newKey = "00112233445566778899AABBCCDDEEFF"
        func command(_ reader: String) -> [String] {
            switch operation {
            case "put-key": return ["gp", "put-key", "--new-key", newKey, "--new-version", "31", "--test-keys", "-r", reader]
            case "install": return ["gp", "install", Self.fixture("gppro-Empty_0102030405.cap"), "--test-keys", "-r", reader]
            default: return ["gp", "delete", Self.hex(Self.hello), "--deps", "--test-keys", "-r", reader]
            }
        }
        let probe = Self.card(.scp03)
        try await withInsertedCard(probe) { inserted in
            let r = try runAPDU(command(inserted.reader))
            #expect(r.status == 0, "\(r.stderr)")
        }
        let total = probe.current.received.count
        #expect(total > 5)
        for n in 0..<total {
            let card = Self.card(.scp03)
            let before = card.current
            try await withInsertedCard(card, faults: Faults(removeAfter: n)) { inserted in
                let r = try runAPDU(command(inserted.reader))
                #expect([74, 69].contains(r.status) && r.stderr.split(separator: "\n").count == 1 && !r.stderr.contains("Fatal"), "cut after \(n): \(r.status) \(r.stderr)")
                // The last exchange is PUT KEY itself: its answer never came.
                if operation == "put-key", n == total - 1 {
                    #expect(r.stderr.contains("old keys") && r.stderr.contains("new ones") && r.stderr.contains("apdu gp list"), "\(r.stderr)")
                }
            }
            let after = card.current
            #expect(after.failedAuthentications == 0 && after.externalAuthenticates <= 1)
            switch operation {
            case "put-key":
                let isNew = after.keySets.count == 2
                #expect(after.keySets.count == 1 || (isNew && after.keySets[1].enc == (try! Hex.decode(newKey))), "cut after \(n): a partial key set")
                // Told by authenticating: the new keys work exactly when they were written.
                try await withInsertedCard(card) { inserted in
                    let check = try runAPDU(["gp", "list", "--key", newKey, "--key-version", "31", "-r", inserted.reader])
                    #expect(check.status == (isNew ? 0 : 1), "cut after \(n): \(check.stderr)")
                }
                #expect(card.current.failedAuthentications == 0)
            case "install":
                // Either nothing, a partial load file the delete names, or the package (and its applet).
                let packages = after.entries.filter { $0.aid == [1, 2, 3, 4, 5] }
                #expect(after.loading == nil || after.loading == [1, 2, 3, 4, 5])
                #expect(packages.count <= 1)
                if after.loading != nil {
                    try await withInsertedCard(card) { inserted in
                        let d = try runAPDU(["gp", "delete", "0102030405", "--test-keys", "-r", inserted.reader])
                        #expect(d.status == 0 && card.current.loading == nil, "\(d.stderr)")
                    }
                }
            default:
                #expect(after.entries.count == before.entries.count || after.entries.count == 1, "cut after \(n): \(after.entries.count) entries")
            }
        }
    }

    @Test("a card whose cryptogram is made with other keys: every operation stops before EXTERNAL AUTHENTICATE, nothing changed",
          arguments: [["list"], ["delete", "D0D1D2D3D4D50101"], ["lock", "D0D1D2D3D4D50101"], ["unlock", "D0D1D2D3D4D50101"], ["card-lock", "--yes"],
                      ["put-key", "--new-key", "00112233445566778899AABBCCDDEEFF", "--new-version", "31"], ["install", "CAP"]])
    func wrongCryptogramEverywhere(_ operation: [String]) async throws {
        let card = Self.card(.scp03, hostile: .wrongCryptogram)
        let arguments = operation.map { $0 == "CAP" ? Self.fixture("kaoh-helloworld.cap") : $0 }
        try await withInsertedCard(card) { inserted in
            let r = try runAPDU(["gp"] + arguments + ["--test-keys", "-r", inserted.reader])
            #expect(r.status == 1 && r.stderr.contains("counter untouched") && r.stderr.split(separator: "\n").count == 1, "\(operation): \(r.stderr)")
        }
        #expect(card.current.externalAuthenticates == 0 && card.current.entries.count == 3 && card.current.keySets.count == 1 && card.current.cardLifeCycle == 0x0F)
        #expect(!card.current.received.contains { [0xE4, 0xE6, 0xE8, 0xF0, 0xD8, 0xF2].contains($0) })
    }

    @Test("--block-size above 255: LOADs in extended length under SCP03, as few as the card's buffer allows; SCP02 refuses it", arguments: ["01", "33"])
    func extendedLoad(_ level: String) async throws {
        let card = CardManagerModel(.scp03)
        try await withInsertedCard(card) { inserted in
            let short = try runAPDU(["gp", "install", Self.fixture("jcalgtest-AlgTest_v1.7_supportOnly_jc222.cap"), "--json", "--test-keys", "--level", level,
                                     "-r", inserted.reader])
            #expect(short.status == 0 && (try? short.json() as? [String: Any])?["loads"] as? Int == 23, "\(short.stdout) \(short.stderr)")
            _ = try runAPDU(["gp", "delete", "4A43416C6754657374", "--deps", "--test-keys", "-r", inserted.reader])
            let r = try runAPDU(["gp", "install", Self.fixture("jcalgtest-AlgTest_v1.7_supportOnly_jc222.cap"), "--json", "--test-keys", "--level", level,
                                 "--block-size", "2048", "-r", inserted.reader])
            #expect(r.status == 0, "\(r.stderr)")
            let doc = try #require(try r.json() as? [String: Any])
            let size = try #require(doc["loadFileBytes"] as? Int), block = try #require(doc["blockSize"] as? Int)
            #expect(block == (level == "33" ? 2031 : 2040) && doc["loads"] as? Int == (size + block - 1) / block && doc["loads"] as? Int == 3, "\(doc)")
            #expect(card.current.entries.contains { Self.hex($0.aid) == "4A43416C675465737431" && $0.lifeCycle == 0x07 })
        }
        let scp02 = CardManagerModel(.scp02)
        try await withInsertedCard(scp02) { inserted in
            let r = try runAPDU(["gp", "install", Self.fixture("kaoh-helloworld.cap"), "--test-keys", "--block-size", "1024", "-r", inserted.reader])
            #expect(r.status == 77 && r.stderr.contains("SCP03"), "\(r.stderr)")
        }
        #expect(!scp02.current.received.contains(0xE8))
    }
}
