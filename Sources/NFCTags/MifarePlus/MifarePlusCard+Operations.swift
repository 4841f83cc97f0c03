// What the CLI and the library's users do with a MIFARE Plus: read a range of blocks one
// authentication per sector, write a block with the old contents kept for the restore, personalise
// an SL0 card, switch an SL1 card to SL3. Each change cut short says what the card holds.
import ISO7816
import SUN

/// The block layout of a MIFARE Plus (as a Classic's: 32 sectors of 4 blocks on 2K, then 8 of 16
/// on 4K).
public typealias MifarePlusLayout = MifareClassicLayout

extension MifarePlusCard {
    /// Reads `blocks` (each sector with `key` as its key `type`): one authentication per sector
    /// (AuthenticateFirst, then NonFirst, which keeps the counters), reads of `blocksPerRead`
    /// blocks that never cross a sector.
    public func read(blocks: Range<Int>, key: MifarePlusKey, type: MifarePlusKeyType, layout: MifarePlusLayout = MifarePlusLayout(.plus4K),
                     mode: ReadMode = .plain) throws -> [UInt8] {
        var out: [UInt8] = []
        var b = blocks.lowerBound
        while b < blocks.upperBound {
            let sector = layout.sector(ofBlock: b)
            let number = MifarePlusBlockNumber.sectorKey(sector, type)
            if authenticatedKey != number { try authenticate(number, key: key, first: session == nil) }
            let end = min(blocks.upperBound, layout.blocks(inSector: sector).upperBound)
            while b < end {
                let n = min(blocksPerRead, end - b)
                out += try read(block: UInt16(b), count: n, mode: mode)
                b += n
            }
        }
        return out
    }

    /// Which changes need the caller's confirmation, and why, in one line; nil for a data block.
    public static func confirmationNeeded(for block: UInt16, layout: MifarePlusLayout = MifarePlusLayout(.plus4K)) -> String? {
        switch block {
        case MifarePlusBlockNumber.fieldConfiguration:
            return "B003 is the field configuration block: a wrong value there can make the card unusable for good"
        case MifarePlusBlockNumber.configuration:
            return "\(MifarePlusBlockNumber.words(block)) is a configuration block: it changes how the card behaves"
        case 0x4000...0x404F, 0x9000...0x9003, 0xA000...0xA0FF:
            // Virtual card keys (A000-A0FF) are keys as the others are (issue 48: plus write took
            // them without --yes, which every other key needs).
            return "\(MifarePlusBlockNumber.words(block)) is a key: without the new key what it guards is lost"
        case 0..<UInt16(layout.blockCount) where layout.isTrailer(Int(block)):
            return "block \(block) is sector \(layout.sector(ofBlock: Int(block)))'s trailer: its access bits decide who may read and write the sector"
        default:
            return nil
        }
    }

