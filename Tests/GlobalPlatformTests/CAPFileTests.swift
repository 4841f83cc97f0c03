import Foundation
import ISO7816
import Testing
import VirtualCard
@testable import GlobalPlatform

/// Real CAP files from public projects (Fixtures/PROVENANCE.md): GlobalPlatformPro's Empty test
/// applet, kaoh/globalplatform's helloworld, pySim's test applet, JCAlgTest's AlgTest.
@Suite("CAP files: parsed, in load order, loaded into the emulated card")
struct CAPFileTests {
    static func fixture(_ name: String) throws -> CAPFile {
        let url = try #require(Bundle.module.url(forResource: "Fixtures/\(name)", withExtension: nil))
        return try CAPFile(zip: Array(try Data(contentsOf: url)))
    }

    @Test("package and applet AIDs, versions and load file sizes as PROVENANCE.md lists them",
          arguments: [("gppro-Empty_0102030405.cap", "0102030405", "0102030405060708", 211),
                      ("kaoh-helloworld.cap", "D0D1D2D3D4D501", "D0D1D2D3D4D50101", 247),
                      ("pysim-test_javacard.cap", "D07002CA44", "D07002CA44900101", 397),
                      ("jcalgtest-AlgTest_v1.7_supportOnly_jc222.cap", "4A43416C6754657374", "4A43416C675465737431", 5438)])
    func parse(_ name: String, _ package: String, _ applet: String, _ size: Int?) throws {
        let cap = try Self.fixture(name)
        #expect(cap.package.aid.hexString == package && cap.applets.map(\.hexString) == [applet])
        if let size { #expect(cap.loadFile().count == size) }
        // Load order: Header first, then Directory, Import before Applet.
        let file = cap.loadFile()
        #expect(file.first == 1 && file[Int(UInt16(file[1]) << 8 | UInt16(file[2])) + 3] == 2)
        #expect(!cap.imports.isEmpty && cap.imports.contains { $0.aid.hexString == "A0000000620101" || $0.aid.hexString.hasPrefix("A0000000620") })
    }

    @Test("--descriptor adds the Descriptor component last (pySim's file: 397 + 172 bytes)")
    func pysimDescriptor() throws {
        let cap = try Self.fixture("pysim-test_javacard.cap")
        let with = cap.loadFile(includeDescriptor: true)
        #expect(with.count == 569 && Array(with.suffix(172)) == cap.components["Descriptor"])
    }

    @Test("install into the emulated card: fewest LOADs for the block the channel allows, the applet answers SELECT", arguments: [0x01, 0x03, 0x33] as [UInt8])
    func install(_ level: UInt8) throws {
        let card = CardManagerModel(.scp03)
        let manager = CardManager(transport: APDUTransport(channel: EmulatedChannel(card: card, supportsExtendedLength: false)))
        try manager.authenticate(keys: .testKeys, level: SecurityLevel(rawValue: level))
        let cap = try Self.fixture("jcalgtest-AlgTest_v1.7_supportOnly_jc222.cap")
        try manager.install(cap)
        let block = manager.loadBlockSize()
        #expect(block == (level & 0x02 != 0 ? 239 : 247))
        let total = try cap.loadFileDataBlock().count
        #expect(manager.lastLoadCount == (total + block - 1) / block)
        let registry = try manager.registry()
        #expect(registry.contains { $0.kind == .loadFile && $0.aid == cap.package.aid && $0.modules == cap.applets })
        #expect(registry.contains { $0.kind == .application && $0.aid == cap.applets[0] && $0.lifeCycleName == "SELECTABLE" })
        let select = try APDUTransport(channel: EmulatedChannel(card: card)).send(.select(aid: cap.applets[0]))
        #expect(select.statusWord == .success)
    }

    @Test("a LOAD refused mid-way names the partial load file and the delete that removes it")
    func refusedLoad() throws {
        let card = CardManagerModel(.scp03, hostile: .refuseLoad)
        let manager = CardManager(transport: APDUTransport(channel: EmulatedChannel(card: card)))
        try manager.authenticate(keys: .testKeys)
        let cap = try Self.fixture("kaoh-helloworld.cap")
        #expect { try manager.install(cap) } throws: { ($0 as? GlobalPlatformError)?.message.contains("apdu gp delete D0D1D2D3D4D501") == true }
        #expect(card.current.loading == cap.package.aid)
        try manager.deleteUnchecked(aid: cap.package.aid, related: false)
        #expect(card.current.loading == nil)
    }
}
