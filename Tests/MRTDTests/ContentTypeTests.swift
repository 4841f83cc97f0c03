import CardCrypto
import MRTD
import Testing

/// EF.SOD's encapsulated content type: ICAO 9303-10 asks for id-icao-mrtd-security-
/// ldsSecurityObject (2.23.136.1.1.1); Chinese passports write id-data (1.2.840.113549.1.7.1).
/// A legacy type is accepted only when the content is an LDSSecurityObject and the signed
/// content-type attribute names the same type; every broken copy stays "not genuine".
@Suite("EF.SOD content types as real issuers write them")
struct ContentTypeTests {
    static let idData = "1.2.840.113549.1.7.1"
    let fixture = PassiveFixture.rsa

    @Test("id-data, signed attribute id-data: every step verified, the report says which type it was")
    func idDataAccepted() throws {
        let sod = fixture.sod { $0.contentType = Self.idData }
        let decoded = try DocumentSecurityObject(decoding: sod)
        #expect(decoded.contentType == Self.idData && !decoded.hasStandardContentType)
        let result = fixture.verify(sod)
        #expect(result.hashes.status == .verified && result.signature.status == .verified && result.chain.status == .verified, "\(result.signature.reason)")
        #expect(result.valid)
        #expect(result.signature.reason.contains("EF.SOD content type id-data (1.2.840.113549.1.7.1), as some issuers write it"), "\(result.signature.reason)")
        #expect(result.signature.notes.contains { $0.hasPrefix("EF.SOD content type id-data") })
        // The standard type says nothing of the kind.
        let standard = fixture.verify(fixture.sod())
        #expect(standard.valid && !standard.signature.reason.contains("content type") && standard.signature.notes.isEmpty)
    }

    @Test("broken copies of an id-data EF.SOD: content, signature, disagreeing or missing attribute, no signed attributes: never valid")
    func brokenCopies() {
        // A flipped byte in the content (after signing): the message digest no longer matches.
        var content = TestSOD.ldsSecurityObject(PassiveFixture.dataGroups)
        content[content.count - 1] ^= 0x01
        let changed = fixture.verify(fixture.sod { $0.contentType = Self.idData; $0.contentAfterSigning = content })
        #expect(changed.signature.status == .failed && !changed.valid)
        // A flipped byte in the signature (the last bytes of EF.SOD: the SignerInfo's signature).
        var flippedSOD = fixture.sod { $0.contentType = Self.idData }
        flippedSOD[flippedSOD.count - 5] ^= 0x10
        let flipped = fixture.verify(flippedSOD)
        #expect(flipped.signature.status == .failed && !flipped.valid)
        // Encapsulated id-data, signed attribute ldsSecurityObject (and the other way round):
        // the signature itself is good, the attribute and the type disagree.
        for (encapsulated, attribute) in [(Self.idData, "2.23.136.1.1.1"), ("2.23.136.1.1.1", Self.idData)] {
            let disagree = fixture.verify(fixture.sod { $0.contentType = encapsulated; $0.contentTypeAttribute = attribute })
            #expect(disagree.signature.status == .failed, "\(encapsulated) / \(attribute)")
            #expect(disagree.signature.reason == "the content-type attribute does not name the signed content's type")
            #expect(!disagree.valid)
        }
        let noAttribute = fixture.verify(fixture.sod { $0.contentType = Self.idData; $0.contentTypeAttribute = "" })
        #expect(noAttribute.signature.status == .failed && !noAttribute.valid)
        // No signed attributes at all: nothing vouches for the legacy type.
        let bare = fixture.verify(fixture.sod { $0.contentType = Self.idData; $0.signedAttributes = false })
        #expect(bare.signature.status == .failed && !bare.valid)
        #expect(bare.signature.reason.contains("no signed content-type attribute vouches for it"), "\(bare.signature.reason)")
    }

    @Test("a type no issuer uses, or id-data around something that is no LDSSecurityObject: EF.SOD does not decode")
    func otherTypesRefused() {
        let master = fixture.verify(fixture.sod { $0.contentType = "2.23.136.1.1.2" })
        #expect(master.signature.status == .failed && master.signature.reason.contains("not an LDSSecurityObject"))
        let notLDS = fixture.verify(fixture.sod { $0.contentType = Self.idData; $0.content = TestDER.sequence(TestDER.integer(0)) })
        #expect(notLDS.signature.status == .failed && notLDS.signature.reason.hasPrefix("EF.SOD does not decode"), "\(notLDS.signature.reason)")
    }
}

/// The real documents behind issue 39, from gmrtd/gmrtd (RealSamplesIssuers.swift cites each
/// file). `openssl cms -verify` verifies both EF.SODs with their CSCAs; `openssl verify` refuses the
/// Indonesian Document Signer with only the 2020 link certificate (error 20, its AKI names the
/// self-signed 2020 CSCA by issuer and serial), which RFC 5280 §6.1.1 accepts: name and key match.
@Suite("Real EF.SODs with an unusual content type or anchor")
struct RealIssuerTests {
    /// Inside every certificate's validity window (the 2016 CSCA and the link expired in April 2026).
    static let june2025 = Timestamp(year: 2025, month: 6, day: 1)!

