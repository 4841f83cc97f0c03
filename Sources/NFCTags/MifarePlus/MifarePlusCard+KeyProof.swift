// A sector key written in SL3 proves itself only by opening a session: keys cannot be read, and
// the write's answer MAC says the card took the command, not that it kept the value (the hostile
// matrix's `keyWriteDropped`). What such a session proves, and what it cannot.
import ISO7816

/// What shows that a key or configuration block written in SL3 holds the new value (they do not
/// read back). Its raw value is the CLI's JSON `proof`.
public enum MifarePlusKeyWriteProof: String, Sendable, Hashable {
    /// The new key opened a session and read its sector under MAC, and the sector's other key
    /// holds another value (it is the key the write went under): the block holds it.
    case keyOpensSector = "new key authenticates"
    /// The new key opened a session and read the key's sector under MAC, and the card's answer
    /// to the write carried its MAC. Which of the sector's two keys the session was a session
    /// cannot tell: a card that answers with its MAC and drops the value, behind a middle that
    /// names the sector's other key in AuthenticateFirst while that key holds the new value,
    /// would pass.
    case sectorOpens = "answer MAC and new key opens the sector"
    /// The answer's MAC alone: 9000-9003 and B000-B003, which no read or session ties to them.
    case answerMAC = "answer MAC"
}

extension MifarePlusCard {
    /// What a session opened with a key written shows of the key block.
    enum KeyProof {
        /// The new key opened a session, and a MACed read of a block of the key's sector went
        /// through in it: the new value is sector `sector`'s key A or key B. Which of the two a
        /// session cannot tell: AuthenticateFirst names the key block in the clear and the proof
        /// binds the value alone (the review of issue 49: a keyless middle rewrote the block
        /// number to another key holding the same value). `siblingExcluded`: the sector's other
        /// key is known to hold another value (it is the key the write went under), so the
        /// value is the written block's.
        case opens(sector: Int, siblingExcluded: Bool)
        /// Nothing proven (the new key refused, or the read refused, or no answer): what stopped it.
        /// A refusal proves nothing either: anyone between the tool and the card can answer `06`.
        case unproven(any Error)
    }

    /// The keys a session can tie to their sector: the sector keys. The card master key 9000 and
    /// the configuration key 9001 open sessions no read can tie to them, and the level switch
    /// keys 9002 and 9003 are never tried (AuthenticateFirst with them is what switches an SL1
    /// or SL2 card's level).
    static func keyProvable(_ block: UInt16) -> Bool { (0x4000...0x404F).contains(block) }

    /// Opens a fresh session with `new` as key block `block` (a sector key), then reads the
    /// sector's first block under MAC in it: the card refuses a read outside the session's
    /// sector, and the read's MAC covers the block number both ways, so a session redirected to
    /// another sector's key does not get through. `wentUnder`: the key block and key the write
    /// was made under.
    func keyProof(_ block: UInt16, new: [UInt8], wentUnder: (number: UInt16, key: MifarePlusKey), layout: MifarePlusLayout) -> KeyProof {
        guard Self.keyProvable(block), let newKey = MifarePlusKey(new) else { return .unproven(MifarePlusError(.refused, "not a sector key")) }
        let sector = (Int(block) - 0x4000) / 2
        forgetSession()
        do {
            try authenticate(block, key: newKey, first: true)
            _ = try read(block: UInt16(layout.blocks(inSector: sector).lowerBound), count: 1)
        } catch {
            return .unproven(error)
        }
        let sibling = block ^ 1
        return .opens(sector: sector, siblingExcluded: wentUnder.number == sibling && wentUnder.key.bytes != new)
    }

    /// How a person sees which value key block `block` holds (the CLI's words).
    static func keyCheck(_ block: UInt16, layout: MifarePlusLayout) -> String {
        guard (0x4000...0x404F).contains(block) else { return "a session opened with the new key tells which" }
        let sector = (Int(block) - 0x4000) / 2
        let type = block & 1 == 0 ? "A" : "B"
        return "apdu plus read --block \(layout.blocks(inSector: sector).lowerBound) --key \(type):<the new key> tells which"
    }
}
