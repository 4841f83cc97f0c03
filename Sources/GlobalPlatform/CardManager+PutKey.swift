// PUT KEY (Card Specification §11.8, Amendment D §7.2.2): a new key set or a replacement, the
// keys enciphered under the DEK, the card's key check values compared with ours. A PUT KEY whose
// answer is lost leaves the card with the old keys or the new ones: which is found by
// authenticating as far as the card's cryptogram, never by guessing and never by a counted step.
import ISO7816

extension CardManager {
    /// Writes `newKeys` as key version `newKeys.version`: a new set, or in place of version
    /// `replacing`. Returns the check values the card confirmed.
    @discardableResult
    public func putKey(_ newKeys: StaticKeys, replacing: UInt8? = nil) throws -> [[UInt8]] {
        guard let channel = secureChannel else { throw GlobalPlatformError(.policy, "PUT KEY needs an authenticated secure channel") }
        guard newKeys.version >= 1, newKeys.version <= 0x7F else { throw GlobalPlatformError(.policy, "a key version is 01 to 7F") }
        let aes = channel.session.scp.version == 3
        var data: [UInt8] = [newKeys.version]
        var checks: [[UInt8]] = []
        for key in [newKeys.enc, newKeys.mac, newKeys.dek] {
            if aes {
                guard [16, 24, 32].contains(key.count) else { throw GlobalPlatformError(.policy, "an SCP03 key is 16, 24 or 32 bytes") }
                let enciphered = try channel.encipherKey(key)
                data += [0x88, UInt8(enciphered.count + 1), UInt8(key.count)] + enciphered
            } else {
                guard key.count == 16 else { throw GlobalPlatformError(.policy, "an SCP02 key is 16 bytes (two-key triple DES)") }
                let enciphered = try channel.encipherKey(key)
                data += [0x80, UInt8(enciphered.count)] + enciphered
            }
            let kcv = try StaticKeys.checkValue(key, aes: aes)
            checks.append(kcv)
            data += [0x03] + kcv
        }
        let command = CommandAPDU(cla: 0x80, ins: 0xD8, p1: replacing ?? 0, p2: 0x81, data: data, ne: 256)
        // The set the session was opened with, as the card named it: the one a replacement of
        // the same version takes away.
        let current = channel.cardAnswer.keyVersion
        let answer: ResponseAPDU
        do {
            answer = try send(command, secret: true)
        } catch {
            throw settle(newKeys, replacing: replacing, current: current, what: "PUT KEY's answer was lost (\(error))")
        }
        guard answer.statusWord == .success else {
            // An error status word carries no R-MAC (nor, below R-MAC, does anything): the card's
            // word alone does not say the old keys stayed. The cryptograms do.
            throw settle(newKeys, replacing: replacing, current: current, what: "PUT KEY answered \(answer.statusWord.hex)", statusWord: answer.statusWord)
        }
        let expected = [newKeys.version] + checks.flatMap { $0 }
        guard answer.data == expected else {
            throw GlobalPlatformError(.malformed, "PUT KEY answered check values that are not the new keys': the key set \(hex(newKeys.version)) may be wrong on the card; authenticate with it (`apdu gp list --key-version \(hex(newKeys.version))`) to tell, a wrong key stops before anything counted")
        }
        return checks
    }

    /// After a PUT KEY whose outcome the card did not prove, which keys it holds, found by their
    /// cryptograms alone (nothing counted): a match is proof; no match, or a refusal, is not
    /// (a man in the middle can answer anything but a matching cryptogram). The old keys
    /// matching proves nothing was written only when the new set was to replace them.
    func settle(_ newKeys: StaticKeys, replacing: UInt8?, current: UInt8, what: String, statusWord: StatusWord? = nil) -> GlobalPlatformError {
        let previous = authenticatedKeys
        let newVersion = hex(newKeys.version)
        if (try? cardAccepts(newKeys)) == true {
            return GlobalPlatformError(.interrupted, "\(what), but the card's cryptogram matches the new keys (version \(newVersion)): the keys are written", statusWord: statusWord)
        }
        let replacesCurrent = replacing == current
        if replacesCurrent, var previous {
            previous.version = current
            if (try? cardAccepts(previous)) == true {
                return GlobalPlatformError(statusWord == nil ? .interrupted : .refused,
                                           "\(what), and the card's cryptogram matches the old keys (version \(hex(current))), which the new set was to replace: nothing was written; put-key again",
                                           statusWord: statusWord)
            }
        }
        let held = replacesCurrent ? "the old keys (version \(hex(current))) or the new ones (version \(newVersion))"
                                   : "the old keys, and the new ones (version \(newVersion)) or not"
        return GlobalPlatformError(.interrupted, "\(what) and the card proved neither outcome: it holds \(held); `apdu gp list` with the new keys and --key-version \(newVersion) tells (a wrong key stops before anything counted), and put-key again finishes it",
                                   statusWord: statusWord)
    }

    /// Whether the card's cryptogram matches `keys`: INITIALIZE UPDATE only, never EXTERNAL
    /// AUTHENTICATE, so nothing is counted. Ends any secure channel.
    public func cardAccepts(_ keys: StaticKeys) throws -> Bool {
        secureChannel = nil
        try selectISD(aid: isdAID)
        do {
            _ = try SecureChannel.probe(over: transport, keys: keys)
            return true
        } catch let e as GlobalPlatformError where e.kind == .wrongKeys || e.kind == .keyVersionNotHeld {
            return false
        }
    }
}
