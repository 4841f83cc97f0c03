import Foundation
import MRTD
import Testing
import TestSupport
import VirtualCard

/// `apdu mrtd` through pcscd and vpcd against the emulated chip: what it offers, reading it with
/// every kind of key and access control, passive, chip and active authentication, the face, raw
/// files verified offline, JSON and exit codes.
@Suite("apdu mrtd through pcscd")
struct CLIMRTDTests {
    let specimen = CLIMRTDSpecimens.standard

    func read(_ reader: String, _ extra: [String], environment: [String: String] = [:]) throws -> CommandResult {
        try runAPDU(["mrtd", "read", "-r", reader] + extra, environment: environment)
    }

    @Test("info: EF.CardAccess decoded with the protocol read would use, as text and JSON; a BAC-only chip; a card that is no passport: exit 1")
    func info() async throws {
        try await withInsertedCard(MRTDChip(document: specimen.document)) { inserted in
            let text = try runAPDU(["mrtd", "info", "-r", inserted.reader])
            #expect(text.status == 0, "\(text.stderr)")
            #expect(text.stdout.contains("ECDH, Generic Mapping, AES-128, brainpoolP256r1 (id 13)") && text.stdout.contains("← read uses this"), "\(text.stdout)")
            #expect(text.stdout.contains("id-PACE-ECDH-GM-AES-CBC-CMAC-128") && text.stdout.contains("extended length: announced"))
            let json = try runAPDU(["mrtd", "info", "--json", "-r", inserted.reader]).document
            let pace = try #require((json["pace"] as? [[String: Any]])?.first)
            #expect(pace["keyAgreement"] as? String == "ECDH" && pace["mapping"] as? String == "Generic Mapping" && pace["cipher"] as? String == "AES-128")
            #expect(pace["keyLength"] as? Int == 128 && pace["parameterId"] as? Int == 13 && pace["parameters"] as? String == "brainpoolP256r1")
            #expect(pace["protocol"] as? String == "0.4.0.127.0.7.2.2.4.2.2" && json["application"] as? Bool == true && json["bacOnly"] as? Bool == false)
            #expect(json["extendedLength"] as? Bool == true && json.string("atr") == "3B80800101")
            // info leaves the application selected: the next read still finds EF.CardAccess and runs PACE.
            let after = try read(inserted.reader, ["--can", "123456", "--json"])
            #expect(after.status == 0 && after.document.object("access").string("method") == "PACE", "\(after.stderr)")
        }
        var bacOnly = MRTDChip.Configuration()
        bacOnly.accessControl = .bac
        try await withInsertedCard(MRTDChip(document: specimen.document, configuration: bacOnly)) { inserted in
            let text = try runAPDU(["mrtd", "info", "-r", inserted.reader])
            #expect(text.status == 0 && text.stdout.contains("no EF.CardAccess: BAC only"), "\(text.stdout)\(text.stderr)")
            #expect(try runAPDU(["mrtd", "info", "--json", "-r", inserted.reader]).document["bacOnly"] as? Bool == true)
        }
        try await withInsertedCard(ApplicationHost(applications: [DemoApplication()])) { inserted in
            let r = try runAPDU(["mrtd", "info", "-r", inserted.reader])
            #expect(r.status == 1 && r.stderr.contains("not a passport or ID card"), "\(r.stderr)")
        }
    }

