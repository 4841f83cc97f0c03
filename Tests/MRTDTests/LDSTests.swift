import CardCrypto
import ISO7816
import MRTD
import Testing

@Suite("LDS decoding (ICAO 9303 Part 10)")
struct LDSTests {
    // BSI TR-03105-5 reference data set (worldfnd/icao-9303 tests/dataset/EF_COM.bin, Datagroup1.bin).
    static let bsiCOM = bytes("60175F0104303130375F36063034303030305C05617563766E")
    static let bsiDG1 = bytes("615B5F1F58503C443C3C4D55535445524D414E4E3C3C4552494B413C3C3C3C3C3C3C3C3C3C3C3C3C3C3C3C3C3C3C3C3C3C433131543030324A4D34443C3C3936303831323246323331303331343C3C3C3C3C3C3C3C3C3C3C3C3C3C3C34")

    @Test("EF.COM of the BSI reference set: LDS 1.7, Unicode 4.0.0, DG1, 2, 3, 4, 14")
    func efCOM() throws {
        let com = try EFCOM(decoding: Self.bsiCOM)
        #expect(com.ldsVersion == "1.7")
        #expect(com.unicodeVersion == "4.0.0")
        #expect(com.dataGroups == [1, 2, 3, 4, 14])
        #expect(com.unknownTags.isEmpty)
    }

    @Test("DG1 of the BSI reference set decodes to the MRZ")
    func dg1() throws {
        guard case let .dg1(dg1) = try LDSDataGroup.decode(dataGroup: 1, bytes: Self.bsiDG1) else {
            Issue.record("DG1 did not decode as DG1")
            return
        }
        #expect(dg1.mrz.format == .td3)
        #expect(dg1.mrz.surname == "MUSTERMANN")
        #expect(dg1.mrz.documentNumber == "C11T002JM")
        #expect(dg1.mrz.checkDigitFailures.isEmpty)
        #expect(!"\(dg1)".contains("C11T002JM"))
    }

    @Test("DG1 with a wrong check digit still decodes, the failure recorded")
    func dg1CheckDigitReported() throws {
        var broken = Self.bsiDG1
        broken[broken.count - 1] = UInt8(ascii: "5")  // the composite check digit
        let dg1 = try DataGroup1(decoding: broken)
        #expect(dg1.mrz.checkDigitFailures == [MRZError(.checkDigit, field: .composite, "the composite check digit is 4, the MRZ says 5")])
    }

    /// DG2 around one biometric data block: 75 { 7F61 { 02 01, 7F60 { A1 header, block } } }.
    static func dg2(header: [UInt8], block: [UInt8]) -> [UInt8] {
        let template = TestDER.tlv([0x7F, 0x60], header + block)
        return TestDER.tlv(0x75, TestDER.tlv([0x7F, 0x61], [0x02, 0x01, 0x01] + template))
    }

    @Test("DG2 with gmrtd's ISO/IEC 19794-5 record: the JPEG found by its bytes though the record says JPEG 2000")
    func dg2ISO19794() throws {
        let header = TestDER.tlv(0xA1, bytes("8002010181010282010087020101880200 08"))
        let dg2 = try DataGroup2(decoding: Self.dg2(header: header, block: TestDER.tlv([0x5F, 0x2E], bytes(ISO19794Sample.record))))
        #expect(dg2.faces.count == 1)
        let face = try #require(dg2.faces.first)
        #expect(face.encoding == .iso19794_5)
        #expect(face.image.format == .jpeg)
        #expect(face.image.format.fileExtension == "jpg")
        #expect(face.declaredFormat == "JPEG 2000")
        #expect(face.width == 148 && face.height == 70)
        #expect(face.imageType == "token frontal")
        #expect(face.gender == "unspecified")
        // The image is gmrtd's ISO19794_Test1_Face.jpg, byte for byte (5099 bytes).
        #expect(face.image.bytes.count == 5099)
        #expect(Digest.sha256.hash(face.image.bytes).hexString == "C3D7FF842113242BDD0FDEC7DAF9BD8CDDDA4C64116DA27A8CEDC08617FEAECF")
        #expect(face.header.formatOwner == 0x0101 && face.header.formatType == 0x0008)
        #expect(face.header.biometricType == 2)
    }

