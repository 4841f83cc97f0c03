import CardCrypto
import ISO7816
import MRTD
import Testing

@Suite("Passive authentication of published real-format documents")
struct RealDocumentTests {
    @Test("BSI TR-03105-5 reference set: EF.SOD decodes, DG1 and DG14 match, RSASSA-PSS verifies, no CSCA so not valid")
    func bsiReference() throws {
        let sod = try DocumentSecurityObject(decoding: RealSamples.bsiSOD)
        #expect(sod.version == 0)
        #expect(sod.hashAlgorithm == .sha256)
        #expect(sod.dataGroupHashes.keys.sorted() == [1, 2, 3, 4, 14])
        // SHA-256 of the set's Datagroup2.bin (15083 bytes, not embedded), as EF.SOD lists it.
        #expect(sod.dataGroupHashes[2]?.hexString == "A9A1B09DFD598087AB3FCE4AE2EC65B1A1525BD258BFC27DF4419F8A65E54745")
        #expect(sod.certificates.map(\.subject) == ["C=DE, O=HJP Consulting, OU=Document Signer, CN=HJP PB DS"])

        let result = PassiveAuthentication.verify(securityObject: sod, dataGroups: [1: LDSTests.bsiDG1, 14: RealSamples.bsiDG14], trust: nil,
                                                  at: Timestamp(year: 2014, month: 6, day: 1)!)
        #expect(result.hashes.status == .verified)
        #expect(result.hashes.notRead == [2, 3, 4])
        #expect(result.signature.status == .verified, "\(result.signature.reason)")
        #expect(result.signature.scheme == .rsaPSS(hash: .sha256, mgf1Hash: .sha256, saltLength: 32))
        #expect(result.signature.messageDigestMatches == true)
        #expect(result.chain.status == .notVerified)
        #expect(!result.valid)

        var dg1 = LDSTests.bsiDG1
        dg1[dg1.count - 1] = UInt8(ascii: "5")
        let changed = PassiveAuthentication.verify(securityObject: sod, dataGroups: [1: dg1, 14: RealSamples.bsiDG14], trust: nil)
        #expect(changed.hashes.status == .failed)
        #expect(changed.hashes.mismatched == [1])
    }

    struct Document: CustomTestStringConvertible, Sendable {
        let country: String
        let sod: [UInt8]
        let csca: [UInt8]
        let scheme: String
        let dataGroups: [Int]
        var testDescription: String { country }
    }

    static let documents: [Document] = [
        Document(country: "DE", sod: RealSamples.sodDE, csca: RealSamples.cscaDE, scheme: "ECDSA with SHA-384", dataGroups: [1, 2, 3, 14]),
        Document(country: "FR", sod: RealSamples.sodFR, csca: RealSamples.cscaFR, scheme: "RSA PKCS#1 v1.5 with SHA-256", dataGroups: [1, 2, 3, 11, 12, 13, 14]),
        Document(country: "MY", sod: RealSamples.sodMY, csca: RealSamples.cscaMY, scheme: "RSASSA-PSS with SHA-256, MGF1 with SHA-256, salt 32 bytes", dataGroups: [1, 2, 3, 11, 12, 14]),
        Document(country: "NZ", sod: RealSamples.sodNZ, csca: RealSamples.cscaNZ, scheme: "RSA PKCS#1 v1.5 with SHA-256", dataGroups: [1, 2, 12, 13, 14, 15]),
        Document(country: "RU", sod: RealSamples.sodRU, csca: RealSamples.cscaRU, scheme: "ECDSA with SHA-1", dataGroups: [1, 2, 3, 13, 14]),
        Document(country: "UK", sod: RealSamples.sodUK, csca: RealSamples.cscaUK, scheme: "ECDSA with SHA-256", dataGroups: [1, 2, 14]),
    ]

    @Test("real EF.SODs (gmrtd's samples): the Document Signer's signature verifies and chains to the country's CSCA", arguments: documents)
    func realDocument(_ document: Document) throws {
        let csca = try Certificate(der: document.csca)
        let result = PassiveAuthentication.verify(securityObject: document.sod, dataGroups: [:], trust: TrustStore(certificates: [csca]),
                                                  at: Timestamp(year: 2026, month: 1, day: 1)!)
        #expect(result.securityObject?.dataGroupHashes.keys.sorted() == document.dataGroups)
        #expect(result.signature.status == .verified, "\(result.signature.reason)")
        #expect(result.signature.scheme?.description == document.scheme)
        #expect(result.chain.status == .verified, "\(result.chain.reason)")
        #expect(result.chain.path.last?.sha256Fingerprint == csca.fingerprint)
        // No data group was read: never valid.
        #expect(result.hashes.status == .notVerified)
        #expect(!result.valid)
    }

    @Test("interop: NZ's EF.SOD uses indefinite lengths; MY's SignerInfo reorders the issuer's RDNs (noted, still verified)")
    func quirks() throws {
        #expect(Array(RealSamples.sodNZ.prefix(6)) == [0x77, 0x82, 0x08, 0x52, 0x30, 0x80])
        let my = PassiveAuthentication.verify(securityObject: RealSamples.sodMY, dataGroups: [:], trust: nil)
        #expect(my.signature.status == .verified)
        #expect(my.signature.notes == ["the SignerInfo names the signer's issuer with its RDNs in another order than the certificate"])
    }

    @Test("a real Document Signer under another country's CSCA fails; an expired one is valid at its signing time only")
    func chainsOfRealDocuments() throws {
        let wrong = PassiveAuthentication.verify(securityObject: RealSamples.sodDE, dataGroups: [:], trust: TrustStore(certificates: [try Certificate(der: RealSamples.cscaFR)]),
                                                 at: Timestamp(year: 2026, month: 1, day: 1)!)
        #expect(wrong.chain.status == .failed)
        // FR's Document Signer expired on 2027-10-18; EF.SOD was signed on 2017-09-05.
        let later = PassiveAuthentication.verify(securityObject: RealSamples.sodFR, dataGroups: [:], trust: TrustStore(certificates: [try Certificate(der: RealSamples.cscaFR)]),
                                                 at: Timestamp(year: 2028, month: 1, day: 1)!)
        #expect(later.chain.status == .failed)
        #expect(later.chain.atSigning?.valid == true)
        #expect(later.chain.atSigning?.time == Timestamp(year: 2017, month: 9, day: 5, hour: 20, minute: 41, second: 33))
    }
}
