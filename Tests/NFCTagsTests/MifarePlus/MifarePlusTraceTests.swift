import CardCrypto
import ISO7816
@testable import NFCTags
import SUN
import Testing

/// A card that replays a real-card trace of native frames: each command must be the trace's byte
/// for byte, each answer is the trace's.
final class NativeTraceCard: CardChannel {
    private var steps: [(send: [UInt8], answer: [UInt8])]
    let supportsExtendedLength = false
    private(set) var mismatch: String?
    struct Mismatch: Error, CustomStringConvertible { var description: String }

    init(_ pairs: [(String, String)]) { steps = pairs.map { (h($0.0), h($0.1)) } }
    var remaining: Int { steps.count }

    func transmit(_ command: [UInt8]) throws -> [UInt8] {
        guard !steps.isEmpty else { mismatch = "sent \(command.hexString) after the trace ended"; throw Mismatch(description: mismatch!) }
        let step = steps.removeFirst()
        guard command == step.send else {
            mismatch = mismatch ?? "the trace sends \(step.send.hexString), the library sent \(command.hexString)"
            throw Mismatch(description: mismatch!)
        }
        return step.answer
    }
}

/// proxmark3's two real-card SL3 traces of a MIFARE Plus S 2K (`traces/hf_mfp_mad_sl3.trace`,
/// `traces/hf_mfp_read_sc0_sl3.trace`, added in commit 24d55e8c; ISO 14443-4 PCB, CID and CRC
/// stripped): AuthenticateFirst with key 4000 = A0…A7 twice (proxmark3's MAD key), RndA 00…0F
/// (proxmark3's at the time), then four MACed reads (33) of blocks 0-3, one block each. Replayed
/// through `MifarePlusCard`: every frame the library builds must be the trace's, and every MAC
/// the card sent must verify.
@Suite("MIFARE Plus SL3: proxmark3's real-card traces, byte for byte")
struct MifarePlusTraceTests {
    static let madKey = MifarePlusKey.mad
    static let block0 = "04505D1AB76880084400020111000220"
    static let block1 = "3000563D563C563C563C563C563C0000"
    static let block2 = String(repeating: "00", count: 16)
    static let block3 = "00000000000F0F078FC1000000000000"

    static let madTrace: [(String, String)] = [
        ("70004000", "90F1AF605D441D5C1FD3019F3A3DA9F177"),
        ("72B6AD00EDEFEF0774DECDBF256124E5183CCB6822F955C5CFF7927C2415200EE4", "90F795C53CD91F3F3EB43AF7B7DBB2AE6882F4CE8EFC2E148114C6C555FA41E875"),
        ("330000014424DAAEBD09E0C1", "90" + block0 + "71EEC9660954ED84"),
        ("33010001308BB361486C3672", "90" + block1 + "63A3AEB03BB3A816"),
        ("33020001E9069480623EB844", "90" + block2 + "5664C2C36F10875E"),
        ("33030001137930395B6668C3", "90" + block3 + "F43401D487DA5D76"),
    ]
    static let sector0Trace: [(String, String)] = [
        ("70004000", "90538A666C8751AEFE5FADFC7EEB12C3E1"),
        ("72B6AD00EDEFEF0774DECDBF256124E518E1BC30164191393EAFB531E18E880F84", "906616A9B094AAFBA889E480F78B2A53358151A80B12B963EB3549271FFE754EBC"),
        ("330000012BFACDE398A04CD5", "90" + block0 + "365C09B811A8D749"),
        ("33010001D9FE3B1D38D4C3D1", "90" + block1 + "E2DD057BDFEA345E"),
        ("33020001FCD5C4A4C9C667A2", "90" + block2 + "AE8F77FC7FC4A96C"),
        ("330300011A9CADB3BBB1A989", "90" + block3 + "C2CA7AB86ADA6CDA"),
    ]

    static func replay(_ trace: [(String, String)]) throws -> (MifarePlusCard, NativeTraceCard, [UInt8]) {
        let channel = NativeTraceCard(trace)
        let card = MifarePlusCard(transport: APDUTransport(channel: channel), framing: .native, randomSource: { Array(0..<UInt8($0)) })
        card.blocksPerRead = 1
        let data = try card.read(blocks: 0..<4, key: madKey, type: .a)
        return (card, channel, data)
    }

    @Test("hf_mfp_mad_sl3: TI 460502A1, Kenc 8F3A…, Kmac DFCD…, four reads, R_Ctr 4, MAD1 whose CRC checks", arguments: [0, 1])
    func traces(_ which: Int) throws {
        let (card, channel, data) = try Self.replay(which == 0 ? Self.madTrace : Self.sector0Trace)
        #expect(channel.mismatch == nil)
        #expect(channel.remaining == 0)
        #expect(data.hexString == Self.block0 + Self.block1 + Self.block2 + Self.block3)
        let s = try #require(card.session)
        #expect(s.readCounter == 4 && s.writeCounter == 0)
        #expect(s.transactionIdentifier.hexString == (which == 0 ? "460502A1" : "3FD7F78A"))
        #expect(s.encryptionKey.hexString == (which == 0 ? "8F3A64213E3D61C2A295CC5C9A192434" : "2DD05E6C1644663D03547C4197785604"))
        #expect(s.macKey.hexString == (which == 0 ? "DFCD1F3A36C08327E2DF2AC0CA71D9E1" : "E3FB0CD3B4F6396F8C02563C36FA6A97"))
        // Sector 0's MAD1 (blocks 1-2) and its general-purpose byte C1 (block 3, byte 9).
        let mad = try MifareApplicationDirectory(gpb: data[48 + 9], mad1: Array(data[16..<48]), mad2: nil)
        #expect(mad.version == 1)
        #expect(MifareApplicationDirectory.crc(data[17..<48]) == 0x30)
    }

