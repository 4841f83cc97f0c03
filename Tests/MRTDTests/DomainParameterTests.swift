import ISO7816
@testable import MRTD
import Testing

/// Explicit DH and EC domain parameters come, for PACE, from EF.CardAccess, which nothing signs.
/// A chip offering a small subgroup would let a recorded PACE run be searched offline for the
/// CAN or MRZ (review of issue 48: a 1024-bit p whose g had a 20-bit order): such groups are
/// refused before any key is made in them.
@Suite("Explicit domain parameters: only sound groups")
struct DomainParameterTests {
    // A 1024-bit prime p = k·q + 1 with q = FFFFD (a 20-bit prime) and g of order q (made for
    // this test with Miller-Rabin; the weak group of the review).
    static let weakP = "A02F21DAC00A6BC79AA774DB1E268A95DB1FE790534258E6A585D7FCFD3218E354FEEBDA726FACBDF33E5E010288D490D0EF5B9E018AE70944A01DDCD37CA3EC00A009E3EB76CB88CED6107CB53DD85567A0589227AB831782E6F5AD97EB6EF0CEC7BADE164C783178705849B94B8A5DF5F0ED19C08680CEBF0B532EB5CD621D"
    static let weakG = "6D37B42FF825C1AF4F7A5C539675555BF1A1ACFDD47755490F892F41EE4BFD34F4914A6506EE2A70823E88902524A3FB1C8E72CE0231928C51C06200D9ACD80A0D32AA399841CC3A98856B473026B0D7F7DFDA890EE440F23135D3CE73961D09303AE63A9F85AEA3C40C89AB7B7F031D1680081BEA1637BB092E2D913B5ADC85"
    // The same construction with a 160-bit prime q: a sound group.
    static let soundP = "96E35A6512E354FA1EE3B017DBD7EB38C8AAC483D2AC66D2392AC6DB38EAF08011C34CC8BC95C114BF60DE2706BA958FF48F51E7140783834ED435FCB8C7795C399E2048970F4D0FB299F735A363CFB75EEB1B864CEEFEDD9463EE646822D4D63435FF38D249681DE6A4BAC4C8518F41D9202222F19289A85AF690A2FAE0FEF3"
    static let soundG = "589859255E16FC2F25058F51F65DC9E239AF8C7F63DD665A171D8F1E8665C632B2A9BF7193A428AC37BBC719A1433FBC1D18D36DECCF584DE363BEAB8FB9015D9E1556DECD387F4A4C1679C59DB422FC1662FC9F76E3388A8F5FDC0158F228516606B43D16AD50C73DB9A3DDF831782B213FA429377F2BF7F280884F47D50F4A"
    static let soundQ = "AF5EB4919C1C6A5E4581CCD946565BB65BF379C5"

    @Test("a group whose generator has a 20-bit order is refused, with or without q given")
    func weakGroupRefused() throws {
        let p = try Hex.decode(Self.weakP), g = try Hex.decode(Self.weakG)
        #expect(throws: MRTDProtocolError.self) { _ = try DiffieHellmanDomain(prime: p, generator: g, order: [0x0F, 0xFF, 0xFD]) }
        #expect(throws: MRTDProtocolError.self) { _ = try DiffieHellmanDomain(prime: p, generator: g, order: nil) }
    }

    @Test("a sound group is taken; a wrong order, a composite p or a generator of another order is not")
    func soundGroup() throws {
        let p = try Hex.decode(Self.soundP), g = try Hex.decode(Self.soundG), q = try Hex.decode(Self.soundQ)
        let group = try DiffieHellmanDomain(prime: p, generator: g, order: q)
        #expect(group.primeBits == 1024)
        var otherQ = q
        otherQ[otherQ.count - 1] ^= 0x02
        #expect(throws: MRTDProtocolError.self) { _ = try DiffieHellmanDomain(prime: p, generator: g, order: otherQ) }
        var composite = p
        composite[composite.count - 1] ^= 0x02
        #expect(throws: MRTDProtocolError.self) { _ = try DiffieHellmanDomain(prime: composite, generator: g, order: q) }
        // 2 is a generator of the whole group mod p, not of the order-q subgroup.
        #expect(throws: MRTDProtocolError.self) { _ = try DiffieHellmanDomain(prime: p, generator: [0x02], order: q) }
    }
}
