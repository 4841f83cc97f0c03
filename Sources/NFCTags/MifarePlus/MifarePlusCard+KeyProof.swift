// A sector key written in SL3 proves itself only by opening a session: keys cannot be read, and
// the write's answer MAC says the card took the command, not that it kept the value (the hostile
// matrix's `keyWriteDropped`). What such a session proves, and what it cannot.
import ISO7816

/// What shows that a key or configuration block written in SL3 holds the new value (they do not
/// read back). Its raw value is the CLI's JSON `proof`.
public enum MifarePlusKeyWriteProof: String, Sendable, Hashable {
    /// A sector key: the card's answer to the write carried its MAC, and the new key opened a
    /// session and read the key's sector under MAC (a card that answers with its MAC and keeps
    /// the old key fails here). Which of the sector's two keys holds it, no session can tell:
    /// AuthenticateFirst names the key block in the clear and its proof binds the key's value,
    /// not the block, and the write's own authentication is as unbound (the reviews of this
    /// proof: a keyless middle rewrote both). A card that drops the value, behind a middle that
    /// names the sector's other key while that key holds the new value, would pass.
    case sectorOpens = "answer MAC and new key opens the sector"
    /// The answer's MAC alone: 9000-9003 and B000-B003, which no read or session ties to them.
    case answerMAC = "answer MAC"
}

extension MifarePlusCard {
    /// What a session opened with a key written shows of the key block.
    enum KeyProof {
        /// The new key opened a session, and a MACed read of a block of the key's sector went
        /// through in it: the new value is sector `sector`'s key A or key B.
        case opensSector(Int)
        /// Nothing proven (the new key refused, the reads refused or failing, no answer): what
        /// stopped it. A refusal proves nothing: anyone between the tool and the card can answer `06`.
        case unproven(any Error)
    }

    /// The keys a session can tie to their sector: the sector keys. The card master key 9000 and
    /// the configuration key 9001 open sessions no read can tie to them, and the level switch
    /// keys 9002 and 9003 are never tried (AuthenticateFirst with them is what switches an SL1
    /// or SL2 card's level).
    static func keyProvable(_ block: UInt16) -> Bool { MifarePlusBlockNumber.sectorKeyOf(block) != nil }

    /// Opens a fresh session with `new` as key block `block` (a sector key), then reads a block
    /// of the key's sector under MAC in it: the card refuses a read outside the session's
    /// sector, and the read's MAC covers the block number both ways, so a session redirected to
    /// another sector's key does not get through. The sector's first block is read, and, when
    /// the card refuses it (its access bits may deny that key the data), the trailer, whose
    /// access bits every trailer condition lets key A read, in a session opened again.
    func keyProof(_ block: UInt16, new: [UInt8], layout: MifarePlusLayout) -> KeyProof {
        guard let (sector, _) = MifarePlusBlockNumber.sectorKeyOf(block), let newKey = MifarePlusKey(new) else {
            return .unproven(MifarePlusError(.refused, "not a sector key"))
        }
        let blocks = layout.blocks(inSector: sector)
        var refusal: any Error = MifarePlusError(.refused, "no block read")
        for target in [blocks.lowerBound, blocks.upperBound - 1] {
            forgetSession()
            do { try authenticate(block, key: newKey, first: true) } catch { return .unproven(error) }
            do {
                _ = try read(block: UInt16(target), count: 1)
                return .opensSector(sector)
            } catch let e as MifarePlusError where e.kind == .status {
                refusal = e
            } catch {
                return .unproven(error)
            }
        }
        return .unproven(refusal)
    }

    /// How a person sees which value key block `block` holds (the CLI's words).
    static func keyCheck(_ block: UInt16, layout: MifarePlusLayout) -> String {
        guard let (sector, type) = MifarePlusBlockNumber.sectorKeyOf(block) else { return "a session opened with the new key tells which" }
        return "apdu plus read --block \(layout.blocks(inSector: sector).lowerBound) --key \(type):<the new key> tells which"
    }
}