    @Test("an answer MAC one bit off in the trace stops the read with .macMismatch")
    func tamperedTrace() throws {
        var trace = Self.madTrace
        trace[3].1 = "90" + Self.block1 + "63A3AEB03BB3A817"
        let channel = NativeTraceCard(trace)
        let card = MifarePlusCard(transport: APDUTransport(channel: channel), framing: .native, randomSource: { Array(0..<UInt8($0)) })
        card.blocksPerRead = 1
        #expect {
            _ = try card.read(blocks: 0..<4, key: Self.madKey, type: .a)
        } throws: { ($0 as? MifarePlusError)?.kind == .macMismatch }
        #expect(card.session == nil)
    }

    @Test("a card that does not hold the key: the wrong RndA' is caught (authenticationFailed)")
    func wrongKey() throws {
        let channel = NativeTraceCard(Array(Self.madTrace.prefix(2)))
        let card = MifarePlusCard(transport: APDUTransport(channel: channel), framing: .native, randomSource: { _ in [UInt8](repeating: 7, count: 16) })
        #expect {
            try card.authenticate(0x4000, key: Self.madKey)
        } throws: { $0 is MifarePlusError || $0 is NativeTraceCard.Mismatch }
        #expect(card.session == nil)
    }

    @Test("AN10922 (libfreefare's vectors): §2.2.1's 18-byte input, and AN10957's short one")
    func an10922() throws {
        let master = try #require(MifarePlusKey(h("00112233445566778899AABBCCDDEEFF")))
        #expect(try AN10922.diversify(masterKey: master.bytes, input: h("04782E21801D803042F54E585020416275")).hexString == "A8DD63A3B89D54B37CA802473FDA9175")
        #expect(try AN10922.diversify(masterKey: h("F3F9377698707B688EAF84ABE39E3791"), input: h("04DEADBEEFFEED")).hexString == "0BB408BAFF98B6EE9F2E1585777F6A51")
        // The Plus key diversification is the same step over UID ‖ key number ‖ system identifier.
        let k = try MifarePlusCard.diversifiedKey(master: master, uid: h("04782E21801D80"), keyNumber: 0x4230, systemIdentifier: h("F54E585020416275"))
        #expect(k.bytes.hexString == "A8DD63A3B89D54B37CA802473FDA9175")
    }

    @Test("NXP's MIFARE Plus EV1 key verifies proxmark3's published EV1 signatures (7- and 4-byte UIDs), not the EV2 key")
    func originality() {
        let pairs = [
            ("042A2B221C5080", "BAC40CD88E9193C58ADA5055350C4F648EB5A7AEC4FCF9BD4CDD7B1C558DE5F59C6636F26286ED48622AAA2331D4DF1CEE23B57B94BDA631"),
            ("04505082346B80", "78B2FCF6769F60B165F5BDEB3A6D0C26967BB165E65A3B400A01C711356FF0A0807AB1A2706FCA419702AC67211287E31D71927BA25AB235"),
            ("12817C48", "3351979A3449CACD9EE113A75B862917F03EFAE68DA399C06342BF8583C88DFE769DF49754A96F7C28B57189FB05B9C10E2305D41423A6EB"),
        ]
        for (uid, sig) in pairs {
            let o = OriginalitySignature(uid: h(uid), signature: h(sig))
            #expect(o.verifyingKey(among: OriginalitySignature.PublicKey.mifarePlus) == .mifarePlusEV1)
            var bad = h(sig)
            bad[10] ^= 1
            #expect(!OriginalitySignature(uid: h(uid), signature: bad).verifies(with: .mifarePlusEV1))
        }
        #expect(OriginalitySignature.PublicKey.mifarePlusEV2.isOnCurve)
    }

    @Test("key files: KEYNO HEX lines, comments, CRLF, BOM; errors name the line, never the key")
    func keyFiles() throws {
        let file = try MifarePlusKeyFile.parse("\u{FEFF}# keys\r\n4000 A0A1A2A3A4A5A6A7A0A1A2A3A4A5A6A7\r\n9000 00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF # master\r\n", source: "k.txt")
        #expect(file.keys.map(\.number) == [0x4000, 0x9000])
        #expect(throws: MifarePlusError.self) { try MifarePlusKeyFile.parse("4000 A0A1\n", source: "k.txt") }
        do { _ = try MifarePlusKeyFile.parse("4000 SECRETSECRETSECRET\n", source: "k.txt") } catch {
            #expect("\(error)".contains("k.txt line 1") && !"\(error)".contains("SECRET"))
        }
        #expect(throws: MifarePlusError.self) { try MifarePlusKeyFile.parse("40 A0A1A2A3A4A5A6A7A0A1A2A3A4A5A6A7\n", source: "k") }
        #expect(MifarePlusKeyFile.everyKey(.factory, sectors: 32).keys.count == 68)
    }
}
