import GlobalPlatform
import ISO7816
import TestSupport
import Testing
import VirtualCard

/// Java Cards under the man in the middle: `gp info`, `gp list` (authenticate, GET STATUS),
/// `gp put-key` under SCP02 and SCP03, and the hostile card managers.
@Suite("Hostile matrix: GlobalPlatform")
struct GlobalPlatformMatrixTests {
    /// The keys a put-key writes, and the card's own (GlobalPlatform's test keys).
    static let newKeys = StaticKeys(enc: Array(0x60...0x6F), mac: Array(0x70...0x7F), dek: Array(0x80...0x8F), version: 0x31)
    static let secrets: [HostileSecret] = [.bytes(newKeys.enc), .bytes(newKeys.mac), .bytes(newKeys.dek), .bytes(StaticKeys.testKeys.enc)]

    /// EXTERNAL AUTHENTICATE counts a failure on the card, PUT KEY changes it: once each per session.
    static let counted: @Sendable ([UInt8]) -> String? = { c in
        guard c.count > 1 else { return nil }
        switch c[1] {
        case 0x82: return "EXTERNAL AUTHENTICATE"
        case 0xD8: return "PUT KEY"
        default: return nil
        }
    }

    static func registryText(_ entries: [RegistryEntry]) -> String {
        entries.map { "\($0.kind) \(Hex.encode($0.aid)) \($0.lifeCycle) \($0.modules.map { Hex.encode($0) })" }.joined(separator: "\n")
    }

    static func info(_ scp: CardManagerModel.SCP) -> HostileOperation {
        HostileOperation(family: "GlobalPlatform", name: "info \(scp)", secrets: secrets, counted: counted, expectVerdict: nil) {
            let card = CardManagerModel(scp)
            return HostileRun(card: card) { context in
                let info = try CardManager(transport: context.transport()).information()
                return HostileOutcome(verdict: false, vouched: "", shown: "\(info)")
            }
        }
    }

    /// `gp list`: a verdict only where the answers are authenticated (R-MAC: SCP03 i=70, SCP02
    /// i=35): under C-MAC only a man in the middle may change the registry, as the protocol allows.
    static func list(_ scp: CardManagerModel.SCP, i: UInt8? = nil, hostile: CardManagerModel.Hostile? = nil, expectVerdict: Bool?) -> HostileOperation {
        HostileOperation(family: "GlobalPlatform", name: "list \(scp)" + (i.map { " i=\(Hex.encode([$0]))" } ?? "") + (hostile.map { " \($0.rawValue)" } ?? ""),
                         secrets: secrets, counted: counted, expectVerdict: expectVerdict) {
            let card = CardManagerModel(scp, i: i, hostile: hostile)
            card.preinstall(package: [0xD0, 0xD1, 0xD2, 0xD3, 0xD4, 0xD5, 0x01], modules: [[0xD0, 0xD1, 0xD2, 0xD3, 0xD4, 0xD5, 0x01, 0x01]],
                            instances: [[0xD0, 0xD1, 0xD2, 0xD3, 0xD4, 0xD5, 0x01, 0x01], [0xD0, 0xD1, 0xD2, 0xD3, 0xD4, 0xD5, 0x01, 0x02]])
            return HostileRun(card: card) { context in
                let manager = CardManager(transport: context.transport())
                try manager.authenticate(keys: .testKeys)
                let registry = try manager.registry()
                // An empty kind the card gave by an error status word (which carries no R-MAC)
                // is its unauthenticated word: the listing then vouches for nothing.
                let authenticated = manager.secureChannel?.level.contains(.rMAC) == true && manager.unprovenEmptyKinds.isEmpty
                let text = registryText(registry)
                return HostileOutcome(verdict: authenticated, vouched: "level \(manager.secureChannel.map { "\($0.level)" } ?? "-")\n" + text, shown: text)
            }
        }
    }

