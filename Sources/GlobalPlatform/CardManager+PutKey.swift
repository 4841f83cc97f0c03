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
        let old = replacing.map { "version \(hex($0))" } ?? "without version \(hex(newKeys.version))"
        let answer: ResponseAPDU
        do {
            answer = try send(command, secret: true)
        } catch {
            // The card may still be there (an answer lost, not a card pulled): ask it, by its
            // cryptogram only.
            let previous = authenticatedKeys
            if let isNew = try? cardAccepts(newKeys) {
                if isNew { throw GlobalPlatformError(.interrupted, "PUT KEY's answer was lost, but the card's cryptogram matches the new keys (version \(hex(newKeys.version))): the keys are written") }
                if let previous, (try? cardAccepts(previous)) == true {
                    throw GlobalPlatformError(.interrupted, "PUT KEY's answer was lost and the card's cryptogram matches the old keys (\(old)): nothing was written; put-key again")
                }
            }
            throw GlobalPlatformError(.interrupted, "PUT KEY was cut before its answer: the card holds the old keys (\(old)) or the new ones (version \(hex(newKeys.version))); `apdu gp list` with the new keys and --key-version \(hex(newKeys.version)) tells which (a wrong key stops before anything counted), and put-key again finishes it")
        }
        guard answer.statusWord == .success else {
            throw GlobalPlatformError(.refused, "PUT KEY refused (\(answer.statusWord.hex)): the card keeps its old keys", statusWord: answer.statusWord)
        }
        let expected = [newKeys.version] + checks.flatMap { $0 }
        guard answer.data == expected else {
            throw GlobalPlatformError(.malformed, "PUT KEY answered check values that are not the new keys': the key set \(hex(newKeys.version)) may be wrong on the card; authenticate with it (`apdu gp list --key-version \(hex(newKeys.version))`) to tell, a wrong key stops before anything counted")
        }
        return checks
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
