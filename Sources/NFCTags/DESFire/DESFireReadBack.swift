// After a change (and, for a transactional file, its CommitTransaction), the changed part read
// back in the same session: "written" and "committed" are what the card is seen to hold, not
// only what it answered.
import ISO7816

extension DESFireCard {
    /// What a file must hold after its change, and the mode its read-back travels in.
    struct ChangeCheck {
        enum Expected {
            /// A standard or backup data file: these bytes at this offset.
            case data(offset: Int, bytes: [UInt8])
            /// A value file: the value before the change, and after it.
            case value(old: Int32, new: Int64)
            /// A record file: the number of records before and after; the newest record's bytes
            /// at an offset (nil for ClearRecordFile).
            case records(before: Int, after: Int, recordSize: Int, newest: (offset: Int, bytes: [UInt8])?)
        }
        var expected: Expected
        var mode: CommMode
        /// Whether the read-back's answers prove themselves (`answersProve`): a plain answer of an
        /// EV2 session, or any of a legacy one, catches a card that did not make the change, not a
        /// man in the middle.
        var proven: Bool
    }

    /// Whether commands in `mode`, in the session now open, get answers that carry what no one
    /// between the tool and the card can give: every mode of an EV1 ISO or AES session (a CMAC
    /// on every answer), EV2 MAC and full. Not EV2 plain (no MAC either way), nothing without a
    /// session, and nothing of a legacy (`0A`) session: its MAC and cipher restart with each
    /// command (an earlier answer of the session replays), and its file settings, which choose
    /// the mode, carry no MAC.
    public func answersProve(mode: CommMode) -> Bool {
        guard let session, session.scheme != .legacy else { return false }
        return session.scheme != .ev2 || mode != .plain
    }

    /// Whether reads of the file with `settings` prove themselves, in the mode they travel in
    /// (`readMode`: plain for free access when the key in use holds no read right).
    public func answersProve(_ settings: DESFireFileSettings) -> Bool { answersProve(mode: readMode(settings)) }

    /// The check of `change`, or nil when the file cannot be read back: no session, or a key
    /// without the right to read it. A value file's value is read now (GetValue, before the
    /// change).
    func changeCheck(_ file: UInt8, settings: DESFireFileSettings, _ change: DESFireFileChange) throws -> ChangeCheck? {
        guard let session else { return nil }
        let key = DESFireAccess.key(session.keyNumber), a = settings.access
        let rights = settings.type == .value ? [a.read, a.write, a.readWrite] : [a.read, a.readWrite]
        guard rights.contains(key) else { return nil }
        let mode = settings.commMode
        let proven = answersProve(mode: mode)
        func check(_ expected: ChangeCheck.Expected) -> ChangeCheck { ChangeCheck(expected: expected, mode: mode, proven: proven) }
        switch (change, settings.records) {
        case let (.data(bytes, offset), _):
            return check(.data(offset: offset, bytes: bytes))
        case (.credit(let v), _), (.limitedCredit(let v), _):
            let old = try getValue(file, mode: mode)
            return check(.value(old: old, new: Int64(old) + Int64(v)))
        case (.debit(let v), _):
            let old = try getValue(file, mode: mode)
            return check(.value(old: old, new: Int64(old) - Int64(v)))
        case let (.record(bytes, offset), r?):
            let after = settings.type == .cyclicRecord ? min(r.currentRecords + 1, max(1, r.maxRecords - 1)) : r.currentRecords + 1
            guard offset >= 0, offset + bytes.count <= r.recordSize else { return nil }
            return check(.records(before: r.currentRecords, after: after, recordSize: r.recordSize, newest: (offset, bytes)))
        case let (.clearRecords, r?):
            return check(.records(before: r.currentRecords, after: 0, recordSize: r.recordSize, newest: nil))
        default:
            return nil
        }
    }

    /// Reads the file back after the card answered its change (and commit) as made, in the same
    /// session.
    /// - Throws: `DESFireInterrupted` when the file does not read back as changed: in answers
    ///   that prove themselves, `.uncommitted` for a value read back as before, else
    ///   `.notAsAnswered`; in plain answers that prove nothing, `.commitUnknown` (a
    ///   transactional file) or `.partlyWritten` (a standard one), as for a lost answer. When
    ///   the read-back itself fails, the same two.
    func confirmChange(_ file: UInt8, _ check: ChangeCheck, operation: String, transactional: Bool) throws {
        let open: DESFireInterrupted.State = transactional ? .commitUnknown : .partlyWritten
        /// nil: the change is there; else what the file holds and whether that is the old value.
        let mismatch: (found: String, old: Bool)?
        do {
            switch check.expected {
            case let .data(offset, bytes):
                let now = try readData(file, offset: offset, length: bytes.count, mode: check.mode)
                mismatch = now == bytes ? nil : ("other bytes at \(offset)..<\(offset + bytes.count) than those written", false)
            case let .value(old, new):
                let now = try getValue(file, mode: check.mode)
                mismatch = Int64(now) == new ? nil : ("the value \(now), not \(new)", now == old)
            case let .records(_, after, recordSize, newest):
                let count = try fileSettings(file).records?.currentRecords ?? -1
                var holds = count == after
                if holds, let newest, count > 0 {
                    let last = try readRecords(file, from: 0, count: 1, recordSize: recordSize, mode: check.mode).last ?? []
                    holds = last.count >= newest.offset + newest.bytes.count
                        && Array(last[newest.offset..<(newest.offset + newest.bytes.count)]) == newest.bytes
                }
                mismatch = holds ? nil : ("\(count) records" + (count == after ? ", the newest not the one written" : ", not \(after)"), false)
            }
        } catch {
            throw DESFireInterrupted(operation: operation + ", reading the file back", state: open, underlying: error)
        }
        guard let mismatch else { return }
        let answered = transactional ? "CommitTransaction answered 91 00" : "the write was answered 91 00"
        guard check.proven else {
            let unproven = DESFireError(.malformed, "\(answered), and file \(file) reads back \(mismatch.found) in plain answers, which prove nothing either way")
            throw DESFireInterrupted(operation: operation, state: open, underlying: unproven)
        }
        let lie = DESFireError(.refused, "\(answered), yet file \(file) reads back \(mismatch.found) in the same session: the card did not make the change")
        throw DESFireInterrupted(operation: operation, state: mismatch.old ? .uncommitted : .notAsAnswered, underlying: lie)
    }
}
