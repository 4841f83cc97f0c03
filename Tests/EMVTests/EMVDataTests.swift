import ISO7816
import Testing
@testable import EMV

@Suite("EMV data: the dictionary, DOLs, the AFL")
struct EMVDataTests {
    @Test("tags the kernels use differently are named by kernel; private tags are marked")
    func dictionary() {
        #expect(EMVTags.name([0x9F, 0x6B], kernel: .mastercard) == "Track 2 Data")
        #expect(EMVTags.name([0x9F, 0x6B], kernel: .visa) == "Card CVM Limit")
        #expect(EMVTags.info([0x9F, 0x6B], kernel: .mastercard)?.privacy == .track)
        #expect(EMVTags.info([0x9F, 0x6B])?.privacy == .track, "without a kernel, the strictest reading")
        #expect(EMVTags.name([0x9F, 0x6E], kernel: .amex) == "Enhanced Contactless Reader Capabilities")
        #expect(EMVTags.name([0x9F, 0x66]).contains("visa: Terminal Transaction Qualifiers"))
        #expect(EMVTags.info([0x5A])?.privacy == .pan && EMVTags.info([0x57])?.privacy == .track && EMVTags.info([0x5F, 0x20])?.privacy == .name)
        #expect(EMVTags.info([0x9F, 0x46])?.privacy == .track, "the ICC certificate holds the PAN")
        for tag: [UInt8] in [[0x56], [0x57], [0x5A], [0x5F, 0x20], [0x9F, 0x1F], [0x9F, 0x46], [0x9F, 0x48], [0x9F, 0x6B]] {
            #expect(EMVTags.privateTags.contains(tag), "\(tag.hexString) not private")
        }
        // One table redacts traces, logs and recordings (ISO7816's): every tag the dictionary
        // calls private is in it, so a PAN inside the ICC certificate never leaves in a log.
        for tag in EMVTags.privateTags {
            #expect(Redaction.cardholderTags[tag] != nil, "\(tag.hexString) is private but the redaction table does not mask it")
        }
        #expect(EMVTags.name([0xDF, 0x7F]) == "unknown tag DF7F")
        #expect(EMVKernel(kernelIdentifier: 0x03) == .visa && EMVKernel(rid: [0xA0, 0x00, 0x00, 0x00, 0x25]) == .amex)
    }

    @Test("a Visa PDOL is filled exactly as long as each entry says: numeric values padded left, binary right, unknown tags zeros")
    func dol() throws {
        let pdol = try DataObjectList(parsing: try Hex.decode("9F66049F02069F03069F1A0295055F2A029A039C019F3704"))
        #expect(pdol.entries.count == 9 && pdol.dataLength == 33)
        let data = pdol.build([[0x9F, 0x66]: [0x36, 0x00, 0x40, 0x00], [0x9F, 0x02]: [0x00], [0x9F, 0x1A]: [0x02, 0x50], [0x5F, 0x2A]: [0x09, 0x78],
                               [0x9A]: [0x26, 0x11, 0x27], [0x9F, 0x37]: [0xDE, 0xAD, 0xBE, 0xEF, 0x99]])
        #expect(data.count == 33)
        #expect(data.hexString == "36004000" + "000000000000" + "000000000000" + "0250" + "0000000000" + "0978" + "261127" + "00" + "DEADBEEF")
        for bad in ["9F", "9F66", "9F8080800104"] {
            #expect(throws: EMVFormatError.self) { try DataObjectList(parsing: try Hex.decode(bad)) }
        }
        let log = try DataObjectList(parsing: try Hex.decode("9A039F21035F2A029F02069F4E149C019F3602"))
        let entry = try log.split(try Hex.decode("2611270930120978000000001234" + String(repeating: "20", count: 20) + "00" + "0017"))
        #expect(entry.count == 7 && entry[3].value.hexString == "000000001234" && entry[6].value == [0x00, 0x17])
        #expect(throws: EMVFormatError.self) { try log.split([0x26]) }
    }

    @Test("the AFL: records, the signed ones, records that do not start at 1; malformed entries refused")
    func afl() throws {
        let afl = try ApplicationFileLocator(parsing: try Hex.decode("08010100" + "10020502" + "58010201"))
        #expect(afl.entries.map(\.sfi) == [1, 2, 11])
        #expect(afl.records.map { "\($0.sfi).\($0.record)\($0.signed ? "*" : "")" } == ["1.1", "2.2*", "2.3*", "2.4", "2.5", "11.1*", "11.2"])
        for bad in ["", "080101", "00010100", "09010100", "08000100", "08030200", "08010102", "F8010100"] {
            #expect(throws: EMVFormatError.self, "\(bad)") { try ApplicationFileLocator(parsing: bad.isEmpty ? [] : try Hex.decode(bad)) }
        }
    }
}

@Suite("EMV: the zero-copy TLV decoder")
struct EMVTLVTests {
    @Test("every object BERTLV finds, with the same tags and values, nested ones included; padding skipped; past-the-end refused")
    func agreesWithBERTLV() throws {
        let fci = try Hex.decode("6F3E8407A0000000031010A533500B56495341204352454449548701019F38189F66049F02069F03069F1A0295055F2A029A039C019F3704BF0C05DF60020B03")
        let objects = try EMVTLV.objects(in: fci)
        func flatten(_ list: [TLV]) -> [TLV] { list.flatMap { [$0] + flatten($0.children ?? []) } }
        let reference = flatten(try BERTLV.decode(fci))
        #expect(objects.map(\.tagBytes) == reference.map(\.tag))
        #expect(objects.map { Array(fci[$0.value]) } == reference.map(\.value))
        #expect(objects.first { $0.tag == 0x9F38 }?.depth == 2 && objects.first { $0.tag == 0xDF60 }?.depth == 3)
        #expect(try EMVTLV.objects(in: [0x00, 0x5A, 0x01, 0x47, 0xFF]).map(\.tag) == [0x5A])
        // A constructed object whose contents do not parse keeps its value, with no children, as BERTLV keeps it.
        let odd = try EMVTLV.objects(in: [0x70, 0x03, 0x5A, 0x05, 0x01, 0x5F, 0x24, 0x01, 0x49])
        #expect(odd.map(\.tag) == [0x70, 0x5F24] && odd[0].value == 2..<5)
        #expect(try BERTLV.decode([0x70, 0x03, 0x5A, 0x05, 0x01])[0].children == nil)
        // A 4-byte tag (what the fuzzer found trapping): its bytes as written.
        #expect(try EMVTLV.objects(in: [0x9F, 0xCA, 0x9F, 0x01, 0x01, 0x77]).map(\.tagBytes) == [[0x9F, 0xCA, 0x9F, 0x01]])
        for bad in ["5A05 0102", "9F", "9F36", "5A8405000000", "5A80", "9F8181818101"] {
            #expect(throws: EMVFormatError.self, "\(bad)") { try EMVTLV.objects(in: try Hex.decode(bad.filter { $0 != " " })) }
        }
    }
}
