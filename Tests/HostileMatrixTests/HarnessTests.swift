import ISO7816
@testable import TestSupport
import Testing
import VirtualCard

/// The harness itself: each mutation does what it says, and each invariant fails a run that
/// breaks it (a judge that cannot fail would prove nothing).
@Suite("Hostile matrix: the harness")
struct HarnessTests {
    /// Answers every command with the same record: 70 08 (5A 02 12 34) (5F 20 01 41) 90 00.
    final class RecordCard: EmulatedCard, @unchecked Sendable {
        let atr: [UInt8] = [0x3B, 0x00]
        func reset() {}
        func process(_ apdu: [UInt8]) -> [UInt8] { [0x70, 0x08, 0x5A, 0x02, 0x12, 0x34, 0x5F, 0x20, 0x01, 0x41, 0x90, 0x00] }
    }

    static let record: [UInt8] = [0x70, 0x08, 0x5A, 0x02, 0x12, 0x34, 0x5F, 0x20, 0x01, 0x41, 0x90, 0x00]

    @Test("each mutation of one answer, by hand")
    func mutations() {
        func apply(_ m: HostileMutation, earlier: [[UInt8]] = []) -> String? { m.apply(to: Self.record, earlier: earlier).map { Hex.encode($0) } }
        #expect(apply(.statusWord(0x6A82)) == "6A82" && apply(.oneByte(0x0B)) == "0B" && apply(.empty) == "")
        #expect(apply(.cutOneByte) == "7008 5A021234 5F2001 9000".replacingOccurrences(of: " ", with: ""))
        #expect(apply(.cutHalf) == "70085A0212" + "9000")
        #expect(apply(.flipData) == "70085A0212355F2001419000")
        #expect(apply(.flipDataEarly) == "70085B021234 5F2001419000".replacingOccurrences(of: " ", with: ""))
        #expect(apply(.flipMAC) == "70085A0212345F2001409000")
        #expect(apply(.flipSignature) == nil, "no 64-byte block")
        #expect(apply(.tlvEmpty) == "70065A005F2001419000")
        #expect(apply(.tlvDuplicate) == "700C5A0212345A0212345F2001419000")
        #expect(apply(.tlvLengthPastEnd) == "70085A0712345F2001419000")
        #expect(apply(.replay) == nil && apply(.replay, earlier: [[0x6A, 0x82]]) == "6A82")
        let signature = [UInt8](repeating: 0xAB, count: 128)
        let signed = [0x9F, 0x4B, 0x81, 0x80] + signature + [0x90, 0x00]
        #expect(HostileMutation.flipSignature.apply(to: signed, earlier: []).map { $0[4 + 64] } == 0xAA)
    }

    static func operation(name: String, secrets: [HostileSecret] = [], counted: @escaping @Sendable ([UInt8]) -> String? = { _ in nil },
                          body: @escaping @Sendable (HostileContext) throws -> HostileOutcome,
                          claims: (@Sendable (Result<HostileOutcome, any Error>) -> String?)? = nil) -> HostileOperation {
        HostileOperation(family: "harness", name: name, secrets: secrets, counted: counted, expectVerdict: nil) {
            HostileRun(card: RecordCard(), body: body, claims: claims)
        }
    }

    static func read(_ context: HostileContext) throws -> [UInt8] {
        try context.transport().send(CommandAPDU(cla: 0, ins: 0xB2, p1: 1, p2: 0x0C, ne: 256)).data
    }

    @Test("a verdict kept with another answer fails invariant 2")
    func sameVerdict() {
        let op = Self.operation(name: "vouches for what it read") { context in
            let data = try Self.read(context)
            return HostileOutcome(verdict: true, vouched: Hex.encode(data), shown: "")
        }
        let report = HostileMatrix.run(op, mode: .full)
        #expect(report.caught(.sameVerdict) > 0 && report.failures.allSatisfy { $0.invariant == .sameVerdict && $0.exchange == 0 }, "\(report)")
    }

    @Test("a secret in the output fails invariant 4; a run without one passes")
    func secrets() {
        let leaky = Self.operation(name: "prints the PAN", secrets: [.bytes([0x5F, 0x20, 0x01, 0x41])]) { context in
            let data = try Self.read(context)
            return HostileOutcome(verdict: false, vouched: "", shown: Hex.encode(data))
        }
        #expect(HostileMatrix.run(leaky, mode: .sample(budget: 5)).caught(.noSecrets) > 0)
        let quiet = Self.operation(name: "prints nothing", secrets: [.text("SECRET")]) { context in
            _ = try Self.read(context)
            return HostileOutcome(verdict: false, vouched: "", shown: "done")
        }
        #expect(HostileMatrix.run(quiet, mode: .full).failures.isEmpty)
    }

    @Test("a counted command sent twice fails invariant 5")
    func countedOnce() {
        let op = Self.operation(name: "retries", counted: { $0.count > 1 && $0[1] == 0xB2 ? "READ RECORD" : nil }) { context in
            _ = try Self.read(context)
            _ = try Self.read(context)
            return HostileOutcome(verdict: false, vouched: "", shown: "")
        }
        #expect(HostileMatrix.run(op, mode: .sample(budget: 5)).caught(.countedOnce) > 0)
    }

    @Test("a run that does not end fails invariant 1; a claim the card contradicts fails invariant 3")
    func hangAndClaims() {
        let hang = Self.operation(name: "never stops") { context in
            // Retries until the answer is the card's own, as a reader in a loop would.
            while try Self.read(context) != Array(Self.record.dropLast(2)) {}
            return HostileOutcome(verdict: false, vouched: "", shown: "")
        }
        let looping = Self.operation(name: "stuck after one odd answer") { context in
            var odd = false
            while true {
                if try Self.read(context) != Array(Self.record.dropLast(2)) { odd = true }
                if !odd { return HostileOutcome(verdict: false, vouched: "", shown: "") }
            }
        }
        #expect(HostileMatrix.run(hang, mode: .full).caught(.noTrap) == 0, "a loop that ends when the card answers again is no hang")
        let stuck = HostileMatrix.run(looping, mode: .sample(budget: 3))
        #expect(stuck.caught(.noTrap) > 0, "\(stuck)")
        let claims = Self.operation(name: "says done whatever happened", body: { context in
            _ = try Self.read(context)
            return HostileOutcome(verdict: false, vouched: "", shown: "")
        }, claims: { result in
            if case .failure = result { return "said failed; the card says done" }
            return nil
        })
        #expect(HostileMatrix.run(claims, mode: .full).caught(.claims) > 0)
    }
}
