import Foundation
import ISO7816
import Testing
import TestSupport
import VirtualCard

/// Issue 48 §3: a MIFARE Plus verdict only from what was proven. A write whose answer a man in
/// the middle replaces is sent once and reported "may have been written" with its restore; SL1
/// claims no MAC; B000-B003 and a commit that leaves sector keys at the factory value need a
/// word from the caller; a native one-byte answer to the Type 4 probe is "not this family"; an
/// SL1 EV1 a reader calls a Classic is told by its GetVersion.
@Suite("apdu plus: verdicts earned, hostile answers")
struct CLIMifarePlusVerdictTests {
    static let ndefKey = "A:" + String(repeating: "D3F7", count: 8)
    static let keyHex = String(repeating: "5A", count: 16)
    func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02X", $0) }.joined() }

    /// Between the reader and the card: every frame goes to the card; the answer of a frame
    /// `replaces` picks is replaced by `answer` (what a reader says when it refuses a frame).
    final class AnswerReplacer: EmulatedCard, @unchecked Sendable {
        let card: any EmulatedCard
        let replaces: @Sendable ([UInt8]) -> Bool
        let answer: [UInt8]
        /// false: the command never reaches the card (the middle answers for it).
        let passOn: Bool
        init(_ card: any EmulatedCard, answer: [UInt8], passOn: Bool = true, replacing: @escaping @Sendable ([UInt8]) -> Bool) {
            self.card = card
            self.answer = answer
            self.passOn = passOn
            self.replaces = replacing
        }
        var atr: [UInt8] { card.atr }
        func reset() { card.reset() }
        func process(_ apdu: [UInt8]) -> [UInt8] {
            if !passOn && replaces(apdu) { return answer }
            let real = card.process(apdu)
            return replaces(apdu) ? answer : real
        }
    }

    @Test("a write the card did, whose answer becomes 67 00 on the way back: sent once, 'may have been written' with the restore, not 'refused'")
    func lostWriteAnswer() async throws {
        let card = MifarePlusModel.ndefFormatted(.ev1, message: MifarePlusModel.presetMessage)
        let old = try #require(card.block(5))
        let new = String(repeating: "77", count: 16)
        let mitm = AnswerReplacer(card, answer: [0x67, 0x00]) { (0xA0...0xA3).contains($0.first ?? 0) }
        try await withInsertedCard(mitm) { inserted in
            let w = try runAPDU(["plus", "write", "--block", "5", "--hex", new, "--key", Self.ndefKey, "-r", inserted.reader])
            #expect(w.status != 0 && w.status != 1, "a lost answer is no refusal: \(w.status) \(w.stderr)")
            #expect(w.stderr.contains("may have been written") && w.stderr.contains("--hex \(hex(old))"), "\(w.stderr)")
            #expect(!w.stderr.contains("refused") && w.stderr.split(separator: "\n").count == 1, "\(w.stderr)")
        }
        #expect(card.block(5).map(hex) == new, "the card did write")
        let writes = card.frames.filter { (0xA0...0xA3).contains($0[0]) }
        #expect(writes.count == 1, "a counted command goes once: \(writes.count) writes reached the card")
    }

    /// Passes everything on, and keeps the frames the host sent that carry a read or write,
    /// native (`3x`, `Ax`) or wrapped (`90 3x`, `90 Ax`), before the reader decides on them.
    final class CountedCommandLog: EmulatedCard, @unchecked Sendable {
        let card: any EmulatedCard
        let sent = Locked<[[UInt8]]>([])
        init(_ card: any EmulatedCard) { self.card = card }
        var atr: [UInt8] { card.atr }
        func reset() { card.reset() }
        func process(_ apdu: [UInt8]) -> [UInt8] {
            let code = apdu.count > 1 && apdu[0] == 0x90 ? apdu[1] : apdu.first ?? 0
            if (0x30...0x37).contains(code) || (0xA0...0xA3).contains(code) { sent.withLock { $0.append(apdu) } }
            return card.process(apdu)
        }
    }

