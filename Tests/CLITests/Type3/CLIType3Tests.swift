import Foundation
import ISO7816
import NFCTags
import Testing
import TestSupport
import VirtualCard

/// Type 3 tags through pcscd, vpcd and the reader models: the ndef commands, the FeliCa command
/// set, tag-info, a storage-only reader, a card pulled mid-write and the restore the error names.
@Suite("Type 3 tags through pcscd")
struct CLIType3Tests {
    func state() -> String { NativeNDEFChecks.state() }

    @Test("ndef-write / ndef-read / ndef-status / ndef-lock on each chip", arguments: ["felica-lite-s", "felica-standard"])
    func ndefCommands(_ chip: String) async throws { try await NativeNDEFChecks.ndefCommands(chip) }

    @Test("a card pulled mid-write: one line naming the state and the restore command, which works", arguments: ["felica-lite-s"])
    func pulledMidWrite(_ chip: String) async throws { try await NativeNDEFChecks.pulledMidWrite(chip) }

    @Test("felica: poll, services, system-codes, read, write; tag-info on Types 5 and 3", arguments: [ContactlessReader.Dialect.transparent, .acr122u])
    func feliCaCommand(_ dialect: ContactlessReader.Dialect) async throws {
        let tag = FeliCaTagModel(chip: .liteS)
        try await withInsertedCard(ContactlessReader(dialect, tag: tag)) { inserted in
            let poll = try runAPDU(["felica", "poll", "--json", "-r", inserted.reader, "12FC"])
            #expect(poll.status == 0, "\(poll.stderr)")
            #expect((try poll.json() as? [String: Any])?["idm"] as? String == tag.idm.hexString)
            #expect(try runAPDU(["felica", "services", "-r", inserted.reader, "000B", "1234"]).stdout.contains("1234: does not exist"))
            #expect(try runAPDU(["felica", "system-codes", "-r", inserted.reader]).stdout.contains("12FC (NDEF)"))
            let data = String(repeating: "AB", count: 16)
            #expect(try runAPDU(["felica", "write", "-r", inserted.reader, "2", data]).status == 0)
            let read = try runAPDU(["felica", "read", "--json", "-r", inserted.reader, "0", "2"])
            #expect(read.stdout.contains(data), "\(read.stdout)")
            let tooMany = try runAPDU(["felica", "read", "-r", inserted.reader, "0", "1", "2", "3", "4"])
            #expect(tooMany.status == 1, "\(tooMany.stderr)")
            let info = try runAPDU(["tag-info", "--json", "-r", inserted.reader])
            #expect(info.status == 0 && info.stdout.contains("FeliCa Lite-S"), "\(info.stderr)")
        }
        try await withInsertedCard(ContactlessReader(.transparent, tag: ISO15693TagModel(chip: .tagIt))) { inserted in
            let info = try runAPDU(["tag-info", "--json", "-r", inserted.reader])
            #expect(info.status == 0 && info.stdout.contains("Texas Instruments"), "\(info.stderr)")
        }
    }

    @Test("a FeliCa card on a storage-only reader: one line naming the missing raw path, exit 69")
    func feliCaStorage() async throws {
        try await withInsertedCard(ContactlessReader(.storageOnly, tag: FeliCaTagModel(chip: .liteS))) { inserted in
            let r = try runAPDU(["ndef-read", "-r", inserted.reader])
            #expect(r.status == 69 && r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
        }
    }
}
