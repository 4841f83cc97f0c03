import ISO7816
import NDEF
@testable import NFCTags
import SUN
import Testing
import VirtualCard

/// `provisionSDM` and `changeKey` cut after every exchange, in both ways a pull can take the
/// exchange in flight, on every template and starting state: the tag holds its old message and
/// settings, an empty message, or the new URL (with the old settings, or the new ones only after
/// it); the backup puts the old message back; provisioning again finishes. A key is its old value
/// or its new one, never anything else, and the others do not change.
@Suite("NTAG 424 DNA fault matrix: provisioning and key changes cut after every exchange")
struct NTAG424FaultMatrixTests {
    static let zero = [UInt8](repeating: 0, count: 16)
    static let templates = ["https://example.com/t?e={picc}&c={mac}", "https://example.com/t?uid={uid}&ctr={ctr}&c={mac}", "https://x.example/?e={picc}&enc={file}&c={mac}"]

    /// Starting states: as shipped, holding another message, and provisioned with another template.
    static func starts() throws -> [(String, NTAG424TagModel)] {
        let shipped = NTAG424TagModel()
        let holding = NTAG424TagModel()
        try Type4Tag.detect(transport(holding)).writeNDEF(NDEFMessage(records: [.uri("https://old.example/page")]).encoded())
        let provisioned = NTAG424TagModel()
        _ = try NTAG424Tag.detect(transport(provisioned))!.provisionSDM(try SUNURLTemplate("https://old.example/?p={picc}&m={mac}"), key: zero) { _ in }
        return [("as shipped", shipped), ("holding a message", holding), ("provisioned before", provisioned)]
    }

    static func transport(_ model: NTAG424TagModel, cutAfter: Int? = nil, mode: CutChannel.Mode = .beforeExecution) -> APDUTransport {
        APDUTransport(channel: CutChannel(card: ApplicationHost(applications: [model], uid: model.uid), cutAfter: cutAfter, mode: mode))
    }

    /// A copy of `model` in the same state (the emulator's state is its files and keys).
    static func copy(_ model: NTAG424TagModel) -> NTAG424TagModel {
        let c = NTAG424TagModel(uid: model.uid, keys: model.keys, originalitySignature: model.originalitySignature, randomID: model.randomID)
        c.restoreState(from: model)
        return c
    }

    /// The NDEF file's message per NLEN, read from the bytes alone.
    static func message(_ file: [UInt8]) -> [UInt8] {
        let n = Int(file[0]) << 8 | Int(file[1])
        return n + 2 <= file.count ? Array(file[2..<(2 + n)]) : []
    }

    @Test("provisionSDM cut after every exchange: old, empty or new URL; SDM only with the new URL; the backup restores, a rerun finishes", arguments: templates)
    func provisioning(_ template: String) throws {
        let plan = try SUNURLTemplate(template, fileData: template.contains("{file}") ? Array("0123456789abcdef".utf8) : nil)
        var cases = 0, totalExchanges = 0
        for (name, start) in try Self.starts() {
            let oldMessage = Self.message(start.ndefFile), oldSDM = start.file(2)!.sdm
            // The number of exchanges of a whole run.
            let probe = Self.copy(start)
            let counter = CutChannel(card: ApplicationHost(applications: [probe], uid: probe.uid), cutAfter: nil)
            _ = try NTAG424Tag.detect(APDUTransport(channel: counter))!.provisionSDM(plan, key: Self.zero) { _ in }
            totalExchanges = counter.exchanges
            for mode in CutChannel.Mode.allCases {
                for n in 0..<totalExchanges {
                    let model = Self.copy(start)
                    var backup: TagBackup?
                    do {
                        guard let tag = try NTAG424Tag.detect(Self.transport(model, cutAfter: n, mode: mode)) else { continue }
                        _ = try tag.provisionSDM(plan, key: Self.zero) { backup = $0 }
                    } catch {}
                    cases += 1
                    let message = Self.message(model.ndefFile), sdm = model.file(2)!.sdm, newMessage = Array(plan.fileContents.dropFirst(2))
                    #expect([oldMessage, [], newMessage].contains(message), "\(name), cut after \(n): a message that is neither old, empty nor new")
                    // The settings: the old ones with the old message, SDM off (any of the three
                    // messages: it was paused for the write), or the new ones with the new URL only.
                    let consistent = (sdm == oldSDM && message == oldMessage) || sdm.isEmpty || (sdm == plan.settings.encoded && message == newMessage)
                    #expect(consistent, "\(name), cut after \(n): SDM settings \(sdm.hexString) with a \(message.count)-byte message")
                    #expect(model.file(2)!.read == 0xE, "\(name), cut after \(n): the NDEF file is no longer free to read")
                    // The backup puts the old message back from the states before the settings changed.
                    if let backup, sdm.isEmpty, message != oldMessage {
                        let again = Self.copy(model)
                        try Type4Tag.detect(Self.transport(again)).restore(backup)
                        #expect(Self.message(again.ndefFile) == oldMessage, "\(name), cut after \(n): the restore")
                    }
                    // Running it again finishes, and the tag then serves a URL the SUN module accepts.
                    let served = try NTAG424Tag.detect(Self.transport(model))!.provisionSDM(plan, key: Self.zero) { _ in }.served
                    let result = try SUNMessage(url: served, template: try SUNTemplate(url: template)).verify(keys: try SDMKeys(metaRead: Self.zero, fileRead: Self.zero))
                    #expect(result.uid == model.uid, "\(name), rerun after a cut at \(n)")
                }
            }
        }
        print("provisionSDM \(template): \(totalExchanges) exchanges for a whole run; \(cases) cut cases checked")
        #expect(cases > 50)
    }

    @Test("changeKey cut after every exchange: the key is old or new, never another value, and the others stay", arguments: [UInt8(2), 0])
    func keyChanges(_ number: UInt8) throws {
        let new: [UInt8] = (0..<16).map { UInt8(truncatingIfNeeded: $0 * 17 + 3) }
        let probe = NTAG424TagModel()
        let counter = CutChannel(card: ApplicationHost(applications: [probe], uid: probe.uid), cutAfter: nil)
        let tag = try NTAG424Tag.detect(APDUTransport(channel: counter))!
        try tag.authenticate(keyNumber: 0, key: Self.zero)
        try tag.changeKey(number, to: new, from: Self.zero, version: 1)
        let total = counter.exchanges
        for mode in CutChannel.Mode.allCases {
            for n in 0..<total {
                let model = NTAG424TagModel()
                do {
                    let t = try NTAG424Tag.detect(Self.transport(model, cutAfter: n, mode: mode))!
                    try t.authenticate(keyNumber: 0, key: Self.zero)
                    try t.changeKey(number, to: new, from: Self.zero, version: 1)
                } catch {}
                #expect(model.keys[Int(number)] == Self.zero || model.keys[Int(number)] == new, "key \(number), cut after \(n)")
                for other in 0..<5 where other != Int(number) { #expect(model.keys[other] == Self.zero) }
                // One of the two authenticates: the key is never lost.
                let t = try NTAG424Tag.detect(Self.transport(model))!
                let known = model.keys[Int(number)] == new ? new : Self.zero
                try t.authenticate(keyNumber: number, key: known)
            }
        }
    }
}
