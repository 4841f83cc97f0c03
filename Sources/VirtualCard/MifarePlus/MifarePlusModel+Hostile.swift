// MIFARE Plus cards that break a rule of NXP's data sheets (MF1P(H)x2 S/X, EV1 and EV2) by their
// own choice, for the hostile matrix: each answers as the rule says it would, and then does not
// do what it answered. A reader can tell only by what it proves afterwards.

extension MifarePlusModel {
    /// Ways this card misbehaves.
    public enum Hostile: String, Sendable, CaseIterable {
        /// WritePerso (`A8`) of sector 1's key A (4002) is answered `90`, as a stored value is
        /// (the data sheet: WritePerso writes the value given), and the value is dropped: the
        /// key stays the factory FF…FF.
        case persoDropsKey = "perso-drops-key"
        /// CommitPerso (`AA 03`) is answered `90`, as a switched card does (the data sheet: it
        /// moves the card to the level asked), and the card stays in SL0.
        case commitStaysSL0 = "commit-stays-sl0"
        /// CommitPerso `AA 03` is answered `90`, and the card goes to SL1 rather than SL3.
        case commitToSL1 = "commit-to-sl1"
        /// An SL3 write of a data block is answered `90` with a MAC that verifies (the data sheet:
        /// the answer confirms the write), and the block keeps its old bytes.
        case writeDropped = "write-dropped"
        /// An SL3 write of a key (a sector key, 9000-9003) is answered `90` with a MAC that
        /// verifies, and the key keeps its old value. Keys cannot be read: only a session opened
        /// with the new key shows it.
        case keyWriteDropped = "key-write-dropped"
    }

    /// The key block `persoDropsKey` drops.
    static let droppedPersoBlock: UInt16 = 0x4002

    /// Whether WritePerso of `n` is answered and then dropped.
    func dropsPerso(_ n: UInt16) -> Bool { hostile == .persoDropsKey && n == Self.droppedPersoBlock }

    /// The level CommitPerso to `target` really leaves the card in.
    func committedLevel(_ target: Level) -> Level {
        switch hostile {
        case .commitStaysSL0?: return .sl0
        case .commitToSL1? where target == .sl3: return .sl1
        default: return target
        }
    }

    /// Whether an SL3 write of block `n` is answered and then dropped.
    func dropsWrite(_ n: UInt16) -> Bool {
        switch hostile {
        case .writeDropped?: return Int(n) < Self.blockCount(sectors: sectors)
        case .keyWriteDropped?: return (0x4000...0x9003).contains(n)
        default: return false
        }
    }
}
