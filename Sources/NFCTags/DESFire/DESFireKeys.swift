// Changing DESFire keys: ChangeKey in both cases, the new key proven, the risks that need
// confirmation, and which key holds after a cut.
import CardCrypto
import ISO7816

/// What `changeKey` did: the key changed, and whether an authentication with the new key proved it.
public struct DESFireKeyChange: Sendable, Hashable {
    public var keyNumber: UInt8
    public var version: UInt8
    /// True once an authentication with the new key succeeded (the card holds exactly it).
    public var proved: Bool
    /// The answer to ChangeKey when it was an error (or failed its MAC) although the card
    /// authenticates with the new key: the change happened, proved by that authentication, and
    /// something between the card and us changed its answer.
    public var answerContradicted: String? = nil
}

extension DESFireCard {
    /// Why changing key `number` here cannot be undone without the new key, or nil: the card
    /// master key, an application master key (key 0), or the key that changes the other keys.
    /// Such changes need `confirmed`; change them last, after the others are proved.
    public func changeKeyRisk(_ number: UInt8, settings: DESFireKeyInfo?) -> String? {
        if application == .picc { return "the card master key guards every application and the card's format" }
        if number == 0 { return "key 0 is the application master key (settings, files, deleting the application)" }
        if case let .key(k)? = settings?.settings.changeKeyAccess, k == number { return "key \(number) is the key that changes the application's other keys" }
        return nil
    }

    /// ChangeKey (`90 C4`), in a session of the key the application's settings name for key
    /// changes, then proved by an authentication with the new key.
    ///
    /// - Changing the authenticated key itself: the new key (‖ AES version) ‖ CRC of the
    ///   command; the session ends with it.
    /// - Changing another key: (new ⊕ old) (‖ AES version) ‖ CRC of the command ‖ CRC of the
    ///   new key, so a wrong `old` is refused by the card (91 1E) and nothing changes.
    ///
    /// EV1 uses CRC32 (over command, key number and cryptogram), legacy CRC16 (over the
    /// cryptogram), EV2 CRC32 of the new key only (its MAC covers the rest). At the card level
    /// the key number carries the new key's family (40 3K3DES, 80 AES). The cryptogram is marked
    /// secret for traces and recordings.
    ///
    /// - Parameters:
    ///   - number: the key's number in the selected application (or 0 at card level).
    ///   - new: the key's new value; its type may differ from the old key's.
    ///   - old: the key's current value; needed unless it is the authenticated key (give it all
    ///     the same: after an error answer to ChangeKey it proves the key unchanged).
    ///   - confirmed: required when `changeKeyRisk` names a risk.
    ///   - settings: the application's key settings when known (for `changeKeyRisk`).
    /// - Throws: `DESFireError` (`.needsConfirmation` before anything is sent); the channel's
    ///   errors. After an I/O error while the command was on its way the key is the old or the
    ///   new one: `keyHolding(_:of:candidates:)` tells which.
    @discardableResult
    public func changeKey(_ number: UInt8, to new: DESFireKey, from old: DESFireKey?, confirmed: Bool = false, settings: DESFireKeyInfo? = nil) throws -> DESFireKeyChange {
        try changeKey(number, to: new, from: old, confirmed: confirmed, settings: settings, proving: true)
    }

