// A key written in SL3 proves itself only by opening a session: keys cannot be read, and the
// write's answer MAC says the card took the command, not that it kept the value (the hostile
// matrix's `keyWriteDropped`). These say which value a key block holds after a write.
import ISO7816

extension MifarePlusCard {
    /// Which value a key block was proven to hold after a write. Only an authentication that
    /// succeeds proves anything: the card's answer to our random is enciphered under the key,
    /// which no one between the tool and the card can forge or replay. A refusal proves nothing
    /// (anyone can answer `06`).
    enum KeyHeld {
        /// The new key opens a session.
        case new
        /// The new key did not, and the old one opens a session.
        case old
        /// Neither opened one (or the old one is unknown): what stopped the last try.
        case unproven(any Error)
    }

    /// The keys whose value a session proves: the sector keys, the card master key and the
    /// configuration key. The level switch keys (9002, 9003) are not tried: AuthenticateFirst
    /// with them is what switches an SL1 or SL2 card's level.
    static func keyProvable(_ block: UInt16) -> Bool {
        (0x4000...0x404F).contains(block) || block == MifarePlusBlockNumber.cardMasterKey || block == MifarePlusBlockNumber.cardConfigurationKey
    }

    /// Tries `new` on key block `block` in a fresh session, then `old` (when known) if that fails.
    func keyHeld(_ block: UInt16, new: [UInt8], old: MifarePlusKey?) -> KeyHeld {
        guard let newKey = MifarePlusKey(new) else { return .unproven(MifarePlusError(.refused, "a key is 16 bytes")) }
        var last: any Error = MifarePlusError(.refused, "no key tried")
        for (candidate, held) in [(newKey, KeyHeld.new)] + (old.map { [($0, KeyHeld.old)] } ?? []) {
            forgetSession()
            do {
                try authenticate(block, key: candidate, first: true)
                return held
            } catch {
                last = error
            }
        }
        return .unproven(last)
    }

    /// How a person sees which value key block `block` holds (the CLI's words).
    static func keyCheck(_ block: UInt16, layout: MifarePlusLayout) -> String {
        guard (0x4000...0x404F).contains(block) else { return "a session opened with the new key tells which" }
        let sector = (Int(block) - 0x4000) / 2
        let type = block & 1 == 0 ? "A" : "B"
        return "apdu plus read --block \(layout.blocks(inSector: sector).lowerBound) --key \(type):<the new key> tells which"
    }
}
