import ISO7816
import NFCTags
import Testing
import TestSupport
import VirtualCard

/// nfcpy's Type 1 tests (`tests/test_tag_tt1.py`, `tests/test_tag_tt1_broadcom.py`, nfcpy
/// 8a195262), re-expressed: the same memory images behind each of our reader forms must give the
/// results nfcpy asserts (messages, capacities, None). The images are rebuilt here from their
/// description (the files are EUPL; the facts, not the code, are taken). nfcpy writes length 0,
/// data, length; we write the magic number 00, data, E1: the final memory is compared, not the order.
@Suite("Type 1 tags: nfcpy's images")
struct Type1NfcpyImageTests {
    static func reader(_ chip: Type1TagModel.Chip, _ image: [UInt8], _ form: Type1Reader.Form) -> Type1Reader {
        Type1Reader(form, tag: Type1TagModel(chip: chip, uid: Array(image[0..<7]), memory: image))
    }

    static let forms = Type1Reader.Form.allCases

    @Test("static memory (A1, and Topaz 96 E): the 42-byte URI, capacity 90, read/write, one RALL after RID", arguments: forms)
    func staticRead(form: Type1Reader.Form) throws {
        for chip in [Type1TagModel.Chip.genericStatic, .topaz96] {
            let r = Self.reader(chip, NfcpyType1Images.staticImage(version: chip == .topaz96 ? 0x10 : 0x1F), form)
            let tag = try Type1Harness.detect(r)
            #expect(try tag.readNDEF() == NfcpyType1Images.message42)
            #expect(tag.capacity == 90 && tag.status == .readWrite)
            #expect(r.tag.commands == [0x78, 0x00], "\(r.tag.commands)")
        }
    }

    @Test("NULL TLV (A6, capacity 89), unknown TLV (A7, 87) before the NDEF TLV; terminator first (A8), NULLs to the end (A9), a memory control TLV hiding it (A10): no NDEF", arguments: forms)
    func staticTLVs(form: Type1Reader.Form) throws {
        let s = NfcpyType1Images.staticImage()
        let a6 = Array(s[0..<12]) + [0x00] + Array(s[12..<119])
        let a7 = Array(s[0..<12]) + [0xFD, 0x01, 0x00] + Array(s[12..<117])
        for (image, capacity) in [(a6, 89), (a7, 87)] {
            let tag = try Type1Harness.detect(Self.reader(.genericStatic, image, form))
            #expect(try tag.readNDEF() == NfcpyType1Images.message42)
            #expect(tag.capacity == capacity)
        }
        let a8 = Array(s[0..<12]) + [0xFE] + Array(s[12..<119])
        let a9 = Array(s[0..<12]) + [UInt8](repeating: 0, count: 108)
        var a10 = Array(s[0..<8]) + [0xE1, 0x10, 0x0E, 0x00, 0x02, 0x03, 0x21, 0x57, 0x03] + Array(s[12..<111])
        a10 += [UInt8](repeating: 0, count: 120 - a10.count)
        for image in [a8, a9, a10] {
            #expect(throws: TagError.self) { try Type1Harness.detect(Self.reader(.genericStatic, image, form)) }
        }
    }

    @Test("unformatted (A3), unknown version (A4), HR0 00 (A2): refused with a one-line reason", arguments: forms)
    func staticRefusals(form: Type1Reader.Form) throws {
        let s = NfcpyType1Images.staticImage()
        let a3 = Array(s[0..<8]) + [UInt8](repeating: 0, count: 112)
        let a4 = Array(s[0..<9]) + [UInt8](repeating: 0, count: 111)
        for (image, kind) in [(a3, TagError.Kind.notNDEF), (a4, .unsupportedVersion)] {
            do { _ = try Type1Harness.detect(Self.reader(.genericStatic, image, form)); Issue.record("accepted") } catch let e as TagError {
                #expect(e.kind == kind, "\(e)")
            }
        }
        let proprietary = Type1TagModel.Chip(name: "HR0 00", hr0: 0x00, hr1: 0x00, memorySize: 120)
        do { _ = try Type1Harness.detect(Self.reader(proprietary, s, form)); Issue.record("accepted") } catch let e as TagError {
            #expect(e.kind == .notNDEF && e.message.contains("HR0 is 00"), "\(e)")
        }
    }

    @Test("write on static memory (A11): the new message, its terminator, the old tail left after it", arguments: forms)
    func staticWrite(form: Type1Reader.Form) throws {
        let r = Self.reader(.genericStatic, NfcpyType1Images.staticImage(), form)
        try Type1Harness.detect(r).writeNDEF([0xD0, 0x00, 0x00])
        let m = r.tag.contents
        #expect(Array(m[0x08...0x11]) == [0xE1, 0x1F, 0x0E, 0x00, 0x03, 0x03, 0xD0, 0x00, 0x00, 0xFE])
        #expect(Array(m[0x12...0x37]) == Array(NfcpyType1Images.staticImage()[0x12...0x37]))
        #expect(try Type1Harness.detect(r).readNDEF() == [0xD0, 0x00, 0x00])
    }

