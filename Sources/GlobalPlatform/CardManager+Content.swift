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
        // The registry read again shows it gone, and with --deps what depended on it.
        let gone = { (entries: [RegistryEntry]) in !entries.contains { $0.aid == aid || (related && $0.loadFile == aid) } }
        do {
            try deleteUnchecked(aid: aid, related: related)
        } catch let refusal as GlobalPlatformError where refusal.kind == .refused {
            throw settleRefusal("DELETE \(aid.hexString)", refusal.statusWord, gone)
        }
        try confirm("DELETE \(aid.hexString)", gone)
    }

    /// Whether this session's answers carry an R-MAC (SCP03, or SCP02 with R-MAC in the level):
    /// only then does an answer prove the card gave it. Below, a keyless man in the middle can
    /// answer 90 00 to a change the card never saw, and the registry read after it as well.
    public var answersAuthenticated: Bool { secureChannel?.level.contains(.rMAC) ?? false }

    /// A change's 90 00 is not its proof: the registry is read again and must show it (issue 52).
    /// One that does not is reported as not done, never as done.
    /// Neither a failed read nor a registry without the change proves it was not made (an
    /// unauthenticated answer may be a replay: issue 49's matrix): "not confirmed", nothing claimed.
    func confirm(_ change: String, _ shows: ([RegistryEntry]) -> Bool) throws {
        let read: (entries: [RegistryEntry], proven: Bool)
        do { read = try registryReadAgain() } catch {
            throw GlobalPlatformError(.malformed, "the card answered 90 00 to \(change), but its registry could not be read again (\(error)): not confirmed, it may or may not be done")
        }
        guard shows(read.entries) else {
            throw GlobalPlatformError(.malformed, "the card answered 90 00 to \(change), but its registry read again does not show it: not confirmed, not claimed done")
        }
        // With R-MAC the 90 00 itself carried the card's MAC; below it every answer, the listing's
        // too, is the card's unauthenticated word, and the output says so.
    }

    /// The registry read again, and whether it is the card's own word: every answer carried an
    /// R-MAC, and no kind came back empty by a bare `6A 88` (which carries none).
    func registryReadAgain() throws -> (entries: [RegistryEntry], proven: Bool) {
        let unproven = unprovenEmptyKinds.count
        let entries = try registry()
        return (entries, answersAuthenticated && unprovenEmptyKinds.count == unproven)
    }

    /// A change's error status word is not its proof either: a reader or a man in the middle can
    /// put it in place of the card's 90 00 after the card made the change (issue 49's matrix).
    /// Only a registry read again that is the card's own word settles it: the change there, an
    /// error that says it was done; not there, the refusal (nothing changed). An unauthenticated
    /// registry (no R-MAC, or a kind answered by a bare 6A 88) or none at all settles nothing:
    /// an error that claims neither (the review of issue 49: a middle's 6A 88 to every GET STATUS
    /// had turned a card lock the card made into "refused").
    func settleRefusal(_ change: String, _ status: StatusWord?, _ shows: ([RegistryEntry]) -> Bool) -> GlobalPlatformError {
        let word = status?.hex ?? "an error"
        let read: (entries: [RegistryEntry], proven: Bool)
        do { read = try registryReadAgain() } catch {
            return GlobalPlatformError(.malformed, "the card answered \(word) to \(change), and its registry could not be read again (\(error)): not confirmed, it may or may not be done")
        }
        guard read.proven else {
            return GlobalPlatformError(.malformed, "the card answered \(word) to \(change); the registry read again is not authenticated (no R-MAC on every answer) and "
                + "\(shows(read.entries) ? "shows it done" : "does not show it"): not confirmed, it may or may not be done")
        }
        if shows(read.entries) {
            return GlobalPlatformError(.malformed, "the card answered \(word) to \(change), yet its registry read again shows it done: done, and something between the card and us changed the answer")
        }
        return GlobalPlatformError(.refused, "\(change) refused: \(word)", statusWord: status)
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
            throw settleRefusal("SET STATUS \(aid.hexString) (\(locked ? "lock" : "unlock"))", answer.statusWord) { entries in
                entries.contains { $0.aid == aid && $0.isLocked == locked }
            }
        }
        try confirm("SET STATUS \(aid.hexString) (\(locked ? "lock" : "unlock"))") { entries in
            entries.contains { $0.aid == aid && $0.isLocked == locked }
        }
    }

    /// Locks the card (CARD_LOCKED, §5.1.1.4): only the ISD can be selected until it is unlocked.
    public func lockCard() throws {
        let answer = try send(CommandAPDU(cla: 0x80, ins: 0xF0, p1: 0x80, p2: 0x7F))
        guard answer.statusWord == .success else {
            throw settleRefusal("SET STATUS (card lock)", answer.statusWord) { entries in entries.contains { $0.kind == .issuerSecurityDomain && $0.isLocked } }
        }
        try confirm("SET STATUS (card lock)") { entries in
            entries.contains { $0.kind == .issuerSecurityDomain && $0.isLocked }
        }
    }
}
