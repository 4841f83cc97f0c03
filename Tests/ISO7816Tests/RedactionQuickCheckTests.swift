@testable import ISO7816
import Testing

/// `Redaction.mayHoldSecret` waves most commands through before the table is walked; its byte
/// sets must hold exactly the table's INS bytes and bare frame codes, or a secret goes unmasked.
@Suite("Redaction's quick check")
struct RedactionQuickCheckTests {
    @Test("the bit sets hold exactly the table's INS bytes and bare codes, for every byte value")
    func bitSetsMatchTheTable() {
        var ins = Set<UInt8>(), bare = Set<UInt8>()
        for rule in Redaction.rules {
            switch rule.shape {
            case let .apdu(_, set, _): ins.formUnion(set)
            case let .frame(codes, wrappers): if wrappers.contains(.bare) { bare.formUnion(codes) }
            }
        }
        #expect(!ins.isEmpty && !bare.isEmpty)
        for b in UInt8.min...UInt8.max {
            #expect(Redaction.apduInstructions.contains(b) == ins.contains(b), "INS \(b)")
            #expect(Redaction.bareCodes.contains(b) == bare.contains(b), "code \(b)")
        }
    }

    @Test("a command the quick check waves through is one the table finds no secret in")
    func quickCheckNeverHidesASecret() {
        // Every CLA/INS pair with a short data field, and every bare code with data.
        let data = [UInt8](repeating: 0x5A, count: 16)
        for ins in UInt8.min...UInt8.max {
            for cla: UInt8 in [0x00, 0x80, 0x84, 0x0C] {
                let command = [cla, ins, 0x00, 0x00, UInt8(data.count)] + data
                if !Redaction.mayHoldSecret(command) {
                    #expect(Redaction.secrets(command: command).allSatisfy { $0.command == nil }, "\(command)")
                }
            }
            let frame = [ins] + data
            if !Redaction.mayHoldSecret(frame) {
                #expect(Redaction.secrets(command: frame).allSatisfy { $0.command == nil }, "\(frame)")
            }
        }
    }
}