    @Test("a 24-byte tag (A12): capacity 10; a message filling it is written without a terminator", arguments: forms)
    func smallTag(form: Type1Reader.Form) throws {
        var image = [UInt8](repeating: 0, count: 120)
        let head: [UInt8] = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x00, 0xE1, 0x10, 0x02, 0x00, 0x03, 0x09, 0xD1, 0x01, 0x05, 0x54, 0x02, 0x65, 0x6E, 0x61, 0x62, 0xFE]
        image.replaceSubrange(0..<24, with: head)
        let r = Self.reader(.genericStatic, image, form)
        let tag = try Type1Harness.detect(r)
        #expect(try tag.readNDEF() == Array(head[14..<23]))
        #expect(tag.capacity == 10)
        try tag.writeNDEF([0xD1, 0x01, 0x06, 0x54, 0x02, 0x65, 0x6E, 0x61, 0x62, 0x63])
        #expect(Array(r.tag.contents[0..<24]) == Array(head[0..<12]) + [0x03, 0x0A, 0xD1, 0x01, 0x06, 0x54, 0x02, 0x65, 0x6E, 0x61, 0x62, 0x63])
    }

    @Test("dynamic memory (B1, and Topaz 512 F): 461 and 254 bytes across the skipped 68-7F, capacity 462; the PN532 cannot reach past 7F",
          arguments: forms)
    func dynamicRead(form: Type1Reader.Form) throws {
        for (chip, image, message) in [(Type1TagModel.Chip.genericDynamic, NfcpyType1Images.dynImage, NfcpyType1Images.message461), (.topaz512, NfcpyType1Images.t512Image, NfcpyType1Images.message254)] {
            let r = Self.reader(chip, image, form)
            if form == .acs {
                do { _ = try Type1Harness.detect(r).readNDEF(); Issue.record("read past 7F through the PN532") } catch let e as TagError {
                    #expect(e.kind == .beyondReach, "\(e)")
                }
                continue
            }
            let tag = try Type1Harness.detect(r)
            #expect(try tag.readNDEF() == message)
            #expect(tag.capacity == 462)
            // RID, then one RSEG per segment the message reaches.
            #expect(r.tag.commands == [0x78] + Array(repeating: 0x10, count: message.count > 300 ? 4 : 3), "\(r.tag.commands)")
        }
    }

    @Test("NULL TLVs over the whole dynamic memory (B2): no NDEF", arguments: [Type1Reader.Form.scm, .binary])
    func dynamicNulls(form: Type1Reader.Form) throws {
        let image = NfcpyType1Images.dynamicImage(block0: [0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77], cc: [0xE1, 0x1F, 0x3F, 0x00], tlvBytes: [], reserved68: [UInt8](repeating: 0, count: 24))
        do { _ = try Type1Harness.detect(Self.reader(.genericDynamic, image, form)); Issue.record("found NDEF") } catch let e as TagError {
            #expect(e.kind == .notNDEF)
        }
    }

    @Test("write 461 bytes to dynamic memory (B3): nfcpy's final image, blocks D-F untouched", arguments: [Type1Reader.Form.scm, .binary])
    func dynamicWrite(form: Type1Reader.Form) throws {
        let empty = NfcpyType1Images.dynamicImage(block0: [0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77], cc: [0xE1, 0x1F, 0x3F, 0x00],
                                      tlvBytes: NfcpyType1Images.controlTLVs + [0x03, 0x00], reserved68: [UInt8](repeating: 0, count: 24))
        let r = Self.reader(.genericDynamic, empty, form)
        let tag = try Type1Harness.detect(r)
        #expect(tag.capacity == 462)
        #expect(try tag.readNDEF() == [])
        try tag.writeNDEF(NfcpyType1Images.message461)
        var expected = NfcpyType1Images.dynImage
        expected.replaceSubrange(0x68..<0x80, with: [UInt8](repeating: 0, count: 24))
        #expect(r.tag.contents == expected)
    }

    @Test("a message ending at 67 gets its terminator at 80, after the skipped area (B4)", arguments: [Type1Reader.Form.scm, .binary])
    func terminatorAfterSkip(form: Type1Reader.Form) throws {
        let r = Self.reader(.genericDynamic, NfcpyType1Images.dynImage, form)
        let message: [UInt8] = [0xD5, 0x00, 0x4D] + [UInt8](repeating: 0, count: 77)
        try Type1Harness.detect(r).writeNDEF(message)
        let m = r.tag.contents
        #expect(Array(m[0x16...0x17]) == [0x03, 0x50] && Array(m[0x18..<0x68]) == message && m[0x80] == 0xFE)
        #expect(Array(m[0x81...]) == Array(NfcpyType1Images.dynImage[0x81...]) && Array(m[0x68..<0x80]) == Array(NfcpyType1Images.dynImage[0x68..<0x80]))
        #expect(try Type1Harness.detect(r).readNDEF() == message)
    }

    @Test("protect (E5): CC 0F, LOCK0/LOCK1 FF by WRITE-NE on a Topaz 96; on a Topaz 512 the lock bytes 7A-7F too (not nfcpy's 78-79, OTP bytes)")
    func protect() throws {
        let r = Self.reader(.topaz96, NfcpyType1Images.staticImage(version: 0x10), .scm)
        let report = try Type1Harness.detect(r).makeReadOnly()
        #expect(report.refusesWrites && report.state.isFullyLocked)
        #expect(Array(r.tag.contents[0x70...0x71]) == [0xFF, 0xFF] && r.tag.contents[0x0B] == 0x0F)
        #expect(r.tag.commands.filter { $0 == 0x1A }.count == 3)
        let big = Self.reader(.topaz512, NfcpyType1Images.t512Image, .scm)
        let report512 = try Type1Harness.detect(big).makeReadOnly()
        #expect(report512.refusesWrites && report512.state.isFullyLocked)
        #expect(Array(big.tag.contents[0x78...0x7F]) == [0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        #expect(try Type1Harness.detect(big).readNDEF() == NfcpyType1Images.message254)
        #expect(try Type1Harness.detect(big).status == .readOnly)
    }
}
