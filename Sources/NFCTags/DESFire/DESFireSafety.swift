// A change to a DESFire file made safely: committed where transactional, and, when stopped
// part-way, what the card holds now.
import ISO7816

/// An operation that changes the card stopped part-way, and what the card holds now, as exactly
/// as the chip's guarantees allow:
///
/// - changes to backup data, value and record files wait for CommitTransaction: the card drops
///   them when it leaves the field (or at an error or another SelectApplication), so before the
///   commit the old contents stand;
/// - CommitTransaction makes all of them take effect or none;
/// - a standard data file has no backup: a write of several frames cut short may leave it partly
///   written;
/// - every other command (ChangeKey, Create…, Delete…, FormatPICC) takes effect whole or not at
///   all, when its last frame arrives.
public struct DESFireInterrupted: Error, CustomStringConvertible {
    public enum State: Sendable, Hashable {
        /// Nothing of the change reached the card: it holds what it held.
        case unchanged
        /// The change reached the card, its commit did not: the card drops it; the old contents stand.
        case uncommitted
        /// CommitTransaction was on its way when the answer was lost (or an error status, which
        /// carries no MAC, came in place of it): all of the change took effect, or none (read the
        /// file to know).
        case commitUnknown
        /// A standard data file's write was on its way: the file holds the old bytes, the new, or
        /// (a write of several frames) new bytes up to some point.
        case partlyWritten
        /// The command (ChangeKey, create, delete, format) was on its way: it took effect whole, or
        /// not at all.
        case doneOrNot
        /// The change took effect (the card acknowledged it); what came after it did not finish.
        case done
        /// The card answered the change as made, and the file read back after it (the answers
        /// carrying the session's MAC or cipher) does not hold it: the card did not make it as
        /// answered. What it holds instead is read, not assumed (read the file to see).
        case notAsAnswered
    }
    public var operation: String
    public var state: State
    public var underlying: any Error
    /// Whether the change is known to be committed (backup, value and record files).
    public var committed: Bool? {
        switch state {
        case .unchanged, .uncommitted, .notAsAnswered: return false
        case .done: return true
        case .commitUnknown, .partlyWritten, .doneOrNot: return nil
        }
    }

    public init(operation: String, state: State, underlying: any Error) {
        self.operation = operation
        self.state = state
        self.underlying = underlying
    }

    /// "the card holds …" in words.
    public var stateWords: String {
        switch state {
        case .unchanged: return "nothing reached the card: it holds what it held"
        case .uncommitted: return "the change was not committed: the card drops it (the chip's guarantee) and keeps the old contents"
        case .commitUnknown: return "the commit was sent and no answer that proves its outcome came back: all of the change took effect or none did (read the file to know)"
        case .partlyWritten: return "the standard data file holds the old bytes, the new, or new bytes up to some point (it has no backup): write it again"
        case .doneOrNot: return "the command took effect whole or not at all (look again to know)"
        case .done: return "the change took effect"
        case .notAsAnswered: return "the card answered the change as made, yet the file read back in the session does not hold it: the card did not make it (read the file to see what it holds)"
        }
    }

    public var description: String { "\(operation): \(underlying); \(stateWords)" }
}

/// What a write did.
public struct DESFireWriteReceipt: Sendable, Hashable {
    public var file: UInt8
    public var type: DESFireFileSettings.FileType
    /// True when a CommitTransaction made it take effect (backup, value and record files); false for
    /// a standard data file, whose writes take effect at once.
    public var committed: Bool
    /// True when, after the change (and its commit), the file was read back in the same session
    /// and holds it; false when the key in use may not read the file, or no key was used.
    public var readBack = false
    /// True when the change is proven: the card's answers to it carry the session's MAC in the
    /// mode it went in, or the file read back in answers that do (`DESFireCard.answersProve`).
    /// False without a session (a free file), for a plain change under EV2 (no MAC either way,
    /// whatever CommitTransaction's MAC says: it proves a commit, not what was written), and in a legacy (`0A`)
    /// session: its answers, and the file settings that chose the mode, carry nothing a man in
    /// the middle cannot give (a GetVersion changed to name an MF3ICD40 is enough to bring such a
    /// session about).
    public var proven = false
}

/// A change to one file, as the safe write procedures take it.
public enum DESFireFileChange: Sendable, Hashable {
    /// Data at an offset of a standard or backup data file.
    case data([UInt8], offset: Int)
    case credit(Int32)
    case debit(Int32)
    case limitedCredit(Int32)
    /// A new record (or data at an offset within the one not yet committed).
    case record([UInt8], offset: Int)
    case clearRecords
}

