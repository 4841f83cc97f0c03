import CardCrypto
import ISO7816
import MRTD
import Testing

/// A CSCA, a Document Signer under it, and the data groups an EF.SOD vouches for.
struct PassiveFixture {
    let csca: TestIdentity
    let documentSigner: TestIdentity
    let scheme: SignatureScheme

    static let dataGroups: [Int: [UInt8]] = [
        1: LDSTests.bsiDG1,
        2: LDSTests.dg2ISO39794(image: [0xFF, 0xD8, 0xFF, 0xE0] + [UInt8](repeating: 7, count: 64)),
        11: TestDER.tlv(0x6B, TestDER.tlv([0x5F, 0x0E], Array("MUSTERMANN<<ERIKA".utf8))),
    ]
    static let now = Timestamp(year: 2026, month: 1, day: 1)!

    init(csca cscaKey: TestKey, cscaScheme: SignatureScheme, documentSigner dsKey: TestKey, scheme: SignatureScheme,
         dsNotAfter: Timestamp = Timestamp(year: 2036, month: 1, day: 1)!, cscaName: String = "Test CSCA") {
        csca = TestPKI.certificate(name: cscaName, key: cscaKey, issuer: nil, serial: 1, ca: true, scheme: cscaScheme)
        documentSigner = TestPKI.certificate(name: "Test Document Signer", key: dsKey, issuer: csca, serial: 0x1234, ca: false,
                                             notBefore: Timestamp(year: 2025, month: 1, day: 1)!, notAfter: dsNotAfter, scheme: cscaScheme)
        self.scheme = scheme
    }

    func sod(_ dataGroups: [Int: [UInt8]] = PassiveFixture.dataGroups, digest: Digest? = nil, change: (inout TestSignedData) -> Void = { _ in }) -> [UInt8] {
        var signedData = TestSignedData(content: TestSOD.ldsSecurityObject(dataGroups, digest: digest ?? scheme.digest), scheme: scheme, signer: documentSigner)
        signedData.digest = digest ?? scheme.digest
        change(&signedData)
        return signedData.build()
    }

    var trust: TrustStore { TrustStore(certificates: [csca.certificate]) }

    func verify(_ sod: [UInt8], dataGroups: [Int: [UInt8]] = PassiveFixture.dataGroups, trust: TrustStore? = nil, at time: Timestamp = PassiveFixture.now) -> PassiveAuthenticationResult {
        PassiveAuthentication.verify(securityObject: sod, dataGroups: dataGroups, trust: trust ?? self.trust, at: time)
    }

    static let rsa = PassiveFixture(csca: .rsa3072, cscaScheme: .rsaPKCS1v15(.sha256), documentSigner: .rsa2048, scheme: .rsaPKCS1v15(.sha256))
    static let p256 = PassiveFixture(csca: .p384, cscaScheme: .ecdsa(.sha384), documentSigner: .p256, scheme: .ecdsa(.sha256))
}

