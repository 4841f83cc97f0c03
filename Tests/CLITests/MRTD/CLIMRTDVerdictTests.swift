import Foundation
import ISO7816
import MRTD
import Testing
import TestSupport
import VirtualCard

/// Issue 48: verdicts the chip, or a keyless man in the middle, could earn without the proof.
/// Through pcscd, each hostile chip or middle is written as the review describes it; a genuine
/// document stays genuine beside it.
@Suite("apdu mrtd: verdicts only from what was proven (issue 48)")
struct CLIMRTDVerdictTests {
    let specimen = CLIMRTDSpecimens.standard

    func read(_ reader: String, _ trust: String, _ extra: [String] = []) throws -> CommandResult {
        try runAPDU(["mrtd", "read", "-r", reader, "--mrz", specimen.mrzText, "--trust", trust, "--json"] + extra)
    }

    /// READ BINARY by short EF identifier (P1 = 80 | SFI), its header in the clear under secure messaging.
    static func isRead(_ apdu: [UInt8], of groups: [Int]) -> Bool {
        apdu.count > 3 && apdu[1] == 0xB0 && groups.contains { apdu[2] == 0x80 | UInt8($0) }
    }

    /// MSE:Set AT for chip authentication (P1 41, P2 A4: the specimen's key is AES).
    static func isChipAuthentication(_ apdu: [UInt8]) -> Bool {
        apdu.count > 3 && apdu[1] == 0x22 && apdu[2] == 0x41 && apdu[3] == 0xA4
    }

    /// EF.CardAccess asked for by short EF identifier (READ BINARY P1 9C) or by file identifier (SELECT 011C).
    static func isCardAccess(_ apdu: [UInt8]) -> Bool {
        (apdu.count > 3 && apdu[1] == 0xB0 && apdu[2] == 0x9C) || (apdu.count >= 7 && apdu[1] == 0xA4 && apdu[4] == 2 && apdu[5] == 0x01 && apdu[6] == 0x1C)
    }

    @Test("a keyless middle withholds EF.CardAccess (6A 82) so that auto falls back to BAC: DG14 lists PACE, so the read says downgraded, not genuine, exit 65; --access bac asked for is no downgrade")
    func cardAccessWithheld() async throws {
        let trust = try specimen.trustFolder()
        defer { try? FileManager.default.removeItem(atPath: trust) }
        let card = InterceptingCard(MRTDChip(document: specimen.document)) { apdu in Self.isCardAccess(apdu) ? [0x6A, 0x82] : nil }
        try await withInsertedCard(card) { inserted in
            let j = try read(inserted.reader, trust)
            #expect(j.status == 65 && j.stderr.split(separator: "\n").count == 1 && j.stderr.contains("downgraded to BAC"), "\(j.status) \(j.stderr)")
            #expect(card.intercepted >= 1 && j.document.object("access").string("method") == "BAC", "\(j.stdout)")
            #expect(j.document.string("accessDowngrade")?.contains("DG14 lists PACE") == true && j.document["genuine"] as? Bool == false, "\(j.stdout)")
            // The data itself is still the issuer's: only the access is in question.
            #expect(j.document["dataGenuine"] as? Bool == true, "\(j.stdout)")
            let text = try runAPDU(["mrtd", "read", "-r", inserted.reader, "--mrz", specimen.mrzText, "--trust", trust])
            #expect(text.status == 65 && text.stdout.contains("access      downgraded to BAC") && !text.stdout.contains("✓ genuine"), "\(text.stdout)")
            let bac = try read(inserted.reader, trust, ["--access", "bac"])
            #expect(bac.status == 0 && bac.document["accessDowngrade"] is NSNull && bac.document["genuine"] as? Bool == true, "\(bac.stderr)")
        }
    }

