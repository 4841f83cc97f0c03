import Foundation
import ISO7816
import NDEF
import NFCTags
import Testing
import TestSupport
import VirtualCard

func type4Host(_ configure: (inout Type4TagModel.Configuration) -> Void = { _ in }, message: [UInt8]) -> (ApplicationHost, Type4TagModel) {
    var c = Type4TagModel.Configuration()
    configure(&c)
    let model = Type4TagModel(configuration: c, message: message)
    return (ApplicationHost(atr: Type4TagModel.contactlessATR, applications: [model], uid: [0x04, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66]), model)
}

let sampleMessage = try! NDEFMessage(records: [.uri("https://example.com/tag"), .mime("application/json", Array("{\"n\":1}".utf8))]).encoded()

@Suite("ndef-read/-write/-status/-lock on Type 4 tags through pcscd")
struct CLIType4Tests {
    @Test("ndef-read with MLe 15: every record, the verdict, capacity and length in JSON")
    func read() async throws {
        let (host, _) = type4Host({ $0.mle = 15 }, message: sampleMessage)
        try await withInsertedCard(host) { inserted in
            let r = try runAPDU(["ndef-read", "--json", "-r", inserted.reader])
            #expect(r.status == 0, "\(r.stderr)")
            let doc = try #require(try r.json() as? [String: Any])
            #expect(doc["status"] as? String == "readWrite")
            #expect(doc["capacity"] as? Int == 2046)
            #expect(doc["length"] as? Int == sampleMessage.count)
            #expect((doc["tag"] as? [String: Any])?["kind"] as? String == "type4")
            // The contactless reader's GET DATA gives the UID.
            #expect((doc["tag"] as? [String: Any])?["uid"] as? String == "04112233445566")
            let message = try #require(doc["message"] as? [String: Any])
            #expect(message["hex"] as? String == sampleMessage.hexString)
            #expect((message["records"] as? [[String: Any]])?.first?["uri"] as? String == "https://example.com/tag")
            #expect((doc["backgroundReading"] as? [String: Any])?["eligible"] as? Bool == true)
            let raw = try runAPDU(["ndef-read", "--raw", "-r", inserted.reader])
            #expect(raw.stdout == sampleMessage.hexString + "\n")
        }
    }