    // gmrtd document/test_data/ICAO_39794_5_AP_DG2_AllFields.dat (ICAO's 39794-5 application
    // profile sample), with its 15000-byte JPEG 2000 image cut to a short stand-in and every
    // length around it recomputed; the rest is the sample's own bytes.
    static let sample39794Header = bytes("A12B8002010181010282010083072124010511234585082124010521290105860401030001870201018802002A")
    static let sample39794Version = bytes("A007800103810207E3")
    static let sample39794Information = bytes("""
        A181D2A003800103A105A103800100A2248001008101008201008301008401008501008601008701008801008901008A01008B0100A305A10380010184020BB885012B860137A7088002023C810202DBA8108002012C81020096820200B4830201F4A905A103800102AA6A801F5265666572656E636520436F6C6F757220536368656D61204578616D706C65A147304580235265666572656E636520436F6C6F757220446566696E6974696F6E204578616D706C65811E5265666572656E636520436F6C6F75722056616C7565204578616D706C65A212A009800100810100820100A105A103800102
        """)
    static let sample39794Tail = bytes("""
        A217800207E881010182011483010D8401178501098602038CA30F300DA006800101810101A103800163A48189A005A103800100A10F300DA006800101810101A103800163A2223020A0068001018101018116457874656E64656444617461426C6F636B2064617461A305A103800100A405A103800100850105A605A103800102870D50414420506172616D65746572A80C040A4368616C6C656E676531A916800207E881010182011683010F840110850111860112850109860100A712A006800101810101A1083006800102810102A86AA005A103800103A105A103800103A205A103800105830206FAA4218001008101008201008301008401008501008601008701008801008901008A0100A5128001FF810100820100830100840100850100A618A006800102810101A106800103810101A206800101810102A9193017A009A007A005A10380010AA10AA008A00680015A810116
        """)

    static func dg2ISO39794(image: [UInt8]) -> [UInt8] {
        let twoD = TestDER.context(0, TestDER.contextPrimitive(0, image) + sample39794Information)
        let representation = TestDER.sequence([0x80, 0x01, 0x00], TestDER.context(1, TestDER.context(0, twoD)), sample39794Tail)
        let faceBlock = TestDER.tlv(0x65, sample39794Version + TestDER.context(1, representation))
        return dg2(header: sample39794Header, block: TestDER.tlv([0x7F, 0x2E], TestDER.context(1, faceBlock)))
    }

    @Test("DG2 in ISO/IEC 39794-5 (the ICAO profile sample): a JP2 image, its declared format, size, gender, eye and hair")
    func dg2ISO39794() throws {
        let jp2 = bytes("0000000C6A5020200D0A870A000000146674797069703220000000006A703220") + [UInt8](repeating: 0x5A, count: 40)
        let dg2 = try DataGroup2(decoding: Self.dg2ISO39794(image: jp2))
        let face = try #require(dg2.faces.first)
        #expect(face.encoding == .iso39794_5)
        #expect(face.image.bytes == jp2)
        #expect(face.image.format == .jpeg2000)
        #expect(face.image.format.fileExtension == "jp2")
        #expect(face.declaredFormat == "JPEG 2000")
        #expect(face.width == 572 && face.height == 731)
        #expect(face.gender == "female")
        #expect(face.eyeColour == "blue")
        #expect(face.hairColour == "brown")
        #expect(face.header.creationDateTime == "21240105112345")  // as the sample has it
    }

    @Test("image formats by magic: JPEG, JP2 box, bare J2K codestream, unknown")
    func imageFormats() {
        #expect(ImageFormat(detecting: [0xFF, 0xD8, 0xFF, 0xE0]) == .jpeg)
        #expect(ImageFormat(detecting: bytes("0000000C6A502020")) == .jpeg2000)
        #expect(ImageFormat(detecting: bytes("FF4FFF51002F")) == .jpeg2000Codestream)
        #expect(ImageFormat(detecting: bytes("FF4FFF51")).fileExtension == "j2k")
        #expect(ImageFormat(detecting: [0xFF]) == .unknown)
        #expect(ImageFormat(detecting: []) == .unknown)
    }

