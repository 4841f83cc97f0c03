import Foundation
import ISO7816
import NFCTags
import Testing
import TestSupport
import VirtualCard

/// The NDEF commands and a pulled card, the same for every tag family behind a transparent
/// reader (Types 5 and 3 call them with their chips).
enum NativeNDEFChecks {
    static func state() -> String { FileManager.default.temporaryDirectory.appendingPathComponent("t53-\(UUID())").path }

    static func ndefCommands(_ chip: String) async throws {
        let model: any NativeTagModel = ISO15693TagModel.Chip.all[chip].map { ISO15693TagModel(chip: $0) } ?? FeliCaTagModel(chip: FeliCaTagModel.Chip.all[chip]!)
        let card = ContactlessReader(.transparent, tag: model)
        let home = Self.state()
        defer { try? FileManager.default.removeItem(atPath: home) }
        try await withInsertedCard(card) { inserted in
            let w = try runAPDU(["ndef-write", "-r", inserted.reader, "--uri", "https://example.com/\(chip)"], environment: ["XDG_STATE_HOME": home])
            #expect(w.status == 0, "\(w.stderr)")
            let r = try runAPDU(["ndef-read", "--json", "-r", inserted.reader])
            #expect(r.status == 0, "\(r.stderr)")
            let doc = try #require(try r.json() as? [String: Any])
            let kind = model is ISO15693TagModel ? "type5" : "type3"
            #expect((doc["tag"] as? [String: Any])?["kind"] as? String == kind)
            #expect((doc["backgroundReading"] as? [String: Any])?["uri"] as? String == "https://example.com/\(chip)")
            #expect(doc["status"] as? String == "readWrite")
            let s = try runAPDU(["ndef-status", "--json", "-r", inserted.reader])
            let status = try #require(try s.json() as? [String: Any])
            // The URI record: header, type, payload (prefix code 04 for https:// and the rest).
            #expect(status["length"] as? Int == 5 + "example.com/\(chip)".count)
            #expect(status["canMakeReadOnly"] as? Bool == (chip != "felica-standard"))
            let noYes = try runAPDU(["ndef-lock", "-r", inserted.reader])
            #expect(noYes.status == 77)
            let lock = try runAPDU(["ndef-lock", "--yes", "--json", "-r", inserted.reader])
            if chip == "felica-standard" {
                #expect(lock.status == 1 && lock.stderr.contains("no permanent write lock"), "\(lock.stderr)")
            } else {
                #expect(lock.status == 0, "\(lock.stderr)")
                #expect((try lock.json() as? [String: Any])?["refusesWrites"] as? Bool == true)
                let after = try runAPDU(["ndef-write", "-r", inserted.reader, "--text", "x"], environment: ["XDG_STATE_HOME": home])
                #expect(after.status == 1 && after.stderr.contains("read-only"), "\(after.stderr)")
                #expect(try runAPDU(["ndef-read", "-r", inserted.reader]).status == 0)
            }
            #expect(!card.sessionOpen)
        }
    }

    static func pulledMidWrite(_ chip: String) async throws {
        let model: any NativeTagModel = ISO15693TagModel.Chip.all[chip].map { ISO15693TagModel(chip: $0) } ?? FeliCaTagModel(chip: FeliCaTagModel.Chip.all[chip]!)
        let card = ContactlessReader(.transparent, tag: model)
        let home = Self.state()
        defer { try? FileManager.default.removeItem(atPath: home) }
        try await withInsertedCard(card) { inserted in
            let w = try runAPDU(["ndef-write", "-r", inserted.reader, "--text", "the old message"], environment: ["XDG_STATE_HOME": home])
            #expect(w.status == 0, "\(w.stderr)")
        }
        // Count the exchanges of the next write, then pull the card part-way through it.
        let probe: any NativeTagModel = model is ISO15693TagModel ? ISO15693TagModel(chip: (model as! ISO15693TagModel).chip, memory: (model as! ISO15693TagModel).contents)
            : FeliCaTagModel(chip: (model as! FeliCaTagModel).chip, blocks: (model as! FeliCaTagModel).contents)
        let counter = ContactlessReader(.transparent, tag: probe)
        let newText = String(repeating: "new ", count: 20)
        try await withInsertedCard(counter) { inserted in
            let w = try runAPDU(["ndef-write", "-r", inserted.reader, "--text", newText], environment: ["XDG_STATE_HOME": Self.state()])
            #expect(w.status == 0, "\(w.stderr)")
        }
        let total = counter.exchanges
        let message = try await withInsertedCard(card, faults: Faults(removeAfter: total - 4)) { inserted in
            let w = try runAPDU(["ndef-write", "-r", inserted.reader, "--text", newText], environment: ["XDG_STATE_HOME": home])
            #expect(w.status == 74, "\(w.status) \(w.stderr)")
            #expect(w.stderr.split(separator: "\n").count == 1)
            return w.stderr
        }
        // The command the error names, as a user would copy it.
        let path = try #require(message.components(separatedBy: "--restore ").last?.split(separator: " ").first.map { String($0).trimmingCharacters(in: CharacterSet(charactersIn: "'\n")) },
                                "\(message)")
        try await withInsertedCard(card) { inserted in
            let restore = try runAPDU(["ndef-write", "-r", inserted.reader, "--restore", path], environment: ["XDG_STATE_HOME": home])
            #expect(restore.status == 0, "\(restore.stderr)")
            let r = try runAPDU(["ndef-read", "--json", "-r", inserted.reader])
            #expect(r.stdout.contains("the old message"), "\(r.stdout)")
        }
    }
}