@Suite("Passive authentication with a test PKI made by libcrypto (Part 11 §5.1, Part 12)")
struct PassiveAuthenticationTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let csca: TestKey
        let cscaScheme: SignatureScheme
        let documentSigner: TestKey
        let scheme: SignatureScheme
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "RSA PKCS#1 v1.5", csca: .rsa3072, cscaScheme: .rsaPKCS1v15(.sha256), documentSigner: .rsa2048, scheme: .rsaPKCS1v15(.sha256)),
        Case(name: "RSASSA-PSS (SHA-256, MGF1 SHA-256, salt 32) under an rsaEncryption key", csca: .rsa3072,
             cscaScheme: .rsaPSS(hash: .sha256, mgf1Hash: .sha256, saltLength: 32), documentSigner: .rsa2048,
             scheme: .rsaPSS(hash: .sha256, mgf1Hash: .sha256, saltLength: 32)),
        Case(name: "RSASSA-PSS with SHA-512 and salt 64", csca: .rsa3072, cscaScheme: .rsaPKCS1v15(.sha256), documentSigner: .rsa2048,
             scheme: .rsaPSS(hash: .sha512, mgf1Hash: .sha512, saltLength: 64)),
        Case(name: "ECDSA P-256 under a P-384 CSCA", csca: .p384, cscaScheme: .ecdsa(.sha384), documentSigner: .p256, scheme: .ecdsa(.sha256)),
        Case(name: "ECDSA brainpoolP256r1, explicit parameters, under an explicit brainpoolP384r1 CSCA", csca: .brainpoolP384Explicit,
             cscaScheme: .ecdsa(.sha384), documentSigner: .brainpoolP256Explicit, scheme: .ecdsa(.sha256)),
        Case(name: "ECDSA brainpoolP384r1 with SHA-384", csca: .brainpoolP384, cscaScheme: .ecdsa(.sha512), documentSigner: .brainpoolP384, scheme: .ecdsa(.sha384)),
        Case(name: "ECDSA plain r‖s (BSI TR-03111)", csca: .p384, cscaScheme: .ecdsa(.sha384), documentSigner: .p256, scheme: .ecdsaPlain(.sha256)),
    ]

    @Test("each algorithm: hashes, signature and chain verified, the document valid", arguments: cases)
    func algorithms(_ c: Case) throws {
        let fixture = PassiveFixture(csca: c.csca, cscaScheme: c.cscaScheme, documentSigner: c.documentSigner, scheme: c.scheme)
        let result = fixture.verify(fixture.sod())
        #expect(result.hashes.status == .verified, "\(result.hashes.reason)")
        #expect(result.signature.status == .verified, "\(result.signature.reason)")
        #expect(result.signature.scheme == c.scheme)
        #expect(result.signature.messageDigestMatches == true)
        #expect(result.signature.signer?.subject == "C=UT, O=swift-apdu tests, CN=Test Document Signer")
        #expect(result.chain.status == .verified, "\(result.chain.reason)")
        #expect(result.chain.path.map(\.subject) == ["C=UT, O=swift-apdu tests, CN=Test Document Signer", "C=UT, O=swift-apdu tests, CN=Test CSCA"])
        #expect(result.valid)
        #expect(result.securityObject?.dataGroupHashes.keys.sorted() == [1, 2, 11])
        #expect(result.signature.signingTime == Timestamp(year: 2025, month: 6, day: 1, hour: 12))
    }

    @Test("explicit EC parameters are really in the test certificates (the prime-field OID 1.2.840.10045.1.1)")
    func explicitParameters() {
        let fixture = PassiveFixture(csca: .brainpoolP384Explicit, cscaScheme: .ecdsa(.sha384), documentSigner: .brainpoolP256Explicit, scheme: .ecdsa(.sha256))
        let primeField: [UInt8] = [0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x01, 0x01]
        for der in [fixture.csca.der, fixture.documentSigner.der] {
            #expect(der.indices.contains { der[$0...].starts(with: primeField) })
        }
    }

    @Test("hashes: a changed data group fails, one listed and not read is named, one read and not listed fails")
    func hashes() throws {
        let fixture = PassiveFixture.p256
        let sod = fixture.sod()
        var changed = PassiveFixture.dataGroups
        changed[2]![changed[2]!.count - 1] ^= 0x01
        let tampered = fixture.verify(sod, dataGroups: changed)
        #expect(tampered.hashes.status == .failed)
        #expect(tampered.hashes.mismatched == [2])
        #expect(tampered.hashes.reason == "DG2 does not match the SHA-256 hash EF.SOD lists")
        #expect(tampered.signature.status == .verified)
        #expect(!tampered.valid)

        var partial = PassiveFixture.dataGroups
        partial[2] = nil
        let notRead = fixture.verify(sod, dataGroups: partial)
        #expect(notRead.hashes.status == .verified)
        #expect(notRead.hashes.notRead == [2])
        #expect(notRead.hashes.reason == "DG1, DG11 match (SHA-256); not read: DG2")

        var extra = PassiveFixture.dataGroups
        extra[15] = TestDER.tlv(0x6F, [0x30, 0x00])
        let unlisted = fixture.verify(sod, dataGroups: extra)
        #expect(unlisted.hashes.status == .failed)
        #expect(unlisted.hashes.notListed == [15])
        #expect(!unlisted.valid)

        let none = fixture.verify(sod, dataGroups: [:])
        #expect(none.hashes.status == .notVerified)
        #expect(!none.valid)
    }

    @Test("signature: wrong key, changed signature, messageDigest not over the content, content changed after signing")
    func signatures() throws {
        let fixture = PassiveFixture.p256
        let otherSigner = TestIdentity(der: fixture.documentSigner.der, key: .otherP256, certificate: fixture.documentSigner.certificate,
                                       issuerName: fixture.documentSigner.issuerName, serial: fixture.documentSigner.serial,
                                       subjectKeyIdentifier: fixture.documentSigner.subjectKeyIdentifier)
        let wrongKey = fixture.verify(fixture.sod { $0.signer = otherSigner })
        #expect(wrongKey.signature.status == .failed)
        #expect(wrongKey.signature.reason == "the signature does not verify (ECDSA with SHA-256)")
        #expect(wrongKey.hashes.status == .verified)
        #expect(!wrongKey.valid)

        let flipped = fixture.verify(fixture.sod { data in
            var signature = data.signer.key.sign(data.content, .ecdsa(.sha256))
            signature[signature.count - 3] ^= 0x40
            data.signatureOverride = signature
        })
        #expect(flipped.signature.status == .failed)

        let digestLies = fixture.verify(fixture.sod { $0.messageDigestOverride = [UInt8](repeating: 0xAA, count: 32) })
        #expect(digestLies.signature.status == .failed)
        #expect(digestLies.signature.messageDigestMatches == false)
        #expect(digestLies.signature.reason == "the messageDigest attribute is not the SHA-256 of the signed content")

        // The LDSSecurityObject swapped after signing, its hashes matching other data groups.
        var forged = PassiveFixture.dataGroups
        forged[11] = TestDER.tlv(0x6B, TestDER.tlv([0x5F, 0x0E], Array("MALLORY<<EVE".utf8)))
        let swapped = fixture.verify(fixture.sod { $0.contentAfterSigning = TestSOD.ldsSecurityObject(forged) }, dataGroups: forged)
        #expect(swapped.hashes.status == .verified)
        #expect(swapped.signature.status == .failed)
        #expect(swapped.signature.messageDigestMatches == false)
        #expect(!swapped.valid)

        // The signed content-type attribute must name the LDSSecurityObject (RFC 5652 §11.1).
        let otherType = fixture.verify(fixture.sod { $0.contentTypeAttribute = "2.23.136.1.1.2" })
        #expect(otherType.signature.status == .failed)
        #expect(otherType.signature.reason == "the content-type attribute does not name the signed content's type")
        let noType = fixture.verify(fixture.sod { $0.contentTypeAttribute = "" })
        #expect(noType.signature.reason == "the signed attributes lack the content type (RFC 5652 §11.1)")

        // The SignerInfo names PKCS#1 v1.5 but the signature is PSS: the SignerInfo decides.
        let rsa = PassiveFixture.rsa
        let mislabelled = rsa.verify(rsa.sod { data in
            data.signatureOverride = data.signer.key.sign(TestDER.set([]), .rsaPSS(hash: .sha256, mgf1Hash: .sha256, saltLength: 32))
        })
        #expect(mislabelled.signature.status == .failed)
    }

    @Test("signer lookup: by subject key identifier; from the trust store when EF.SOD carries no certificate; missing")
    func signerLookup() {
        let fixture = PassiveFixture.p256
        let bySKI = fixture.verify(fixture.sod { $0.signerID = .subjectKeyIdentifier })
        #expect(bySKI.valid, "\(bySKI.signature.reason)")

        let bare = fixture.sod { $0.certificates = [] }
        let missing = fixture.verify(bare)
        #expect(missing.signature.status == .failed)
        #expect(missing.signature.reason == "the signer's certificate is neither in EF.SOD nor in the trust store")
        #expect(missing.chain.status == .notVerified)
        #expect(!missing.valid)

        let fromStore = fixture.verify(bare, trust: TrustStore(certificates: [fixture.csca.certificate, fixture.documentSigner.certificate]))
        #expect(fromStore.signature.status == .verified)
        #expect(fromStore.chain.status == .verified)
    }

    @Test("without signed attributes the signature covers the content itself")
    func noSignedAttributes() {
        let fixture = PassiveFixture.p256
        let result = fixture.verify(fixture.sod { $0.signedAttributes = false })
        #expect(result.signature.status == .verified, "\(result.signature.reason)")
        #expect(result.signature.messageDigestMatches == nil)
        #expect(result.valid)
    }

    @Test("chain: a Document Signer of another CSCA fails; no trust store is not verified; never valid without the chain")
    func chains() {
        let fixture = PassiveFixture.p256
        // A CSCA with the same name as the real one, and its own key: the impostor an attacker
        // would make.
        let impostor = TestPKI.certificate(name: "Test CSCA", key: .rsa3072, issuer: nil, serial: 1, ca: true, scheme: .rsaPKCS1v15(.sha256))
        let result = fixture.verify(fixture.sod(), trust: TrustStore(certificates: [impostor.certificate]))
        #expect(result.signature.status == .verified)
        #expect(result.chain.status == .failed)
        #expect(!result.valid)

        let unrelated = TestPKI.certificate(name: "Unrelated CSCA", key: .otherRSA, issuer: nil, serial: 9, ca: true, scheme: .rsaPKCS1v15(.sha256))
        let noIssuer = fixture.verify(fixture.sod(), trust: TrustStore(certificates: [unrelated.certificate]))
        #expect(noIssuer.chain.status == .failed)
        #expect(noIssuer.chain.reason.hasPrefix("no trusted certificate issued the Document Signer"))

        let untrusted = PassiveAuthentication.verify(securityObject: fixture.sod(), dataGroups: PassiveFixture.dataGroups, trust: nil, at: PassiveFixture.now)
        #expect(untrusted.hashes.status == .verified)
        #expect(untrusted.signature.status == .verified)
        #expect(untrusted.chain.status == .notVerified)
        #expect(!untrusted.valid)
    }

    @Test("an expired Document Signer: the chain fails now, and is reported valid at the signing time")
    func expired() {
        let fixture = PassiveFixture(csca: .p384, cscaScheme: .ecdsa(.sha384), documentSigner: .p256, scheme: .ecdsa(.sha256),
                                     dsNotAfter: Timestamp(year: 2030, month: 1, day: 1)!)
        let later = Timestamp(year: 2035, month: 1, day: 1)!
        let result = fixture.verify(fixture.sod(), at: later)
        #expect(result.chain.status == .failed)
        #expect(result.chain.reason.contains("certificate has expired"))
        #expect(result.chain.atSigning?.valid == true)
        #expect(result.chain.atSigning?.source == "signingTime attribute")
        #expect(result.chain.atSigning?.time == Timestamp(year: 2025, month: 6, day: 1, hour: 12))
        #expect(!result.valid)
        let noTime = fixture.verify(fixture.sod { $0.signingTime = nil }, at: later)
        #expect(noTime.chain.atSigning?.source == "Document Signer notBefore")
        #expect(noTime.chain.atSigning?.valid == true)
        #expect(fixture.verify(fixture.sod(), at: Timestamp(year: 2029, month: 12, day: 31)!).valid)
    }

    @Test("BER indefinite lengths throughout EF.SOD (as US passports write it, proxmark3 PR #1145) verify")
    func indefiniteLengths() throws {
        let fixture = PassiveFixture.rsa
        let sod = fixture.sod { $0.indefiniteLengths = true }
        #expect(Array(sod.prefix(6)) == [0x77, 0x82, sod[2], sod[3], 0x30, 0x80])
        let result = fixture.verify(sod)
        #expect(result.valid, "\(result.signature.reason) / \(result.chain.reason)")
    }

    @Test("hostile EF.SOD: every prefix, lying and huge lengths, deep nesting, indefinite without end: typed errors, never a trap")
    func hostile() {
        let sod = PassiveFixture.p256.sod { $0.indefiniteLengths = true }
        for n in stride(from: 0, to: sod.count, by: 7) {
            #expect(throws: SecurityObjectError.self) { try DocumentSecurityObject(decoding: Array(sod.prefix(n))) }
        }
        let definite = PassiveFixture.p256.sod()
        for n in stride(from: 0, to: definite.count, by: 5) {
            DocumentSecurityObject.fuzz(Array(definite.prefix(n)))
            var corrupted = definite
            corrupted[n] ^= 0xFF
            _ = PassiveAuthentication.verify(securityObject: corrupted, dataGroups: [:], trust: nil)
        }
        var deep: [UInt8] = [0x05, 0x00]
        for _ in 0..<500 { deep = TestDER.tlv(0x30, deep) }
        let inputs: [[UInt8]] = [
            [], [0x77], [0x77, 0x84, 0xFF, 0xFF, 0xFF, 0xFF], [0x77, 0x80, 0x30, 0x80], [0x30, 0x80, 0x30, 0x80, 0x30, 0x80],
            TestDER.tlv(0x77, deep), [0x30, 0x89, 1, 2, 3, 4, 5, 6, 7, 8, 9], TestDER.tlv(0x77, [0x00, 0x00]),
        ]
        for input in inputs {
            #expect(throws: SecurityObjectError.self) { try DocumentSecurityObject(decoding: input) }
        }
        let result = PassiveAuthentication.verify(securityObject: [0x77, 0x01], dataGroups: PassiveFixture.dataGroups, trust: nil)
        #expect(result.hashes.status == .failed && result.signature.status == .failed && result.chain.status == .failed)
        #expect(result.hashes.reason.hasPrefix("EF.SOD does not decode: "))
    }
}
