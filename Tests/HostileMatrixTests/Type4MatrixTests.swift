import ISO7816
import NFCTags
import TestSupport
import Testing
import VirtualCard

/// NFC Forum Type 4 tags under the man in the middle (issue 49's first tag family): the NDEF
/// read, which proves nothing and so earns no verdict (its invariants: no trap, no hang), and the
/// write with its backup, whose every report is judged against the emulated tag's real file as
/// the fault matrix judges a cut: written means the new message; interrupted names a state the
/// file is in; any other error means nothing changed; never a mix.
@Suite("Hostile matrix: Type 4 tags")
struct Type4MatrixTests {
    static func message(_ size: Int, seed: Int) -> [UInt8] {
        (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed &* 7 &+ 1) }
    }

    /// The message the file holds, from its bytes alone (NLEN, then the message); nil for a
    /// length past the file.
    static func reading(_ file: [UInt8]) -> [UInt8]? {
        guard file.count >= 2 else { return nil }
        let n = Int(file[0]) << 8 | Int(file[1])
        return 2 + n <= file.count ? Array(file[2..<(2 + n)]) : nil
    }

    /// Small MLe and MLc, so a read and a write take several exchanges each.
    static var configuration: Type4TagModel.Configuration {
        var c = Type4TagModel.Configuration()
        c.fileSize = 300
        c.mle = 59
        c.mlc = 61
        return c
    }

    static let read = HostileOperation(family: "Type 4", name: "ndef-read", expectVerdict: false) {
        let model = Type4TagModel(configuration: configuration, message: message(150, seed: 1))
        return HostileRun(card: ApplicationHost(applications: [model])) { context in
            let bytes = try Type4Tag.detect(context.transport()).readNDEF()
            // An NDEF read is no proof: a man in the middle may change what it shows.
            return HostileOutcome(verdict: false, vouched: Hex.encode(bytes), shown: Hex.encode(bytes))
        }
    }

    static let write = HostileOperation(family: "Type 4", name: "ndef-write") {
        let old = message(150, seed: 1), new = message(200, seed: 2)
        let model = Type4TagModel(configuration: configuration, message: old)
        let start = model.fileContents
        return HostileRun(card: ApplicationHost(applications: [model])) { context in
            try NDEFWriteMatrix.run(Type4Tag.detect(context.transport()), new: new)
        } claims: { result in
            NDEFWriteMatrix.judge(result, held: reading(model.fileContents), why: "a length past the file's end", old: old, new: new) {
                model.fileContents == start
            }
        }
    }

    @Test("ndef-read and ndef-write (with its backup) through the man in the middle", arguments: ["ndef-read", "ndef-write"])
    func matrix(_ name: String) {
        let report = HostileMatrix.run(name == "ndef-read" ? Self.read : Self.write)
        HostileMatrixLog.record(report)
        HostileKnownIssues.expectNoFailures(report)
    }
}
