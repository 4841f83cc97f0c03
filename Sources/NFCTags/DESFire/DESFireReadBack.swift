// After CommitTransaction, the changed file read back in the same session: "committed" is what
// the card is seen to hold, not only what it answered.
import ISO7816

extension DESFireCard {
    /// What a transactional file must hold after its change is committed, and the mode its
    /// read-back travels in.
    struct CommitCheck {
        enum Expected {
            /// A backup data file: these bytes at this offset.
            case data(offset: Int, bytes: [UInt8])
            /// A value file: the value before the change, and after it.
            case value(old: Int32, new: Int64)
            /// A record file: the number of records before and after; the newest record's bytes
            /// at an offset (nil for ClearRecordFile).
            case records(before: Int, after: Int, recordSize: Int, newest: (offset: Int, bytes: [UInt8])?)
        }
        var expected: Expected
        var mode: CommMode
    }

    /// The check of a change to a transactional file, or nil when the file cannot be read back
    /// with proof: no session, a legacy session (its answers to GetFileSettings carry no MAC), a
    /// key without the right to read the file, or an EV2 session and a plain file (an EV2 plain
    /// answer carries no MAC). A value file's value is read now (GetValue, before the change).
    func commitCheck(_ file: UInt8, settings: DESFireFileSettings, _ change: DESFireFileChange) throws -> CommitCheck? {
        guard settings.type.isTransactional, let session, session.scheme != .legacy else { return nil }
        let key = DESFireAccess.key(session.keyNumber), a = settings.access
        let rights = settings.type == .value ? [a.read, a.write, a.readWrite] : [a.read, a.readWrite]
        guard rights.contains(key), settings.commMode != .plain || session.scheme != .ev2 else { return nil }
        let mode = settings.commMode
        switch (change, settings.records) {
        case let (.data(bytes, offset), _):
            return CommitCheck(expected: .data(offset: offset, bytes: bytes), mode: mode)
        case (.credit(let v), _), (.limitedCredit(let v), _):
            let old = try getValue(file, mode: mode)
            return CommitCheck(expected: .value(old: old, new: Int64(old) + Int64(v)), mode: mode)
        case (.debit(let v), _):
            let old = try getValue(file, mode: mode)
            return CommitCheck(expected: .value(old: old, new: Int64(old) - Int64(v)), mode: mode)
        case let (.record(bytes, offset), r?):
            let after = settings.type == .cyclicRecord ? min(r.currentRecords + 1, max(1, r.maxRecords - 1)) : r.currentRecords + 1
            guard offset >= 0, offset + bytes.count <= r.recordSize else { return nil }
            return CommitCheck(expected: .records(before: r.currentRecords, after: after, recordSize: r.recordSize, newest: (offset, bytes)), mode: mode)
        case let (.clearRecords, r?):
            return CommitCheck(expected: .records(before: r.currentRecords, after: 0, recordSize: r.recordSize, newest: nil), mode: mode)
        default:
            return nil
        }
    }

    /// Reads the file back after CommitTransaction answered 91 00, in the same session.
    /// - Throws: `DESFireInterrupted` `.uncommitted` when the file is read back (MACed or
    ///   enciphered) without the change, as it was: the card acknowledged a commit it did not
    ///   make; `.commitUnknown` when the read-back fails, or shows a third value.
    func confirmCommit(_ file: UInt8, _ check: CommitCheck, what: String) throws {
        let operation = "CommitTransaction after \(what)"
        /// nil: the change is there; else what the file holds and whether that is the old contents.
        let mismatch: (found: String, old: Bool)?
        do {
            switch check.expected {
            case let .data(offset, bytes):
                let now = try readData(file, offset: offset, length: bytes.count, mode: check.mode)
                // Not the bytes written, nor (unread) proven the old ones: the state stays open.
                mismatch = now == bytes ? nil : ("other bytes at \(offset)..<\(offset + bytes.count) than those written", false)
            case let .value(old, new):
                let now = try getValue(file, mode: check.mode)
                mismatch = Int64(now) == new ? nil : ("the value \(now), not \(new)", now == old)
            case let .records(before, after, recordSize, newest):
                let count = try fileSettings(file).records?.currentRecords ?? -1
                var holds = count == after
                if holds, let newest, count > 0 {
                    let last = try readRecords(file, from: 0, count: 1, recordSize: recordSize, mode: check.mode).last ?? []
                    holds = last.count >= newest.offset + newest.bytes.count
                        && Array(last[newest.offset..<(newest.offset + newest.bytes.count)]) == newest.bytes
                }
                mismatch = holds ? nil : ("\(count) records" + (count == after ? ", the newest not the one written" : ", not \(after)"), count == before)
            }
        } catch {
            throw DESFireInterrupted(operation: operation + ", reading the file back", state: .commitUnknown, underlying: error)
        }
        guard let mismatch else { return }
        let lie = DESFireError(.refused, "CommitTransaction answered 91 00, yet file \(file) reads back \(mismatch.found) in the same session: "
            + "the card did not commit the change")
        throw DESFireInterrupted(operation: operation, state: mismatch.old ? .uncommitted : .commitUnknown, underlying: lie)
    }
}
