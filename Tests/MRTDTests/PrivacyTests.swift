import CardCrypto
import ISO7816
@testable import MRTD
import Testing

@Suite("Nothing secret reaches a trace")
struct PrivacyTests {
    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { Array(haystack[$0..<($0 + needle.count)]) == needle }
    }

    @Test("BAC + secure messaging (Appendix D) and PACE (G.1): no key, seed, password or MRZ byte string in any traced exchange")
    func traces() throws {
        var traced: [Exchange] = []
        let bacTransport = APDUTransport(channel: ScriptedChip(BasicAccessControlTests.exchanges)) { traced.append($0) }
        let bac = MRTDChannel(transport: bacTransport)
        try BasicAccessControl.perform(on: bac, key: BasicAccessControlTests.key, random: BasicAccessControlTests.random)
        _ = try bac.send(CommandAPDU(cla: 0, ins: 0xA4, p1: 2, p2: 0x0C, data: [0x01, 0x1E]))
        let paceTransport = APDUTransport(channel: ScriptedChip(PACETests.g1)) { traced.append($0) }
        let infos = try SecurityInfos(encoded: h(PACETests.g1CardAccess))
        _ = try PACE.perform(on: MRTDChannel(transport: paceTransport), key: PACETests.mrz, info: infos.paceInfos[0], securityInfos: infos, random: PACETests.g1Random)
        let secrets: [[UInt8]] = [
            h("239AB9CB282DAF66231DC5A4DF6BFBAE"), h("AB94FDECF2674FDFB9B391F85D7F76F2"), h("7962D9ECE03D1ACD4C76089DCE131543"),
            h("979EC13B1CBFE9DCD01AB0FED307EAE5"), h("F1CB1F1FB5ADF208806B89DC579DC1F8"), h("0B795240CB7049B01C19B33E32804F0B"),
            Array("L898902C<".utf8), Array("690806".utf8), Array("T22000129".utf8), Array("640812".utf8),
            PACETests.mrz.pacePassword, KeyDerivation.derive(PACETests.mrz.pacePassword, purpose: .password, cipher: .aes128),
            h("F5F0E35C0D7161EE6724EE513A0D9A7F"), h("FE251C7858B356B24514B3BD5F4297D1"),
        ]
        #expect(traced.count == BasicAccessControlTests.exchanges.count - 2 + PACETests.g1.count)
        for exchange in traced {
            for secret in secrets {
                #expect(!Self.contains(exchange.command + exchange.response, secret), "\(exchange.command.hexString)")
            }
        }
    }

    @Test("errors and descriptions never show the MRZ, the CAN or keys")
    func descriptions() throws {
        let can = try MRTDAccessKey.can("123456")
        let sm = try SecureMessagingTests.session()
        var dumped = ""
        dump(can, to: &dumped)
        dump(BasicAccessControlTests.key, to: &dumped)
        dump(sm, to: &dumped)
        for field in ["macKey", "sendSequenceCounter", "storage", "documentNumber"] { #expect(!dumped.contains(field), "\(field)") }
        for text in ["\(can)", "\(BasicAccessControlTests.key)", "\(sm)", String(reflecting: can), dumped] {
            #expect(!text.contains("123456") && !text.contains("L898902C") && !text.contains("241, 203, 31") && !text.contains("136, 112, 34"), "\(text)")
        }
        do { _ = try MRTDAccessKey.mrz(documentNumber: "L898902C", dateOfBirth: "691306", dateOfExpiry: "940623") } catch {
            #expect(!"\(error)".contains("691306"))
        }
    }
}