    /// The same; `proving` false only where a published trace changes a key twice in a row.
    @discardableResult
    func changeKey(_ number: UInt8, to new: DESFireKey, from old: DESFireKey?, confirmed: Bool, settings: DESFireKeyInfo?, proving: Bool) throws -> DESFireKeyChange {
        guard let session else { throw DESFireError(.authenticationError, "ChangeKey needs an authentication with the key that changes keys first") }
        guard number <= 0x0D else { throw DESFireError(.parameterError, "keys are numbered 0-13, not \(number)") }
        if let risk = changeKeyRisk(number, settings: settings), !confirmed {
            throw DESFireError(.needsConfirmation, "changing key \(number) cannot be undone without the new key: \(risk); confirm it once the other keys are set and proved; nothing was sent")
        }
        let sameKey = number == session.keyNumber
        if !sameKey {
            guard let old else { throw DESFireError(.parameterError, "changing key \(number) in a session of key \(session.keyNumber) needs its current value") }
            guard old.stored.count == new.stored.count else {
                throw DESFireError(.parameterError, "the old and new keys differ in length (\(old.type), \(new.type)); an application's keys share one family")
            }
        }
        var keyByte = number
        if application == .picc {
            // The card master key may change family: its number carries the new family (libfreefare, proxmark3).
            keyByte |= new.type.family.rawValue << 6
        }
        let newBytes = new.stored
        var cryptogram = sameKey ? newBytes : zip(newBytes, old?.stored ?? []).map { $0 ^ $1 }
        if new.type == .aes { cryptogram.append(new.version) }
        switch session.scheme {
        case .legacy:
            cryptogram += CRC.crc16(cryptogram)
            if !sameKey { cryptogram += CRC.crc16(newBytes) }
        case .iso, .aes:
            cryptogram += CRC.crc32([0xC4, keyByte] + cryptogram)
            if !sameKey { cryptogram += CRC.crc32(newBytes) }
        case .ev2:
            if !sameKey { cryptogram += CRC.crc32(newBytes) }
        }
        let what = "ChangeKey \(number)"
        let scheme = application == .picc || session.scheme == .ev2 || sameKey ? nil : session.scheme.accepting(new.type)
        do {
            if sameKey {
                // No MAC comes back: the session's key is gone with the change.
                let payload = try session.protect(ins: 0xC4, header: [keyByte], data: cryptogram, security: .cryptogram)
                endSession()
                let (_, status) = try exchange(0xC4, payload, secretFrom: 1)
                guard status == StatusWord(rawValue: 0x9100) else { throw DESFireError.status(status, what) }
            } else {
                _ = try command(0xC4, header: [keyByte], data: cryptogram, security: .cryptogram, what: what, secret: true)
            }
        } catch let refusal as DESFireError where refusal.statusWord != nil || refusal.kind == .badCryptogram || refusal.kind == .malformed {
            // A refusal, or an answer whose MAC fails, is only an answer: a reader or a man in the
            // middle can put it in place of the card's 91 00 after the card changed the key, and
            // answer the authentication after it too (issue 49's matrix; its review). Each claim
            // needs its own proof: the old key authenticates (refused, nothing changed), the new
            // one does (done), or neither does (not confirmed: the key may be either).
            if let old, (try? authenticate(keyNumber: number, key: old, scheme: application == .picc || session.scheme == .ev2 ? nil : session.scheme.accepting(old.type))) != nil {
                throw refusal
            }
            do {
                try authenticate(keyNumber: number, key: new, scheme: scheme)
            } catch {
                throw DESFireError(.badCryptogram, "\(refusal.message); and neither the old key given nor the new one authenticates now: not confirmed, key \(number) may be either (a 91 1E from the card itself means the old key given is not the key's value)")
            }
            return DESFireKeyChange(keyNumber: number, version: new.version, proved: true, answerContradicted: refusal.message)
        }
        guard proving else { return DESFireKeyChange(keyNumber: number, version: new.version, proved: false) }
        // The new key proves itself.
        do {
            try authenticate(keyNumber: number, key: new, scheme: scheme)
        } catch let e as DESFireError {
            // Whatever the card (or whatever stands between) answers here, the change was
            // acknowledged: never a status that reads as "refused, nothing changed".
            throw DESFireError(.badCryptogram, "the card acknowledged the change of key \(number) but does not authenticate with the new key: \(e.message)")
        }
        return DESFireKeyChange(keyNumber: number, version: new.version, proved: true)
    }

    /// After an interrupted key change: which of `candidates` key `number` of application `aid`
    /// holds now, tried in order by authenticating with each (nil: none of them). Leaves the card
    /// authenticated with the one that holds.
    public func keyHolding(_ number: UInt8, of aid: DESFireApplicationID, candidates: [DESFireKey]) throws -> DESFireKey? {
        for key in candidates {
            if application != aid || session != nil { try selectApplication(aid) }
            do {
                try authenticate(keyNumber: number, key: key)
                return key
            } catch let e as DESFireError where e.kind == .authenticationError || e.kind == .badCryptogram || e.kind == .integrityError {
                continue
            }
        }
        return nil
    }
}

extension DESFireAuthenticationScheme {
    /// This scheme when it takes `type`, else the EV1 scheme that does.
    func accepting(_ type: DESFireKeyType) -> DESFireAuthenticationScheme {
        if accepts(type) { return self }
        return type == .aes ? .aes : .iso
    }
}
