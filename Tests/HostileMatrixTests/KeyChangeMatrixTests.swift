import ISO7816
import NFCTags
import TestSupport
import Testing
import VirtualCard

/// Key changes under the man in the middle: NTAG 424 DNA and DESFire EV1 `ChangeKey` of another
/// key, as `apdu-tags ntag424 change-key` and `desfire change-key` run them (authenticate, change,
/// prove the new key by an authentication). Judged against the emulated card's keys: "changed"
/// means the card holds the new key; a refusal by the card means it holds the old one; any other
/// error claims nothing, and the key is the old or the new one, never a third value. ChangeKey
/// moves the card's command counter: it is never sent twice in one run.
private typealias DESFireModel = VirtualCard.DESFireCard

@Suite("Hostile matrix: NTAG 424 DNA and DESFire key changes")
struct KeyChangeMatrixTests {
    static let zero = [UInt8](repeating: 0, count: 16)
    static let new: [UInt8] = (0..<16).map { UInt8(truncatingIfNeeded: $0 * 23 + 5) }
    static let changeKey: @Sendable ([UInt8]) -> String? = { $0.count > 1 && $0[0] == 0x90 && $0[1] == 0xC4 ? "ChangeKey" : nil }

    /// What the run said, judged against the key the card holds.
    static func judge(_ result: Result<HostileOutcome, any Error>, held: [UInt8], others: Bool) -> String? {
        guard held == zero || held == new else { return "the key holds neither the old nor the new value" }
        guard others else { return "another key changed" }
        switch result {
        case .success(let o) where o.verdict:
            return held == new ? nil : "reported changed, the card holds the old key"
        case .success:
            return nil
        case .failure(let error as DESFireError) where error.statusWord != nil && error.kind != .badCryptogram:
            // The card's refusal stands only where the new key did not authenticate afterwards.
            return held == zero ? nil : "reported refused (\(error)), the card holds the new key"
        case .failure:
            return nil
        }
    }

    static let ntag424 = ntag424(nil)

    /// `hostile`: a tag that answers ChangeKey with its MAC and keeps the old key: only the new
    /// key's authentication can tell, and "changed" must not be said.
    static func ntag424(_ hostile: NTAG424TagModel.Hostile?) -> HostileOperation {
      HostileOperation(family: "NTAG 424 DNA", name: "change-key 2" + (hostile.map { ", hostile: \($0.rawValue)" } ?? ""), secrets: [.bytes(new)],
                       counted: changeKey, expectVerdict: hostile == nil) {
        let model = NTAG424TagModel(hostile: hostile)
        return HostileRun(card: ApplicationHost(applications: [model], uid: model.uid)) { context in
            guard let tag = try NTAG424Tag.detect(context.transport()) else { throw TagError(.notNDEF, "no NTAG 424 DNA") }
            try tag.authenticate(keyNumber: 0, key: zero)
            try tag.changeKey(2, to: new, from: zero, version: 1)
            // As `ntag424 change-key` does: the new key proves itself, and a failure there is
            // "acknowledged but does not authenticate", never a refusal.
            do { try tag.authenticate(keyNumber: 2, key: new) } catch {
                throw TagError(.verifyFailed, "the tag acknowledged the change of key 2 but does not authenticate with the new key: \(error)")
            }
            return HostileOutcome(verdict: true, vouched: "key 2 changed", shown: "key 2 changed (version 1) and confirmed")
        } claims: { result in
            judge(result, held: model.keys[2], others: (0..<5).allSatisfy { $0 == 2 || model.keys[$0] == zero })
        }
      }
    }

    static let desfire = HostileOperation(family: "DESFire EV1", name: "change-key 1", secrets: [.bytes(new)], counted: changeKey) {
        let app = DESFireModel.Application(aid: 0x00F001, keyType: .aes, keyCount: 2, files: [])
        let model = DESFireModel(image: DESFireModel.Image(chip: DESFireModel.Chip(generation: .ev1), applications: [app]))
        let aid = DESFireApplicationID(rawValue: 0x00F001)!
        return HostileRun(card: model) { context in
            guard let card = try NFCTags.DESFireCard.detect(context.transport()) else { throw TagError(.notNDEF, "no DESFire") }
            try card.selectApplication(aid)
            try card.authenticate(keyNumber: 0, key: .zero(.aes))
            let change = try card.changeKey(1, to: try DESFireKey(.aes, new, version: 4), from: .zero(.aes), confirmed: true)
            return HostileOutcome(verdict: change.proved, vouched: "key 1 changed", shown: "key 1 changed (version \(change.version)) \(change.answerContradicted ?? "")")
        } claims: { result in
            guard let keys = model.image.application(0x00F001)?.keys else { return "the application is gone" }
            return judge(result, held: keys[1].bytes, others: keys[0].bytes == zero)
        }
    }

    @Test("ChangeKey through the man in the middle, and a tag that drops it", arguments: ["NTAG 424 DNA", "DESFire EV1", "NTAG 424 DNA, hostile"])
    func matrix(_ name: String) {
        let report = HostileMatrix.run(name == "DESFire EV1" ? Self.desfire : name == "NTAG 424 DNA" ? Self.ntag424 : Self.ntag424(.changeKeyDropped))
        HostileMatrixLog.record(report)
        HostileKnownIssues.expectNoFailures(report)
    }
}