    @Test("an iso-only reader with an EV1: the wrapping is learned before the first counted command, and no read or write is sent twice")
    func wrappingLearnedFirst() async throws {
        let card = MifarePlusModel.ndefFormatted(.ev1, message: MifarePlusModel.presetMessage, readerForm: .isoOnly)
        let log = CountedCommandLog(card)
        try await withInsertedCard(log) { inserted in
            let w = try runAPDU(["plus", "write", "--block", "5", "--hex", String(repeating: "42", count: 16), "--key", Self.ndefKey, "-r", inserted.reader])
            #expect(w.status == 0 && w.stdout.contains("reads back as written"), "\(w.stderr)")
        }
        // Two reads (the old contents, the read-back) and one write left the host, each once and
        // wrapped: none was tried native first.
        let sent = log.sent.current
        #expect(sent.count == 3 && sent.allSatisfy { $0[0] == 0x90 }, "\(sent.map { Hex.encode($0) })")
    }

    @Test("SL1 write: no MAC claimed (SL1 has none); a block not read back is said so, text and JSON agree")
    func level1NoMACClaim() async throws {
        let card = MifarePlusModel(.x, level: .sl1)
        try await withInsertedCard(card) { inserted in
            let trailer = "FFFFFFFFFFFFFF078069FFFFFFFFFFFF"
            let w = try runAPDU(["plus", "write", "--block", "7", "--hex", trailer, "--yes", "--key", "A:FFFFFFFFFFFF", "-r", inserted.reader])
            #expect(w.status == 0, "\(w.stderr)")
            #expect(!w.stdout.contains("MAC") && !w.stdout.contains("confirmed"), "SL1 has no MAC: \(w.stdout)")
            #expect(w.stdout.contains("the new key A opens sector 1 and the access bits read back as written, key B too"), "\(w.stdout)")
            let j = try runAPDU(["plus", "write", "--block", "7", "--hex", trailer, "--yes", "--json", "--key", "A:FFFFFFFFFFFF", "-r", inserted.reader])
            #expect((try? j.json() as? [String: Any])?["verified"] as? Bool == false, "\(j.stdout)")
        }
    }

    @Test("SL1 trailer write a keyless middle answers 90 00 without passing it on: the new key A does not open the sector, exit 74, never 'wrote' (the review of issue 49)")
    func level1TrailerWithheld() async throws {
        let card = MifarePlusModel(.x, level: .sl1)
        let mitm = AnswerReplacer(card, answer: [0x90, 0x00], passOn: false) { $0.count > 3 && $0[0] == 0xFF && $0[1] == 0xD6 }
        try await withInsertedCard(mitm) { inserted in
            let w = try runAPDU(["plus", "write", "--block", "7", "--hex", "112233445566FF078069665544332211", "--yes", "--key", "A:FFFFFFFFFFFF", "-r", inserted.reader])
            #expect(w.status == 74 && w.stderr.contains("does not open with the new key A") && w.stdout.isEmpty, "\(w.status) \(w.stdout) \(w.stderr)")
        }
    }

    @Test("personalize: B000-B003 from a key file need --yes, as plus write's do; nothing is written without it")
    func configurationBlocksNeedYes() async throws {
        let card = MifarePlusModel(.ev1, level: .sl0)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("plus-keys-\(UUID()).txt").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        try "4000 \(Self.keyHex)\nB003 \(String(repeating: "00", count: 16))\n".write(toFile: file, atomically: true, encoding: .utf8)
        try await withInsertedCard(card) { inserted in
            let r = try runAPDU(["plus", "personalize", "--key-file", file, "-r", inserted.reader])
            #expect(r.status == 77 && r.stderr.contains("B003") && r.stderr.contains("--yes"), "\(r.status) \(r.stderr)")
            #expect(card.personalized.isEmpty, "nothing written: \(card.personalized)")
            let yes = try runAPDU(["plus", "personalize", "--key-file", file, "--yes", "-r", inserted.reader])
            #expect(yes.status == 0 && card.personalized == [0x4000, 0xB003], "\(yes.stderr)")
        }
    }

