@testable import PCSC
import Testing

@Suite("PCSC pure parts")
struct PCSCUnitTests {
    @Test("every named error maps to its C constant, message and matches in catch")
    func errorMapping() {
        #expect(PCSCError.noService.constantName == "SCARD_E_NO_SERVICE")
        #expect(PCSCError.removedCard.rawValue == 0x8010_0069)
        #expect(PCSCError.removedCard.message == "Card was removed.")
        #expect(PCSCError.timeout.description.contains("SCARD_E_TIMEOUT"))
        #expect(PCSCError.unsupportedFeature == PCSCError.unexpected)
        // An unknown code survives with its value.
        let odd = PCSCError(rawValue: 0x8010_00FE)
        #expect(odd.constantName == nil)
        #expect(odd.description.contains("0x801000FE"))
        func thrower() throws { throw PCSCError.sharingViolation }
        var matched = false
        do { try thrower() } catch PCSCError.sharingViolation { matched = true } catch {}
        #expect(matched)
        // pcsclite 1.9 defines 48 SCARD_E/F/P codes (0x01-0x31 but 0x22) and 11 SCARD_W codes.
        #expect(PCSCError.names.count == 59)
    }

    @Test("multi-strings split without trimming, stop at the empty string, never overrun",
          arguments: [
            ([], []),
            ([0, 0], []),
            (Array("A\0".utf8) + [0], ["A"]),
            (Array("Reader One 00 00\0 spaced \0".utf8) + [0], ["Reader One 00 00", " spaced "]),
            (Array("no terminator".utf8), ["no terminator"]),
            (Array("A\0\0B\0\0".utf8), ["A"]),
            (Array("Lecteur é 00 00\0".utf8) + [0], ["Lecteur é 00 00"]),
          ] as [([UInt8], [String])])
    func multiString(bytes: [UInt8], expected: [String]) {
        #expect(MultiString.split(bytes) == expected)
    }

    @Test("Part 10 feature list and TLV properties parse, truncated input is ignored")
    func features() {
        let list: [UInt8] = [0x12, 0x04, 0x42, 0x33, 0x00, 0x12, 0x13, 0x04, 0x42, 0x00, 0x00, 0x01, 0x06, 0x02, 0xFF]
        let parsed = parseFeatureList(list)
        #expect(parsed[.getTLVProperties] == 0x4233_0012)
        #expect(parsed[.ccidEscapeCommand] == 0x4200_0001)
        #expect(parsed.count == 2)
        let tlv: [UInt8] = [0x0A, 0x04, 0x00, 0x00, 0x01, 0x00, 0x0B, 0x02, 0x2F, 0x07, 0x08, 0x03, 0x41, 0x42, 0x43, 0x0C, 0x09]
        let properties = ReaderProperties(tlv: tlv)
        #expect(properties.maxAPDUDataSize == 65536)
        #expect(properties.vendorID == 0x072F)
        #expect(properties.firmwareID == "ABC")
        #expect(properties.productID == nil)
        #expect(getFeatureRequest == 0x4200_0D48)
    }

    @Test("option sets name themselves")
    func names() {
        #expect(Protocols.t1.name == "T=1")
        #expect(Protocols.any.name == "T=0|T=1")
        #expect(ReaderStatus(rawValue: 0x0003_0022).names == ["changed", "present"])
        #expect(Attribute.atrString.rawValue == 0x0009_0303)
        #expect(Attribute.maxInput.rawValue == 0x0007_A007)
    }
}
