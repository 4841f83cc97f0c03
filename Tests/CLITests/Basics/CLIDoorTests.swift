// `apdu` and `apdu-tags`: the core commands run in `apdu`, which links no tag family; every other
// command, the root help and the completion scripts go through it to `apdu-tags`.
import Foundation
import Testing
import TestSupport
import VirtualCard

@Suite("apdu runs the core commands and hands the rest to apdu-tags")
struct CLIDoorTests {
    /// The commands `apdu` runs itself (APDUCommand.coreCommands).
    static let coreCommands = ["readers", "send", "script", "select", "atr", "sw", "ndef", "reader-control", "doctor"]

    var tagsBinary: String { URL(fileURLWithPath: apduBinary).deletingLastPathComponent().appendingPathComponent("apdu-tags").path }

    @Test("a core command's help and errors are the same from apdu and from apdu-tags", arguments: coreCommands)
    func sameCommand(name: String) throws {
        let door = try runAPDU([name, "--help"]), all = try runProgram(tagsBinary, [name, "--help"])
        #expect(door.status == 0 && all.status == 0)
        #expect(door.stdout == all.stdout)
        let a = try runAPDU([name, "--no-such-option"]), b = try runProgram(tagsBinary, [name, "--no-such-option"])
        #expect(a.status == 64 && b.status == 64)
        #expect(a.stderr == b.stderr)
    }

    @Test("the root help, a family command and a typo go through apdu to apdu-tags")
    func forwarded() throws {
        let help = try runAPDU(["--help"])
        #expect(help.status == 0)
        for name in Self.coreCommands + ["ndef-read", "ntag424", "mrtd", "desfire", "emulate", "watch"] {
            #expect(help.stdout.contains("  \(name) "), "\(name) missing from apdu --help")
        }
        #expect(try runAPDU([]).stdout == help.stdout)
        // Refused offline by apdu-tags (no key), exit status and message passed through.
        let sun = try runAPDU(["sun", "verify", "https://t.example/?picc_data=00&cmac=00"], environment: ["APDU_SDM_META_KEY": ""])
        #expect(sun.status == 64 && sun.stderr.contains("no key"), "\(sun.stderr)")
        let typo = try runAPDU(["ndef-raed"])
        #expect(typo.status == 64 && typo.stderr.contains("ndef-raed"))
        let completion = try runAPDU(["--generate-completion-script", "bash"])
        #expect(completion.status == 0 && completion.stdout.contains("ntag424"))
    }

    @Test("apdu alone runs the core commands; a family command without apdu-tags is a one-line 69")
    func alone() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("apdu-door-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let lone = dir.appendingPathComponent("apdu").path
        try FileManager.default.copyItem(atPath: apduBinary, toPath: lone)
        let sw = try runProgram(lone, ["sw", "6A82"])
        #expect(sw.status == 0 && sw.stdout.hasPrefix("6A82: "))
        let encoded = try runProgram(lone, ["ndef", "encode", "--uri", "https://example.com"])
        #expect(encoded.status == 0 && !encoded.stdout.isEmpty, "\(encoded.stderr)")
        let family = try runProgram(lone, ["ndef-read"])
        #expect(family.status == 69)
        #expect(family.stderr.split(separator: "\n").count == 1 && family.stderr.contains("apdu-tags"), "\(family.stderr)")
        #expect(!family.stderr.contains("Fatal error"))
    }

    @Test("apdu alone runs a plain APDU script (no second process); one with tag lines needs apdu-tags, a one-line 69 before anything is sent")
    func aloneScript() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("apdu-door-script-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let lone = dir.appendingPathComponent("apdu").path
        try FileManager.default.copyItem(atPath: apduBinary, toPath: lone)
        let card = ApplicationHost(applications: [DemoApplication()])
        try await withInsertedCard(card) { inserted in
            let plain = try runProgram(lone, ["script", "-r", inserted.reader, "-"], stdin: "00A4040006F06170647501 => 9000\n00 EE 00 00 02 CA FE => 9000\n")
            #expect(plain.status == 0 && plain.stdout.contains("< CA FE 90 00"), "\(plain.stdout)\(plain.stderr)")
            let tagged = try runProgram(lone, ["script", "-r", inserted.reader, "-"], stdin: "00A4040006F06170647501 => 9000\ntag 3000\n")
            #expect(tagged.status == 69 && tagged.stderr.contains("apdu-tags") && tagged.stderr.split(separator: "\n").count == 1, "\(tagged.stderr)")
            #expect(tagged.stdout.isEmpty, "nothing was sent: \(tagged.stdout)")
        }
    }

    /// What keeps `apdu`'s start-up independent of the families: the Swift runtime scans every
    /// protocol-conformance record in the binary at each first dynamic cast, so a family linked
    /// into `apdu` would cost every command. Mangled names carry the module (`7NFCTags`).
    @Test("apdu links no tag family; apdu-tags links them all")
    func noFamilyInApdu() throws {
        let apdu = try Data(contentsOf: URL(fileURLWithPath: apduBinary))
        let tags = try Data(contentsOf: URL(fileURLWithPath: tagsBinary))
        for module in ["NFCTags", "TagReader", "MRTD", "VirtualCard", "SUNStore", "SwiftASN1"] {
            let mangled = Data("\(module.utf8.count)\(module)".utf8)
            #expect(apdu.range(of: mangled) == nil, "apdu holds \(module)")
            #expect(tags.range(of: mangled) != nil, "apdu-tags does not hold \(module): the test would prove nothing")
        }
    }
}
