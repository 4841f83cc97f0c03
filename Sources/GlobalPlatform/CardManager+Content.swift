// Changing what is on the card: DELETE, SET STATUS (lock, unlock, card lock). Each is checked
// against the registry before it is sent, so a refusal costs the card nothing.
import ISO7816

extension CardManager {
    /// Deletes `aid` (Card Specification §11.2). Refuses the ISD, and a load file with
    /// applications made from it unless `related` (they go with it).
    public func delete(aid: [UInt8], related: Bool = false) throws {
        let entries = try registry()
        if aid == isdAID || entries.contains(where: { $0.kind == .issuerSecurityDomain && $0.aid == aid }) {
            throw GlobalPlatformError(.policy, "\(aid.hexString) is the Issuer Security Domain: it is never deleted")
        }
        guard let entry = entries.first(where: { $0.aid == aid }) else {
            throw GlobalPlatformError(.refused, "\(aid.hexString) is not in the card's registry")
        }
        if entry.kind == .loadFile, !related {
            let instances = entries.filter { $0.loadFile == aid }
            if !instances.isEmpty {
                throw GlobalPlatformError(.policy, "package \(aid.hexString) has \(instances.count) instance\(instances.count == 1 ? "" : "s") (\(instances.map(\.aid.hexString).joined(separator: ", "))): delete them too with --deps")
            }
        }
        try deleteUnchecked(aid: aid, related: related)
    }

    /// DELETE without the registry check: a partial load file, which the registry does not list.
    public func deleteUnchecked(aid: [UInt8], related: Bool) throws {
        let answer = try send(CommandAPDU(cla: 0x80, ins: 0xE4, p1: 0x00, p2: related ? 0x80 : 0x00, data: [0x4F, UInt8(aid.count)] + aid, ne: 256))
        guard answer.statusWord == .success else {
            throw GlobalPlatformError(.refused, "DELETE \(aid.hexString) refused: \(answer.statusWord.hex)", statusWord: answer.statusWord)
        }
    }

    /// Locks or unlocks an application or security domain (SET STATUS, §11.10).
    public func setLocked(aid: [UInt8], _ locked: Bool) throws {
        let entries = try registry()
        guard let entry = entries.first(where: { $0.aid == aid && ($0.kind == .application || $0.kind == .securityDomain) }) else {
            throw GlobalPlatformError(.refused, "\(aid.hexString) is no application or security domain in the registry")
        }
        let state = locked ? entry.lifeCycle | 0x80 : entry.lifeCycle & 0x7F
        let answer = try send(CommandAPDU(cla: 0x80, ins: 0xF0, p1: entry.kind == .securityDomain ? 0x60 : 0x40, p2: state, data: aid))
        guard answer.statusWord == .success else {
            throw GlobalPlatformError(.refused, "SET STATUS \(aid.hexString) refused: \(answer.statusWord.hex)", statusWord: answer.statusWord)
        }
    }

    /// Locks the card (CARD_LOCKED, §5.1.1.4): only the ISD can be selected until it is unlocked.
    public func lockCard() throws {
        let answer = try send(CommandAPDU(cla: 0x80, ins: 0xF0, p1: 0x80, p2: 0x7F))
        guard answer.statusWord == .success else {
            throw GlobalPlatformError(.refused, "SET STATUS (card lock) refused: \(answer.statusWord.hex)", statusWord: answer.statusWord)
        }
    }
}
