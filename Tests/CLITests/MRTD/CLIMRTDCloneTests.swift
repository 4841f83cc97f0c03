import Foundation
import MRTD
import Testing
import TestSupport
import VirtualCard

/// A copy of a passport's data on a blank chip keeps EF.SOD (or passive authentication fails) but
/// cannot copy the chip's private keys, so it withholds DG14 and DG15, or refuses the proofs; a
/// man in the middle can answer the same without any key. Through pcscd, each is "not genuine"
/// with exit 65 and says which proof is missing; the specimen that gives both stays genuine.
@Suite("apdu mrtd: a chip that withholds or refuses the proofs EF.SOD offers")
struct CLIMRTDCloneTests {
    let specimen = CLIMRTDSpecimens.standard

    func read(_ reader: String, _ trust: String, json: Bool) throws -> CommandResult {
        try runAPDU(["mrtd", "read", "-r", reader, "--mrz", specimen.mrzText, "--trust", trust] + (json ? ["--json"] : []))
    }

    /// The specimen with `groups` taken off the chip (EF.SOD, which lists them, kept) and their keys gone.
    func clone(without groups: [Int]) -> MRTDDocument {
        var document = specimen.document
        for group in groups { document.files[.dataGroup(group)] = nil }
        if groups.contains(14) { document.chipAuthenticationKey = nil }
        if groups.contains(15) { document.activeAuthenticationKey = nil }
        return document
    }

    @Test("DG14 and DG15 listed in EF.SOD but absent (6A 82): both proofs failed, not genuine, exit 65", arguments: [[14, 15], [14], [15]])
    func withheldGroups(_ groups: [Int]) async throws {
        let trust = try specimen.trustFolder()
        defer { try? FileManager.default.removeItem(atPath: trust) }
        try await withInsertedCard(MRTDChip(document: clone(without: groups))) { inserted in
            let j = try read(inserted.reader, trust, json: true)
            #expect(j.status == 65, "\(j.stderr)")
            #expect(j.document["genuine"] as? Bool == false && j.document["chipGenuine"] as? Bool == false, "\(j.stdout)")
            #expect(j.document.object("passiveAuthentication")["valid"] as? Bool == true, "the data itself is genuine")
            for (name, group) in [("chipAuthentication", 14), ("activeAuthentication", 15)] {
                let proof = j.document.object(name)
                if groups.contains(group) {
                    #expect(proof.string("status") == "failed" && proof["offered"] as? Bool == true, "\(name): \(proof)")
                    #expect(proof.string("reason")?.contains("EF.SOD's signed list names DG\(group)") == true, "\(proof)")
                } else {
                    #expect(proof.string("status") == "verified", "\(name): \(proof)")
                }
            }
            #expect(j.stderr.contains("not proven genuine: "), "\(j.stderr)")
            let text = try read(inserted.reader, trust, json: false)
            #expect(text.status == 65)
            #expect(text.stdout.contains(groups.sorted().map { "DG\($0)" }.joined(separator: ", ") + " listed but absent") && text.stdout.contains("✗ NOT genuine"), "\(text.stdout)")
            #expect(!text.stdout.contains("✓ genuine") && !text.stdout.contains("offers no proof of its chip"), "\(text.stdout)")
        }
    }

    @Test("a keyless man in the middle answers DG14's and DG15's reads with a bare 6A 82: not genuine, exit 65")
    func middleWithholds() async throws {
        let trust = try specimen.trustFolder()
        defer { try? FileManager.default.removeItem(atPath: trust) }
        // READ BINARY by short EF identifier: P1 = 80 | SFI, in the clear even under secure messaging.
        let card = InterceptingCard(MRTDChip(document: specimen.document)) { apdu in
            apdu.count > 3 && apdu[0] & 0x0C == 0x0C && apdu[1] == 0xB0 && (apdu[2] == 0x8E || apdu[2] == 0x8F) ? [0x6A, 0x82] : nil
        }
        try await withInsertedCard(card) { inserted in
            let j = try read(inserted.reader, trust, json: true)
            #expect(j.status == 65, "\(j.stderr)")
            #expect(card.intercepted >= 2, "the middle answered both groups")
            #expect(j.document["genuine"] as? Bool == false)
            #expect(j.document.object("chipAuthentication").string("status") == "failed" && j.document.object("activeAuthentication").string("status") == "failed", "\(j.stdout)")
        }
    }