    @Test("ndef-write: exact bytes on the tag, a backup that --restore puts back")
    func writeAndRestore() async throws {
        let (host, model) = type4Host({ $0.mlc = 16; $0.fileSize = 256 }, message: sampleMessage)
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("state-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: state) }
        try await withInsertedCard(host) { inserted in
            let w = try runAPDU(["ndef-write", "--json", "-r", inserted.reader, "--uri", "tel:+49301234", "--text", "call us"],
                                environment: ["XDG_STATE_HOME": state])
            #expect(w.status == 0, "\(w.stderr)")
            let doc = try #require(try w.json() as? [String: Any])
            let backup = try #require(doc["backup"] as? String)
            #expect(backup.hasPrefix(state + "/apdu/backups/"))
            let saved = try TagBackup(parsing: String(contentsOfFile: backup, encoding: .utf8))
            #expect(saved.kind == "type4" && saved.message == sampleMessage)
            #expect(saved.bytes == [0, UInt8(sampleMessage.count)] + sampleMessage)
            let expected = try NDEFMessage(records: [.uri("tel:+49301234"), .text("call us")]).encoded()
            #expect(model.message == expected)
            #expect(Array(model.fileContents.prefix(2)) == [0, UInt8(expected.count)])
            let restore = try runAPDU(["ndef-write", "-r", inserted.reader, "--restore", backup], environment: ["XDG_STATE_HOME": state])
            #expect(restore.status == 0, "\(restore.stderr)")
            #expect(model.message == sampleMessage)
        }
    }

    @Test("too large and read-only are refused before anything is written")
    func refusals() async throws {
        let (host, model) = type4Host({ $0.fileSize = 40 }, message: sampleMessage.prefix(0).map { $0 })
        try await withInsertedCard(host) { inserted in
            let big = try runAPDU(["ndef-write", "-r", inserted.reader, "--text", String(repeating: "x", count: 60)])
            #expect(big.status == 65)
            #expect(big.stderr.contains("bytes over"))
            #expect(model.fileContents.allSatisfy { $0 == 0 })
        }
        let (ro, roModel) = type4Host({ $0.writeAccess = 0xFF }, message: sampleMessage)
        try await withInsertedCard(ro) { inserted in
            let before = roModel.fileContents
            let r = try runAPDU(["ndef-write", "-r", inserted.reader, "--uri", "https://x.y"])
            #expect(r.status == 1)
            #expect(r.stderr.contains("read-only"))
            #expect(roModel.fileContents == before)
            let s = try runAPDU(["ndef-status", "--json", "-r", inserted.reader])
            let doc = try #require(try s.json() as? [String: Any])
            #expect(doc["status"] as? String == "readOnly")
            #expect(doc["canMakeReadOnly"] as? Bool == false)
        }
    }

    @Test("ndef-lock refuses without --yes (77), locks with it, then writes are refused")
    func lock() async throws {
        let (host, model) = type4Host(message: sampleMessage)
        try await withInsertedCard(host) { inserted in
            let no = try runAPDU(["ndef-lock", "-r", inserted.reader])
            #expect(no.status == 77)
            #expect(model.capabilityContainer[14] == 0)
            let yes = try runAPDU(["ndef-lock", "--json", "--yes", "-r", inserted.reader])
            #expect(yes.status == 0, "\(yes.stderr)")
            #expect((try yes.json() as? [String: Any])?["refusesWrites"] as? Bool == true)
            let w = try runAPDU(["ndef-write", "-r", inserted.reader, "--uri", "https://x.y"])
            #expect(w.status == 1)
            #expect(model.message == sampleMessage)
        }
    }

    @Test("lying tags and foreign cards: clear errors and documented exit codes")
    func lies() async throws {
        var c = Type4TagModel.Configuration()
        c.fileSize = 64
        let lying = ApplicationHost(applications: [Type4TagModel(configuration: c, fileContents: [0xFF, 0xF0, 0xD1])])
        try await withInsertedCard(lying) { inserted in
            let r = try runAPDU(["ndef-read", "-r", inserted.reader])
            #expect(r.status == 65)
            #expect(r.stderr.contains("claims a 65520-byte message"))
        }
        let (future, _) = type4Host({ $0.version = 0x50 }, message: [])
        try await withInsertedCard(future) { inserted in
            // A newer mapping is not a lie: refused with 1, and notSupported (exit 0) for ndef-status.
            let r = try runAPDU(["ndef-read", "-r", inserted.reader])
            #expect(r.status == 1)
            #expect(r.stderr.contains("unsupported Type 4 mapping version 5.0"))
            let s = try runAPDU(["ndef-status", "--json", "-r", inserted.reader])
            let doc = try #require(try s.json() as? [String: Any])
            #expect(s.status == 0 && doc["status"] as? String == "notSupported" && doc["mappingVersion"] as? String == "5.0", "\(s.stdout)")
        }
        try await withInsertedCard(ApplicationHost(applications: [DemoApplication()])) { inserted in
            let r = try runAPDU(["ndef-read", "-r", inserted.reader])
            #expect(r.status == 1)
            #expect(r.stderr.contains("no NDEF application"))
            let s = try runAPDU(["ndef-status", "--json", "-r", inserted.reader])
            #expect((try s.json() as? [String: Any])?["status"] as? String == "notSupported")
        }
    }

    @Test("a card pulled after each APDU of a write: old message, NLEN 0 with a restorable backup, or new — never anything else")
    func pulledDuringWrite() async throws {
        let new = try NDEFMessage(records: [.uri("https://example.org/" + String(repeating: "n", count: 60))]).encoded()
        let outcomes = try await pullCardAfterEveryAPDU(old: sampleMessage, new: new) {
            let (host, model) = type4Host({ $0.mlc = 24 }, message: sampleMessage)
            return (host, { model.message })
        }
        print("pulled-card cases for a Type 4 write: \(outcomes.values.reduce(0, +)) (\(outcomes.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")))")
    }
}

