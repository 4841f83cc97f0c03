import CardCrypto
import FoundationEssentials
import MRTD
import SwiftASN1
import Testing

/// A master list (Part 12 §9) made here: CSCA A and the RSA fixture's CSCA, signed by a
/// master-list signer under CSCA A.
struct MasterListFixture {
    let cscaA = TestPKI.certificate(name: "CSCA A", key: .p384, issuer: nil, serial: 1, ca: true, scheme: .ecdsa(.sha384))
    let cscaB = PassiveFixture.rsa.csca
    let signer: TestIdentity

    init() {
        signer = TestPKI.certificate(name: "Master List Signer", key: .p256, issuer: cscaA, serial: 77, ca: false, scheme: .ecdsa(.sha384))
    }

    func build(_ change: (inout TestSignedData) -> Void = { _ in }) -> [UInt8] {
        var list = TestSignedData(content: TestSOD.masterList([cscaA.der, cscaB.der]), scheme: .ecdsa(.sha256), signer: signer)
        list.contentType = "2.23.136.1.1.2"
        list.wrapIn77 = false
        change(&list)
        return list.build()
    }
}

/// A folder under /tmp, removed when the test ends.
final class TemporaryFolder {
    let path = "/tmp/mrtd-tests-\(UUID().uuidString)"

    init() throws { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }

    func write(_ name: String, _ bytes: [UInt8]) {
        _ = FileManager.default.createFile(atPath: path + "/" + name, contents: Data(bytes))
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

@Suite("Trust: CSCA master lists, certificate files and folders, offline dumps")
struct TrustStoreTests {
    @Test("a master list verifies (its signature, its signer chained to a CSCA in it) and anchors a Document Signer")
    func masterList() throws {
        let fixture = MasterListFixture()
        let list = try CSCAMasterList(verifying: fixture.build())
        #expect(list.certificates.count == 2)
        #expect(list.signer.subject == "C=UT, O=swift-apdu tests, CN=Master List Signer")
        #expect(list.signerIssuer?.subject == "C=UT, O=swift-apdu tests, CN=CSCA A")
        var store = TrustStore()
        try store.add(contentsOf: fixture.build(), source: "test.ml")
        #expect(store.certificates.count == 2)
        #expect(store.sources == ["test.ml: master list signed by C=UT, O=swift-apdu tests, CN=Master List Signer, 2 certificates"])
        let rsa = PassiveFixture.rsa
        #expect(rsa.verify(rsa.sod(), trust: store).valid)
    }

    @Test("a master list that does not verify is refused, with the file and the problem in one line")
    func masterListRefused() throws {
        let fixture = MasterListFixture()
        let evil = TestPKI.certificate(name: "Evil CSCA", key: .otherRSA, issuer: nil, serial: 666, ca: true, scheme: .rsaPKCS1v15(.sha256))
        // A CSCA slipped into the list after it was signed.
        let padded = fixture.build { $0.contentAfterSigning = TestSOD.masterList([fixture.cscaA.der, fixture.cscaB.der, evil.der]) }
        var store = TrustStore()
        #expect(throws: TrustStoreError(file: "DE_ML.ml", "refused: the master list's own signature does not verify: the messageDigest attribute is not the SHA-256 of the signed content")) {
            try store.add(contentsOf: padded, source: "DE_ML.ml")
        }
        #expect(store.certificates.isEmpty)
        // The signature itself changed.
        let forged = fixture.build { data in
            var signature = data.signer.key.sign(TestDER.set([]), .ecdsa(.sha256))
            signature[signature.count - 2] ^= 1
            data.signatureOverride = signature
        }
        #expect(throws: SecurityObjectError(.format, "the master list's own signature does not verify: the signature does not verify (ECDSA with SHA-256)")) {
            try CSCAMasterList(verifying: forged)
        }
        // Signed by a signer whose CSCA is not in the list.
        let outsider = TestPKI.certificate(name: "Outside Signer", key: .p256, issuer: evil, serial: 5, ca: false, scheme: .rsaPKCS1v15(.sha256))
        let orphan = fixture.build { $0.signer = outsider; $0.certificates = [outsider.der] }
        #expect(throws: SecurityObjectError.self) { try CSCAMasterList(verifying: orphan) }
        do {
            _ = try CSCAMasterList(verifying: orphan)
        } catch {
            #expect(error.message.hasPrefix("the master-list signer does not chain to a CSCA in the list: no trusted certificate issued the master-list signer"))
        }
        // An EF.SOD is no master list.
        #expect(throws: SecurityObjectError(.format, "the CMS content is of type 2.23.136.1.1.1, not a CSCA master list (2.23.136.1.1.2)")) {
            try CSCAMasterList(verifying: PassiveFixture.p256.sod { $0.wrapIn77 = false })
        }
        for n in stride(from: 0, to: 600, by: 11) { CSCAMasterList.fuzz(Array(fixture.build().prefix(n))) }
    }

    @Test("certificate files: PEM with several certificates, DER, a folder (other files left alone), errors naming the file")
    func files() throws {
        let folder = try TemporaryFolder()
        let list = MasterListFixture()
        let a = list.cscaA, b = list.cscaB, c = PassiveFixture.p256.csca
        let pem = PEMDocument(type: "CERTIFICATE", derBytes: a.der).pemString + "\n" + PEMDocument(type: "CERTIFICATE", derBytes: b.der).pemString + "\n"
        folder.write("two.pem", Array(pem.utf8))
        folder.write("one.cer", c.der)
        folder.write("list.ML", list.build())  // the same two CSCAs: no duplicates
        folder.write("README.txt", Array("not a certificate".utf8))
        let store = try TrustStore.load(paths: [folder.path])
        #expect(store.certificates.count == 3)
        #expect(store.sources.count == 3)
        // PEM with a byte-order mark and CRLF line ends.
        var loose = TrustStore()
        try loose.add(contentsOf: [0xEF, 0xBB, 0xBF] + Array(pem.replacing("\n", with: "\r\n").utf8), source: "crlf.pem")
        #expect(loose.certificates.count == 2)

        folder.write("broken.der", Array(c.der.dropLast(10)))
        #expect(throws: TrustStoreError.self) { try TrustStore.load(paths: [folder.path]) }
        do {
            _ = try TrustStore.load(paths: [folder.path])
        } catch {
            #expect(error.file == folder.path + "/broken.der")
            #expect(error.message.hasPrefix("neither a PEM or DER certificate nor a CSCA master list"))
        }
        #expect(throws: TrustStoreError(file: "/nonexistent/csca.pem", "no such file or folder")) {
            try TrustStore.load(paths: ["/nonexistent/csca.pem"])
        }
        var store2 = TrustStore()
        #expect(throws: TrustStoreError(file: "x.pem", "holds no PEM certificate")) {
            try store2.add(contentsOf: Array(PEMDocument(type: "PRIVATE KEY", derBytes: [1, 2, 3]).pemString.utf8), source: "x.pem")
        }
        TrustStore.fuzz(Array(pem.utf8.prefix(100)))
        TrustStore.fuzz(Array(c.der.prefix(200)))
    }

    @Test("a dump folder (EF.COM.bin, EF.SOD.bin, DG1.bin …) loads and verifies offline with the same code")
    func dump() throws {
        let fixture = PassiveFixture.p256
        let folder = try TemporaryFolder()
        folder.write(MRTDDump.comFileName, LDSTests.bsiCOM)
        folder.write(MRTDDump.sodFileName, fixture.sod())
        for (number, bytes) in PassiveFixture.dataGroups { folder.write(MRTDDump.fileName(forDataGroup: number), bytes) }
        folder.write("notes.txt", [1, 2, 3])
        let dump = try MRTDDump(directory: folder.path)
        #expect(dump.dataGroups.keys.sorted() == [1, 2, 11])
        #expect(dump.files.map(\.name) == ["EF.COM.bin", "EF.SOD.bin", "DG1.bin", "DG2.bin", "DG11.bin"])
        let verification = dump.verify(trust: fixture.trust, at: PassiveFixture.now)
        #expect(verification.passiveAuthentication.valid)
        #expect(verification.mrz?.surname == "MUSTERMANN")
        if case let .success(com)? = verification.com { #expect(com.dataGroups == [1, 2, 3, 4, 14]) } else { Issue.record("EF.COM") }
        if case .success(.dg2)? = verification.dataGroups[2] {} else { Issue.record("DG2") }

        // A changed DG1 on disk: the hash verdict fails, the rest holds.
        var dg1 = PassiveFixture.dataGroups[1]!
        dg1[10] = UInt8(ascii: "X")
        folder.write("DG1.bin", dg1)
        let changed = try MRTDDump(directory: folder.path).verify(trust: fixture.trust, at: PassiveFixture.now)
        #expect(changed.passiveAuthentication.hashes.mismatched == [1])
        #expect(!changed.passiveAuthentication.valid)

        let empty = try TemporaryFolder()
        #expect(throws: MRTDDumpError(path: empty.path, "holds no EF.COM.bin, EF.SOD.bin, DG1.bin … DG16.bin or EF.CardAccess.bin")) {
            try MRTDDump(directory: empty.path)
        }
        #expect(throws: MRTDDumpError.self) { try MRTDDump(directory: "/nonexistent/dump") }
        let noSOD = MRTDDump(dataGroups: PassiveFixture.dataGroups).verify(trust: fixture.trust)
        #expect(noSOD.passiveAuthentication.hashes.status == .notVerified)
        #expect(!noSOD.passiveAuthentication.valid)
    }
}