    @Test("read with the MRZ: PACE, every data group, DG3/DG4 protected, both chip proofs, genuine with the CSCA as PEM, DER, folder or master list")
    func readGenuine() async throws {
        let trust = try specimen.trustFolder()
        defer { try? FileManager.default.removeItem(atPath: trust) }
        try await withInsertedCard(MRTDChip(document: specimen.document)) { inserted in
            let r = try read(inserted.reader, ["--mrz", specimen.mrzText, "--trust", trust + "/CSCA.pem"])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stdout.contains("passport (TD3) of UTO, opened with PACE ECDH Generic Mapping, AES-128, brainpoolP256r1, with the MRZ"), "\(r.stdout)")
            #expect(r.stdout.contains("ERIKSSON, ANNA MARIA") && r.stdout.contains("DG3, DG4 protected"))
            for line in ["✓ hashes", "✓ signature", "✓ chain", "✓ chip auth", "✓ active auth", "✓ genuine"] {
                #expect(r.stdout.contains(line), "\(line): \(r.stdout)")
            }
            #expect(!r.stdout.contains("\u{1B}["), "no colour off a terminal")
            for source in [trust + "/CSCA.der", trust, trust + "/CSCA.ml"] {
                let j = try read(inserted.reader, ["--mrz", specimen.mrzText, "--trust", source, "--json"])
                #expect(j.status == 0, "\(source): \(j.stderr)")
                #expect(j.document["genuine"] as? Bool == true && j.document.object("passiveAuthentication").object("chain").string("status") == "verified", "\(source)")
            }
        }
    }

    @Test("the key every way: --can, --document-number/--birth/--expiry, --mrz-file, --can-file, stdin, $APDU_MRTD_MRZ, $APDU_MRTD_CAN")
    func keys() async throws {
        let mrzFile = mrtdTemp("mrz"), canFile = mrtdTemp("can")
        try Data((specimen.mrzText + "\n").utf8).write(to: URL(fileURLWithPath: mrzFile))
        try Data("123456\n".utf8).write(to: URL(fileURLWithPath: canFile))
        defer { for f in [mrzFile, canFile] { try? FileManager.default.removeItem(atPath: f) } }
        try await withInsertedCard(MRTDChip(document: specimen.document)) { inserted in
            let cases: [([String], [String: String], String?, String)] = [
                (["--can", "123456"], [:], nil, "CAN"),
                (["--document-number", specimen.documentNumber, "--birth", specimen.birth, "--expiry", specimen.expiry], [:], nil, "MRZ"),
                (["--mrz-file", mrzFile], [:], nil, "MRZ"),
                (["--can-file", canFile], [:], nil, "CAN"),
                (["--mrz-file", "-"], [:], specimen.mrzText, "MRZ"),
                ([], ["APDU_MRTD_MRZ": specimen.mrzText], nil, "MRZ"),
                ([], ["APDU_MRTD_CAN": "123456"], nil, "CAN"),
            ]
            for (arguments, environment, stdin, password) in cases {
                let r = try runAPDU(["mrtd", "read", "-r", inserted.reader, "--json"] + arguments, environment: environment, stdin: stdin)
                #expect(r.status == 0, "\(arguments) \(environment.keys): \(r.stderr)")
                #expect(r.document.object("access").string("password") == password, "\(arguments)")
                #expect(r.document.object("mrz").string("documentNumber") == "L898902C")
            }
        }
    }

    @Test("--access bac and pace on a chip with both; a BAC-only chip reads with BAC and refuses --access pace and a CAN; a PACE-only chip refuses BAC")
    func accessControl() async throws {
        try await withInsertedCard(MRTDChip(document: specimen.document)) { inserted in
            let bac = try read(inserted.reader, ["--mrz", specimen.mrzText, "--access", "bac", "--json"])
            #expect(bac.status == 0 && bac.document.object("access").string("method") == "BAC" && bac.document.object("access").string("cipher") == "3DES", "\(bac.stderr)")
            let pace = try read(inserted.reader, ["--mrz", specimen.mrzText, "--access", "pace", "--json"])
            #expect(pace.status == 0 && pace.document.object("access").string("method") == "PACE")
        }
        var configuration = MRTDChip.Configuration()
        configuration.accessControl = .bac
        // A BAC-only document: no PACEInfo in its DG14 either (one that lists PACE behind a chip
        // that hides EF.CardAccess is a downgrade: CLIMRTDVerdictTests.cardAccessWithheld).
        let bacOnly = CLIMRTDSpecimens.named("BAC only") { $0.pace = [] }
        try await withInsertedCard(MRTDChip(document: bacOnly.document, configuration: configuration)) { inserted in
            let auto = try read(inserted.reader, ["--mrz", bacOnly.mrzText, "--json"])
            #expect(auto.status == 0 && auto.document.object("access").string("method") == "BAC" && auto.document["accessDowngrade"] is NSNull, "\(auto.stderr)")
            let pace = try read(inserted.reader, ["--mrz", bacOnly.mrzText, "--access", "pace"])
            #expect(pace.status == 1 && pace.stderr.contains("offers no usable PACE") && pace.stdout.isEmpty, "\(pace.stderr)")
            let can = try read(inserted.reader, ["--can", "123456"])
            #expect(can.status == 1 && can.stderr.contains("BAC needs the MRZ"), "\(can.stderr)")
        }
        configuration.accessControl = .pace
        try await withInsertedCard(MRTDChip(document: specimen.document, configuration: configuration)) { inserted in
            #expect(try read(inserted.reader, ["--mrz", specimen.mrzText]).status == 0)
            let bac = try read(inserted.reader, ["--mrz", specimen.mrzText, "--access", "bac"])
            #expect(bac.status == 1 && bac.stderr.contains("BAC refused"), "\(bac.stderr)")
        }
    }

    @Test("a failed PACE is exit 1 and BAC is never tried; with --allow-bac-fallback BAC runs and both outputs say so")
    func fallback() async throws {
        var configuration = MRTDChip.Configuration()
        configuration.pacePasswords = [.can]
        try await withInsertedCard(MRTDChip(document: specimen.document, configuration: configuration)) { inserted in
            let refused = try read(inserted.reader, ["--mrz", specimen.mrzText, "--trace"])
            #expect(refused.status == 1 && refused.stderr.contains("MSE:Set AT") && refused.stdout.isEmpty, "\(refused.stderr)")
            #expect(!refused.stderr.contains("> 00 82"), "no EXTERNAL AUTHENTICATE without the flag")
            let text = try read(inserted.reader, ["--mrz", specimen.mrzText, "--allow-bac-fallback"])
            #expect(text.status == 0 && text.stdout.contains("PACE failed; BAC was used instead"), "\(text.stdout)\(text.stderr)")
            let json = try read(inserted.reader, ["--mrz", specimen.mrzText, "--allow-bac-fallback", "--json"]).document.object("access")
            #expect(json.string("method") == "BAC" && json["fellBackToBAC"] as? Bool == true && json.string("paceFailure")?.contains("MSE:Set AT") == true)
        }
    }

    @Test("passive authentication: no --trust, the chain unchecked (exit 0, not called genuine); another CSCA, exit 65; a tampered data group, exit 65")
    func passiveAuthentication() async throws {
        let other = try CLIMRTDSpecimens.named("other CSCA").trustFolder()
        defer { try? FileManager.default.removeItem(atPath: other) }
        try await withInsertedCard(MRTDChip(document: specimen.document)) { inserted in
            let untrusted = try read(inserted.reader, ["--mrz", specimen.mrzText])
            #expect(untrusted.status == 0, "\(untrusted.stderr)")
            #expect(untrusted.stdout.contains("– chain        not checked: give --trust") && untrusted.stdout.contains("not proven genuine"), "\(untrusted.stdout)")
            let json = try read(inserted.reader, ["--mrz", specimen.mrzText, "--json"]).document
            #expect(json["genuine"] as? Bool == false && json.object("passiveAuthentication").object("chain").string("status") == "notVerified")
            let wrong = try read(inserted.reader, ["--mrz", specimen.mrzText, "--trust", other + "/CSCA.pem"])
            #expect(wrong.status == 65 && wrong.stdout.contains("✗ chain") && wrong.stderr.contains("not proven genuine: certificate chain"), "\(wrong.stdout)\(wrong.stderr)")
        }
        var tampered = specimen.document
        var dg11 = tampered.files[.dataGroup(11)]!
        dg11[dg11.count - 1] ^= 0x01
        tampered.files[.dataGroup(11)] = dg11
        let trust = try specimen.trustFolder()
        defer { try? FileManager.default.removeItem(atPath: trust) }
        try await withInsertedCard(MRTDChip(document: tampered)) { inserted in
            let r = try read(inserted.reader, ["--mrz", specimen.mrzText, "--trust", trust, "--json"])
            #expect(r.status == 65 && r.stderr.contains("DG11 does not match"), "\(r.stderr)")
            let hashes = r.document.object("passiveAuthentication").object("hashes")
            #expect(hashes.string("status") == "failed" && r.document["genuine"] as? Bool == false)
            let dg = (hashes["dataGroups"] as? [[String: Any]])?.first { $0["number"] as? Int == 11 }
            #expect(dg?["outcome"] as? String == "differs")
        }
    }

    @Test("an answer altered on the way (a bit of DG1's cryptogram): its MAC does not verify, the chip is opened again, and the read completes with what the chip holds")
    func alteredAnswer() async throws {
        let trust = try specimen.trustFolder()
        defer { try? FileManager.default.removeItem(atPath: trust) }
        let card = TamperingCard(MRTDChip(document: specimen.document)) { command in
            // The first protected READ BINARY of DG1 by its short EF identifier.
            command.count > 3 && command[0] == 0x0C && command[1] == 0xB0 && command[2] == 0x81
        }
        try await withInsertedCard(card) { inserted in
            let r = try read(inserted.reader, ["--mrz", specimen.mrzText, "--trust", trust, "--json"])
            #expect(card.tampered == 1)
            #expect(r.status == 0 && r.document["genuine"] as? Bool == true, "\(r.stderr)")
            #expect(r.document.object("statistics")["sessionRestarts"] as? Int == 1)
            #expect(r.document.object("mrz").string("surname") == "ERIKSSON")
        }
    }

    @Test("chip and active authentication: a chip without DG14's or DG15's private key fails them (exit 65); skipped on request")
    func chipProofs() async throws {
        let trust = try specimen.trustFolder()
        defer { try? FileManager.default.removeItem(atPath: trust) }
        let stranger = CLIMRTDSpecimens.named("stranger")
        var clone = specimen.document
        clone.chipAuthenticationKey = stranger.document.chipAuthenticationKey
        clone.activeAuthenticationKey = stranger.document.activeAuthenticationKey
        try await withInsertedCard(MRTDChip(document: clone)) { inserted in
            let r = try read(inserted.reader, ["--mrz", specimen.mrzText, "--trust", trust, "--json"])
            #expect(r.status == 65, "\(r.stderr)")
            #expect(r.document.object("chipAuthentication").string("status") == "failed", "\(r.stdout)")
            #expect(r.document.object("activeAuthentication").string("status") == "failed")
            #expect(r.document.object("passiveAuthentication")["valid"] as? Bool == true && r.document["genuine"] as? Bool == false)
            let text = try read(inserted.reader, ["--mrz", specimen.mrzText, "--trust", trust])
            #expect(text.stdout.contains("✗ chip auth") && text.stdout.contains("✗ active auth") && text.stdout.contains("✗ NOT genuine"), "\(text.stdout)")
            let skipped = try read(inserted.reader, ["--mrz", specimen.mrzText, "--trust", trust, "--no-chip-authentication", "--no-active-authentication", "--json"])
            #expect(skipped.status == 0 && skipped.document.object("chipAuthentication").string("status") == "notVerified", "\(skipped.stderr)")
            #expect(skipped.document["genuine"] as? Bool == false, "a chip not asked to prove itself is not called genuine")
        }
    }

    @Test("--face writes the image as the chip served it, its extension set to the format")
    func face() async throws {
        let served = try #require(try DataGroup2(decoding: specimen.document.files[.dataGroup(2)]!).faces.first?.image.bytes)
        let base = mrtdTemp("face")
        defer { for e in ["", ".jpg", ".png"] { try? FileManager.default.removeItem(atPath: base + e) } }
        try await withInsertedCard(MRTDChip(document: specimen.document)) { inserted in
            let r = try read(inserted.reader, ["--can", "123456", "--face", base, "--json"])
            #expect(r.status == 0 && r.document.object("face").string("file") == base + ".jpg", "\(r.stderr)")
            #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: base + ".jpg"))) == served)
            try FileManager.default.removeItem(atPath: base + ".jpg")
            let png = try read(inserted.reader, ["--can", "123456", "--face", base + ".png"])
            #expect(png.status == 0 && png.stderr.contains("written as served to \(base).jpg (no conversion to .png)"), "\(png.stderr)")
            #expect(!FileManager.default.fileExists(atPath: base + ".png") && FileManager.default.fileExists(atPath: base + ".jpg"))
            let mode = try FileManager.default.attributesOfItem(atPath: base + ".jpg")[.posixPermissions] as? Int
            #expect(mode == 0o600)
            // No face read (DG2 left out): the summary still prints, then exit 1 with one line.
            let none = try read(inserted.reader, ["--can", "123456", "--data-groups", "1,11", "--face", base])
            #expect(none.status == 1 && none.stdout.contains("ERIKSSON") && none.stderr.contains("no face image"), "\(none.stderr)")
        }
    }

    @Test("--out writes every file raw; verify DIR re-verifies offline; a tampered or missing file is caught")
    func outAndVerify() async throws {
        let dir = mrtdTemp("dump"), trust = try specimen.trustFolder()
        defer { for p in [dir, trust] { try? FileManager.default.removeItem(atPath: p) } }
        try await withInsertedCard(MRTDChip(document: specimen.document)) { inserted in
            let r = try read(inserted.reader, ["--mrz", specimen.mrzText, "--out", dir])
            #expect(r.status == 0, "\(r.stderr)")
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        #expect(names == ["DG1.bin", "DG11.bin", "DG12.bin", "DG14.bin", "DG15.bin", "DG2.bin", "EF.COM.bin", "EF.CardAccess.bin", "EF.SOD.bin"], "\(names)")
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: dir + "/DG2.bin"))) == specimen.document.files[.dataGroup(2)])
        let verified = try runAPDU(["mrtd", "verify", dir, "--trust", trust])
        #expect(verified.status == 0 && verified.stdout.contains("✓ data genuine") && verified.stdout.contains("offline"), "\(verified.stdout)\(verified.stderr)")
        let json = try runAPDU(["mrtd", "verify", dir, "--trust", trust, "--json"]).document
        #expect(json.object("passiveAuthentication")["valid"] as? Bool == true && json.object("chipAuthentication").string("status") == "notVerified")
        #expect(json["reader"] == nil && json["access"] == nil && json["genuine"] as? Bool == false && json["dataGenuine"] as? Bool == true)
        // A group EF.SOD lists taken out of the folder (review of issue 48: "data genuine" stood).
        let dg11 = try Data(contentsOf: URL(fileURLWithPath: dir + "/DG11.bin"))
        try FileManager.default.removeItem(atPath: dir + "/DG11.bin")
        let partial = try runAPDU(["mrtd", "verify", dir, "--trust", trust])
        #expect(partial.status == 65 && !partial.stdout.contains("✓ data genuine") && (partial.stdout + partial.stderr).contains("DG11"), "\(partial.stdout)\(partial.stderr)")
        try dg11.write(to: URL(fileURLWithPath: dir + "/DG11.bin"))
        // Tampered on disk.
        var dg1 = try [UInt8](Data(contentsOf: URL(fileURLWithPath: dir + "/DG1.bin")))
        dg1[10] ^= 0x01
        try Data(dg1).write(to: URL(fileURLWithPath: dir + "/DG1.bin"))
        let tampered = try runAPDU(["mrtd", "verify", dir, "--trust", trust])
        #expect(tampered.status == 65 && tampered.stdout.contains("✗ hashes") && tampered.stderr.contains("DG1 does not match"), "\(tampered.stdout)\(tampered.stderr)")
        try FileManager.default.removeItem(atPath: dir + "/EF.SOD.bin")
        let noSOD = try runAPDU(["mrtd", "verify", dir])
        #expect(noSOD.status == 65 && noSOD.stderr.contains("no EF.SOD"), "\(noSOD.stderr)")
        let missing = try runAPDU(["mrtd", "verify", dir + "-missing"])
        #expect(missing.status == 64 && missing.stderr.hasPrefix("apdu: ") && missing.stderr.contains("does not exist"), "\(missing.stderr)")
    }

    @Test("JSON: the stable names of the issue, one document")
    func jsonShape() async throws {
        let trust = try specimen.trustFolder()
        defer { try? FileManager.default.removeItem(atPath: trust) }
        try await withInsertedCard(MRTDChip(document: specimen.document)) { inserted in
            let r = try read(inserted.reader, ["--mrz", specimen.mrzText, "--trust", trust, "--json"])
            #expect(r.status == 0 && r.stdout.hasSuffix("}\n") && r.stdout.components(separatedBy: "\n").count == 2, "\(r.stderr)")
            let doc = r.document
            for key in ["reader", "access", "mrz", "dataGroups", "passiveAuthentication", "activeAuthentication", "chipAuthentication", "genuine", "face", "com"] {
                #expect(doc[key] != nil, "\(key)")
            }
            let mrz = doc.object("mrz")
            #expect(mrz.string("documentNumber") == "L898902C" && mrz.string("dateOfBirth") == "1969-08-06" && mrz.string("dateOfExpiry") == "2034-06-23")
            #expect(mrz.string("surname") == "ERIKSSON" && mrz.string("givenNames") == "ANNA MARIA" && mrz.string("nationality") == "UTO" && mrz.string("sex") == "F")
            let pa = doc.object("passiveAuthentication")
            #expect(pa["valid"] as? Bool == true && pa.object("hashes").string("status") == "verified" && pa.object("signature").string("status") == "verified")
            #expect(pa.object("chain").string("status") == "verified" && pa.object("signature").object("signer").string("subject")?.contains("Specimen Document Signer") == true)
            let groups = try #require(doc["dataGroups"] as? [[String: Any]])
            #expect(groups.map { $0["number"] as? Int } == [1, 2, 3, 4, 11, 12, 14, 15])
            #expect(groups.first { $0["number"] as? Int == 3 }?["status"] as? String == "protected")
            #expect(doc.object("chipAuthentication").string("status") == "verified" && doc.object("activeAuthentication").string("status") == "verified")
        }
    }

    @Test("exit codes: a wrong MRZ 1, a wrong check digit 64 naming the field, no key 64, two keys 64, a missing --trust 64, a --trust file that is no certificate 65")
    func exitCodes() async throws {
        let garbage = mrtdTemp("garbage") + ".pem"
        try Data("not a certificate".utf8).write(to: URL(fileURLWithPath: garbage))
        defer { try? FileManager.default.removeItem(atPath: garbage) }
        try await withInsertedCard(MRTDChip(document: specimen.document)) { inserted in
            let wrong = try read(inserted.reader, ["--document-number", "L898902C", "--birth", "690807", "--expiry", specimen.expiry])
            #expect(wrong.status == 1 && wrong.stderr.contains("not this document's") && wrong.stdout.isEmpty, "\(wrong.stderr)")
            var lines = specimen.mrz
            lines[1] = String(lines[1].prefix(19)) + "9" + String(lines[1].dropFirst(20))
            let digit = try read(inserted.reader, ["--mrz", lines.joined(separator: "\n")])
            #expect(digit.status == 64 && digit.stderr == "apdu: --mrz: the date-of-birth check digit is 1, the MRZ says 9\n", "\(digit.stderr)")
            let none = try read(inserted.reader, [])
            #expect(none.status == 64 && none.stderr.contains("no key"), "\(none.stderr)")
            let two = try read(inserted.reader, ["--can", "123456", "--mrz", specimen.mrzText])
            #expect(two.status == 64 && two.stderr.contains("give one key"), "\(two.stderr)")
            let missing = try read(inserted.reader, ["--can", "123456", "--trust", "/nonexistent/csca.pem"])
            #expect(missing.status == 64 && missing.stderr.contains("does not exist"), "\(missing.stderr)")
            let bad = try read(inserted.reader, ["--can", "123456", "--trust", garbage])
            #expect(bad.status == 65 && bad.stderr.hasPrefix("apdu: --trust: ") && bad.stderr.components(separatedBy: "\n").count == 2, "\(bad.stderr)")
            let badCAN = try read(inserted.reader, ["--can", "12a456"])
            #expect(badCAN.status == 64 && !badCAN.stderr.contains("12a456"), "\(badCAN.stderr)")
        }
    }

    @Test("apdu emulate --mrtd: the specimen read with the key it prints and verified with the CSCA it saves")
    func emulate() async throws {
        let saved = mrtdTemp("specimen")
        defer { try? FileManager.default.removeItem(atPath: saved) }
        try await withEmptySlot { slot in
            let emulator = try startAPDU(["emulate", "--mrtd", "--mrtd-access", "pace", "--save-specimen", saved, "--port", String(slot.port)])
            defer { emulator.terminate(); emulator.waitUntilExit() }
            try waitForCard(in: slot.reader, present: true)
            let r = try runAPDU(["mrtd", "read", "-r", slot.reader, "--document-number", "L898902C", "--birth", "690806", "--expiry", "340623",
                                 "--trust", saved + "/CSCA.ml", "--json"])
            #expect(r.status == 0 && r.document["genuine"] as? Bool == true, "\(r.stderr)")
            let bac = try runAPDU(["mrtd", "read", "-r", slot.reader, "--can", "123456", "--access", "bac"])
            #expect(bac.status == 1, "PACE only: \(bac.stderr)")
        }
        let misuse = try runAPDU(["emulate", "--data", "/tmp"])
        #expect(misuse.status == 64 && misuse.stderr.contains("--data is for --mrtd"), "\(misuse.stderr)")
    }
}

/// A card whose first answer to a command `matches` picks comes back with one bit flipped, as a
/// man in the middle (or a bad field) would alter it.
final class TamperingCard: EmulatedCard, @unchecked Sendable {
    let card: any EmulatedCard
    let matches: @Sendable ([UInt8]) -> Bool
    /// Matching commands seen, and answers altered (only the first).
    private let count = Locked((seen: 0, altered: 0))
    init(_ card: any EmulatedCard, _ matches: @escaping @Sendable ([UInt8]) -> Bool) {
        self.card = card
        self.matches = matches
    }
    var tampered: Int { count.current.altered }
    var atr: [UInt8] { card.atr }
    func reset() { card.reset() }
    func process(_ apdu: [UInt8]) -> [UInt8] {
        var answer = card.process(apdu)
        guard answer.count > 20, matches(apdu) else { return answer }
        let first = count.withLock { c -> Bool in
            c.seen += 1
            guard c.seen == 1 else { return false }
            c.altered += 1
            return true
        }
        if first { answer[8] ^= 0x01 }
        return answer
    }
}
