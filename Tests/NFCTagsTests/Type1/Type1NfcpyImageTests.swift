import ISO7816
import NFCTags
import Testing
import VirtualCard

/// nfcpy's Type 1 tests (`tests/test_tag_tt1.py`, `tests/test_tag_tt1_broadcom.py`, nfcpy
/// 8a195262), re-expressed: the same memory images behind each of our reader forms must give the
/// results nfcpy asserts (messages, capacities, None). The images are rebuilt here from their
/// description (the files are EUPL; the facts, not the code, are taken). nfcpy writes length 0,
/// data, length; we write the magic number 00, data, E1: the final memory is compared, not the order.
@Suite("Type 1 tags: nfcpy's images")
struct Type1NfcpyImageTests {
    static let message42: [UInt8] = [0xD1, 0x01, 0x26, 0x55, 0x01] + Array("abcdefghijklmnopqrstuvwxyzabcdefg.com".utf8)
    static let alphabet = Array("abcdefghijklmnopqrstuvwxyz".utf8)
    static let message461: [UInt8] = [0xC1, 0x01, 0x00, 0x00, 0x01, 0xC6, 0x55, 0x01] + Array(repeating: alphabet, count: 17).flatMap { $0 } + Array("abcdefg.com".utf8)
    static let message254: [UInt8] = [0xD1, 0x01, 0xFA, 0x55, 0x01] + Array(repeating: alphabet, count: 9).flatMap { $0 } + Array("abcdefghijk.com".utf8)

