import EMV
import MRTD
import SUN
import TestSupport
import Testing

/// Each check removed in turn through its test-only seam (a task-local switch the debug build
/// has and a release build compiles out): the matrix must fail without it and pass with it.
/// The switch holds in this test's task only, so the matrix's other tests, run in parallel,
/// keep every check.
@Suite("Hostile matrix: a removed check fails it")
struct RemovedCheckTests {
    /// Runs `operation` with the check on and off; returns the report without it.
    static func withAndWithout(_ operation: HostileOperation, mode: HostileMatrix.Mode = .fromEnvironment(),
                               remove: (() -> HostileReport) -> HostileReport) -> (on: HostileReport, off: HostileReport) {
        let on = HostileMatrix.run(operation, mode: mode)
        let off = remove { HostileMatrix.run(operation, mode: mode) }
        let caught = HostileInvariant.allCases.map { "\($0.rawValue):\(off.caught($0))" }.joined(separator: " ")
        print("hostile matrix, check removed: \(off.family) / \(off.operation): \(off.failures.count) failures (caught \(caught)); first: \(off.failures.first.map(\.description) ?? "none")")
        return (on, off)
    }

    @Test("secure messaging's MAC comparison (MRTD): EF.COM, which nothing else protects, changes under a genuine verdict")
    func secureMessagingMAC() throws {
        let op = try #require(MRTDMatrixTests.operations["read BAC"])
        // Every case: the one that shows it is a bit flipped in EF.COM's protected answer.
        let (on, off) = Self.withAndWithout(op, mode: .full) { run in MRTDRemovedChecks.$secureMessagingMAC.withValue(true) { run() } }
        #expect(on.failures.isEmpty, "\(on)")
        #expect(off.failures.contains { $0.invariant == .sameVerdict && $0.exchange != nil }, "\(off)")
    }

    @Test("passive authentication's hash comparison (MRTD): a chip with another face beside the issuer's EF.SOD is called genuine")
    func dataGroupHash() throws {
        let op = try #require(MRTDMatrixTests.operations["read altered-dg2"])
        let (on, off) = Self.withAndWithout(op) { run in MRTDRemovedChecks.$dataGroupHash.withValue(true) { run() } }
        #expect(on.failures.isEmpty, "\(on)")
        #expect(off.failures.contains { $0.invariant == .sameVerdict && $0.exchange == nil }, "\(off)")
    }

    @Test("the clone rule (MRTD): a chip without the document's active authentication key is called genuine")
    func cloneRule() throws {
        let op = try #require(MRTDMatrixTests.operations["read clone"])
        let (on, off) = Self.withAndWithout(op) { run in MRTDRemovedChecks.$cloneRule.withValue(true) { run() } }
        #expect(on.failures.isEmpty, "\(on)")
        #expect(off.failures.contains { $0.invariant == .sameVerdict && $0.exchange == nil }, "\(off)")
    }

    @Test("the DDOL's 9F37 check (EMV): a card signing nothing fresh is DDA verified")
    func ddolUnpredictableNumber() throws {
        let op = try #require(EMVMatrixTests.operations["read ddol-without-9f37"])
        let (on, off) = Self.withAndWithout(op) { run in EMVRemovedChecks.$ddolUnpredictableNumber.withValue(true) { run() } }
        #expect(on.failures.isEmpty, "\(on)")
        #expect(off.failures.contains { $0.invariant == .sameVerdict && $0.exchange == nil }, "\(off)")
    }

    @Test("the SDMMAC comparison (SUN): a tap whose UID or counter changed on the way is verified", arguments: SUNMatrixTests.names)
    func sunMAC(_ name: String) throws {
        let layout = try #require(SUNMatrixTests.layouts.first { $0.name == name })
        let op = SUNMatrixTests.verify(layout.name, template: layout.template, fileData: layout.fileData)
        let (on, off) = Self.withAndWithout(op) { run in SUNRemovedChecks.$mac.withValue(true) { run() } }
        #expect(on.failures.isEmpty, "\(on)")
        #expect(off.failures.contains { $0.invariant == .sameVerdict && $0.exchange != nil }, "\(off)")
    }
}
