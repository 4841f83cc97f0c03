import ISO7816
import NFCTags
import TestSupport
import Testing
import VirtualCard

/// Hostile NTAG 424 DNA tags: what Read_Sig gives is the tag's own choice. NXP signs the UID
/// (AN12196 §7, NT4H2421Gx §10.12: the originality signature is an ECDSA signature over the
/// 7-byte UID, secp224r1), so a signature copied from a genuine tag onto another UID, or none at
/// all, must never read "genuine", in or out of a session, whatever a man in the middle does.
enum NTAG424HostileTag: String, Sendable, CaseIterable {
    /// A clone: AN12196's published signature, on a tag whose UID is not the one it signs.
    case copiedSignature = "signature copied from another UID"
    /// A tag that was never signed: Read_Sig answers 56 zero bytes.
    case unsigned = "unsigned"

    var uid: [UInt8] { self == .copiedSignature ? [0x04, 0x51, 0x8D, 0xFA, 0xA9, 0x61, 0x81] : NTAG424MatrixTests.uid }
    var signature: [UInt8] { self == .copiedSignature ? NTAG424MatrixTests.signature : [UInt8](repeating: 0, count: 56) }
}

extension NTAG424MatrixTests {
    /// `ntag424 info` on each hostile tag, with random ID off (Read_Sig in the clear) and on
    /// (GetCardUID and Read_Sig enciphered in a session), and `ntag424 sdm` on the clone: the
    /// provisioning may succeed (the settings are the tag's to take), but its report must not
    /// call the tag genuine.
    static let hostile: [String: HostileOperation] = {
        var ops = NTAG424HostileTag.allCases.flatMap { [info(randomID: false, card: $0), info(randomID: true, card: $0)] }
        ops += [sdmOnClone, sdm(.changeFileSettingsDropped)]
        return Dictionary(uniqueKeysWithValues: ops.map { ($0.name, $0) })
    }()

    static let sdmOnClone = HostileOperation(family: "NTAG 424 DNA", name: "sdm, hostile: \(NTAG424HostileTag.copiedSignature.rawValue)",
                                             secrets: keys.map { .bytes($0) }, counted: { $0.count > 1 && $0[0] == 0x90 && $0[1] == 0x5F ? "ChangeFileSettings" : nil },
                                             expectVerdict: false) {
        let clone = NTAG424HostileTag.copiedSignature
        let model = NTAG424TagModel(uid: clone.uid, keys: keys, originalitySignature: clone.signature)
        do {
            try Type4Tag.detect(APDUTransport(channel: EmulatedChannel(card: ApplicationHost(applications: [model], uid: model.uid)))).writeNDEF(oldMessage)
        } catch {
            Issue.record("the clean write of the starting message failed: \(error)")
        }
        return HostileRun(card: ApplicationHost(applications: [model], uid: model.uid)) { context in
            guard let tag = try NTAG424Tag.detect(context.transport()) else { throw TagError(.notNDEF, "not an NTAG 424 DNA") }
            let result = try tag.provisionSDM(plan, key: keys[0]) { _ in }
            // The verdict here is "genuine": a clone's provisioning must never earn it.
            let o = result.originality
            return HostileOutcome(verdict: o.isValid, vouched: "originality over UID \(Hex.encode(o.uid)): \(o.verdict)", shown: "serves " + result.served)
        } claims: { result in
            if case .success(let o) = result, o.verdict { return "a clone called genuine: \(o.vouched)" }
            return nil
        }
    }
}