    @Test("CN: id-data content, id-data signed attribute, PKCS#1 v1.5: the signature and chain verify, as openssl cms -verify says")
    func chineseIDData() throws {
        let sod = try DocumentSecurityObject(decoding: RealSamples.sodCN)
        #expect(sod.contentType == "1.2.840.113549.1.7.1" && sod.dataGroupHashes.keys.sorted() == [1, 2, 11, 12, 15])
        let csca = try Certificate(der: RealSamples.cscaCN)
        let result = PassiveAuthentication.verify(securityObject: RealSamples.sodCN, dataGroups: [:], trust: TrustStore(certificates: [csca]),
                                                  at: Timestamp(year: 2026, month: 1, day: 1)!)
        #expect(result.signature.status == .verified, "\(result.signature.reason)")
        #expect(result.signature.reason.contains("EF.SOD content type id-data"), "\(result.signature.reason)")
        #expect(result.chain.status == .verified, "\(result.chain.reason)")
    }

    @Test("CN broken copies: a flipped byte in the content, in the signature, in the signed content-type attribute: signature failed")
    func chineseBroken() throws {
        let csca = try Certificate(der: RealSamples.cscaCN)
        let trust = TrustStore(certificates: [csca])
        let idData: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x01]
        let original = RealSamples.sodCN
        // The first id-data is the encapsulated type; the eContent's LDSSecurityObject follows it.
        let encapsulated = try #require(Self.find(idData, in: original, from: 30))
        let attribute = try #require(Self.find(idData, in: original, from: encapsulated + idData.count))
        var content = original
        content[encapsulated + idData.count + 40] ^= 0x01  // inside a data group hash
        var signature = original
        signature[signature.count - 10] ^= 0x01
        var attributeChanged = original
        attributeChanged[attribute + idData.count - 1] = 0x02  // id-data → id-signedData in the signed attribute
        for (name, bytes) in [("content", content), ("signature", signature), ("content-type attribute", attributeChanged)] {
            let result = PassiveAuthentication.verify(securityObject: bytes, dataGroups: [:], trust: trust, at: Timestamp(year: 2026, month: 1, day: 1)!)
            #expect(result.signature.status == .failed, "\(name): \(result.signature.reason)")
            #expect(!result.valid)
        }
        let changedAttribute = PassiveAuthentication.verify(securityObject: attributeChanged, dataGroups: [:], trust: trust)
        #expect(changedAttribute.signature.reason == "the content-type attribute does not name the signed content's type", "\(changedAttribute.signature.reason)")
    }

    @Test("ID: the self-signed 2020 CSCA the AKI names anchors the chain; its link certificate alone anchors it by name and key, and says so")
    func indonesianLink() throws {
        let selfSigned = try Certificate(der: RealSamples.cscaID2020)
        let link = try Certificate(der: RealSamples.linkID2020)
        let strict = PassiveAuthentication.verify(securityObject: RealSamples.sodID, dataGroups: [:], trust: TrustStore(certificates: [selfSigned]), at: Self.june2025)
        #expect(strict.signature.status == .verified && strict.chain.status == .verified, "\(strict.chain.reason)")
        #expect(!strict.chain.reason.contains("name and key"))
        let byLink = PassiveAuthentication.verify(securityObject: RealSamples.sodID, dataGroups: [:], trust: TrustStore(certificates: [link]), at: Self.june2025)
        #expect(byLink.chain.status == .verified, "\(byLink.chain.reason)")
        #expect(byLink.chain.reason.contains("by name and key (RFC 5280 §6.1.1)"), "\(byLink.chain.reason)")
        // Both given: the identifier chooses the self-signed CSCA.
        let both = PassiveAuthentication.verify(securityObject: RealSamples.sodID, dataGroups: [:], trust: TrustStore(certificates: [link, selfSigned]), at: Self.june2025)
        #expect(both.chain.status == .verified && !both.chain.reason.contains("name and key"), "\(both.chain.reason)")
    }

    @Test("ID: the right name with another key, or another CSCA of the country, anchors nothing")
    func indonesianWrongAnchor() throws {
        var forgedDER = RealSamples.linkID2020
        forgedDER[304 + 5 + 100] ^= 0x01  // inside the link certificate's 4096-bit modulus
        let forged = try Certificate(der: forgedDER)
        for (name, anchor) in [("same name, another key", forged), ("the 2016 CSCA", try Certificate(der: RealSamples.cscaID2016)),
                               ("another country's CSCA", try Certificate(der: RealSamples.cscaCN))] {
            let result = PassiveAuthentication.verify(securityObject: RealSamples.sodID, dataGroups: [:], trust: TrustStore(certificates: [anchor]), at: Self.june2025)
            #expect(result.chain.status == .failed, "\(name): \(result.chain.reason)")
        }
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard haystack.count >= needle.count, start <= haystack.count - needle.count else { return nil }
        return (start...(haystack.count - needle.count)).first { Array(haystack[$0..<($0 + needle.count)]) == needle }
    }
}