    /// nfcpy's `static` image (120 bytes): CC E1 1F 0E 00, the 42-byte URI at 0C, FE after it,
    /// block D 55 55 AA AA, LOCK0/LOCK1 01 60.
    static func staticImage(version: UInt8 = 0x1F) -> [UInt8] {
        var m = [UInt8](repeating: 0, count: 120)
        let head: [UInt8] = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x00, 0xE1, version, 0x0E, 0x00, 0x03, 0x2A] + message42 + [0xFE]
        m.replaceSubrange(0..<head.count, with: head)
        m.replaceSubrange(0x68..<0x6C, with: [0x55, 0x55, 0xAA, 0xAA])
        m[0x70] = 0x01; m[0x71] = 0x60
        return m
    }

    /// A dynamic image: block 0, CC, then `tlvBytes` from 0C laid over the data area with 68-7F
    /// skipped, and 68-7F as given.
    static func dynamicImage(block0: [UInt8], cc: [UInt8], tlvBytes: [UInt8], reserved68: [UInt8]) -> [UInt8] {
        var m = [UInt8](repeating: 0, count: 512)
        m.replaceSubrange(0..<8, with: block0)
        m.replaceSubrange(8..<12, with: cc)
        var p = 12
        for b in tlvBytes {
            if p == 0x68 { p = 0x80 }
            m[p] = b
            p += 1
        }
        m.replaceSubrange(0x68..<0x80, with: reserved68)
        return m
    }

    static let controlTLVs: [UInt8] = [0x01, 0x03, 0xF2, 0x30, 0x33, 0x02, 0x03, 0xF0, 0x02, 0x03]
    static let dynReserved: [UInt8] = [0x55, 0x55, 0xAA, 0xAA, 0x12, 0x49, 0x06, 0x00, 0x01, 0xE0] + [UInt8](repeating: 0, count: 14)

    /// nfcpy's `dyn` image: NDEF TLV 03 FF 01 CD at 16, the 461-byte message to 1FE, FE at 1FF.
    static var dynImage: [UInt8] {
        dynamicImage(block0: [0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77], cc: [0xE1, 0x1F, 0x3F, 0x00],
                     tlvBytes: controlTLVs + [0x03, 0xFF, 0x01, 0xCD] + message461 + [0xFE], reserved68: dynReserved)
    }

    /// nfcpy's Topaz 512 image (`proc` with block 0 31…37): 254-byte message, FE at 12E.
    static var t512Image: [UInt8] {
        dynamicImage(block0: [0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x00], cc: [0xE1, 0x10, 0x3F, 0x00],
                     tlvBytes: controlTLVs + [0x03, 0xFE] + message254 + [0xFE], reserved68: dynReserved)
    }

    static func reader(_ chip: Type1TagModel.Chip, _ image: [UInt8], _ form: Type1Reader.Form) -> Type1Reader {
        Type1Reader(form, tag: Type1TagModel(chip: chip, uid: Array(image[0..<7]), memory: image))
    }

    static let forms = Type1Reader.Form.allCases

    @Test("static memory (A1, and Topaz 96 E): the 42-byte URI, capacity 90, read/write, one RALL after RID", arguments: forms)
    func staticRead(form: Type1Reader.Form) throws {
        for chip in [Type1TagModel.Chip.genericStatic, .topaz96] {
            let r = Self.reader(chip, Self.staticImage(version: chip == .topaz96 ? 0x10 : 0x1F), form)
            let tag = try Type1Harness.detect(r)
            #expect(try tag.readNDEF() == Self.message42)
            #expect(tag.capacity == 90 && tag.status == .readWrite)
            #expect(r.tag.commands == [0x78, 0x00], "\(r.tag.commands)")
        }
    }

    @Test("NULL TLV (A6, capacity 89), unknown TLV (A7, 87) before the NDEF TLV; terminator first (A8), NULLs to the end (A9), a memory control TLV hiding it (A10): no NDEF", arguments: forms)
    func staticTLVs(form: Type1Reader.Form) throws {
        let s = Self.staticImage()
        let a6 = Array(s[0..<12]) + [0x00] + Array(s[12..<119])
        let a7 = Array(s[0..<12]) + [0xFD, 0x01, 0x00] + Array(s[12..<117])
        for (image, capacity) in [(a6, 89), (a7, 87)] {
            let tag = try Type1Harness.detect(Self.reader(.genericStatic, image, form))
            #expect(try tag.readNDEF() == Self.message42)
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
        let s = Self.staticImage()
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
        let r = Self.reader(.genericStatic, Self.staticImage(), form)
        try Type1Harness.detect(r).writeNDEF([0xD0, 0x00, 0x00])
        let m = r.tag.contents
        #expect(Array(m[0x08...0x11]) == [0xE1, 0x1F, 0x0E, 0x00, 0x03, 0x03, 0xD0, 0x00, 0x00, 0xFE])
        #expect(Array(m[0x12...0x37]) == Array(Self.staticImage()[0x12...0x37]))
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
        for (chip, image, message) in [(Type1TagModel.Chip.genericDynamic, Self.dynImage, Self.message461), (.topaz512, Self.t512Image, Self.message254)] {
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
        let image = Self.dynamicImage(block0: [0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77], cc: [0xE1, 0x1F, 0x3F, 0x00], tlvBytes: [], reserved68: [UInt8](repeating: 0, count: 24))
        do { _ = try Type1Harness.detect(Self.reader(.genericDynamic, image, form)); Issue.record("found NDEF") } catch let e as TagError {
            #expect(e.kind == .notNDEF)
        }
    }

    @Test("write 461 bytes to dynamic memory (B3): nfcpy's final image, blocks D-F untouched", arguments: [Type1Reader.Form.scm, .binary])
    func dynamicWrite(form: Type1Reader.Form) throws {
        let empty = Self.dynamicImage(block0: [0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77], cc: [0xE1, 0x1F, 0x3F, 0x00],
                                      tlvBytes: Self.controlTLVs + [0x03, 0x00], reserved68: [UInt8](repeating: 0, count: 24))
        let r = Self.reader(.genericDynamic, empty, form)
        let tag = try Type1Harness.detect(r)
        #expect(tag.capacity == 462)
        #expect(try tag.readNDEF() == [])
        try tag.writeNDEF(Self.message461)
        var expected = Self.dynImage
        expected.replaceSubrange(0x68..<0x80, with: [UInt8](repeating: 0, count: 24))
        #expect(r.tag.contents == expected)
    }

    @Test("a message ending at 67 gets its terminator at 80, after the skipped area (B4)", arguments: [Type1Reader.Form.scm, .binary])
    func terminatorAfterSkip(form: Type1Reader.Form) throws {
        let r = Self.reader(.genericDynamic, Self.dynImage, form)
        let message: [UInt8] = [0xD5, 0x00, 0x4D] + [UInt8](repeating: 0, count: 77)
        try Type1Harness.detect(r).writeNDEF(message)
        let m = r.tag.contents
        #expect(Array(m[0x16...0x17]) == [0x03, 0x50] && Array(m[0x18..<0x68]) == message && m[0x80] == 0xFE)
        #expect(Array(m[0x81...]) == Array(Self.dynImage[0x81...]) && Array(m[0x68..<0x80]) == Array(Self.dynImage[0x68..<0x80]))
        #expect(try Type1Harness.detect(r).readNDEF() == message)
    }

    @Test("protect (E5): CC 0F, LOCK0/LOCK1 FF by WRITE-NE on a Topaz 96; on a Topaz 512 the lock bytes 7A-7F too (not nfcpy's 78-79, OTP bytes)")
    func protect() throws {
        let r = Self.reader(.topaz96, Self.staticImage(version: 0x10), .scm)
        let report = try Type1Harness.detect(r).makeReadOnly()
        #expect(report.refusesWrites && report.state.isFullyLocked)
        #expect(Array(r.tag.contents[0x70...0x71]) == [0xFF, 0xFF] && r.tag.contents[0x0B] == 0x0F)
        #expect(r.tag.commands.filter { $0 == 0x1A }.count == 3)
        let big = Self.reader(.topaz512, Self.t512Image, .scm)
        let report512 = try Type1Harness.detect(big).makeReadOnly()
        #expect(report512.refusesWrites && report512.state.isFullyLocked)
        #expect(Array(big.tag.contents[0x78...0x7F]) == [0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        #expect(try Type1Harness.detect(big).readNDEF() == Self.message254)
        #expect(try Type1Harness.detect(big).status == .readOnly)
    }
}
