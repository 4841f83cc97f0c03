import CardCrypto
import Glibc
import ISO7816
@testable import MRTD
import Testing

@Suite("PACE handshake time", .serialized)
struct PACEBenchmarkTests {
    /// Whole PACE-GM handshakes on brainpoolP256r1 with AES-128, both sides in this process:
    /// the terminal (the library) and `PACEChip`. Prints wall and process CPU time per handshake.
    @Test("PACE ECDH-GM brainpoolP256r1, both sides in-process: time per handshake", arguments: [13, 12, 0])
    func handshake(parameterId: Int) throws {
        let oid = parameterId == 0 ? "0.4.0.127.0.7.2.2.4.1.2" : "0.4.0.127.0.7.2.2.4.2.2"
        let info = try PACEInfo(protocol: oid, parameterId: parameterId)
        var infos = SecurityInfos()
        infos.paceInfos = [info]
        let domain = try infos.domainParameters(for: info)
        let key = PACETests.mrz
        let rounds = parameterId == 0 ? 10 : 100
        // Warm up libcrypto's tables once.
        let warm = PACEChip(key: key, info: info, domain: domain)
        _ = try PACE.perform(on: MRTDChannel(transport: APDUTransport(channel: warm)), key: key, info: info, securityInfos: infos)
        var chipTicks = 0
        let cpuStart = clock()
        let start = ContinuousClock.now
        for _ in 0..<rounds {
            let chip = PACEChip(key: key, info: info, domain: domain)
            _ = try PACE.perform(on: MRTDChannel(transport: APDUTransport(channel: chip)), key: key, info: info, securityInfos: infos)
            #expect(chip.established)
            chipTicks += chip.chipTicks
        }
        let wall = (ContinuousClock.now - start) / rounds
        let perTick = 1_000_000 / Double(CLOCKS_PER_SEC) / Double(rounds)
        let total = Double(clock() - cpuStart) * perTick
        let chip = Double(chipTicks) * perTick
        print("PACE \(info.keyAgreement) GM on \(domain): \(Int(total)) µs CPU per handshake (terminal \(Int(total - chip)) µs, chip \(Int(chip)) µs), \(wall) wall, \(rounds) rounds")
    }
}