    /// `gp put-key`: the claim (written, refused, lost with old or new found) against the
    /// card's key sets.
    static func putKey(_ scp: CardManagerModel.SCP, replacingCurrent: Bool) -> HostileOperation {
        HostileOperation(family: "GlobalPlatform", name: "put-key \(scp)" + (replacingCurrent ? " replacing" : " new set"), secrets: secrets, counted: counted) {
            let card = CardManagerModel(scp)
            let current = card.current.keySets[0].version
            var keys = newKeys
            if replacingCurrent { keys.version = current == 0x7F ? 0x01 : current + 1 }
            return HostileRun(card: card) { context in
                let manager = CardManager(transport: context.transport())
                try manager.authenticate(keys: .testKeys)
                let checks = try manager.putKey(keys, replacing: replacingCurrent ? current : nil)
                return HostileOutcome(verdict: true, vouched: "written, check values \(checks.map { Hex.encode($0) })", shown: "\(checks)")
            } claims: { result in
                let written = card.current.keySets.contains { $0.version == keys.version && $0.enc == keys.enc && $0.mac == keys.mac && $0.dek == keys.dek }
                switch result {
                case .success: return written ? nil : "put-key said written; the card does not hold the new key set"
                case .failure(let e as GlobalPlatformError):
                    let text = e.message
                    if e.kind == .refused || text.contains("nothing was written") { return written ? "said nothing was written (\(text)); the card holds the new keys" : nil }
                    if text.contains("the keys are written") { return written ? nil : "said the keys are written; the card holds the old ones" }
                    // Any other error before PUT KEY reached the card leaves it as it was; after,
                    // the message must say either may hold.
                    if card.current.received.contains(0xD8) && written && !(text.contains("may") || text.contains("or the new") || text.contains("or not")) {
                        return "the card holds the new keys; the error does not say they may be written: \(text)"
                    }
                    return nil
                case .failure(let e):
                    if written && card.current.received.contains(0xD8) { return "the card holds the new keys; the run ended in \(e), saying nothing of them" }
                    return nil
                }
            }
        }
    }

    static let package: [UInt8] = [0xD0, 0xD1, 0xD2, 0xD3, 0xD4, 0xD5, 0x01]
    static let instances: [[UInt8]] = [[0xD0, 0xD1, 0xD2, 0xD3, 0xD4, 0xD5, 0x01, 0x01], [0xD0, 0xD1, 0xD2, 0xD3, 0xD4, 0xD5, 0x01, 0x02]]

    /// What a change's error says of the card: nothing changed ("refused", "not done"), or
    /// nothing either way.
    static func claimsUnchanged(_ error: any Error) -> Bool {
        guard let e = error as? GlobalPlatformError else { return false }
        return e.kind == .refused || e.message.contains("not done") || e.message.contains("nothing was")
    }

    /// `gp delete` of an instance and `gp lock` of the other: "done" against the card's registry,
    /// and a refusal or "not done" against it too (issue 52's confirmation by the registry).
    static func change(_ scp: CardManagerModel.SCP, i: UInt8? = nil, lock: Bool) -> HostileOperation {
        HostileOperation(family: "GlobalPlatform", name: (lock ? "lock " : "delete ") + "\(scp)" + (i.map { " i=\(Hex.encode([$0]))" } ?? ""),
                         secrets: secrets, counted: counted) {
            let card = CardManagerModel(scp, i: i)
            card.preinstall(package: package, modules: [instances[0]], instances: instances)
            let target = lock ? instances[1] : instances[0]
            func changed() -> Bool {
                guard let entry = card.current.entries.first(where: { $0.aid == target }) else { return !lock }
                return lock && entry.lifeCycle & 0x80 != 0
            }
            return HostileRun(card: card) { context in
                let manager = CardManager(transport: context.transport())
                try manager.authenticate(keys: .testKeys)
                if lock { try manager.setLocked(aid: target, true) } else { try manager.delete(aid: target) }
                return HostileOutcome(verdict: true, vouched: lock ? "locked" : "deleted", shown: lock ? "locked" : "deleted")
            } claims: { result in
                switch result {
                case .success: return changed() ? nil : "reported \(lock ? "locked" : "deleted"); the card's registry does not show it"
                case .failure(let error) where claimsUnchanged(error): return changed() ? "said not done (\(error)); the card did it" : nil
                case .failure: return nil
                }
            }
        }
    }

    static var operations: [String: HostileOperation] {
        var ops: [String: HostileOperation] = [:]
        for scp in CardManagerModel.SCP.allCases {
            ops["info \(scp)"] = info(scp)
            ops["list \(scp)"] = list(scp, expectVerdict: scp == .scp03)
            ops["put-key \(scp) new set"] = putKey(scp, replacingCurrent: false)
            ops["put-key \(scp) replacing"] = putKey(scp, replacingCurrent: true)
        }
        for scp in CardManagerModel.SCP.allCases {
            ops["delete \(scp)"] = change(scp, lock: false)
            ops["lock \(scp)"] = change(scp, lock: true)
        }
        // SCP02 with R-MAC (i=35): every answer authenticated, so the listing vouches.
        ops["list scp02 i=35"] = list(.scp02, i: 0x35, expectVerdict: true)
        for hostile in CardManagerModel.Hostile.allCases where hostile != .refuseLoad {
            ops["list scp03 \(hostile.rawValue)"] = list(.scp03, hostile: hostile, expectVerdict: hostile == .legacyOnly ? true : false)
        }
        return ops
    }

    static let names = operations.keys.sorted()

    @Test("every operation and hostile card manager, every mutation", arguments: names)
    func matrix(_ name: String) throws {
        let report = HostileMatrix.run(try #require(Self.operations[name]))
        HostileMatrixLog.record(report)
        HostileKnownIssues.expectNoFailures(report)
    }
}