    /// Writes one block with the session opened by `authenticate` (the caller's choice of key):
    /// the old contents read first when the key may read them (for the restore), the write
    /// MACed and its answer checked, then the block read back. A cut write throws
    /// `MifarePlusInterrupted` naming the block's state: old, or new (a block write is atomic on
    /// the chip), with the restore when the old contents are known.
    /// - Parameters:
    ///   - block: the block number (a data block, trailer, key or configuration block).
    ///   - data: 16 bytes.
    ///   - key: the key that opens the block's sector (or 9000 for system keys, 9001 for B000-B003).
    ///   - type: key A or B.
    ///   - confirmed: the caller confirmed a trailer, key or configuration change.
    ///   - layout: the card's block layout (4K's, whose first 128 blocks are 2K's, when unknown).
    ///   - mode: the data enciphered (the default) or plain.
    ///   - restoreCommand: builds the command that writes the old bytes back (the CLI's words).
    public func writeBlock(_ block: UInt16, data: [UInt8], key: MifarePlusKey, type: MifarePlusKeyType, confirmed: Bool,
                           layout: MifarePlusLayout = MifarePlusLayout(.plus4K), mode: WriteMode = .encrypted,
                           restoreCommand: ([UInt8]) -> String) throws -> (old: [UInt8]?, readBack: [UInt8]?, keyProof: MifarePlusKeyWriteProof?) {
        guard data.count == 16 else { throw MifarePlusError(.refused, "a block is 16 bytes, not \(data.count)") }
        if let why = Self.confirmationNeeded(for: block, layout: layout), !confirmed {
            throw MifarePlusError(.needsConfirmation, "\(why); nothing was written")
        }
        if block == 0 { throw MifarePlusError(.refused, "block 0 is the manufacturer block and cannot be written; nothing was written") }
        if (0xA000...0xA0FF).contains(block) {
            // Which key's session writes them the public data sheets do not say, and a guess
            // would name a block the card does not have (the third review of the key proof).
            throw MifarePlusError(.refused, "\(MifarePlusBlockNumber.words(block)) is not written by this tool: which key's session writes virtual card keys the public data sheets do not say; nothing was written")
        }
        let isData = Int(block) < layout.blockCount
        let number: UInt16
        switch block {
        case 0x9000...0x9003: number = MifarePlusBlockNumber.cardMasterKey
        case MifarePlusBlockNumber.configuration: number = MifarePlusBlockNumber.cardConfigurationKey
        case 0x4000...0x404F: number = MifarePlusBlockNumber.sectorKey((Int(block) - 0x4000) / 2, type)
        default: number = MifarePlusBlockNumber.sectorKey(layout.sector(ofBlock: Int(block)), type)
        }
        try authenticate(number, key: key, first: session == nil)
        var old: [UInt8]?
        if isData {
            do { old = try read(block: block, count: 1) } catch let e as MifarePlusError where e.kind == .status {
                // The key may write but not read: the write goes on without a restore.
                try authenticate(number, key: key, first: session == nil)
            }
        }
        do {
            try write(block: block, data: data, mode: mode)
        } catch {
            let restore = old.map { "; to put the old contents back: \(restoreCommand($0))" } ?? ""
            let what = "the write of \(MifarePlusBlockNumber.words(block))"
            // A sector key proves itself by opening a session of its sector, whatever the
            // write's answer was, or if there was none (never "not changed": a refusal proves
            // nothing, and an old key opening may be the sector's other key).
            if progress != .notRun, Self.keyProvable(block) {
                let oldOrNew = "\(MifarePlusBlockNumber.words(block)) holds its old value or the new one; \(Self.keyCheck(block, layout: layout))"
                switch keyProof(block, new: data, layout: layout) {
                case .opensSector(let sector):
                    throw MifarePlusInterrupted(operation: what, state: "the new key opens a session of sector \(sector) (a block read there under MAC), but no session tells key A from key B: \(oldOrNew)", underlying: error)
                case .unproven:
                    throw MifarePlusInterrupted(operation: what, state: "the answer carries no proof either way, and the new key could not be shown to open a session of the key's sector and read there: \(oldOrNew)", underlying: error)
                }
            }
            switch progress {
            case .notRun:
                throw error
            case .mayHaveRun:
                throw MifarePlusInterrupted(operation: "the write of \(MifarePlusBlockNumber.words(block))",
                                            state: "the block may have been written: it holds its old 16 bytes or the new ones (a block write is atomic on the chip); read it to see which\(restore)", underlying: error)
            case .answered:
                // Only a 90 carries the card's MAC: any other answer (a refusal, nothing, a MAC
                // that fails) anyone between the tool and the card can give (issue 49's matrix:
                // "refused" while the block held the new bytes). A data block read again under
                // a fresh authentication settles it; another block cannot be read.
                guard isData, let old else {
                    throw MifarePlusInterrupted(operation: what, state: "the answer carries no proof either way: the \(isData ? "block" : "key or configuration block") holds its old value or the new one\(restore)", underlying: error)
                }
                let back: [UInt8]
                do {
                    forgetSession()
                    try authenticate(number, key: key, first: true)
                    back = try read(block: block, count: 1)
                } catch {
                    throw MifarePlusInterrupted(operation: what, state: "the answer does not prove the card wrote, and the block could not be read again: it holds its old 16 bytes or the new ones (a block write is atomic on the chip)\(restore)", underlying: error)
                }
                if back == old { throw error }
                if back == data {
                    throw MifarePlusInterrupted(operation: what, state: "the block holds the new 16 bytes (read again under MAC): the card wrote them, and something between the tool and the card changed its answer\(restore)", underlying: error)
                }
                throw MifarePlusInterrupted(operation: what, state: "the block reads again as neither the old nor the new bytes (\(back.hexString))\(restore)", underlying: error)
            }
        }
        guard isData else {
            // Keys cannot be read back: the new one must open a session of its sector (a card
            // may answer 90 with its MAC and keep the old key: the hostile matrix's
            // `keyWriteDropped`). 9000-9003 and B000-B003 rest on the answer's MAC.
            guard Self.keyProvable(block) else { return (old, nil, .answerMAC) }
            let words = MifarePlusBlockNumber.words(block)
            switch keyProof(block, new: data, layout: layout) {
            case .opensSector:
                return (old, nil, .sectorOpens)
            case .unproven(let e):
                throw MifarePlusInterrupted(operation: "the check of the write of \(words)", state: "the card confirmed the write (its answer's MAC verified), but the new key could not be shown to open a session of the key's sector and read there: \(words) holds its old value or the new one; \(Self.keyCheck(block, layout: layout))", underlying: e)
            }
        }
        let back: [UInt8]
        do { back = try read(block: block, count: 1) } catch {
            // The card's MAC says it wrote; only the block read back proves it (a card may
            // answer 90 and keep the old bytes: the hostile matrix's `writeDropped`).
            throw MifarePlusInterrupted(operation: "the read-back of block \(block)", state: "the card confirmed the write (its answer's MAC verified), but the block could not be read back to prove it: it holds its old 16 bytes or the new ones; read it to see\(old.map { "; to put the old contents back: \(restoreCommand($0))" } ?? "")", underlying: error)
        }
        guard back == data else {
            throw MifarePlusError(.status, "block \(block) reads back \(back.hexString) after a confirmed write of \(data.hexString)")
        }
        return (old, back, nil)
    }