    @Test("DG7: the displayed signature, a bare J2K codestream")
    func dg7() throws {
        let image = bytes("FF4FFF51002F0000") + [UInt8](repeating: 1, count: 20)
        let dg7 = TestDER.tlv(0x67, [0x02, 0x01, 0x01] + TestDER.tlv([0x5F, 0x43], image))
        guard case let .displayedImages(images) = try LDSDataGroup.decode(dataGroup: 7, bytes: dg7) else {
            Issue.record("DG7 did not decode as displayed images")
            return
        }
        #expect(images.dataGroup == 7)
        #expect(images.images == [DocumentImage(bytes: image)])
        #expect(images.images.first?.format == .jpeg2000Codestream)
    }

    @Test("DG11: the worked example of Part 10 Appendix A.5 (its lengths corrected, as gmrtd notes)")
    func dg11() throws {
        let dg11 = try DataGroup11(decoding: bytes("6B605C0A5F0E5F115F425F125F135F0E0D534D4954483C3C4A4F484E3C4A5F110A414E59544F574E3C4D4E5F4217313233204D41504C452052443C414E59544F574E3C4D4E5F120B31363132353535313231325F130C54524156454C3C4147454E54"))
        #expect(dg11.fullName?.surname == "SMITH")
        #expect(dg11.fullName?.givenNames == "JOHN J")
        #expect(dg11.placeOfBirth == ["ANYTOWN", "MN"])
        #expect(dg11.address == ["123 MAPLE RD", "ANYTOWN", "MN"])
        #expect(dg11.telephone == "16125551212")
        #expect(dg11.profession == "TRAVEL AGENT")
        #expect(dg11.unknownTags.isEmpty)
    }

    @Test("DG11: other names in A0, full date of birth as ASCII and as BCD, custody, proof of citizenship")
    func dg11Fields() throws {
        let otherNames = TestDER.tlv(0xA0, [0x02, 0x01, 0x02] + TestDER.tlv([0x5F, 0x0F], Array("SMITH<<JOHN".utf8)) + TestDER.tlv([0x5F, 0x0F], Array("SMYTHE<<JOHN".utf8)))
        let photo = bytes("FFD8FFE0") + [UInt8](repeating: 0, count: 8)
        let body = otherNames + TestDER.tlv([0x5F, 0x2B], Array("19740812".utf8)) + TestDER.tlv([0x5F, 0x18], Array("NONE".utf8))
            + TestDER.tlv([0x5F, 0x16], photo) + TestDER.tlv([0x5F, 0x10], Array("123456789".utf8)) + TestDER.tlv([0x5F, 0x50], [1])
        let dg11 = try DataGroup11(decoding: TestDER.tlv(0x6B, body))
        #expect(dg11.otherNames.map(\.surname) == ["SMITH", "SMYTHE"])
        #expect(dg11.fullDateOfBirth?.iso8601 == "1974-08-12")
        #expect(dg11.custodyInformation == "NONE")
        #expect(dg11.proofOfCitizenship?.format == .jpeg)
        #expect(dg11.personalNumber == "123456789")
        #expect(dg11.unknownTags == ["5F50"])
        let bcd = try DataGroup11(decoding: TestDER.tlv(0x6B, TestDER.tlv([0x5F, 0x2B], [0x19, 0x74, 0x08, 0x12])))
        #expect(bcd.fullDateOfBirth?.iso8601 == "1974-08-12")
    }

    @Test("DG12: issuing authority and date of issue (gmrtd's French sample), personalization time and system (its NZ sample)")
    func dg12() throws {
        let france = try DataGroup12(decoding: bytes("6C3E5C045F195F265F192A4A414B41525441202D20414D42415353414445204445204652414E434520454E20494E444F4E455349455F26083230313730393035"))
        #expect(france.issuingAuthority == "JAKARTA - AMBASSADE DE FRANCE EN INDONESIE")
        #expect(france.dateOfIssue?.iso8601 == "2017-09-05")
        let nz = try DataGroup12(decoding: bytes("6C205C045F555F565F550E32303136313131353031333631325F56064E2D34393632"))
        #expect(nz.personalizationTime == "20161115013612")
        #expect(nz.personalizationSystemSerialNumber == "N-4962")
        // Supplement to Doc 9303 (Release 11): another person named in the document.
        let other = try DataGroup12(decoding: TestDER.tlv(0x6C, TestDER.tlv(0xA0, [0x02, 0x01, 0x01] + TestDER.tlv([0x5F, 0x1A], bytes("534D4954483C3C4252454E44413C50")))))
        #expect(other.otherPersons.map(\.givenNames) == ["BRENDA P"])
    }