    @Test("a CAM-only passport (DG14 lists PACE-CAM, its key in EF.CardSecurity) behind an EF.CardAccess offering Generic Mapping only: PACE-CAM stripped, not genuine, exit 65; the chip as issued is genuine; --access bac leaves the proof not asked for, exit 0")
    func chipAuthenticationMappingStripped() async throws {
        let cam = CLIMRTDSpecimens.named("PACE-CAM only") {
            $0.pace = [MRTDSpecimen.PACEOffer(mapping: .chipAuthenticationECDH, cipher: .aes128, parameterID: 13),
                       MRTDSpecimen.PACEOffer(mapping: .genericECDH, cipher: .aes128, parameterID: 13)]
            $0.chipAuthenticationKeyInDG14 = false
            $0.activeAuthentication = nil
        }
        let trust = try cam.trustFolder()
        defer { try? FileManager.default.removeItem(atPath: trust) }
        func read(_ reader: String, _ extra: [String] = []) throws -> CommandResult {
            try runAPDU(["mrtd", "read", "-r", reader, "--mrz", cam.mrzText, "--trust", trust, "--json"] + extra)
        }
        try await withInsertedCard(MRTDChip(document: cam.document)) { inserted in
            let j = try read(inserted.reader)
            #expect(j.status == 0 && j.document["genuine"] as? Bool == true && j.document["accessDowngrade"] is NSNull, "\(j.stdout)\(j.stderr)")
            #expect(j.document.object("access").string("mapping") == "Chip Authentication Mapping", "\(j.stdout)")
            #expect(j.document.object("chipAuthentication").string("method") == "chipAuthenticationMapping", "\(j.stdout)")
        }
        // A clone (or a keyless middle) serves an EF.CardAccess with Generic Mapping only: unsigned, and DG14 tells.
        var stripped = cam.document
        stripped.files[.cardAccess] = specimen.document.files[.cardAccess]
        try await withInsertedCard(MRTDChip(document: stripped)) { inserted in
            let j = try read(inserted.reader)
            #expect(j.status == 65 && j.stderr.split(separator: "\n").count == 1 && j.stderr.contains("without PACE-CAM"), "\(j.status) \(j.stderr)")
            #expect(j.document.object("access").string("mapping") == "Generic Mapping", "\(j.stdout)")
            #expect(j.document.string("accessDowngrade")?.hasPrefix("downgraded to PACE ECDH Generic Mapping without PACE-CAM: DG14 lists") == true, "\(j.stdout)")
            #expect(j.document["genuine"] as? Bool == false && j.document["chipGenuine"] as? Bool == false && j.document["dataGenuine"] as? Bool == true, "\(j.stdout)")
            let proof = j.document.object("chipAuthentication")
            #expect(proof.string("method") == "chipAuthenticationMapping" && proof.string("status") == "failed" && proof["offered"] as? Bool == true, "\(proof)")
            let text = try runAPDU(["mrtd", "read", "-r", inserted.reader, "--mrz", cam.mrzText, "--trust", trust])
            #expect(text.status == 65 && text.stdout.contains("access      downgraded to PACE ECDH Generic Mapping without PACE-CAM"), "\(text.stdout)")
            #expect(!text.stdout.contains("✓ genuine") && !text.stdout.contains("offers no proof of its chip"), "\(text.stdout)")
            #expect(text.stdout.contains("✗ NOT genuine: the access was downgraded to PACE ECDH Generic Mapping without PACE-CAM"), "\(text.stdout)")
            let pace = try read(inserted.reader, ["--access", "pace"])
            #expect(pace.status == 65 && pace.document.string("accessDowngrade") != nil, "\(pace.stdout)\(pace.stderr)")
            // BAC asked for cannot run PACE-CAM: no downgrade, the proof not asked for, not genuine, exit 0.
            let bac = try read(inserted.reader, ["--access", "bac"])
            #expect(bac.status == 0 && bac.document["accessDowngrade"] is NSNull && bac.document["genuine"] as? Bool == false, "\(bac.stdout)\(bac.stderr)")
            let notAsked = bac.document.object("chipAuthentication")
            #expect(notAsked.string("method") == "chipAuthenticationMapping" && notAsked["offered"] as? Bool == true
                    && notAsked.string("reason")?.contains("BAC was asked for") == true, "\(bac.stdout)")
        }
    }

    @Test("a keyless middle answers READ BINARY of listed groups with a bare 6A 82 or 69 82: not genuine, exit 65, the groups named",
          arguments: [([1, 2], [UInt8]([0x6A, 0x82])), ([1, 2], [0x69, 0x82]), ([11], [0x69, 0x82]), ([11], [0x6A, 0x82])])
    func withheldListedGroups(_ groups: [Int], _ answer: [UInt8]) async throws {
        let trust = try specimen.trustFolder()
        defer { try? FileManager.default.removeItem(atPath: trust) }
        let card = InterceptingCard(MRTDChip(document: specimen.document)) { apdu in Self.isRead(apdu, of: groups) ? answer : nil }
        let names = groups.map { "DG\($0)" }.joined(separator: ", ")
        try await withInsertedCard(card) { inserted in
            let j = try read(inserted.reader, trust)
            #expect(j.status == 65, "\(j.stderr)")
            #expect(card.intercepted >= groups.count)
            #expect(j.document["genuine"] as? Bool == false && j.document["dataGenuine"] as? Bool == false, "\(j.stdout)")
            #expect((j.document["withheldDataGroups"] as? [Int]) == groups, "\(j.stdout)")
            #expect(j.stderr.contains("not proven genuine: \(names): EF.SOD lists"), "\(j.stderr)")
            let text = try runAPDU(["mrtd", "read", "-r", inserted.reader, "--mrz", specimen.mrzText, "--trust", trust])
            #expect(text.status == 65 && text.stdout.contains("✗ NOT genuine") && text.stdout.contains("the chip withheld \(names)"), "\(text.stdout)")
            #expect(!text.stdout.contains("✓ genuine"), "\(text.stdout)")
        }
    }

    @Test("DG3 and DG4 refused with 69 82 (terminal authentication) stay excused; refused with 6A 82 by a middle they are withheld")
    func terminalAuthenticationGroups() async throws {
        let trust = try specimen.trustFolder()
        defer { try? FileManager.default.removeItem(atPath: trust) }
        try await withInsertedCard(MRTDChip(document: specimen.document)) { inserted in
            let r = try read(inserted.reader, trust)
            #expect(r.status == 0 && r.document["genuine"] as? Bool == true && (r.document["withheldDataGroups"] as? [Int]) == [], "\(r.stderr)")
        }
        let card = InterceptingCard(MRTDChip(document: specimen.document)) { apdu in Self.isRead(apdu, of: [3]) ? [0x6A, 0x82] : nil }
        try await withInsertedCard(card) { inserted in
            let r = try read(inserted.reader, trust)
            #expect(r.status == 65 && (r.document["withheldDataGroups"] as? [Int]) == [3], "\(r.stdout)\(r.stderr)")
        }
    }

    @Test("after a session restart, chip authentication runs again before the read goes on; when it cannot, the chip is unproven")
    func restartProvesAgain() async throws {
        let trust = try specimen.trustFolder()
        defer { try? FileManager.default.removeItem(atPath: trust) }
        // DG5 is not on the chip nor in EF.SOD: a bare 6A 82 for it is no withheld group, but it
        // ends the session before DG11, DG12 and DG15 are read.
        let asked = ["--data-groups", "1,2,5,11,12,14,15"]
        let card = InterceptingCard(MRTDChip(document: specimen.document)) { apdu in Self.isRead(apdu, of: [5]) ? [0x6A, 0x82] : nil }
        let runs = Locked(0)
        let counting = InterceptingCard(card) { apdu in
            if Self.isChipAuthentication(apdu) { runs.withLock { $0 += 1 } }
            return nil
        }
        try await withInsertedCard(counting) { inserted in
            let r = try read(inserted.reader, trust, asked)
            #expect(r.status == 0 && r.document["genuine"] as? Bool == true, "\(r.stdout)\(r.stderr)")
            #expect((r.document.object("statistics")["sessionRestarts"] as? Int ?? 0) >= 1, "\(r.stdout)")
            #expect(runs.current == 2, "chip authentication after DG14, and again after the restart: \(runs.current)")
        }
        // The middle also refuses chip authentication once the session restarted: unproven.
        let seen = Locked(0)
        let refusing = InterceptingCard(MRTDChip(document: specimen.document)) { apdu in
            if Self.isRead(apdu, of: [5]) { return [0x6A, 0x82] }
            if Self.isChipAuthentication(apdu) {
                let n = seen.withLock { $0 += 1; return $0 }
                if n > 1 { return [0x6A, 0x80] }
            }
            return nil
        }
        try await withInsertedCard(refusing) { inserted in
            let r = try read(inserted.reader, trust, asked)
            #expect(r.status == 65, "\(r.stderr)")
            let proof = r.document.object("chipAuthentication")
            #expect(proof.string("status") == "notVerified" && proof.string("reason")?.contains("opened again") == true, "\(proof)")
            #expect(r.document["genuine"] as? Bool == false)
        }
    }

    @Test("DG14's chip authentication key on a curve over a binary field: an offered proof not run, exit 65, never 'offers no proof'")
    func unparsedChipAuthenticationKey() async throws {
        let binary = CLIMRTDSpecimens.named("binary-curve DG14") {
            $0.chipAuthenticationKeyOnBinaryCurve = true
            $0.activeAuthentication = nil
        }
        let trust = try binary.trustFolder()
        defer { try? FileManager.default.removeItem(atPath: trust) }
        try await withInsertedCard(MRTDChip(document: binary.document)) { inserted in
            let j = try runAPDU(["mrtd", "read", "-r", inserted.reader, "--mrz", binary.mrzText, "--trust", trust, "--json"])
            #expect(j.status == 65, "\(j.stdout)\(j.stderr)")
            let proof = j.document.object("chipAuthentication")
            #expect(proof["offered"] as? Bool == true && proof.string("status") == "notVerified", "\(proof)")
            #expect(proof.string("reason")?.contains("prime-field") == true, "\(proof)")
            #expect(j.document["genuine"] as? Bool == false && j.document.object("passiveAuthentication")["valid"] as? Bool == true)
            let text = try runAPDU(["mrtd", "read", "-r", inserted.reader, "--mrz", binary.mrzText, "--trust", trust])
            #expect(text.status == 65 && !text.stdout.contains("✓ genuine") && !text.stdout.contains("offers no proof of its chip"), "\(text.stdout)")
        }
    }

    @Test("PACE-CAM with its key only in EF.CardSecurity: genuine when EF.CardSecurity is signed by the Document Signer; exit 65 when its signature is broken")
    func cardSecuritySigned() async throws {
        let cam = CLIMRTDSpecimens.named("PACE-CAM without DG14") {
            $0.pace = [MRTDSpecimen.PACEOffer(mapping: .chipAuthenticationECDH, cipher: .aes128, parameterID: 13)]
            $0.includesDG14 = false
            $0.activeAuthentication = nil
        }
        let trust = try cam.trustFolder()
        defer { try? FileManager.default.removeItem(atPath: trust) }
        try await withInsertedCard(MRTDChip(document: cam.document)) { inserted in
            let j = try runAPDU(["mrtd", "read", "-r", inserted.reader, "--can", "123456", "--trust", trust, "--json"])
            #expect(j.status == 0, "\(j.stderr)")
            let proof = j.document.object("chipAuthentication")
            #expect(proof.string("method") == "chipAuthenticationMapping" && proof.string("status") == "verified", "\(proof)")
            #expect(proof.string("reason")?.contains("signed by EF.SOD's Document Signer") == true, "\(proof)")
            #expect(j.document["genuine"] as? Bool == true && j.document["chipGenuine"] as? Bool == true, "\(j.stdout)")
        }
        // A restart mid-read runs PACE-CAM again: every session's proof is checked against the signed key.
        let restarting = InterceptingCard(MRTDChip(document: cam.document)) { apdu in Self.isRead(apdu, of: [5]) ? [0x6A, 0x82] : nil }
        try await withInsertedCard(restarting) { inserted in
            let j = try runAPDU(["mrtd", "read", "-r", inserted.reader, "--can", "123456", "--trust", trust, "--data-groups", "1,2,5,11,12", "--json"])
            #expect(j.status == 0 && j.document["genuine"] as? Bool == true, "\(j.stdout)\(j.stderr)")
            #expect((j.document.object("statistics")["sessionRestarts"] as? Int ?? 0) >= 1 && restarting.intercepted >= 1, "\(j.stdout)")
        }
        var broken = cam.document
        var bytes = try #require(broken.files[.cardSecurity])
        bytes[bytes.count - 1] ^= 0x01  // the last byte of the SignerInfo's signature
        broken.files[.cardSecurity] = bytes
        try await withInsertedCard(MRTDChip(document: broken)) { inserted in
            let j = try runAPDU(["mrtd", "read", "-r", inserted.reader, "--can", "123456", "--trust", trust, "--json"])
            #expect(j.status == 65, "\(j.stdout)\(j.stderr)")
            let proof = j.document.object("chipAuthentication")
            #expect(proof.string("status") == "notVerified" && proof.string("reason")?.contains("signature does not verify") == true, "\(proof)")
            #expect(j.document["genuine"] as? Bool == false)
        }
    }

    @Test("EF.COM as vsmartcard's ePass writes it (tag list as ASCII text), no EF.SOD: DG1 and DG2 read anyway, EF.COM named, --data-groups asks directly")
    func undecodableCOM() async throws {
        let epass = CLIMRTDSpecimens.named("vsmartcard EF.COM") { $0.comTagListAsText = true }
        var document = epass.document
        document.files[.sod] = nil
        try await withInsertedCard(MRTDChip(document: document)) { inserted in
            let j = try runAPDU(["mrtd", "read", "-r", inserted.reader, "--mrz", epass.mrzText, "--json"])
            #expect(j.status == 65, "\(j.stderr)")
            let read = ((j.document["dataGroups"] as? [[String: Any]]) ?? []).filter { $0["status"] as? String == "read" }.compactMap { $0["number"] as? Int }
            #expect(read.contains(1) && read.contains(2), "\(j.stdout)")
            #expect(j.document.object("mrz").string("documentNumber") == "L898902C")
            #expect(j.document.string("comError") != nil, "\(j.stdout)")
            let text = try runAPDU(["mrtd", "read", "-r", inserted.reader, "--mrz", epass.mrzText])
            #expect(text.stdout.contains("EF.COM does not decode") && text.stdout.contains("data groups DG1, DG2"), "\(text.stdout)")
            let asked = try runAPDU(["mrtd", "read", "-r", inserted.reader, "--mrz", epass.mrzText, "--data-groups", "1,2,11", "--json"])
            let got = ((asked.document["dataGroups"] as? [[String: Any]]) ?? []).filter { $0["status"] as? String == "read" }.compactMap { $0["number"] as? Int }
            #expect(got == [1, 2, 11], "\(asked.stdout)")
        }
    }

    @Test("BAC's EXTERNAL AUTHENTICATE answered 69 88 to a wrong MRZ: the MRZ is not this document's, exit 1")
    func wrongMRZAnswered6988() async throws {
        var configuration = MRTDChip.Configuration()
        configuration.accessControl = .bac
        configuration.bacWrongMACAnswer = StatusWord(rawValue: 0x6988)
        try await withInsertedCard(MRTDChip(document: specimen.document, configuration: configuration)) { inserted in
            let wrong = try runAPDU(["mrtd", "read", "-r", inserted.reader, "--document-number", "L898902C", "--birth", "690807", "--expiry", specimen.expiry])
            #expect(wrong.status == 1 && wrong.stderr.contains("the MRZ is not this document's"), "\(wrong.stderr)")
            #expect(!wrong.stderr.contains("incorrect secure messaging"), "\(wrong.stderr)")
            // BAC asked for: the chip hides EF.CardAccess while its DG14 lists PACE, which under
            // auto is a downgrade (cardAccessWithheld).
            let right = try runAPDU(["mrtd", "read", "-r", inserted.reader, "--mrz", specimen.mrzText, "--access", "bac"])
            #expect(right.status == 0, "\(right.stderr)")
        }
    }
}