extension DESFireCard {
    /// Changes a file and, for backup, value and record files, commits it: the receipt says
    /// whether the change was committed. The mode follows the file's settings (plain for free
    /// access).
    /// After the change (and its commit), the file is read back in the same session where the key
    /// may read it (`DESFireWriteReceipt.readBack`): a card that answers 91 00 and keeps the old
    /// contents is caught, not reported written or committed. A value file's value is read before
    /// the change for it. `DESFireWriteReceipt.proven` says whether anything the tool could check
    /// proves the change.
    /// - Throws: `DESFireError` when the card refused before anything changed (nothing committed):
    ///   a refused change of a transactional file (no commit follows it), or a refusal before any
    ///   frame was sent; `DESFireInterrupted` naming what the card holds when the change stopped
    ///   part-way, or when the file read back after the commit does not hold the change. A
    ///   status carries no MAC, so one in answer to a standard data file's write or to
    ///   CommitTransaction proves nothing either way: interrupted, not refused.
    @discardableResult
    public func change(_ file: UInt8, settings: DESFireFileSettings, _ change: DESFireFileChange) throws -> DESFireWriteReceipt {
        let mode = writeMode(settings)
        let what = "\(change.name) of file \(file)"
        // Before anything is sent: a refusal or an error here changes nothing.
        let check = change.applies(to: settings.type) ? try changeCheck(file, settings: settings, change) : nil
        do {
            switch (change, settings.type) {
            case let (.data(bytes, offset), .standardData), let (.data(bytes, offset), .backupData):
                try writeData(file, offset: offset, data: bytes, mode: mode)
            case let (.credit(v), .value): try credit(file, amount: v, mode: mode)
            case let (.debit(v), .value): try debit(file, amount: v, mode: mode)
            case let (.limitedCredit(v), .value): try limitedCredit(file, amount: v, mode: mode)
            case let (.record(bytes, offset), .linearRecord), let (.record(bytes, offset), .cyclicRecord):
                try writeRecord(file, offset: offset, data: bytes, mode: mode)
            case (.clearRecords, .linearRecord), (.clearRecords, .cyclicRecord):
                try clearRecordFile(file)
            default:
                let takes = DESFireFileChange.commands(for: settings.type)
                throw DESFireError(.parameterError, "\(change.name) does not apply to a \(settings.type) file"
                    + (takes.isEmpty ? "" : " (it takes \(takes.joined(separator: " or ")))") + "; nothing was sent")
            }
        } catch let e as DESFireError where e.kind != .badCryptogram && e.kind != .malformed {
            // A status is only an answer (it carries no MAC): one in place of the 91 00 to a
            // standard data file's last frame may stand in, a reader's or a middle's, for a write
            // the card made (issue 49's matrix). A transactional file's change waits for the
            // commit, which this procedure then does not send: refused there, the old contents stand.
            if e.statusWord != nil, settings.type == .standardData, progress != .notRun {
                throw DESFireInterrupted(operation: what, state: interruptedState(transactional: false, standardWrite: true), underlying: e)
            }
            // Refused by the card (or before sending): nothing changed, nothing to commit.
            throw e
        } catch {
            throw DESFireInterrupted(operation: what, state: interruptedState(transactional: settings.type.isTransactional, standardWrite: settings.type == .standardData), underlying: error)
        }
        // The change's own answers prove it where they carry the session's MAC in the mode the
        // change went in (a free file's goes plain). CommitTransaction's MAC proves that a commit
        // was made, not what was written: a plain change under EV2 stays unproven (the second
        // review of issue 49: a middle's bytes committed, "proven").
        let changeProven = answersProve(mode: mode)
        guard settings.type.isTransactional else {
            guard let check else { return DESFireWriteReceipt(file: file, type: settings.type, committed: false, proven: changeProven) }
            try confirmChange(file, check, operation: what, transactional: false)
            return DESFireWriteReceipt(file: file, type: settings.type, committed: false, readBack: true, proven: changeProven || check.proven)
        }
        do {
            try commitTransaction()
        } catch {
            // A status in answer to the commit is only an answer, as a lost one is: it may stand
            // in for the card's 91 00 (issue 49's matrix), so all of the change took effect or
            // none did. Only a commit that never left says the old contents stand.
            throw DESFireInterrupted(operation: "CommitTransaction after \(what)", state: progress == .notRun ? .uncommitted : .commitUnknown, underlying: error)
        }
        guard let check else { return DESFireWriteReceipt(file: file, type: settings.type, committed: true, proven: changeProven) }
        try confirmChange(file, check, operation: "CommitTransaction after \(what)", transactional: true)
        return DESFireWriteReceipt(file: file, type: settings.type, committed: true, readBack: true, proven: changeProven || check.proven)
    }

    /// The state of a change cut by an I/O error during its command.
    func interruptedState(transactional: Bool, standardWrite: Bool) -> DESFireInterrupted.State {
        switch progress {
        case .notRun: return .unchanged
        case .mayHaveRun, .answered: return transactional ? .uncommitted : standardWrite ? .partlyWritten : .doneOrNot
        }
    }

    /// Runs one command that changes the card whole or not at all (create, delete, format,
    /// ChangeKeySettings): an I/O error on its way becomes `DESFireInterrupted` with `.unchanged`
    /// or `.doneOrNot`.
    public func atomically<T>(_ operation: String, _ body: () throws -> T) throws -> T {
        do { return try body() } catch let e as DESFireError where e.kind != .badCryptogram && e.kind != .malformed {
            throw e
        } catch {
            throw DESFireInterrupted(operation: operation, state: progress == .notRun ? .unchanged : .doneOrNot, underlying: error)
        }
    }
}

extension DESFireFileChange {
    /// Whether a file of `type` takes this change.
    public func applies(to type: DESFireFileSettings.FileType) -> Bool {
        switch (self, type) {
        case (.data, .standardData), (.data, .backupData): return true
        case (.credit, .value), (.debit, .value), (.limitedCredit, .value): return true
        case (.record, .linearRecord), (.record, .cyclicRecord), (.clearRecords, .linearRecord), (.clearRecords, .cyclicRecord): return true
        default: return false
        }
    }

    /// The commands that change a file of `type` (none for a transaction MAC file).
    public static func commands(for type: DESFireFileSettings.FileType) -> [String] {
        switch type {
        case .standardData, .backupData: return ["WriteData"]
        case .value: return ["Credit", "Debit", "LimitedCredit"]
        case .linearRecord, .cyclicRecord: return ["WriteRecord", "ClearRecordFile"]
        case .transactionMAC: return []
        }
    }

    /// The command that makes this change.
    public var name: String {
        switch self {
        case .data: return "WriteData"
        case .credit: return "Credit"
        case .debit: return "Debit"
        case .limitedCredit: return "LimitedCredit"
        case .record: return "WriteRecord"
        case .clearRecords: return "ClearRecordFile"
        }
    }
}