    @Test("CommitPerso to SL3 with only 9000, 9001, 9003: the sectors left at the factory key are named, and the commit needs --keep-factory-keys")
    func commitWithFactoryKeys() async throws {
        let card = MifarePlusModel(.ev1, level: .sl0)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("plus-keys-\(UUID()).txt").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        let lines = ["9000", "9001", "9003"].map { "\($0) \(Self.keyHex)" } + ["4000 \(Self.keyHex)", "4001 \(Self.keyHex)", "4002 \(Self.keyHex)"]
        try lines.joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
        try await withInsertedCard(card) { inserted in
            let r = try runAPDU(["plus", "personalize", "--key-file", file, "--commit", "sl3", "--yes", "-r", inserted.reader])
            #expect(r.status == 77 && r.stderr.contains("--keep-factory-keys"), "\(r.status) \(r.stderr)")
            #expect(r.stderr.contains("sector 1 (key B)") && r.stderr.contains("sectors 2-31"), "the sectors are named: \(r.stderr)")
            #expect(card.level == .sl0 && card.personalized.isEmpty, "nothing written, still SL0")
            let ok = try runAPDU(["plus", "personalize", "--key-file", file, "--commit", "sl3", "--yes", "--keep-factory-keys", "-r", inserted.reader])
            #expect(ok.status == 0 && card.level == .sl3, "\(ok.stderr)")
        }
    }

    @Test("personalize of an S whose size nothing tells: the keys of sectors 32-39 the card answers 09 to are named, never skipped in silence; exit 1 before CommitPerso unless --allow-absent-sectors")
    func absentSectorsNamed() async throws {
        let card = MifarePlusModel(.s, level: .sl0)
        try await withInsertedCard(card) { inserted in
            let r = try runAPDU(["plus", "personalize", "--all-keys", Self.keyHex, "--commit", "sl1", "--yes", "-r", inserted.reader])
            #expect(r.status == 1 && r.stderr.contains("4040-404F (sectors 32-39)") && r.stderr.contains("--allow-absent-sectors"), "\(r.status) \(r.stderr)")
            #expect(r.stderr.split(separator: "\n").count == 1 && !r.stderr.contains(Self.keyHex), "\(r.stderr)")
            #expect(card.level == .sl0, "CommitPerso not sent")
            let ok = try runAPDU(["plus", "personalize", "--all-keys", Self.keyHex, "--commit", "sl1", "--yes", "--allow-absent-sectors", "--json", "-r", inserted.reader])
            let doc = try #require(try ok.json() as? [String: Any], "\(ok.status) \(ok.stderr)")
            let notWritten = try #require(doc["keysNotWritten"] as? [String])
            #expect(ok.status == 0 && notWritten.count == 16 && notWritten.first == "4040" && notWritten.last == "404F" && doc["keysWritten"] as? Int == 68, "\(ok.stdout)")
            #expect(card.level == .sl1)
        }
        let again = MifarePlusModel(.x, level: .sl0)
        try await withInsertedCard(again) { inserted in
            let text = try runAPDU(["plus", "personalize", "--all-keys", Self.keyHex, "--allow-absent-sectors", "-r", inserted.reader])
            #expect(text.status == 0 && text.stdout.contains("not written") && text.stdout.contains("4040-404F (sectors 32-39)"), "\(text.stdout)\(text.stderr)")
        }
    }