    /// Personalises an SL0 card: WritePerso of every key of `keys`, in order, then CommitPerso to
    /// `commit` when given. WritePerso can be repeated: a card cut before CommitPerso stays in
    /// SL0, and running the same command again finishes it.
    /// - Parameters:
    ///   - keys: the keys to write, in order.
    ///   - commit: the level CommitPerso goes to; nil: no CommitPerso.
    ///   - generation: S and X commit to SL1 only (`AA`); EV1 and EV2 are told the level (`AA 01`, `AA 03`).
    ///   - sectors: the card's sectors (32 on 2K, 40 on 4K).
    ///   - confirmed: the caller confirmed CommitPerso.
    ///   - again: the command that runs this personalisation again (the CLI's words).
    ///   - storageKnown: false when nothing told 2K from 4K (an S or X): `sectors` is then 40, and
    ///     keys of sectors 32-39 the card answers `09` (no such block) are not written, as on a 2K
    ///     card. They are never skipped in silence: the rest is written, and then, unless
    ///     `allowingAbsentSectors`, the personalisation stops before CommitPerso naming them (a
    ///     man in the middle answering `09` on a 4K card would leave those sectors' keys at the
    ///     factory value).
    ///   - allowingAbsentSectors: the caller accepts a card without sectors 32-39 (a 2K S or X).
    ///   - keepingFactoryKeys: the caller accepts that CommitPerso to SL3 leaves the sector keys
    ///     `keys` does not hold at the factory value (FF…FF, which anyone may use).
    ///   - reactivate: resets the card (the level CommitPerso sets holds from the next
    ///     activation) and gives a transport to it and its new ATR. After CommitPerso the level is
    ///     checked there (`confirmCommit`): CommitPerso's `90` carries no MAC in SL0, and anyone
    ///     between the tool and the card can say it (review of issue 48). Not called without
    ///     `commit`.
    /// - Returns: the key numbers the card answered `09` to (with `allowingAbsentSectors`), and
    ///   after CommitPerso how the new level was shown.
    @discardableResult
    public func personalize(_ keys: MifarePlusKeyFile, commit: MifarePlusSecurityLevel?, generation: MifarePlusGeneration,
                            sectors: Int, storageKnown: Bool = true, confirmed: Bool, keepingFactoryKeys: Bool = false,
                            allowingAbsentSectors: Bool = false, again: String,
                            reactivate: () throws -> (transport: APDUTransport, atr: [UInt8])) throws -> MifarePlusPersonalization {
        for entry in keys.keys where !MifarePlusBlockNumber.isPersonalizable(entry.number, sectors: sectors) {
            throw MifarePlusError(.refused, "\(MifarePlusBlockNumber.words(entry.number)) is not a block WritePerso takes on a \(sectors)-sector card; nothing was written")
        }
        // WritePerso of B000-B003 changes how the card behaves (B003 can make it unusable): the
        // same confirmation `writeBlock` asks for them (issue 48).
        if !confirmed, let entry = keys.keys.first(where: { MifarePlusBlockNumber.configuration.contains($0.number) }),
           let why = Self.confirmationNeeded(for: entry.number) {
            throw MifarePlusError(.needsConfirmation, "\(why); nothing was written")
        }
        if let commit {
            guard confirmed else {
                throw MifarePlusError(.needsConfirmation, "CommitPerso ends personalisation for good: the card leaves SL0 for \(commit) and WritePerso is gone; nothing was written")
            }
            guard commit == .sl1 || commit == .sl3 else { throw MifarePlusError(.refused, "CommitPerso goes to SL1 or SL3, not \(commit)") }
            if commit == .sl3 && !generation.hasVersion {
                throw MifarePlusError(.refused, "a \(generation) commits to SL1 only; then switch it with `apdu plus personalize --switch-sl3`; nothing was written")
            }
            let given = Set(keys.keys.map(\.number))
            if !keys.keys.isEmpty, let missing = MifarePlusBlockNumber.commitPersoNeeds.first(where: { !given.contains($0) }) {
                throw MifarePlusError(.refused, "CommitPerso needs 9000, 9001 and 9003 written; the keys given lack \(MifarePlusBlockNumber.words(missing)); nothing was written")
            }
            // In SL3 every sector opens only with its AES keys: one left at FF…FF opens to anyone.
            if commit == .sl3 && !keepingFactoryKeys, let left = Self.factoryKeySectors(given: given, sectors: sectors) {
                throw MifarePlusError(.factoryKeysLeft, "CommitPerso to SL3 would leave the AES keys of \(left) at the factory value FF…FF\(keys.keys.isEmpty ? " (unless an earlier WritePerso wrote them)" : ""), which anyone can use to read and write those sectors; nothing was written")
            }
        }
        var skipped: [UInt16] = []
        for (index, entry) in keys.keys.enumerated() {
            do { try writePerso(entry.number, entry.key.bytes) } catch let e as MifarePlusError
                where !storageKnown && e.status == .invalidBlockNumber && (0x4040...0x404F).contains(entry.number) {
                skipped.append(entry.number)
            } catch {
                if index == 0 && progress == .answered { throw error }
                let inFlight = progress == .mayHaveRun ? " (and perhaps \(MifarePlusBlockNumber.words(entry.number)), in flight)" : ""
                // Only the keys the card accepted count as written: those it answered 09 to are
                // named (review of issue 48: "the first 80 written" with 16 of them answered 09).
                let accepted = index - skipped.count
                let refused = skipped.isEmpty ? "" : "; the card answered 09 (no such block) to \(MifarePlusBlockNumber.span(skipped)), not written"
                throw MifarePlusInterrupted(operation: "WritePerso of \(MifarePlusBlockNumber.words(entry.number)) (\(index + 1) of \(keys.keys.count))",
                                            state: "the card is still in SL0 (CommitPerso was not sent) with \(accepted) key\(accepted == 1 ? "" : "s") written\(inFlight)\(refused); WritePerso can be repeated, so to finish run: \(again)",
                                            underlying: error)
            }
        }
        if !skipped.isEmpty && !allowingAbsentSectors {
            throw MifarePlusError(.status, "the card answered 09 (no such block) to WritePerso of \(MifarePlusBlockNumber.span(skipped)): those keys were not written; "
                                  + "the other \(keys.keys.count - skipped.count) were, and CommitPerso was not sent (the card is still in SL0). A 2K card has no sectors 32-39; "
                                  + "if this is one, run again with --allow-absent-sectors", status: .invalidBlockNumber)
        }
        let sent = keys.keys.map(\.number).filter { !skipped.contains($0) }
        guard let commit else { return MifarePlusPersonalization(notWritten: skipped, levelShown: nil, unproven: Self.distinct(sent)) }
        do {
            try commitPerso(targetLevel: generation.hasVersion ? UInt8(commit.rawValue) : nil)
        } catch let e as MifarePlusError where e.kind == .status {
            // A refusal carries no MAC either (issue 49's matrix: a card in SL3 reported "still in
            // SL0" after a 0B put in place of its 90): the level after a reset says whether the
            // card refused.
            if let again = try? reactivate(), let (_, shown) = try? Self.identify(again.transport, atr: again.atr), shown.level == .sl0 {
                // Still no proof (the probe carries no MAC either): said as what it is.
                let why = e.status == .notInThisState ? "CommitPerso was answered 0B (not in this state: 9000, 9001 and 9003 must all be written first)" : "CommitPerso was answered as refused (\(e.message))"
                throw MifarePlusError(.status, "\(why), and after re-activation the card answers as in SL0: it was not committed, unless something between the tool and the card answered both; apdu plus info tells", status: e.status)
            }
            throw MifarePlusInterrupted(operation: "CommitPerso", state: "its answer carries no MAC, and after re-activation the card does not answer as in SL0: it is in SL0 or in \(commit); apdu plus info tells", underlying: e)
        } catch {
            if progress == .mayHaveRun {
                throw MifarePlusInterrupted(operation: "CommitPerso", state: "the card is in SL0 or in \(commit): CommitPerso may have run; apdu plus info tells", underlying: error)
            }
            throw error
        }
        let unconfirmed = "CommitPerso was answered 90, which proves nothing in SL0: the card is in SL0 or in \(commit); apdu plus info tells"
        let again: (transport: APDUTransport, atr: [UInt8])
        do { again = try reactivate() } catch {
            throw MifarePlusInterrupted(operation: "the re-activation after CommitPerso", state: unconfirmed, underlying: error)
        }
        let shown: String
        do { shown = try Self.confirmCommit(to: commit, transport: again.transport, atr: again.atr, keys: keys) } catch let e as MifarePlusError
            where e.kind == .status || e.kind == .authenticationFailed || e.kind == .wrongCard {
            throw e
        } catch {
            // The check itself cut short: it showed nothing.
            throw MifarePlusInterrupted(operation: "the check of the level after CommitPerso", state: unconfirmed, underlying: error)
        }
        // In SL3 `confirmCommit` proved every key SL3 uses (it throws otherwise, and with none
        // to prove); the rest (9002, 9003, configuration and data blocks) only answered 90. In
        // SL1 no AES key can prove itself.
        let unproven = commit == .sl3 ? sent.filter { !Self.provesItselfInSL3($0) } : sent
        return MifarePlusPersonalization(notWritten: skipped, levelShown: shown, unproven: Self.distinct(unproven))
    }

