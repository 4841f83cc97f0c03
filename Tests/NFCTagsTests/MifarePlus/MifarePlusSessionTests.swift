import ISO7816
import NFCTags
import Testing

/// proxmark3's real-card SL3 trace (`traces/hf_mfp_read_sc0_sl3.trace`, a Plus S; values as
/// ../shared/contactless-facts.md §12 records them): sector key 4000 = A0…A7 twice, RndA 00…0F,
/// RndB B4AA…, TI 460502A1.
@Suite("MIFARE Plus SL3 session crypto")
struct MifarePlusSessionTests {
    static func session() throws -> MifarePlusSession {
        try MifarePlusSession(key: try Hex.decode("A0A1A2A3A4A5A6A7A0A1A2A3A4A5A6A7"), rndA: Array(0...15),
                              rndB: try Hex.decode("B4AA1F6F4570FE75ADF5FD57C3B34739"), transactionIdentifier: try Hex.decode("460502A1"))
    }

    @Test("AuthenticateFirst's session keys: Kenc 8F3A…2434, Kmac DFCD…D9E1")
    func keys() throws {
        let s = try Self.session()
        #expect(s.encryptionKey.hexString == "8F3A64213E3D61C2A295CC5C9A192434")
        #expect(s.macKey.hexString == "DFCD1F3A36C08327E2DF2AC0CA71D9E1")
    }

    @Test("IVs as NXP lays them out, counters LSB first: the write counter in its own place")
    func ivs() throws {
        var s = try Self.session()
        s.readCounter = 0x0102
        s.writeCounter = 0x0304
        #expect(s.commandIV.hexString == "460502A1" + String(repeating: "02010403", count: 3))
        #expect(s.answerIV.hexString == String(repeating: "02010403", count: 3) + "460502A1")
    }

    @Test("the trace's first read (33: MACed command, plain data, MACed answer; block 0, one block, R_Ctr 0) carries MAC 4424DAAEBD09E0C1")
    func readMAC() throws {
        #expect(try Self.session().readCommandMAC(code: 0x33, block: 0, count: 1).hexString == "4424DAAEBD09E0C1")
    }
}
