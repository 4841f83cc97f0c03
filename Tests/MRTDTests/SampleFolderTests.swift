import FoundationEssentials
import Glibc
import MRTD
import Testing

/// Published files too large to embed, checked when `MRTD_SAMPLES` names a folder holding them
/// (fetched, never committed): gmrtd's CSCA master lists (`cms/master_list/*.ml`, German and
/// Dutch) and its ISO/IEC 39794-5 DG2 (`document/test_data/ICAO_39794_5_AP_DG2_AllFields.dat`).
@Suite("Published samples in $MRTD_SAMPLES", .enabled(if: getenv("MRTD_SAMPLES") != nil))
struct SampleFolderTests {
    static var folder: String { getenv("MRTD_SAMPLES").map { String(cString: $0) } ?? "" }

    @Test("every master list in the folder verifies and loads")
    func masterLists() throws {
        let lists = try FileManager.default.contentsOfDirectory(atPath: Self.folder).filter { $0.hasSuffix(".ml") }.sorted()
        #expect(!lists.isEmpty)
        for name in lists {
            let store = try TrustStore.load(paths: [Self.folder + "/" + name])
            #expect(store.certificates.count > 100, "\(name)")
        }
    }

    @Test("the ISO/IEC 39794-5 DG2 sample: its 15000-byte JPEG 2000 face, 572 × 731")
    func dg2() throws {
        let path = Self.folder + "/ICAO_39794_5_AP_DG2_AllFields.dat"
        guard let data = FileManager.default.contents(atPath: path) else { return }
        let face = try #require(try DataGroup2(decoding: [UInt8](data)).faces.first)
        #expect(face.image.bytes.count == 15000)
        #expect(face.image.format == .jpeg2000)
        #expect(face.width == 572 && face.height == 731)
    }
}
