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

    static let read = read("ndef-read", configuration: configuration)

    static func read(_ name: String, configuration: Type4TagModel.Configuration, fileContents: [UInt8]? = nil) -> HostileOperation {
        HostileOperation(family: "Type 4", name: name, expectVerdict: false) {
            let model = Type4TagModel(configuration: configuration, message: message(150, seed: 1), fileContents: fileContents)
            return HostileRun(card: ApplicationHost(applications: [model])) { context in
                let bytes = try Type4Tag.detect(context.transport()).readNDEF()
                // An NDEF read is no proof: a man in the middle may change what it shows.
                return HostileOutcome(verdict: false, vouched: Hex.encode(bytes), shown: Hex.encode(bytes))
            }
        }
    }

    static let write = write("ndef-write", configuration: configuration)

    /// `expectVerdict`: the clean run writes (nil: a hostile tag on which it cannot, its claims judged alone).
    static func write(_ name: String, configuration: Type4TagModel.Configuration, newSize: Int = 200, expectVerdict: Bool? = true) -> HostileOperation {
        HostileOperation(family: "Type 4", name: name, expectVerdict: expectVerdict) {
            let old = message(150, seed: 1), new = message(newSize, seed: 2)
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
    }

    /// Hostile tags (NFC Forum T4T 2.0 §5.1: the CC's file size and MLe/MLc bound every access;
    /// NLEN never exceeds the file less its own two bytes), each judged by the same invariants.
    static var hostile: [String: HostileOperation] {
        var lying = configuration
        lying.announcedFileSize = 2048          // the CC promises 2048 bytes of a 300-byte file
        var tinyMLe = configuration
        tinyMLe.mle = 1
        tinyMLe.mlc = 1
        var file = [UInt8](repeating: 0, count: configuration.fileSize)
        file[0] = 0x01; file[1] = 0x2C          // NLEN 300 in a 300-byte file: 2 bytes past its end
        return [
            "ndef-read, NLEN past the file": read("ndef-read, NLEN past the file", configuration: configuration, fileContents: file),
            "ndef-read, MLe 1": read("ndef-read, MLe 1", configuration: tinyMLe),
            "ndef-write, the CC announcing a larger file": write("ndef-write, the CC announcing a larger file", configuration: lying, newSize: 400, expectVerdict: false),
            "ndef-write, MLc 1": write("ndef-write, MLc 1", configuration: tinyMLe, newSize: 30),
        ]
    }

    @Test("ndef-read and ndef-write (with its backup) through the man in the middle, and on hostile tags",
          arguments: ["ndef-read", "ndef-write"] + hostile.keys.sorted())
    func matrix(_ name: String) {
        let report = HostileMatrix.run(name == "ndef-read" ? Self.read : name == "ndef-write" ? Self.write : Self.hostile[name]!)
        HostileMatrixLog.record(report)
        HostileKnownIssues.expectNoFailures(report)
    }
}