/// Writes `new` over `old` with the card pulled after 0, 1, 2 … APDUs until a write completes
/// (or after each of `cuts`). After each cut the tag must hold the old message, an empty one
/// (then the command the error prints must restore the old one, run as printed), or the new
/// one. Returns how often each happened.
func pullCardAfterEveryAPDU(old: [UInt8], new: [UInt8], cuts: [Int]? = nil, makeTag: () -> (any EmulatedCard, () -> [UInt8])) async throws -> [String: Int] {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pulled-\(UUID())")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let newFile = dir.appendingPathComponent("new.ndef")
    try Data(new).write(to: newFile)
    let env = ["XDG_STATE_HOME": dir.path]
    var outcomes: [String: Int] = [:]
    // One reader throughout: the printed restore command names it, as a person would put the
    // tag back where it was.
    // (A slot held here rather than a withEmptySlot closure: Swift 6.3's region-isolation pass
    // crashes on this loop inside one.)
    let slot = try await ReaderSlots.shared.acquire()
    defer { Task { await ReaderSlots.shared.release(slot) } }
    for index in cuts ?? Array(0...80) {
        let (card, message) = makeTag()
        let (status, stderr) = try await withCard(card, in: slot, faults: Faults(removeAfter: index)) { inserted in
            let w = try runAPDU(["ndef-write", "-r", inserted.reader, "--message", newFile.path], environment: env)
            return (w.status, w.stderr)
        }
        let now = message()
        if status == 0 {
            #expect(now == new)
            outcomes["completed", default: 0] += 1
            if cuts == nil {
                #expect(outcomes["NLEN 0", default: 0] > 0)
                #expect(outcomes["old message", default: 0] > 0)
                return outcomes
            }
            continue
        }
        #expect(status == 74, "pulled after \(index) APDUs: \(stderr)")
        #expect(stderr.contains("removed"), "\(stderr)")
        if now == old {
            outcomes["old message", default: 0] += 1
        } else if now.isEmpty {
            outcomes["NLEN 0", default: 0] += 1
            #expect(stderr.contains("the tag holds an empty message") || stderr.contains("or an empty message"), "\(stderr)")
            let command = try #require(stderr.range(of: "restore the previous message with: ").map { String(stderr[$0.upperBound...]).trimmingCharacters(in: .whitespacesAndNewlines) }, "\(stderr)")
            try await withCard(card, in: slot) { _ in
                let r = try runPrintedCommand(command, environment: env)
                #expect(r.status == 0, "\(command): \(r.stderr)")
            }
            #expect(message() == old)
        } else if now == new {
            outcomes["new message", default: 0] += 1
        } else {
            Issue.record("pulled after \(index) APDUs: the tag holds neither message: \(now.hexString)")
        }
    }
    if cuts == nil { Issue.record("the write never completed") }
    return outcomes
}

/// Runs a command line as `apdu` printed it (a POSIX shell reads it), with this build's binary.
func runPrintedCommand(_ line: String, environment: [String: String] = [:]) throws -> CommandResult {
    precondition(line.hasPrefix("apdu "))
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", "exec \"$APDU_TEST_BINARY\" " + line.dropFirst(5)]
    var env = ProcessInfo.processInfo.environment
    env["APDU_TEST_BINARY"] = apduBinary
    for (k, v) in environment { env[k] = v }
    process.environment = env
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let o = out.fileHandleForReading.readDataToEndOfFile(), e = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return CommandResult(status: process.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
}