    @Test("virtual card keys A000-A0FF: plus write needs --yes for them as for every key, and refuses them with it; personalize does not take them; nothing reaches the card")
    func virtualCardKeysNeedYes() async throws {
        let card = MifarePlusModel.ndefFormatted(.ev1, message: MifarePlusModel.presetMessage)
        try await withInsertedCard(card) { inserted in
            let w = try runAPDU(["plus", "write", "--block", "0xA000", "--hex", Self.keyHex, "--key", Self.ndefKey, "-r", inserted.reader])
            #expect(w.status == 77 && w.stderr.contains("virtual card key") && w.stderr.contains("--yes"), "\(w.status) \(w.stderr)")
            // With --yes: refused (which key's session writes them no public data sheet says),
            // before anything reaches the card (the third review of the key proof).
            let y = try runAPDU(["plus", "write", "--block", "0xA000", "--hex", Self.keyHex, "--key", Self.ndefKey, "--yes", "-r", inserted.reader])
            #expect(y.status == 64 && y.stderr.contains("not written by this tool") && y.stdout.isEmpty, "\(y.status) \(y.stderr)")
            #expect(!card.frames.contains { (0xA0...0xA3).contains($0.first ?? 0) || $0.first == 0x70 }, "no write or authentication was sent")
        }
        let sl0 = MifarePlusModel(.ev1, level: .sl0)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("plus-vc-\(UUID()).txt").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        try "A000 \(Self.keyHex)\n".write(toFile: file, atomically: true, encoding: .utf8)
        try await withInsertedCard(sl0) { inserted in
            for extra in [[], ["--yes"]] {
                let p = try runAPDU(["plus", "personalize", "--key-file", file, "-r", inserted.reader] + extra)
                #expect(p.status == 64 && p.stderr.contains("A000") && sl0.personalized.isEmpty, "\(extra): \(p.status) \(p.stderr)")
            }
        }
    }

    @Test("CommitPerso whose answer a man in the middle replaces by 67 00: sent once (never again wrapped), reported as 'may have run', and the card did commit")
    func commitPersoOnce() async throws {
        let card = MifarePlusModel(.ev1, level: .sl0)
        let mitm = AnswerReplacer(card, answer: [0x67, 0x00]) { $0.first == 0xAA || ($0.count > 1 && $0[0] == 0x90 && $0[1] == 0xAA) }
        try await withInsertedCard(mitm) { inserted in
            let r = try runAPDU(["plus", "personalize", "--all-keys", Self.keyHex, "--commit", "sl3", "--yes", "-r", inserted.reader])
            #expect(r.status != 0 && r.stderr.contains("CommitPerso may have run") && r.stderr.split(separator: "\n").count == 1, "\(r.status) \(r.stderr)")
            #expect(!r.stderr.contains(Self.keyHex))
        }
        let commits = card.frames.filter { $0.first == 0xAA }
        #expect(commits.count == 1, "CommitPerso reached the card \(commits.count) times")
        #expect(card.level == .sl3, "the card did commit")
    }

    /// A keyless man in the middle: answers `answer` to the frames `forges` picks and keeps them
    /// from the card; passes every other frame on.
    final class AnswerForger: EmulatedCard, @unchecked Sendable {
        let card: any EmulatedCard
        let forges: @Sendable ([UInt8]) -> Bool
        let answer: [UInt8]
        init(_ card: any EmulatedCard, answer: [UInt8], forging: @escaping @Sendable ([UInt8]) -> Bool) {
            self.card = card
            self.answer = answer
            self.forges = forging
        }
        var atr: [UInt8] { card.atr }
        func reset() { card.reset() }
        func process(_ apdu: [UInt8]) -> [UInt8] { forges(apdu) ? answer : card.process(apdu) }
    }