    /// Keys an SL3 card authenticates with (the sector keys, 9000, 9001): the ones that prove
    /// they were written.
    static func provesItselfInSL3(_ number: UInt16) -> Bool {
        (0x4000...0x404F).contains(number) || number == MifarePlusBlockNumber.cardMasterKey || number == MifarePlusBlockNumber.cardConfigurationKey
    }

    static func distinct(_ numbers: [UInt16]) -> [UInt16] { Array(Set(numbers)).sorted() }

    /// After CommitPerso and a re-activation of the card (a reset: the level CommitPerso sets
    /// holds from the next activation), the level the card shows, as `apdu plus info` finds it:
    /// the WritePerso probe (block 9090, which exists on no card, so nothing is written). In SL3
    /// every AES key of `keys` that SL3 uses (the sector keys, 9000 and 9001) then proves itself
    /// by AuthenticateFirst, which only a card holding that key can answer; the session is
    /// dropped after each, and nothing is written. Neither CommitPerso's `90` nor WritePerso's
    /// carries a MAC in SL0: anyone between the tool and the card can say them (reviews of issue
    /// 48 and 49: "in SL3" for a card a middle kept in SL0, a sector key a middle never passed
    /// on left at the factory value under "done"). 9002 and 9003 switch to SL2 and SL3, which
    /// an SL3 card has no more use for; an SL1 card shows only a MIFARE Classic's face, so its
    /// AES keys cannot prove themselves until it is switched.
    /// - Returns: how the level (and the keys) were shown, in words.
    /// - Throws: `.status` when the card answers as in SL0 or shows another level;
    ///   `.authenticationFailed` when it refuses a key written.
    public static func confirmCommit(to commit: MifarePlusSecurityLevel, transport: APDUTransport, atr: [UInt8], keys: MifarePlusKeyFile) throws -> String {
        let card: MifarePlusCard, id: MifarePlusIdentity
        do { (card, id) = try identify(transport, atr: atr) } catch let e as MifarePlusError where e.kind == .wrongCard && commit == .sl1 {
            // An S or X in SL1 shows only a Classic's face, which it did not show in SL0.
            guard let name = (try? ATR(bytes: atr))?.storageCard?.cardName else { throw e }
            return "the reader now names a storage card \(Hex.encode([UInt8(name >> 8), UInt8(name & 0xFF)])) (a MIFARE Classic's face: SL1; shown, not proven: SL1 has no MAC)"
        }
        guard id.level == commit else {
            if id.level == .sl0 {
                // The probe's 09 carries no MAC either: it says SL0, it does not prove it.
                throw MifarePlusError(.status, "after re-activation the card answers as in SL0 (the WritePerso probe answered 09: WritePerso is open): CommitPerso is not confirmed, whatever its answer said; run the same command again", status: .invalidBlockNumber)
            }
            throw MifarePlusError(.status, "after re-activation the card shows \(id.level.map { "\($0)" } ?? "no security level") rather than \(commit): CommitPerso is unconfirmed; apdu plus info tells")
        }
        guard commit == .sl3 else { return "\(id.evidence.first { $0.claim.hasPrefix("security level") }?.evidence ?? "the card's answers"); shown, not proven: SL1 has no MAC" }
        // The last value given for a number is the one WritePerso left.
        var written: [UInt16: MifarePlusKey] = [:]
        for entry in keys.keys { written[entry.number] = entry.key }
        let provable = written.keys.filter(provesItselfInSL3).sorted()
        guard !provable.isEmpty else {
            // The probe's 0B carries no MAC: a middle can give it for a card still in SL0 (the
            // review of issue 49). Only a key can prove SL3.
            throw MifarePlusError(.status, "after re-activation the WritePerso probe answers 0B, as a card in SL3 does, but no AES key was given to prove it (the probe carries no MAC): CommitPerso is not confirmed; authenticate with `apdu plus read --block 1 --key A:…` to see", status: .notInThisState)
        }
        for number in provable {
            do { try card.authenticate(number, key: written[number]!) } catch let e as MifarePlusError where e.kind == .authenticationFailed {
                throw MifarePlusError(.authenticationFailed, "the card answers as in SL3, but the \(MifarePlusBlockNumber.words(number)) key written does not authenticate (\(e.message)): not confirmed; the card may hold another value for it (the factory FF…FF if WritePerso of it never reached the card), whatever WritePerso's answer said; apdu plus info tells", status: e.status)
            }
            card.forgetSession()
        }
        return "the WritePerso probe answered 0B and the card authenticated with each of the \(provable.count) AES keys written that SL3 uses"
    }

    /// The sectors (of `sectors`) whose key A or B is not in `given`, in words: "sector 1 (key B),
    /// sectors 2-31 (keys A and B)"; nil when every sector key is given.
    static func factoryKeySectors(given: Set<UInt16>, sectors: Int) -> String? {
        let missing = (0..<sectors).map { s in MifarePlusKeyType.allCases.filter { !given.contains(MifarePlusBlockNumber.sectorKey(s, $0)) } }
        var runs: [(first: Int, last: Int, types: [MifarePlusKeyType])] = []
        for (s, types) in missing.enumerated() where !types.isEmpty {
            if let last = runs.last, last.last == s - 1, last.types == types { runs[runs.count - 1].last = s } else { runs.append((s, s, types)) }
        }
        guard !runs.isEmpty else { return nil }
        return runs.map { r in
            let which = r.types.count == 2 ? "keys A and B" : "key \(r.types[0])"
            return (r.first == r.last ? "sector \(r.first)" : "sectors \(r.first)-\(r.last)") + " (\(which))"
        }.joined(separator: ", ")
    }

    /// SL1 → SL3: AuthenticateFirst with the SL3 switch key 9003. Once the card has the proof it
    /// is in SL3 for good.
    public func switchToLevel3(key: MifarePlusKey, confirmed: Bool) throws {
        guard confirmed else {
            throw MifarePlusError(.needsConfirmation, "the switch to SL3 cannot be undone: the card stops answering as a MIFARE Classic; nothing was sent")
        }
        // SL1 has no ISO 7816 wrapping, and no counted command follows the switch: native frames,
        // with nothing sent to learn them (the frames answered below tell how far the proof got).
        if framing == nil { assumeNativeFraming() }
        let before = frames
        do {
            try authenticate(MifarePlusBlockNumber.level3SwitchKey, key: key)
        } catch {
            let answered = frames - before
            if progress == .mayHaveRun {
                if answered == 0 { throw MifarePlusInterrupted(operation: "the switch to SL3", state: "the card stays in SL1 (the proof was not sent)", underlying: error) }
                throw MifarePlusInterrupted(operation: "the switch to SL3", state: "the card is in SL1 or in SL3: the proof was on its way; apdu plus info tells", underlying: error)
            }
            if let e = error as? MifarePlusError, e.kind == .authenticationFailed, e.status != nil {
                throw MifarePlusError(.authenticationFailed, "\(e.message); the card stays in SL1", status: e.status)
            }
            if answered == 2 {
                // Two answers came back, but a bare 90 to the proof is no proof the card took it
                // (a reader, or a man in the middle, can say 90): which level it is in is the card's
                // to show (review of issue 48: "accepted, in SL3" for a card still in SL1).
                throw MifarePlusInterrupted(operation: "the switch to SL3", state: "the card answered the proof, but nothing proves it took it: it is in SL1 or in SL3; apdu plus info tells", underlying: error)
            }
            throw error
        }
    }

    /// AN10922 AES-128 key diversification of a MIFARE Plus key: CMAC under `master` of
    /// 01 ‖ UID ‖ key number (2 bytes, LSB first) ‖ `systemIdentifier` (NXP AN10922 §2.2; the
    /// choice of input is this tool's, as AN10922 leaves it to the system).
    public static func diversifiedKey(master: MifarePlusKey, uid: [UInt8], keyNumber: UInt16, systemIdentifier: [UInt8]) throws -> MifarePlusKey {
        let input = uid + MifarePlusSession.le(keyNumber) + systemIdentifier
        return MifarePlusKey(try AN10922.diversify(masterKey: master.bytes, input: input))!
    }
}

/// What `MifarePlusCard.personalize` did.
public struct MifarePlusPersonalization: Sendable, Equatable {
    /// The keys the card answered `09` (no such block) to, not written (`allowingAbsentSectors`).
    public var notWritten: [UInt16]
    /// After CommitPerso: how the card showed its new level once re-activated (nil: no commit).
    public var levelShown: String?
    /// The blocks WritePerso was answered `90` for that did not prove they were written: all of
    /// them without a commit to SL3 (SL0 has no MAC, and SL1 uses no AES key); after one, those
    /// an SL3 card does not authenticate with (9002, 9003, configuration and data blocks). The
    /// reviews of issue 49: "wrote 68 keys" with every sector key left FF…FF, and `keysProven`
    /// with a data block never written.
    public var unproven: [UInt16]
    /// Every block written proved itself.
    public var keysProven: Bool { unproven.isEmpty }
}
