// Authenticating to a DESFire: the scheme a key uses by default, and the legacy, ISO, AES and EV2
// handshakes that open a session.
import CardCrypto
import ISO7816

extension DESFireCard {
    /// The scheme an authentication with `key` uses when none is named: EV2First for AES keys
    /// on EV2/EV3 cards, AES (AA) on EV1, ISO (1A) for 3K3DES and for DES/2K3DES on EV1 and
    /// later (CMAC on every frame), legacy (0A) on MF3ICD40.
    public func defaultScheme(for key: DESFireKey) -> DESFireAuthenticationScheme {
        let generation = version?.generation ?? .ev1
        switch key.type {
        case .aes: return generation.hasEV2SecureMessaging ? .ev2 : .aes
        case .tdes3: return .iso
        case .des, .tdes2: return generation == .d40 ? .legacy : .iso
        }
    }

    /// Authenticates with key `keyNumber` of the selected application (or the card) and opens the
    /// secure channel every later command goes through. The card's proof (its RndA') is checked
    /// in constant time.
    /// - Parameters:
    ///   - keyNumber: the key's number in the selected application (or the card).
    ///   - key: the key's value.
    ///   - scheme: nil for `defaultScheme(for:)`.
    ///   - nonFirst: in an EV2 session, AuthenticateEV2NonFirst (`77`): another key, the same
    ///     transaction identifier and command counter.
    /// - Throws: `DESFireError` `.authenticationError` (91 AE: not the card's key),
    ///   `.badCryptogram` (its proof does not match), `.noSuchKey`, and the channel's errors.
    public func authenticate(keyNumber: UInt8, key: DESFireKey, scheme: DESFireAuthenticationScheme? = nil, nonFirst: Bool = false) throws {
        let scheme = scheme ?? defaultScheme(for: key)
        guard scheme.accepts(key.type) else {
            throw DESFireError(.parameterError, "a \(key.type) key does not authenticate with the \(scheme) scheme")
        }
        if scheme == .ev2 {
            let current = session
            endSession()
            let ev2: EV2Session
            do {
                if nonFirst, let previous = current?.ev2 {
                    ev2 = try EV2Authentication.nonFirst(transport, session: previous, keyNumber: keyNumber, key: key.bytes, rndA: randomSource(16))
                } else {
                    ev2 = try EV2Authentication.first(transport, keyNumber: keyNumber, key: key.bytes, rndA: randomSource(16))
                }
            } catch let e as DESFireError where e.kind == .illegalCommand {
                // A card that names itself EV2 in GetVersion and refuses EV2First, as an EV1 does:
                // no fallback by itself (that 91 1C carries no MAC), but the way out named.
                throw DESFireError(.illegalCommand, e.message + "; the card names itself \(version.map { "\($0.generation)" } ?? "EV2") "
                    + "but AuthenticateEV2First was refused; neither GetVersion nor that refusal carries a MAC, so a card that does not "
                    + "speak EV2First, or something between it and the tool, said so: the AES scheme (AA) opens an EV1", statusWord: e.statusWord)
            }
            begin(DESFireSession(ev2: ev2, keyNumber: keyNumber))
            return
        }
        endSession()
        let what = "Authenticate \(scheme) with key \(keyNumber)"
        let cipher = try key.cipher()
        let n = key.type.blockSize == 16 || key.type == .tdes3 ? 16 : 8
        let r1 = try transport.send(CommandAPDU(cla: 0x90, ins: scheme.instruction, p1: 0, p2: 0, data: [keyNumber], ne: 256))
        guard r1.statusWord == StatusWord(rawValue: 0x91AF) else { throw DESFireError.status(r1.statusWord, what) }
        guard r1.data.count == n else { throw DESFireError(.malformed, "\(what): E(K, RndB) is \(r1.data.count) bytes, not \(n)") }
        let a = randomSource(n)
        guard a.count == n else { throw DESFireError(.parameterError, "\(what): RndA is \(n) bytes") }
        let rndB: [UInt8], token: [UInt8], next: [UInt8]
        do {
            if scheme == .legacy {
                // MF3ICD40 enciphers only: the PCD deciphers RndB, and deciphers in "send mode"
                // what it sends (each block XORed with the previous result, then deciphered).
                rndB = try cipher.decrypt(cbc: r1.data)
                let plain = a + rndB[1...] + [rndB[0]]
                var previous = [UInt8](repeating: 0, count: 8), out: [UInt8] = []
                for start in stride(from: 0, to: plain.count, by: 8) {
                    previous = try cipher.decrypt(block: zip(plain[start..<(start + 8)], previous).map { $0 ^ $1 })
                    out += previous
                }
                token = out
                next = [UInt8](repeating: 0, count: 8)
            } else {
                // EV1: one CBC chain from a zero IV through RndB, our token and the card's RndA'.
                rndB = try cipher.decrypt(cbc: r1.data)
                token = try cipher.encrypt(cbc: a + rndB[1...] + [rndB[0]], iv: Array(r1.data.suffix(cipher.blockSize)))
                next = Array(token.suffix(cipher.blockSize))
            }
        } catch {
            throw DESFireError(.malformed, "\(what): \(error)")
        }
        let r2 = try transport.send(CommandAPDU(cla: 0x90, ins: 0xAF, p1: 0, p2: 0, data: token, ne: 256))
        guard r2.statusWord == StatusWord(rawValue: 0x9100) else { throw DESFireError.status(r2.statusWord, what) }
        guard r2.data.count == n else { throw DESFireError(.malformed, "\(what): E(K, RndA') is \(r2.data.count) bytes, not \(n)") }
        let proof: [UInt8]
        do { proof = try cipher.decrypt(cbc: r2.data, iv: next) } catch { throw DESFireError(.malformed, "\(what): \(error)") }
        guard constantTimeEquals(proof, Array(a[1...]) + [a[0]]) else {
            throw DESFireError(.badCryptogram, "\(what): the card's RndA' does not match: it does not hold this key, or the exchange was tampered with")
        }
        let sessionKey = DESFireSession.sessionKey(rndA: a, rndB: rndB, key: key)
        begin(try DESFireSession(scheme: scheme, keyNumber: keyNumber, keyType: key.runsAsSingleDES ? .des : key.type, sessionKey: sessionKey))
    }
}
