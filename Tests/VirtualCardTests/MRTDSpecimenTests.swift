internal import COpenSSL
import CardCrypto
import FoundationEssentials
import ISO7816
import Testing
import VirtualCard

/// The specimen document, read through the emulated chip by the test reader (BAC and secure
/// messaging), checked against its own security object, whose signature libcrypto's CMS
/// verifies against the specimen's CSCA.
@Suite("eMRTD specimen read through the chip")
struct MRTDSpecimenTests {
    static let seed = Array("swift-apdu specimen".utf8)
    static let specimen: MRTDSpecimen = {
        var options = MRTDSpecimen.Options()
        options.seed = seed
        options.pace.append(.init(mapping: .genericDH, cipher: .aes128, parameterID: 0))
        return try! MRTDSpecimen.generate(options)
    }()

    /// What libcrypto's CMS_verify says of a SignedData with `csca` as the only trust anchor:
    /// the encapsulated content when the signature and the chain hold, nil otherwise.
    static func verifiedContent(_ signedData: [UInt8], csca: [UInt8]) -> [UInt8]? {
        var p: UnsafePointer<UInt8>? = nil
        let cms = signedData.withUnsafeBufferPointer { b -> OpaquePointer? in
            p = b.baseAddress
            return d2i_CMS_ContentInfo(nil, &p, b.count)
        }
        guard let cms else { return nil }
        defer { CMS_ContentInfo_free(cms) }
        let cert = csca.withUnsafeBufferPointer { b -> OpaquePointer? in
            p = b.baseAddress
            return d2i_X509(nil, &p, b.count)
        }
        guard let cert, let store = X509_STORE_new(), let out = BIO_new(BIO_s_mem()) else { return nil }
        defer { X509_free(cert); X509_STORE_free(store); BIO_free(out) }
        X509_STORE_add_cert(store, cert)
        guard CMS_verify(cms, nil, store, nil, out, 0) == 1 else { ERR_clear_error(); return nil }
        var data: UnsafeMutablePointer<CChar>? = nil
        let n = apdu_bio_mem_data(out, &data)
        guard let data, n > 0 else { return nil }
        return data.withMemoryRebound(to: UInt8.self, capacity: n) { Array(UnsafeBufferPointer(start: $0, count: n)) }
    }

    /// The data group hashes of an LDSSecurityObject (Part 10 §4.6.2.2).
    static func hashes(_ securityObject: [UInt8]) -> [Int: [UInt8]] {
        guard let top = try? BERTLV.decode(securityObject).first, let fields = top.children, fields.count >= 3,
              let list = fields[2].children else { return [:] }
        var out: [Int: [UInt8]] = [:]
        for entry in list {
            guard let pair = entry.children, pair.count == 2, let n = pair[0].value.last else { continue }
            out[Int(n)] = pair[1].value
        }
        return out
    }

    @Test("every EF read through BAC and secure messaging equals the document's; DG3 and DG4 stay closed")
    func readEverything() throws {
        let s = Self.specimen
        let chip = MRTDChip(document: s.document)
        var reader = TestReader(chip)
        try reader.selectApplication()
        let h = s.mrz[1]
        func field(_ a: Int, _ b: Int) -> String { String(Array(h)[a..<b]) }
        try reader.openBAC(number: field(0, 9), birth: field(13, 19), expiry: field(21, 27))
        #expect(chip.access == .bac)
        var read: [MRTDFile: [UInt8]] = [:]
        for file in [MRTDFile.com, .sod] + (1...16).map({ MRTDFile.dataGroup($0) }) where s.document.files[file] != nil {
            if case .dataGroup(let n) = file, n == 3 || n == 4 {
                #expect(throws: TestReader<MRTDChip>.Failure.status(.securityStatusNotSatisfied)) {
                    _ = try reader.read(fileIdentifier: file.fileIdentifier)
                }
                continue
            }
            read[file] = try reader.read(fileIdentifier: file.fileIdentifier, chunk: 1000)
            #expect(read[file] == s.document.files[file], "\(file)")
        }
        #expect(read.count == 8)
        #expect((read[.dataGroup(2)]?.count ?? 0) > 15_000)

