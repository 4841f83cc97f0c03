import ISO7816
import MRTD
import Testing
import VirtualCard

@Suite("MRTD reader × emulated chip: access control")
struct AccessInteropTests {
    static let now = Timestamp(year: 2026, month: 6, day: 1)!

    @Test("the standard specimen with the MRZ: PACE, every data group, DG3/DG4 protected, chip and active authentication, passive authentication valid")
    func standard() throws {
        let specimen = Specimens.standard
        let rig = Rig(specimen)
        let read = try rig.reader.readDocument(key: specimen.mrzKey)
        #expect(read.access.method == .pace && read.access.password == .mrz && !read.access.fellBackToBAC)
        #expect(read.access.pace?.mapping == .generic && read.access.cipher == .aes128)
        #expect(read.protectedDataGroups == [3, 4])
        #expect(read.missingDataGroups.isEmpty)
        for (number, bytes) in read.dump.dataGroups { #expect(bytes == specimen.bytes("DG\(number)"), "DG\(number)") }
        #expect(Set(read.dump.dataGroups.keys) == [1, 2, 11, 12, 14, 15])
        #expect(read.dump.com == specimen.bytes("EF.COM") && read.dump.sod == specimen.bytes("EF.SOD"))
        #expect(read.dump.cardAccess == specimen.bytes("EF.CardAccess"))
        #expect(read.chipAuthentication.status == .verified, "\(read.chipAuthentication)")
        #expect(rig.chip.access == .chipAuthentication)
        #expect(read.activeAuthentication.status == .verified, "\(read.activeAuthentication)")
        let report = read.verify(trust: specimen.trust, at: Self.now)
        #expect(report.passiveAuthentication.valid, "\(report.failures)")
        #expect(report.chipGenuine && report.genuine)
        #expect(report.verification.mrz?.documentNumber == "L898902C")
    }

    @Test("data groups left out: DG14 and DG15 listed but not read are offered proofs not run, and the document is not called genuine")
    func partialRead() throws {
        let specimen = Specimens.standard
        var request = MRTDReadRequest()
        request.dataGroups = [1, 11]
        let read = try Rig(specimen).reader.readDocument(key: specimen.mrzKey, request: request)
        #expect(Set(read.dump.dataGroups.keys) == [1, 11])
        #expect(read.chipAuthentication.offered && read.chipAuthentication.status == .notVerified)
        #expect(read.activeAuthentication.offered && read.activeAuthentication.status == .notVerified)
        let report = read.verify(trust: specimen.trust, at: Self.now)
        #expect(report.dataGenuine && !report.genuine)
    }

    @Test("PACE with the CAN")
    func can() throws {
        let specimen = Specimens.standard
        let rig = Rig(specimen)
        let read = try rig.reader.readDocument(key: specimen.canKey)
        #expect(read.access.method == .pace && read.access.password == .can)
        #expect(read.verify(trust: specimen.trust, at: Self.now).genuine)
    }

    @Test("a wrong CAN and a wrong MRZ: access denied, nothing read")
    func wrongKeys() throws {
        let specimen = Specimens.standard
        #expect { try Rig(specimen).reader.readDocument(key: MRTDAccessKey.can("654321")) } throws: {
            ($0 as? MRTDProtocolError)?.kind == .accessDenied
        }
        let wrong = try MRTDAccessKey.mrz(documentNumber: "L898902C", dateOfBirth: "690807", dateOfExpiry: "340623")
        #expect { try Rig(specimen).reader.readDocument(key: wrong) } throws: { ($0 as? MRTDProtocolError)?.kind == .accessDenied }
        var bac = MRTDReadRequest()
        bac.access = .bac
        #expect { try Rig(specimen).reader.readDocument(key: wrong, request: bac) } throws: { ($0 as? MRTDProtocolError)?.kind == .accessDenied }
        // A chip that answers 69 88 to the MAC our MRZ made (issue 48): still the wrong MRZ.
        #expect { try Rig(specimen) { $0.bacWrongMACAnswer = StatusWord(rawValue: 0x6988) }.reader.readDocument(key: wrong, request: bac) } throws: {
            ($0 as? MRTDProtocolError)?.kind == .accessDenied
        }
    }

    @Test("BAC forced on a chip that offers PACE: no MF file read, BAC, the same document")
    func bacForced() throws {
        let specimen = Specimens.standard
        let rig = Rig(specimen)
        var request = MRTDReadRequest()
        request.access = .bac
        let read = try rig.reader.readDocument(key: specimen.mrzKey, request: request)
        #expect(read.access.method == .bac && read.access.cipher == .tdes)
        #expect(read.dump.cardAccess == nil)
        #expect(read.verify(trust: specimen.trust, at: Self.now).genuine)
    }

    @Test("a BAC-only chip: auto runs BAC after one EF.CardAccess probe; PACE forced is refused; a CAN cannot open it")
    func bacOnlyChip() throws {
        // No PACEInfo in EF.CardAccess or DG14: a document that never offered PACE.
        let specimen = Specimens.named("BAC only") { $0.pace = [] }
        let rig = Rig(specimen) { $0.accessControl = .bac }
        let read = try rig.reader.readDocument(key: specimen.mrzKey)
        #expect(read.access.method == .bac && !read.access.fellBackToBAC)
        #expect(read.dump.cardAccess == nil)
        // Before BAC only the EF.CardAccess probe (by SFI, then by file identifier), once more after
        // SELECT MF (a new connection does not know which DF the last program left selected); no
        // EF.COM, no EF.DIR (gmrtd #226).
        let beforeBAC = rig.log.exchanges.prefix { $0.command.count < 2 || $0.command[1] != 0x84 }.map { Hex.encode($0.command) }
        #expect(beforeBAC == ["00B09C0000", "00A4020C02011C", "00A4000C023F00", "00B09C0000", "00A4020C02011C", "00A4040C07A0000002471001"])
        #expect(read.verify(trust: specimen.trust, at: Self.now).genuine && read.accessDowngrade == nil)

        var pace = MRTDReadRequest()
        pace.access = .pace
        #expect { try Rig(specimen) { $0.accessControl = .bac }.reader.readDocument(key: specimen.mrzKey, request: pace) } throws: {
            ($0 as? MRTDProtocolError)?.kind == .unsupported
        }
        #expect { try Rig(specimen) { $0.accessControl = .bac }.reader.readDocument(key: specimen.canKey) } throws: {
            ($0 as? MRTDProtocolError)?.kind == .unsupported
        }
    }

    @Test("a chip without EF.CardAccess whose signed DG14 lists PACE (issue 48): auto's BAC is a downgrade, named, and the document not genuine; BAC asked for is not")
    func downgradeToBAC() throws {
        let specimen = Specimens.standard
        let read = try Rig(specimen) { $0.accessControl = .bac }.reader.readDocument(key: specimen.mrzKey)
        #expect(read.access.method == .bac && read.dump.cardAccess == nil)
        #expect(read.accessDowngrade?.contains("DG14 lists PACE") == true, "\(read.accessDowngrade ?? "none")")
        let report = read.verify(trust: specimen.trust, at: Self.now)
        #expect(report.dataGenuine && !report.genuine && report.failures.contains { $0.contains("downgraded") }, "\(report.failures)")
        var bac = MRTDReadRequest()
        bac.access = .bac
        let asked = try Rig(specimen) { $0.accessControl = .bac }.reader.readDocument(key: specimen.mrzKey, request: bac)
        #expect(asked.accessDowngrade == nil && asked.verify(trust: specimen.trust, at: Self.now).genuine)
    }

    /// A CAM-only document: EF.CardAccess and DG14 list PACE-CAM and Generic Mapping, the chip
    /// authentication key is only in EF.CardSecurity, no DG15.
    static var camOnly: MRTDSpecimen {
        Specimens.named("PACE-CAM only") {
            $0.pace = [.init(mapping: .chipAuthenticationECDH, cipher: .aes128, parameterID: 13), .init(mapping: .genericECDH, cipher: .aes128, parameterID: 13)]
            $0.chipAuthenticationKeyInDG14 = false
            $0.activeAuthentication = nil
        }
    }

    /// The CAM-only document behind an EF.CardAccess offering Generic Mapping only: what a clone
    /// serves, and what a keyless man in the middle makes of the genuine chip's.
    static func camStripped(_ specimen: MRTDSpecimen) -> MRTDDocument {
        var document = specimen.document
        document.files[VirtualCard.MRTDFile.cardAccess] = Specimens.standard.document.files[VirtualCard.MRTDFile.cardAccess]
        return document
    }

    @Test("a CAM-only document (key in EF.CardSecurity) whose EF.CardAccess lost PACE-CAM (review of issue 48): the read is downgraded and not genuine under auto, PACE and the BAC fallback; BAC asked for leaves the proof not asked for; the genuine chip proves itself")
    func chipAuthenticationMappingStripped() throws {
        let specimen = Self.camOnly
        let dg14 = try SecurityInfos(dg14: try #require(specimen.bytes("DG14")))
        #expect(dg14.chipAuthenticationPublicKeyInfos.isEmpty && dg14.paceInfos.contains { $0.mapping == .chipAuthentication })

        let genuine = try Rig(specimen).reader.readDocument(key: specimen.mrzKey)
        #expect(genuine.access.pace?.mapping == .chipAuthentication && genuine.accessDowngrade == nil, "\(genuine.access)")
        #expect(genuine.chipAuthentication.status == .verified && genuine.chipAuthentication.keyFromCardSecurity, "\(genuine.chipAuthentication)")
        #expect(genuine.verify(trust: specimen.trust, at: Self.now).genuine)

        var pace = MRTDReadRequest()
        pace.access = .pace
        for request in [MRTDReadRequest(), pace] {
            let read = try Rig(document: Self.camStripped(specimen)).reader.readDocument(key: specimen.mrzKey, request: request)
            #expect(read.access.pace?.mapping == .generic, "\(read.access)")
            #expect(read.accessDowngrade?.hasPrefix("downgraded to PACE ECDH Generic Mapping without PACE-CAM:") == true, "\(read.accessDowngrade ?? "none")")
            #expect(read.chipAuthentication.method == .chipAuthenticationMapping && read.chipAuthentication.offered
                    && read.chipAuthentication.status == .failed, "\(read.chipAuthentication)")
            let report = read.verify(trust: specimen.trust, at: Self.now)
            #expect(report.dataGenuine && !report.chipGenuine && !report.genuine && report.chipProofOffered, "\(report.failures)")
            #expect(report.failures.contains { $0.contains("without PACE-CAM") }, "\(report.failures)")
        }

        // PACE-CAM refused (the chip takes the CAN only for PACE), BAC allowed after it: the proof is lost all the same.
        let fallback = try Rig(specimen, { $0.pacePasswords = [.can] }, options: { $0.allowBACFallback = true }).reader.readDocument(key: specimen.mrzKey)
        #expect(fallback.access.fellBackToBAC && fallback.accessDowngrade?.contains("offered it, but PACE failed") == true, "\(fallback.accessDowngrade ?? "none")")
        #expect(!fallback.verify(trust: specimen.trust, at: Self.now).genuine)

        // BAC asked for: no downgrade, and no "offers no proof" either: PACE-CAM was not asked for.
        var bac = MRTDReadRequest()
        bac.access = .bac
        let asked = try Rig(specimen).reader.readDocument(key: specimen.mrzKey, request: bac)
        #expect(asked.accessDowngrade == nil && asked.chipAuthentication.offered && !asked.chipAuthentication.requested, "\(asked.chipAuthentication)")
        let askedReport = asked.verify(trust: specimen.trust, at: Self.now)
        #expect(askedReport.dataGenuine && !askedReport.genuine && askedReport.unprovenChipProofs.isEmpty, "\(askedReport.failures)")

        // Another proof that held (active authentication with DG15) proves the chip: no downgrade.
        let withAA = Specimens.named("PACE-CAM only, AA") {
            $0.pace = [.init(mapping: .chipAuthenticationECDH, cipher: .aes128, parameterID: 13), .init(mapping: .genericECDH, cipher: .aes128, parameterID: 13)]
            $0.chipAuthenticationKeyInDG14 = false
            $0.activeAuthentication = .ecdsa(parameterID: 12)
        }
        let proven = try Rig(document: Self.camStripped(withAA)).reader.readDocument(key: withAA.mrzKey)
        #expect(proven.access.pace?.mapping == .generic && proven.activeAuthentication.status == .verified && proven.accessDowngrade == nil, "\(proven.activeAuthentication)")
        #expect(proven.verify(trust: withAA.trust, at: Self.now).genuine)
    }

    @Test("a PACE-only chip: auto runs PACE; BAC forced is refused by the chip")
    func paceOnlyChip() throws {
        let specimen = Specimens.standard
        let read = try Rig(specimen) { $0.accessControl = .pace }.reader.readDocument(key: specimen.mrzKey)
        #expect(read.access.method == .pace)
        var bac = MRTDReadRequest()
        bac.access = .bac
        #expect { try Rig(specimen) { $0.accessControl = .pace }.reader.readDocument(key: specimen.mrzKey, request: bac) } throws: {
            ($0 as? MRTDProtocolError)?.kind == .accessDenied
        }
    }

    @Test("a PACE that fails never falls back to BAC silently; with the fallback allowed, BAC runs and says why")
    func fallback() throws {
        let specimen = Specimens.standard
        // The chip takes the CAN only for PACE: PACE with the MRZ is refused at MSE:Set AT.
        let refused = Rig(specimen) { $0.pacePasswords = [.can] }
        #expect { try refused.reader.readDocument(key: specimen.mrzKey) } throws: { ($0 as? MRTDProtocolError)?.kind == .refused }
        #expect(!refused.log.instructions.contains(0x82))
        let allowed = Rig(specimen, { $0.pacePasswords = [.can] }, options: { $0.allowBACFallback = true })
        let read = try allowed.reader.readDocument(key: specimen.mrzKey)
        #expect(read.access.method == .bac && read.access.fellBackToBAC)
        #expect(read.access.description.contains("after PACE failed"))
        #expect(read.verify(trust: specimen.trust, at: Self.now).genuine)
    }

    @Test("a chip an earlier connection left in the application: EF.CardAccess is found after SELECT MF, and PACE runs")
    func applicationLeftSelected() throws {
        let specimen = Specimens.standard
        let rig = Rig(specimen)
        let info = try rig.reader.readChipInfo()
        #expect(info.hasApplication && info.preferredPACE != nil && rig.chip.applicationSelected)
        // A second program on the same card, not reset in between.
        let second = MRTDReader(transport: APDUTransport(channel: rig.channel))
        let read = try second.readDocument(key: specimen.mrzKey)
        #expect(read.access.method == .pace)
        #expect(read.dump.cardAccess == specimen.bytes("EF.CardAccess"))
    }

    @Test("several PACEInfos and a chip that wants the parameter id (DO 84, gmrtd #108)")
    func severalPACEInfos() throws {
        let specimen = Specimens.named("several PACE") {
            $0.pace = [.init(mapping: .genericECDH, cipher: .aes128, parameterID: 13), .init(mapping: .genericECDH, cipher: .aes256, parameterID: 15),
                       .init(mapping: .genericDH, cipher: .aes128, parameterID: 2)]
        }
        let rig = Rig(specimen) { $0.requiresParameterIDWhenSeveral = true }
        let read = try rig.reader.readDocument(key: specimen.mrzKey)
        #expect(read.access.method == .pace)
        #expect(read.access.cipher == .aes256 && read.access.domainParameters?.contains("secp384r1") == true, "\(read.access)")
        let mse = rig.log.exchanges.first { $0.command.count > 4 && $0.command[1] == 0x22 }
        #expect(mse.map { Hex.encode($0.command).contains("84010F") } == true)
    }
}