    @Test("CommitPerso a keyless middle answers 90 without passing it on: checked after re-activation, the card answers as in SL0; exit 1, no level claimed", arguments: [false, true])
    func commitPersoForged(_ json: Bool) async throws {
        let card = MifarePlusModel(.ev1, level: .sl0)
        let mitm = AnswerForger(card, answer: [0x90]) { $0.first == 0xAA }
        try await withInsertedCard(mitm) { inserted in
            let r = try runAPDU(["plus", "personalize", "--all-keys", Self.keyHex, "--commit", "sl3", "--yes", "-r", inserted.reader] + (json ? ["--json"] : []))
            #expect(r.status == 1 && r.stderr.contains("answers as in SL0") && r.stderr.contains("CommitPerso is not confirmed"), "\(r.status) \(r.stdout) \(r.stderr)")
            #expect(r.stderr.split(separator: "\n").count == 1 && r.stdout.isEmpty && !r.stderr.contains(Self.keyHex), "nothing claimed: \(r.stdout) \(r.stderr)")
            let info = try runAPDU(["plus", "info", "-r", inserted.reader])
            #expect(info.stdout.contains("in SL0"), "\(info.stdout)")
        }
        #expect(card.level == .sl0 && !card.frames.contains { $0.first == 0xAA }, "CommitPerso never reached the card")
        let probes = card.frames.filter { $0.count > 2 && $0[0] == 0xA8 && $0[1] == 0x90 && $0[2] == 0x90 }
        #expect(probes.count == 3, "the WritePerso probe before, after re-activation, and plus info's: \(probes.count)")
    }

    @Test("WritePerso cut after keys an S answered 09 to: only the keys it accepted count as written, and those answered 09 are named")
    func cutAfterAbsentSectors() async throws {
        let card = MifarePlusModel(.s, level: .sl0)
        // 9001 kept from the card, a reader's 67 00 in its place: the run stops there.
        let mitm = AnswerForger(card, answer: [0x67, 0x00]) { $0.count > 2 && $0[0] == 0xA8 && $0[1] == 0x01 && $0[2] == 0x90 }
        try await withInsertedCard(mitm) { inserted in
            let r = try runAPDU(["plus", "personalize", "--all-keys", Self.keyHex, "--commit", "sl1", "--yes", "-r", inserted.reader])
            let written = card.personalized.count
            #expect(written == 65, "4000-403F and 9000")
            #expect(r.status != 0 && r.stderr.contains("still in SL0") && r.stderr.contains("with \(written) keys written"), "\(r.status) \(r.stderr)")
            #expect(r.stderr.contains("answered 09 (no such block) to 4040-404F (sectors 32-39), not written") && r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
        }
        #expect(card.level == .sl0)
    }

    /// Passes everything on; once the host has written `block` (UPDATE BINARY, FF D6), answers
    /// the next READ BINARY of it with `answer` (a man in the middle, or a write that did not take).
    final class ReadBackTamper: EmulatedCard, @unchecked Sendable {
        let card: any EmulatedCard
        let block: UInt8
        let answer: [UInt8]
        private let written = Locked(false)
        init(_ card: any EmulatedCard, block: UInt8, answer: [UInt8]) {
            self.card = card
            self.block = block
            self.answer = answer
        }
        var atr: [UInt8] { card.atr }
        func reset() { card.reset() }
        func process(_ apdu: [UInt8]) -> [UInt8] {
            let real = card.process(apdu)
            guard apdu.count > 3, apdu[0] == 0xFF, apdu[3] == block else { return real }
            if apdu[1] == 0xD6 { written.withLock { $0 = true } }
            if apdu[1] == 0xB0, written.current { return answer }
            return real
        }
    }

    @Test("SL1 write: a read-back that differs, or that fails, is exit 74, never 'wrote'", arguments: [
        ("differs", [UInt8](repeating: 0x00, count: 16) + [0x90, 0x00]), ("fails", [0x63, 0x00]),
    ])
    func level1ReadBack(_ name: String, _ answer: [UInt8]) async throws {
        let card = MifarePlusModel(.x, level: .sl1)
        let tamper = ReadBackTamper(card, block: 5, answer: answer)
        try await withInsertedCard(tamper) { inserted in
            let w = try runAPDU(["plus", "write", "--block", "5", "--hex", String(repeating: "42", count: 16), "--key", "A:FFFFFFFFFFFF", "-r", inserted.reader])
            #expect(w.status == 74 && w.stderr.split(separator: "\n").count == 1 && w.stdout.isEmpty, "\(name): \(w.status) \(w.stdout) \(w.stderr)")
            #expect(w.stderr.contains(name == "differs" ? "reads back as" : "could not be read back"), "\(name): \(w.stderr)")
        }
    }

