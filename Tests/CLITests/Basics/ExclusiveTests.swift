import Foundation
import ISO7816
import NDEF
import Testing
import TestSupport
import VirtualCard

/// Tests that restart pcscd or touch every reader: Scripts/test runs them in a phase of their
/// own (APDU_EXCLUSIVE_PCSCD=1), one at a time, beside a pcscd no other test uses.
@Suite("exclusive: every reader, pcscd restarts", .serialized, .enabled(if: PCSCDControl.isExclusive, "needs its own pcscd: Scripts/test runs it in the exclusive phase"))
struct ExclusiveTests {
    @Test("ndef-write --all-readers writes 16 tags (Type 4 and Type 2) in parallel, one JSON line each")
    func allReaders() async throws {
        let models = (0..<16).map { i -> (any EmulatedCard, () -> [UInt8]) in
            if i % 2 == 0 {
                let (host, model) = type4Host(message: sampleMessage)
                return (host, { model.message })
            }
            let model = Type2TagModel(chip: .ntag215)
            // NTAG215 ships its NDEF TLV at byte 16 (03 00 FE): the message follows a 1-byte length.
            return (model, { Array(model.contents[18..<(18 + Int(model.contents[17]))]) })
        }
        try await withInsertedCards(models.map(\.0)) { slots in
            let state = FileManager.default.temporaryDirectory.appendingPathComponent("all-\(UUID())").path
            defer { try? FileManager.default.removeItem(atPath: state) }
            let env = ["XDG_STATE_HOME": state]
            let uri = "https://example.com/all"
            var single: [Duration] = []
            var all: [Duration] = []
            for round in 0..<3 {
                var start = ContinuousClock.now
                let one = try runAPDU(["ndef-write", "-r", slots[round * 2].reader, "--uri", uri + "/one"], environment: env)
                single.append(ContinuousClock.now - start)
                #expect(one.status == 0, "\(one.stderr)")
                start = ContinuousClock.now
                let r = try runAPDU(["ndef-write", "--all-readers", "--json", "--uri", uri, "--text", "round \(round)"], environment: env)
                all.append(ContinuousClock.now - start)
                #expect(r.status == 0, "\(r.stderr)")
                let lines = r.stdout.split(separator: "\n")
                #expect(lines.count == 16)
                for line in lines {
                    let doc = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                    #expect(doc["ok"] as? Bool == true, "\(line)")
                }
                #expect(!r.stderr.contains("ndef-write:"), "progress in a pipe: \(r.stderr)")
            }
            // On a terminal, a line counts the tags as they finish, and is erased at the end.
            if FileManager.default.isExecutableFile(atPath: "/usr/bin/script") {
                let command = "\(apduBinary) ndef-write --all-readers --uri \(uri) --text 'round 2'"
                let tty = try runProgram("/usr/bin/script", ["-qec", command, "/dev/null"], environment: env.merging(["TERM": "xterm"]) { $1 },
                                         unsetting: ["APDU_READER", "NO_COLOR"]).stdout
                #expect(tty.contains(" done (1/16)") && tty.contains(" done (16/16)\r\u{1B}[K"), "\(tty)")
                #expect(tty.components(separatedBy: "and read them back").count == 17, "\(tty)")
            }
            let expected = try NDEFMessage(records: [.uri(uri), .text("round 2")]).encoded()
            for (i, m) in models.enumerated() { #expect(m.1() == expected, "reader \(i)") }
            // The speed target (within 1.5x of one) is measured by Scripts/bench parallel on release
            // builds; here it is only reported.
            print("all-readers (test build): 16 tags in \(all.sorted()[1]), one tag in \(single.sorted()[1])")
        }
    }

    @Test("pcscd killed and restarted while watch runs: watch says so, reconnects and reports the next card")
    func watchSurvivesRestart() async throws {
        let slot = try await ReaderSlots.shared.acquire()
        defer { Task { await ReaderSlots.shared.release(slot) } }
        let watch = try StreamingAPDU(["watch", "--json"])
        defer { watch.stop() }
        #expect(watch.waitForLine { $0.contains("\"reader-added\"") } != nil)
        try PCSCDControl.stop()
        #expect(watch.waitForLine { $0.contains("\"service-down\"") } != nil, "\(watch.output)")
        try PCSCDControl.start()
        #expect(watch.waitForLine(timeout: .seconds(15)) { $0.contains("\"service-up\"") } != nil, "\(watch.output)")
        let client = VPCDClient(port: slot.port, card: ApplicationHost(applications: []))
        client.start()
        defer { client.stop() }
        #expect(watch.waitForLine(timeout: .seconds(15)) {
            ($0.contains("\"card-inserted\"") || $0.contains("\"card-present\"")) && $0.contains(slot.reader)
        } != nil, "\(watch.output)")
    }

    @Test("ndef-read --wait while pcscd restarts: it recovers or exits 69, never hangs")
    func waitSurvivesRestart() async throws {
        let slot = try await ReaderSlots.shared.acquire()
        defer { Task { await ReaderSlots.shared.release(slot) } }
        let result = Locked<CommandResult?>(nil)
        let start = ContinuousClock.now
        let runner = Thread {
            let r = try? runAPDU(["ndef-read", "--json", "--wait", "20", "-r", slot.reader])
            result.withLock { $0 = r }
        }
        runner.start()
        usleep(500_000)
        try PCSCDControl.stop()
        usleep(300_000)
        try PCSCDControl.start()
        let (host, _) = type4Host(message: sampleMessage)
        let client = VPCDClient(port: slot.port, card: host)
        client.start()
        defer { client.stop() }
        while result.current == nil && ContinuousClock.now - start < .seconds(40) { usleep(50_000) }
        let r = try #require(result.current, "ndef-read --wait hung")
        #expect(r.status == 0 || r.status == 69, "\(r.stderr)")
        print("ndef-read --wait across a pcscd restart: exit \(r.status) \(r.stderr)")
    }
}
