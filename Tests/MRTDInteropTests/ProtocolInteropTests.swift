import CardCrypto
import ISO7816
import MRTD
import Testing
import VirtualCard

@Suite("MRTD reader × emulated chip: every PACE protocol, chip and active authentication")
struct ProtocolInteropTests {
    struct PACECase: CustomTestStringConvertible, Sendable {
        let mapping: MRTDSpecimen.PACEOffer.Mapping
        let cipher: CipherAlgorithm
        let parameterID: Int
        var testDescription: String { "\(mapping) \(cipher) id \(parameterID)" }
    }

    static let paceCases: [PACECase] = [
        PACECase(mapping: .genericECDH, cipher: .tdes2, parameterID: 12),
        PACECase(mapping: .genericECDH, cipher: .aes128, parameterID: 8),
        PACECase(mapping: .genericECDH, cipher: .aes128, parameterID: 10),
        PACECase(mapping: .genericECDH, cipher: .aes128, parameterID: 11),
        PACECase(mapping: .genericECDH, cipher: .aes192, parameterID: 14),
        PACECase(mapping: .genericECDH, cipher: .aes256, parameterID: 16),
        PACECase(mapping: .genericECDH, cipher: .aes256, parameterID: 17),
        PACECase(mapping: .genericECDH, cipher: .aes256, parameterID: 18),
        PACECase(mapping: .genericDH, cipher: .aes128, parameterID: 0),
        PACECase(mapping: .genericDH, cipher: .tdes2, parameterID: 1),
        PACECase(mapping: .genericDH, cipher: .aes256, parameterID: 2),
        PACECase(mapping: .chipAuthenticationECDH, cipher: .aes128, parameterID: 13),
        PACECase(mapping: .chipAuthenticationECDH, cipher: .aes256, parameterID: 15),
    ]

    @Test("PACE, then the whole document under its keys", arguments: paceCases)
    func pace(_ c: PACECase) throws {
        let specimen = Specimens.named("pace \(c.testDescription)") { options in
            options.pace = [.init(mapping: c.mapping, cipher: c.cipher, parameterID: c.parameterID)]
            options.activeAuthentication = .ecdsa(parameterID: 12)
            // CAM needs the chip authentication key on PACE's curve.
            options.chipAuthentication = c.mapping == .chipAuthenticationECDH ? .init(parameterID: c.parameterID, cipher: c.cipher) : .init(parameterID: 12, cipher: .aes128)
        }
        // 2048-bit DH's General Authenticate (ids 1 and 2) needs extended length; the others go short too.
        let needsExtended = c.mapping == .genericDH && c.parameterID > 0
        for extended in needsExtended ? [true] : [true, false] {
            let rig = Rig(specimen, { $0.extendedLength = extended }, readerExtendedLength: extended)
            let read = try rig.reader.readDocument(key: specimen.mrzKey)
            #expect(read.access.method == .pace)
            #expect(read.access.pace?.cipher.algorithm == c.cipher, "\(read.access)")
            #expect(read.access.pace?.parameterId == c.parameterID)
            if c.mapping == .chipAuthenticationECDH {
                #expect(read.chipAuthentication.method == .chipAuthenticationMapping)
                #expect(rig.chip.access == .pace, "no separate chip authentication after CAM")
            }
            #expect(read.chipAuthentication.status == .verified, "\(read.chipAuthentication)")
            #expect(read.activeAuthentication.status == .verified, "\(read.activeAuthentication)")
            let report = read.verify(trust: specimen.trust, at: AccessInteropTests.now)
            #expect(report.genuine, "\(report.failures)")
        }
    }

    struct ChipAuthenticationCase: CustomTestStringConvertible, Sendable {
        let parameterID: Int
        let cipher: CipherAlgorithm
        let explicitCurve: Bool
        var testDescription: String { "id \(parameterID) \(cipher)\(explicitCurve ? " explicit curve" : "")" }
    }

    @Test("chip authentication after BAC and after PACE, ECDH and DH, 3DES and AES", arguments: [
        ChipAuthenticationCase(parameterID: 13, cipher: .tdes2, explicitCurve: true),
        ChipAuthenticationCase(parameterID: 12, cipher: .aes128, explicitCurve: false),
        ChipAuthenticationCase(parameterID: 15, cipher: .aes192, explicitCurve: true),
        ChipAuthenticationCase(parameterID: 18, cipher: .aes256, explicitCurve: false),
        ChipAuthenticationCase(parameterID: 0, cipher: .tdes2, explicitCurve: true),
        ChipAuthenticationCase(parameterID: 2, cipher: .aes128, explicitCurve: true),
    ])
    func chipAuthentication(_ c: ChipAuthenticationCase) throws {
        let specimen = Specimens.named("ca \(c.testDescription)") { options in
            options.chipAuthentication = .init(parameterID: c.parameterID, cipher: c.cipher)
            options.explicitCurveParameters = c.explicitCurve
        }
        for access in [MRTDAccessMethod.bac, .pace] {
            let rig = Rig(specimen)
            var request = MRTDReadRequest()
            request.access = access
            let read = try rig.reader.readDocument(key: specimen.mrzKey, request: request)
            #expect(read.chipAuthentication.status == .verified, "\(access): \(read.chipAuthentication)")
            #expect(rig.chip.access == .chipAuthentication)
            #expect(read.verify(trust: specimen.trust, at: AccessInteropTests.now).genuine)
        }
    }

    @Test("active authentication: RSA (ISO/IEC 9796-2) and ECDSA", arguments: [
        MRTDSpecimen.ActiveAuthenticationKey.rsa(bits: 1024), .rsa(bits: 2048), .ecdsa(parameterID: 13), .ecdsa(parameterID: 18),
    ])
    func activeAuthentication(_ key: MRTDSpecimen.ActiveAuthenticationKey) throws {
        let specimen = Specimens.named("aa \(key)") { $0.activeAuthentication = key; $0.chipAuthentication = nil }
        let read = try Rig(specimen).reader.readDocument(key: specimen.mrzKey)
        #expect(read.activeAuthentication.status == .verified, "\(read.activeAuthentication)")
        #expect(read.chipAuthentication.offered == false)
        let report = read.verify(trust: specimen.trust, at: AccessInteropTests.now)
        #expect(report.chipGenuine && report.genuine)
    }

    @Test("a document with neither proof: data genuine, the chip unproven and said so")
    func noProof() throws {
        let specimen = Specimens.named("no proof") { $0.activeAuthentication = nil; $0.chipAuthentication = nil }
        let report = try Rig(specimen).reader.readDocument(key: specimen.mrzKey).verify(trust: specimen.trust, at: AccessInteropTests.now)
        #expect(report.dataGenuine && !report.chipProofOffered && !report.chipGenuine)
    }

    @Test("RSA signers: PKCS#1 v1.5 and PSS document signers under an RSA CSCA")
    func rsaSigners() throws {
        for (name, signer) in [("pkcs1", MRTDSpecimen.SignatureAlgorithm.rsaPKCS1(bits: 2048)), ("pss", .rsaPSS(bits: 2048))] {
            let specimen = Specimens.named("rsa \(name)") { $0.csca = .rsaPKCS1(bits: 2048); $0.documentSigner = signer }
            let report = try Rig(specimen).reader.readDocument(key: specimen.mrzKey).verify(trust: specimen.trust, at: AccessInteropTests.now)
            #expect(report.genuine, "\(name): \(report.failures)")
        }
    }
}