    @Test("--commit: the help and the values agree (sl1 or sl3; 1 and 3 too)")
    func commitHelp() throws {
        let help = try runAPDU(["plus", "personalize", "--help"])
        let words = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(!words.contains("0, 1, 2, 3") && words.contains("values: sl1, sl3"), "\(help.stdout)")
        let two = try runAPDU(["plus", "personalize", "--commit", "2", "--all-keys", Self.keyHex, "-r", "nothing"])
        #expect(two.status == 64, "\(two.stderr)")
    }

    @Test("ndef-read of an SL3 card whose ATR names no MIFARE Plus: the one-byte answer to SELECT is 'not Type 4', and the card is read as a MIFARE Plus")
    func oneByteAnswerToSelect() async throws {
        let card = MifarePlusModel.ndefFormatted(.ev1, message: MifarePlusModel.presetMessage, historicalBytes: [0x80])
        try await withInsertedCard(card) { inserted in
            let r = try runAPDU(["ndef-read", "-r", inserted.reader])
            #expect(r.status == 0 && r.stdout.contains("https://example.com/plus"), "\(r.status) \(r.stderr)")
            #expect(r.stdout.contains("MIFARE Plus SL3"), "\(r.stdout)")
        }
    }

    @Test("ndef-read of our own emulated SL3 card names the family read (MIFARE Plus SL3, MAD, NFC Forum sectors), in text and JSON")
    func familyNamed() async throws {
        try await withInsertedCard(MifarePlusModel.ndefFormatted(.ev1, message: MifarePlusModel.presetMessage)) { inserted in
            let r = try runAPDU(["ndef-read", "-r", inserted.reader])
            #expect(r.status == 0 && !r.stdout.contains("Type 4") && r.stdout.contains("MIFARE Plus SL3") && r.stdout.contains("NFC Forum sectors"), "\(r.stdout)")
            let j = try runAPDU(["ndef-read", "--json", "-r", inserted.reader])
            let tag = try #require((try j.json() as? [String: Any])?["tag"] as? [String: Any], "\(j.stdout)")
            #expect(tag["kind"] as? String == "plus" && (tag["chip"] as? String)?.contains("MIFARE Plus SL3") == true && tag["madVersion"] as? Int == 2, "\(tag)")
        }
    }

    @Test("an EV1 in SL1 the reader calls a MIFARE Classic 1K, answering GetVersion: identified as a MIFARE Plus EV1 in SL1, with the evidence")
    func level1ByGetVersion() async throws {
        let card = MifarePlusModel(.ev1, level: .sl1, level1CardName: 0x0001)
        try await withInsertedCard(card) { inserted in
            let r = try runAPDU(["plus", "info", "--json", "-r", inserted.reader])
            let doc = try #require(try r.json() as? [String: Any], "\(r.status) \(r.stderr)")
            #expect(doc["generation"] as? String == "ev1" && doc["securityLevel"] as? Int == 1 && doc["storage"] as? Int == 2048, "\(r.stdout)")
            let evidence = try #require(doc["evidence"] as? [[String: String]])
            #expect(evidence.contains { $0["claim"] == "security level SL1" && $0["evidence"]?.contains("GetVersion") == true }, "\(evidence)")
        }
        // A real Classic 1K answers no GetVersion: still not a MIFARE Plus.
        let classic = MifarePlusModel(.x, level: .sl1, level1CardName: 0x0001)
        try await withInsertedCard(classic) { inserted in
            let r = try runAPDU(["plus", "info", "-r", inserted.reader])
            #expect(r.status == 1 && r.stderr.contains("not a MIFARE Plus"), "\(r.status) \(r.stderr)")
        }
        #expect(card.level == .sl1 && classic.level == .sl1)
    }
}