        // Passive authentication: the SOD's signature and chain, then every hash.
        guard let sod = read[.sod], let outer = try? BERTLV.decode(sod).first, outer.tag == [0x77] else { Issue.record("no EF.SOD"); return }
        let content = try #require(Self.verifiedContent(outer.value, csca: s.cscaCertificate))
        let hashes = Self.hashes(content)
        #expect(hashes.keys.sorted() == [1, 2, 3, 4, 11, 12, 14, 15])
        for (n, hash) in hashes {
            #expect(Digest.sha256.hash(s.document.files[.dataGroup(n)] ?? []) == hash, "DG\(n)")
        }
    }

    @Test("a security object signed under another CSCA, or altered by one byte, does not verify")
    func signatureIsChecked() throws {
        let s = Self.specimen
        let sod = try #require(s.document.files[.sod])
        let value = try #require(try BERTLV.decode(sod).first?.value)
        #expect(Self.verifiedContent(value, csca: s.cscaCertificate) != nil)
        var other = MRTDSpecimen.Options()
        other.seed = Array("another".utf8)
        other.activeAuthentication = nil
        other.chipAuthentication = nil
        let stranger = try MRTDSpecimen.generate(other)
        #expect(Self.verifiedContent(value, csca: stranger.cscaCertificate) == nil)
        // One byte of a DG hash inside the signed content changed.
        var tampered = value
        let hash = Digest.sha256.hash(s.document.files[.dataGroup(1)] ?? [])
        let at = try #require(Self.find(hash, in: tampered))
        tampered[at] ^= 0x01
        #expect(Self.verifiedContent(tampered, csca: s.cscaCertificate) == nil)
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard needle.count <= haystack.count else { return nil }
        for i in 0...(haystack.count - needle.count) where Array(haystack[i..<(i + needle.count)]) == needle { return i }
        return nil
    }

    @Test("the same seed makes the same document, byte for byte")
    func deterministic() throws {
        var options = MRTDSpecimen.Options()
        options.seed = Self.seed
        options.pace.append(.init(mapping: .genericDH, cipher: .aes128, parameterID: 0))
        let again = try MRTDSpecimen.generate(options)
        #expect(again.document.files == Self.specimen.document.files)
        #expect(again.cscaCertificatePEM == Self.specimen.cscaCertificatePEM)
        #expect(again.cscaCertificatePEM.hasPrefix("-----BEGIN CERTIFICATE-----\n"))
    }

    @Test("DG1's MRZ has valid check digits and DG2 holds a baseline JPEG of about 20 KB")
    func contents() throws {
        let s = Self.specimen
        #expect(s.mrz == ["P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<", "L898902C<3UTO6908061F3406234<<<<<<<<<<<<<<<4"])
        let dg2 = try #require(s.document.files[.dataGroup(2)])
        let soi = try #require(Self.find([0xFF, 0xD8, 0xFF, 0xE0], in: dg2))
        let jpeg = Array(dg2[soi...])
        #expect(jpeg.suffix(2) == [0xFF, 0xD9])
        #expect((17_000...23_000).contains(jpeg.count), "\(jpeg.count) bytes")
        // The ISO 19794-5 record right before: FAC 010, one image, JPEG, 240×320.
        let record = try #require(Self.find(Array("FAC".utf8) + [0], in: dg2))
        #expect(Array(dg2[(record + 4)..<(record + 8)]) == Array("010".utf8) + [0])
        #expect(Array(dg2[(soi - 12)..<(soi - 6)]) == [0x01, 0x00, 0x00, 0xF0, 0x01, 0x40])
    }
}

@Suite("eMRTD document directories")
struct MRTDDocumentDirectoryTests {
    @Test("a specimen written to a directory loads back whole, its PEM keys included, and serves the same chip")
    func roundTrip() throws {
        let s = MRTDSpecimenTests.specimen
        let directory = "/tmp/apdu-mrtd-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try s.document.write(to: directory)
        let loaded = try MRTDDocument(directory: directory)
        #expect(loaded.files == s.document.files)
        #expect(loaded.can == "123456")
        #expect(loaded.cscaCertificate == s.cscaCertificate)
        #expect(loaded.effectiveAccessKey == MRZAccessKey(documentNumber: "L898902C<", dateOfBirth: "690806", dateOfExpiry: "340623"))
        #expect(loaded.activeAuthenticationKey?.description == "RSA-1024 private key")
        #expect(loaded.chipAuthenticationKey?.description == "EC private key on brainpoolP256r1")
        // The loaded keys are the same keys: AA verifies against DG15, CA against DG14.
        var reader = TestReader(MRTDChip(document: loaded))
        try reader.selectApplication()
        try reader.openBAC(number: "L898902C<", birth: "690806", expiry: "340623")
        let challenge = secureRandomBytes(8)
        let signature = try reader.send(CommandAPDU(cla: 0, ins: 0x88, p1: 0, p2: 0, data: challenge, ne: 256))
        let dg15 = try #require(try BERTLV.decode(loaded.files[.dataGroup(15)] ?? []).first)
        #expect(EVPKey(subjectPublicKeyInfo: dg15.value)?.verifiesISO9796(signature.data, challenge: challenge) == true)
    }

    @Test("directories that cannot be served say why in one line")
    func refusals() throws {
        #expect(throws: MRTDDocumentError.self) { try MRTDDocument(directory: "/nonexistent/apdu-mrtd") }
        let directory = "/tmp/apdu-mrtd-bad-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        #expect(throws: MRTDDocumentError(.missingFile, "'\(directory)' holds none of EF.COM.bin, EF.SOD.bin, DG1.bin…")) { try MRTDDocument(directory: directory) }
        FileManager.default.createFile(atPath: directory + "/DG1.bin", contents: Data([0x75, 0x00]))
        #expect(throws: MRTDDocumentError.self) { try MRTDDocument(directory: directory) }
        FileManager.default.createFile(atPath: directory + "/DG1.bin", contents: Data(MRTDSpecimenTests.specimen.document.files[.dataGroup(1)] ?? []))
        FileManager.default.createFile(atPath: directory + "/" + MRTDDocument.DirectoryName.activeAuthenticationKey, contents: Data("not a key".utf8))
        #expect(throws: MRTDDocumentError.self) { try MRTDDocument(directory: directory) }
    }
}
