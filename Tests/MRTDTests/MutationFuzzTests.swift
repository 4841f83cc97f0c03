import MRTD
import Testing

/// Random byte mutations of valid inputs, fed to every parser: a deterministic stand-in for the
/// libFuzzer targets (each parser's `fuzz` entry point) between fuzzing runs.
@Suite("Parsers under random mutation")
struct MutationFuzzTests {
    /// xorshift64*, seeded: the same inputs every run.
    struct Generator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            return state &* 2_685_821_657_736_338_717
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(max(n, 1))) }
    }

    static func mutants(of input: [UInt8], count: Int, seed: UInt64) -> [[UInt8]] {
        var random = Generator(state: seed)
        var out: [[UInt8]] = []
        for _ in 0..<count {
            var bytes = input
            for _ in 0...random.below(4) {
                guard !bytes.isEmpty else { break }
                let at = random.below(bytes.count)
                switch random.below(5) {
                case 0: bytes[at] = UInt8(truncatingIfNeeded: random.next())
                case 1: bytes[at] ^= 0x80
                case 2: bytes.remove(at: at)
                case 3: bytes.insert(UInt8(truncatingIfNeeded: random.next()), at: at)
                default: bytes = Array(bytes.prefix(at))
                }
            }
            out.append(bytes)
        }
        return out
    }

    @Test("LDS files, EF.SOD, master lists, trust files and MRZ text: mutants parse or throw, never trap")
    func mutate() {
        let sod = PassiveFixture.p256.sod()
        let groups: [(Int, [UInt8])] = [(1, LDSTests.bsiDG1), (2, LDSTests.dg2ISO39794(image: [0xFF, 0xD8, 0xFF, 0xE0])),
                                        (11, bytes("6B605C0A5F0E5F115F425F125F135F0E0D534D4954483C3C4A4F484E3C4A5F110A414E59544F574E3C4D4E5F4217313233204D41504C452052443C414E59544F574E3C4D4E5F120B31363132353535313231325F130C54524156454C3C4147454E54")),
                                        (12, bytes("6C205C045F555F565F550E32303136313131353031333631325F56064E2D34393632"))]
        for (number, input) in groups {
            for mutant in Self.mutants(of: input, count: 400, seed: UInt64(number) * 7919) {
                LDSDataGroup.fuzz([UInt8(number - 1)] + mutant)
            }
        }
        for mutant in Self.mutants(of: LDSTests.bsiCOM, count: 300, seed: 3) { EFCOM.fuzz(mutant) }
        for mutant in Self.mutants(of: RealSamples.sodNZ, count: 300, seed: 5) { DocumentSecurityObject.fuzz(mutant) }
        for mutant in Self.mutants(of: sod, count: 300, seed: 11) {
            _ = PassiveAuthentication.verify(securityObject: mutant, dataGroups: PassiveFixture.dataGroups, trust: PassiveFixture.p256.trust)
        }
        for mutant in Self.mutants(of: MasterListFixture().build(), count: 200, seed: 13) { CSCAMasterList.fuzz(mutant) }
        for mutant in Self.mutants(of: RealSamples.cscaDE, count: 200, seed: 17) { TrustStore.fuzz(mutant) }
        let mrz = Array((MachineReadableZoneTests.td1.joined(separator: "\n")).utf8)
        for mutant in Self.mutants(of: mrz, count: 400, seed: 19) { MachineReadableZone.fuzz(mutant) }
    }
}
