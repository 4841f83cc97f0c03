import ISO7816
import NDEF
import NFCTags
import SUN
import TestSupport
import Testing
import VirtualCard

/// SUN under the man in the middle: a phone's tap of an emulated NTAG 424 DNA (its SDM URL read
/// as the phone reads it), then `sun verify` of the URL that came back.
@Suite("Hostile matrix: SUN")
struct SUNMatrixTests {
    /// The tag's five application keys, none the factory's zeros (so a leak is findable).
    static let keys: [[UInt8]] = (0..<5).map { (k: Int) -> [UInt8] in
        (0..<16).map { (i: Int) -> UInt8 in UInt8(truncatingIfNeeded: 0x21 + k * 37 + i * 11) }
    }

    static let layouts: [(name: String, template: String, fileData: String?)] = [
        ("encrypted PICC data and file", "https://t.example/t?e={picc}&enc={file}&c={mac}", "secret:0123456!!"),
        ("clear UID and counter", "https://t.example/{uid}/{ctr}?c={mac}", nil),
    ]

    static func verify(_ name: String, template: String, fileData: String?) -> HostileOperation {
        HostileOperation(family: "SUN", name: "verify \(name)", secrets: keys.map { .bytes($0) }) {
            let model = NTAG424TagModel(keys: keys)
            let plan = try! SUNURLTemplate(template, fileData: fileData.map { Array($0.utf8) })
            // Provisioned before the man in the middle: the tap is what is under test.
            let setup = APDUTransport(channel: EmulatedChannel(card: ApplicationHost(applications: [model], uid: model.uid)))
            let tag = try! NTAG424Tag.detect(setup)!
            _ = try! tag.provisionSDM(plan, key: keys[0]) { _ in }
            let host = ApplicationHost(applications: [model], uid: model.uid)
            return HostileRun(card: host) { context in
                guard let tag = try NTAG424Tag.detect(context.transport()) else { return HostileOutcome(verdict: false, vouched: "not detected", shown: "") }
                let bytes = try tag.plainRead(length: plan.fileContents.count)
                guard bytes.count >= 2, case let .uri(url)? = try NDEFMessage(decoding: Array(bytes.dropFirst(2))).records.first?.content() else {
                    return HostileOutcome(verdict: false, vouched: "no URI", shown: "")
                }
                do {
                    let result = try SUNMessage(url: url, template: try SUNTemplate(url: template))
                        .verify(keys: try SDMKeys(metaRead: keys[2], fileRead: keys[2]))
                    let vouched = "UID \(Hex.encode(result.uid)) counter \(result.counter.map(String.init) ?? "-") file \(result.fileData.map { Hex.encode($0) } ?? "-")"
                    return HostileOutcome(verdict: true, vouched: vouched, shown: url + "\n" + vouched)
                } catch {
                    return HostileOutcome(verdict: false, vouched: "\(error)", shown: url + "\n\(error)")
                }
            } claims: { result in
                // A verified tap names the tag's own UID and the read counter it served.
                guard case .success(let o) = result, o.verdict else { return nil }
                let truth = "UID \(Hex.encode(model.uid)) counter \(model.readCounter)"
                return o.vouched.hasPrefix(truth) ? nil : "verified, but not the tag's own UID and counter (\(truth)): \(o.vouched)"
            }
        }
    }

    static let names = layouts.map(\.name)

    @Test("a tap read through the man in the middle, then verified", arguments: names)
    func matrix(_ name: String) throws {
        let layout = try #require(Self.layouts.first { $0.name == name })
        let report = HostileMatrix.run(Self.verify(layout.name, template: layout.template, fileData: layout.fileData))
        HostileMatrixLog.record(report)
        HostileKnownIssues.expectNoFailures(report)
    }
}