    @Test("INTERNAL AUTHENTICATE answered with a bare 67 00: active authentication not verified, not proven genuine, exit 65")
    func refusedActiveAuthentication() async throws {
        let trust = try specimen.trustFolder()
        defer { try? FileManager.default.removeItem(atPath: trust) }
        let card = InterceptingCard(MRTDChip(document: specimen.document)) { apdu in
            apdu.count > 1 && apdu[1] == 0x88 ? [0x67, 0x00] : nil
        }
        try await withInsertedCard(card) { inserted in
            let j = try read(inserted.reader, trust, json: true)
            #expect(j.status == 65, "\(j.stderr)")
            #expect(card.intercepted >= 1)
            let active = j.document.object("activeAuthentication")
            #expect(active.string("status") == "notVerified" && active["offered"] as? Bool == true, "\(active)")
            #expect(j.document.object("chipAuthentication").string("status") == "verified")
            #expect(j.document["genuine"] as? Bool == false && j.document["chipGenuine"] as? Bool == false)
            #expect(j.stderr.contains("active authentication not proven"), "\(j.stderr)")
            let text = try read(inserted.reader, trust, json: false)
            #expect(text.status == 65 && text.stdout.contains("– not proven genuine") && text.stdout.contains("the chip did not prove it is the document's own"), "\(text.stdout)")
            // Asked not to run it, the same chip is not called genuine, and nothing asked for is unproven.
            let skipped = try runAPDU(["mrtd", "read", "-r", inserted.reader, "--mrz", specimen.mrzText, "--trust", trust, "--no-active-authentication", "--json"])
            #expect(skipped.status == 0 && skipped.document["genuine"] as? Bool == false, "\(skipped.stderr)")
        }
    }

    @Test("the issue's steps: apdu emulate --mrtd --save-specimen, DG14, DG15 and their keys deleted, served with --data: exit 65; whole: exit 0")
    func emulatedClone() async throws {
        let saved = mrtdTemp("clone")
        defer { try? FileManager.default.removeItem(atPath: saved) }
        let key = ["--document-number", "L898902C", "--birth", "690806", "--expiry", "340623", "--trust", saved + "/CSCA.ml", "--json"]
        try await withEmptySlot { slot in
            do {
                let whole = try startAPDU(["emulate", "--mrtd", "--save-specimen", saved, "--port", String(slot.port)])
                defer { whole.terminate(); whole.waitUntilExit() }
                try waitForCard(in: slot.reader, present: true)
                let r = try runAPDU(["mrtd", "read", "-r", slot.reader] + key)
                #expect(r.status == 0 && r.document["genuine"] as? Bool == true, "\(r.stderr)")
            }
            try waitForCard(in: slot.reader, present: false)
            for name in ["DG14.bin", "DG15.bin", "ActiveAuthenticationKey.pem", "ChipAuthenticationKey.pem"] {
                try FileManager.default.removeItem(atPath: saved + "/" + name)
            }
            let copy = try startAPDU(["emulate", "--mrtd", "--data", saved, "--port", String(slot.port)])
            defer { copy.terminate(); copy.waitUntilExit() }
            try waitForCard(in: slot.reader, present: true)
            let r = try runAPDU(["mrtd", "read", "-r", slot.reader] + key)
            #expect(r.status == 65, "\(r.stderr)")
            #expect(r.document["genuine"] as? Bool == false && r.document.object("passiveAuthentication")["valid"] as? Bool == true, "\(r.stdout)")
            #expect(r.document.object("chipAuthentication").string("status") == "failed" && r.document.object("activeAuthentication").string("status") == "failed")
        }
    }
}

/// Answers the commands `answer` picks itself (as a man in the middle would, with no key), and
/// passes every other command to the card.
final class InterceptingCard: EmulatedCard, @unchecked Sendable {
    let card: any EmulatedCard
    let answer: @Sendable ([UInt8]) -> [UInt8]?
    private let count = Locked(0)
    init(_ card: any EmulatedCard, _ answer: @escaping @Sendable ([UInt8]) -> [UInt8]?) {
        self.card = card
        self.answer = answer
    }
    /// Commands answered in the middle.
    var intercepted: Int { count.current }
    var atr: [UInt8] { card.atr }
    func reset() { card.reset() }
    func process(_ apdu: [UInt8]) -> [UInt8] {
        if let own = answer(apdu) {
            count.withLock { $0 += 1 }
            return own
        }
        return card.process(apdu)
    }
}