    @Test("DG3 and DG4 are present but protected; DG13-16 list their tags")
    func otherGroups() throws {
        #expect(try LDSDataGroup.decode(dataGroup: 3, bytes: [0x63, 0x00]) == .protected(dataGroup: 3))
        let dg16 = TestDER.tlv(0x70, [0x02, 0x01, 0x01] + TestDER.tlv(0xA1, TestDER.tlv([0x5F, 0x50], [1, 2, 3])))
        guard case let .other(group) = try LDSDataGroup.decode(dataGroup: 16, bytes: dg16) else {
            Issue.record("DG16 did not decode as another group")
            return
        }
        #expect(group.tag == "70")
        #expect(group.elements == [.init(tag: "02", length: 1), .init(tag: "A1", length: 6)])
        #expect(LDSDataGroup.number(forTag: 0x75) == 2)
        #expect(LDSDataGroup.tag(forDataGroup: 15) == 0x6F)
        #expect(LDSDataGroup.fileIdentifier(forDataGroup: 14) == 0x010E)
        #expect(LDSDataGroup.tag(forDataGroup: 17) == nil)
    }

    @Test("hostile files: truncated, lying lengths, huge lengths, deep nesting, wrong outer tags give typed errors")
    func hostile() {
        let cases: [(Int, [UInt8], LDSError.Kind)] = [
            (1, [], .structure),
            (1, [0x61], .tlv),
            (1, [0x61, 0x84, 0xFF, 0xFF, 0xFF, 0xFF, 0x00], .tlv),
            (1, [0x61, 0x05, 0x5F, 0x1F, 0x10, 0x41], .tlv),
            (1, [0x60, 0x00], .structure),
            (1, [0x61, 0x00], .structure),
            (2, [0x75, 0x03, 0x7F, 0x61, 0x00], .structure),
            (2, Self.dg2(header: [], block: TestDER.tlv([0x5F, 0x2E], bytes("464143003031300000001419FFFF"))), .structure),
            (2, Self.dg2(header: [], block: TestDER.tlv([0x5F, 0x2E], bytes("4641430030313000000014190001FFFFFFFF"))), .structure),
            (2, Self.dg2(header: [], block: TestDER.tlv([0x7F, 0x2E], [0xA1, 0x80, 0x00, 0x00])), .tlv),
            (11, [0x6B, 0x04, 0xA0, 0x02, 0x5F, 0x0F], .tlv),
            (12, [0x6C, 0x80, 0x00, 0x00], .tlv),
        ]
        for (number, input, kind) in cases {
            #expect(throws: LDSError.self) { try LDSDataGroup.decode(dataGroup: number, bytes: input) }
            do {
                _ = try LDSDataGroup.decode(dataGroup: number, bytes: input)
            } catch {
                #expect(error.kind == kind, "DG\(number) \(input.hexString): \(error)")
            }
        }
        #expect(throws: LDSError.self) { try EFCOM(decoding: [0x60, 0x03, 0x5F, 0x01, 0x00]) }
        // 2000 nested constructed objects: decoded without recursion past the limit.
        var deep: [UInt8] = [0x04, 0x00]
        for _ in 0..<2000 { deep = TestDER.tlv(0xA1, deep) }
        _ = try? LDSDataGroup.decode(dataGroup: 2, bytes: TestDER.tlv(0x75, deep))
        _ = try? LDSDataGroup.decode(dataGroup: 16, bytes: TestDER.tlv(0x70, deep))
        // Every prefix of a real DG2 either decodes or throws.
        let whole = Self.dg2ISO39794(image: [0xFF, 0xD8, 0xFF, 0x00])
        for n in 0..<whole.count {
            LDSDataGroup.fuzz([2 - 1] + Array(whole.prefix(n)))
        }
    }
}
