// What a cut write, restore or lock leaves on a tag, and the commit-order write with roll-back
// that keeps it to the old, an empty or the new message.

/// A write, restore or lock that failed after it began changing the tag, with what the tag can
/// hold now. Every procedure here passes only through states a reader sees as the old message,
/// an empty one, or the new one; this says which of them it can be, from the last step the tag
/// acknowledged. (Where the card went away during a step, the tag may or may not have done it.)
public struct WriteInterrupted: Error, CustomStringConvertible {
    public enum TagState: String, Sendable, Hashable {
        /// Nothing took effect.
        case old
        /// The step that empties the message was sent; the card went away before it answered.
        case oldOrEmpty
        /// The message is empty (length 0): what was there is in the backup.
        case empty
        /// The final step was sent; the card went away before it answered.
        case emptyOrNew
        /// The new message is in place (the read-back did not finish).
        case new
        /// The tag read back something else after acknowledging every step: it does not store
        /// what it is sent.
        case unknown
    }
    public var state: TagState
    /// What stopped it: the PC/SC error, the transmit error, or the tag's refusal.
    public var underlying: any Error
    /// The step in words ("write the NDEF length").
    public var step: String
    /// Where the old message was kept before the tag changed (set by the layer that kept it).
    public var backup: String?

    public init(state: TagState, underlying: any Error, step: String) {
        self.state = state
        self.underlying = underlying
        self.step = step
    }

    public var description: String { "\(underlying) (while trying to \(step))" }
}

/// A tag's lock state, as far as it decides a permanent lock.
public protocol TagLockState: Sendable, Hashable {
    /// Every lock the chip has is set.
    var isFullyLocked: Bool { get }
    /// Some but not all of them (an interrupted lock, or a partly locked tag).
    var isPartlyLocked: Bool { get }
}

/// What a permanent lock did.
public struct LockReport<State: TagLockState>: Sendable, Hashable {
    /// The steps done now, and those found done already (an interrupted earlier lock).
    public var done: [String]
    public var alreadyDone: [String]
    /// The lock state read back afterwards.
    public var state: State
    /// Whether the tag now refuses a write to its first data page or block.
    public var refusesWrites: Bool

    public init(done: [String], alreadyDone: [String], state: State, refusesWrites: Bool) {
        self.done = done
        self.alreadyDone = alreadyDone
        self.state = state
        self.refusesWrites = refusesWrites
    }
}

/// A tag whose lock is permanent, resumable after a cut and confirmed by reading it back
/// (Types 2, 5 and 3).
public protocol PermanentlyLockable: NDEFTag {
    associatedtype LockState: TagLockState
    /// The locks in words, for "already locked (…)".
    static var locksDescription: String { get }
    func readLockState() throws -> LockState
    func makeReadOnly() throws -> LockReport<LockState>
}

/// A lock that failed part-way: which permanent changes the tag acknowledged.
public struct LockInterrupted: Error, CustomStringConvertible {
    /// The parts already done, in order ("CC write access 0F", "dynamic lock bits", …).
    public var done: [String]
    public var underlying: any Error
    public var step: String
    public init(done: [String], underlying: any Error, step: String) {
        self.done = done
        self.underlying = underlying
        self.step = step
    }
    public var description: String { "\(underlying) (while trying to \(step))" }
}

/// One step of a write or restore as it begins, for a progress display (`NDEFTag.writeObserver`).
/// The steps are planned before the first is sent, so `total` holds from the first report; the
/// read-back is the last.
public struct WriteStep: Sendable, Hashable, CustomStringConvertible {
    /// 1 for the first step.
    public var number: Int
    public var total: Int
    /// What the step does, in the words a `WriteInterrupted` would use for it ("write page 12").
    public var action: String

    public init(number: Int, total: Int, action: String) {
        self.number = number
        self.total = total
        self.action = action
    }

    public var description: String { "\(action) (\(number)/\(total))" }
}

/// Tracks a procedure's progress so a failure can say what the tag holds, and reports each step
/// to an observer as it begins.
struct WriteProgress {
    enum Phase { case untouched, emptied, committed }
    /// Set to `.emptied` up front when the tag's message is already empty: then every later
    /// state reads as the old (empty) message or the new one.
    var phase = Phase.untouched
    /// How many times `step` will run, planned by the procedure before its first step.
    let total: Int
    let observer: ((WriteStep) -> Void)?
    private var started = 0

    init(steps total: Int, observer: ((WriteStep) -> Void)?) {
        self.total = total
        self.observer = observer
    }

    /// What the tag shows of a step it answered with a refusal, read again from the tag.
    enum Reading {
        /// The tag holds what it held before the step.
        case notDone
        /// The tag holds what the step (and, for the commit, the whole write) was to leave.
        case done
        /// Neither.
        case neither
        /// The read failed: the step may or may not have happened.
        case unreadable
    }

    /// Runs one step; on failure, wraps the error with the state the tag can be in.
    /// `empties`: the step that sets the length to 0; `commits`: the step that sets the new length.
    /// `check`: reads the tag again and says whether it shows the step done. A refusal of the
    /// step that empties or commits is only an answer, which a reader or a man in the middle can
    /// put in place of the tag's `90 00` after the tag wrote (issue 49's hostile matrix found
    /// "old" reported while the tag held an empty message): the tag's own bytes decide, and
    /// where they cannot be read the state stays open ("old or empty", "empty or new").
    mutating func step<T>(_ what: String, empties: Bool = false, commits: Bool = false,
                          check: () throws -> Reading? = { nil }, _ body: () throws -> T) throws -> T {
        started += 1
        observer?(WriteStep(number: started, total: max(total, started), action: what))
        do {
            let result = try body()
            if empties {
                // The 90 00 to the step that empties is only an answer too: a middle who never
                // passed the UPDATE on (issue 49's hostile matrix, a tag that refused a later
                // piece) would leave the old length over a body being overwritten. The tag's own
                // bytes say the message is empty before anything else is written.
                let reading: Reading?
                var unread: (any Error)?
                do { reading = try check() } catch { reading = .unreadable; unread = error }
                switch reading {
                case .notDone?:
                    // Two answers at odds (the step's 90 00, the read's old length): either may
                    // be the one that lies, so the message is the old one or empty.
                    throw WriteInterrupted(state: .oldOrEmpty, underlying: TagError(.verifyFailed, "the tag answered the step that empties the message as done, yet its length reads back as before; nothing else was written"), step: what)
                case .neither?:
                    throw WriteInterrupted(state: .unknown, underlying: TagError(.verifyFailed, "the tag answered the step that empties the message as done, yet its length reads back neither as before nor as empty"), step: what)
                case .unreadable?:
                    // The read's own failure (a card pulled) is the cause to report.
                    throw WriteInterrupted(state: .oldOrEmpty, underlying: unread ?? TagError(.readFailed, "the length could not be read back after the step that empties the message"),
                                           step: "read the length back after: \(what)")
                case .done?, nil:
                    phase = .emptied
                }
            }
            if commits { phase = .committed }
            return result
        } catch let e as WriteInterrupted {
            throw e
        } catch {
            // A card that went away may have done the step; a refusal is checked on the tag.
            let refused = isRefusal(error)
            var reading: Reading?
            if refused && (empties || commits) {
                do { reading = try check() } catch { reading = .unreadable }
            }
            let state: WriteInterrupted.TagState
            switch phase {
            case .untouched:
                guard empties || commits else { throw error }   // nothing has changed: the error stands alone
                switch reading {
                case .done: state = .empty
                case .neither: state = .unknown
                case .unreadable: state = .oldOrEmpty
                case .notDone, nil: state = refused ? .old : .oldOrEmpty
                }
            case .emptied:
                switch reading {
                case .done where commits: state = .new
                case .neither where commits: state = .unknown
                case .unreadable where commits: state = .emptyOrNew
                default: state = commits && !refused ? .emptyOrNew : .empty
                }
            case .committed:
                state = (error as? TagError)?.kind == .verifyFailed ? .unknown : .new
            }
            let said: any Error = switch reading {
            case .done: TagError(.verifyFailed, "\(error), yet the tag reads back with the step done")
            case .neither: TagError(.verifyFailed, "\(error), and the tag reads back neither as before the step nor as after it")
            default: error
            }
            throw WriteInterrupted(state: state, underlying: said, step: what)
        }
    }
}

/// The commit-order write of every block- or page-addressed type (Type 2, Type 5, MIFARE
/// Classic), once their checks have passed: the block holding the commit byte (the NDEF length's
/// first byte) with that byte 0, every other changed block, the commit block as in `target`
/// last, then a read-back of every block written. Failures come out as `WriteInterrupted` with the
/// state the tag can be in.
///
/// A block the tag refuses after the message was emptied (a lock bit whose place was unknown, a
/// password the chip was not proven to have) is not left that way: the blocks written so far are
/// put back as they were — the tag accepted each of them a moment ago — then the length, and
/// the refusal is thrown with the tag unchanged (issue 32). The message reads as empty throughout
/// the roll-back, so a cut in it leaves the empty state the backup restores.
/// - Parameters:
///   - image: what the tag holds now (the area's bytes, `blockSize` per block).
///   - target: what it must hold.
///   - changed: the blocks whose bytes differ, in order.
///   - span: every block the message covers (default: `changed`). Before the length commits
///     the message they are read back and must hold `target`; one that does not (the tag did not
///     store it, or a read the plan came from was stale or falsified: issue 49's hostile matrix
///     found a replayed READ answer leaving a mix) is written and read again first.
///   - unit: "block" or "page", in the steps' words.
///   - number: the block number people see for a block index (a Classic area skips trailers).
///   - write: writes one block.
///   - readBack: reads the given blocks again from the tag (not from a cache) and returns the
///     area's bytes with them.
func writeInCommitOrder(image: [UInt8], target: [UInt8], changed: [Int], span: [Int]? = nil, commitPosition: Int, blockSize: Int, unit: String = "block",
                        number: (Int) -> Int, observer: ((WriteStep) -> Void)?,
                        write: (Int, [UInt8]) throws -> Void, readBack: ([Int]) throws -> [UInt8]) throws {
    var now = image
    func bytes(_ m: [UInt8], _ b: Int) -> [UInt8] { Array(m[(b * blockSize)..<((b + 1) * blockSize)]) }
    func put(_ b: Int, _ data: [UInt8]) throws {
        try write(b, data)
        now.replaceSubrange((b * blockSize)..<((b + 1) * blockSize), with: data)
    }
    let commitBlock = commitPosition / blockSize
    var emptied = bytes(now, commitBlock)
    emptied[commitPosition % blockSize] = 0
    let clears = now[commitPosition] != 0
    let commits = bytes(target, commitBlock) != (clears ? emptied : bytes(now, commitBlock))
    let data = Set((span ?? changed) + changed).subtracting([commitBlock]).sorted()
    let steps = (clears ? 1 : 0) + changed.count(where: { $0 != commitBlock }) + (data.isEmpty ? 0 : 1) + (commits ? 1 : 0) + 1
    var progress = WriteProgress(steps: steps, observer: observer)
    /// What the tag holds in `blocks`, read again: as in `before`, as in `after`, or neither.
    func reading(_ blocks: [Int], before: [UInt8], after: [UInt8]) throws -> WriteProgress.Reading {
        let back = try readBack(blocks)
        if blocks.allSatisfy({ bytes(back, $0) == bytes(after, $0) }) { return .done }
        return blocks.allSatisfy({ bytes(back, $0) == bytes(before, $0) }) ? .notDone : .neither
    }
    if !clears {
        progress.phase = .emptied
    } else {
        var cleared = image
        cleared.replaceSubrange((commitBlock * blockSize)..<((commitBlock + 1) * blockSize), with: emptied)
        try progress.step("clear the NDEF length (\(unit) \(number(commitBlock)))", empties: true,
                          check: { try reading([commitBlock], before: image, after: cleared) }) { try put(commitBlock, emptied) }
    }
    var written: [Int] = []
    for block in changed where block != commitBlock {
        do {
            try progress.step("write \(unit) \(number(block))") { try put(block, bytes(target, block)) }
            written.append(block)
        } catch let cut as WriteInterrupted where isRefusal(cut.underlying) {
            try rollBack(refused: block, cause: cut.underlying)
        }
    }
    // The message's blocks as the tag holds them, before the length makes them the message.
    if !data.isEmpty {
        let back = try progress.step("read the \(unit)s back before the NDEF length") { try readBack(data) }
        let differing = data.filter { bytes(back, $0) != bytes(target, $0) }
        for block in differing {
            do {
                try progress.step("write \(unit) \(number(block)) again") { try put(block, bytes(target, block)) }
                if !written.contains(block) { written.append(block) }
            } catch let cut as WriteInterrupted where isRefusal(cut.underlying) {
                try rollBack(refused: block, cause: cut.underlying)
            }
        }
        if !differing.isEmpty {
            try progress.step("read the \(unit)s written again back") {
                let again = try readBack(differing)
                if let bad = differing.first(where: { bytes(again, $0) != bytes(target, $0) }) {
                    throw TagError(.verifyFailed, "\(unit) \(number(bad)) reads back \(bytes(again, bad).hexString) after \(bytes(target, bad).hexString) was written twice; the NDEF length was not written")
                }
            }
        }
    }
    if commits {
        // Refused: the length still 0 is the empty message, whatever the data blocks hold; the
        // new length counts as done only with every block read back as written.
        try progress.step("write the NDEF length (\(unit) \(number(commitBlock)))", commits: true, check: {
            let back = try readBack([commitBlock])
            if bytes(back, commitBlock) == bytes(now, commitBlock) { return .notDone }
            return try reading(Set(changed + [commitBlock]).sorted(), before: now, after: target) == .done ? .done : .neither
        }) { try put(commitBlock, bytes(target, commitBlock)) }
    } else {
        progress.phase = .committed
    }
    try progress.step("read the written \(unit)s back") {
        // The data blocks were read back before the length; the length's block now.
        let written = data.isEmpty ? Set(changed + [commitBlock]).sorted() : [commitBlock]
        let back = try readBack(written)
        for block in written where bytes(back, block) != bytes(target, block) {
            throw TagError(.verifyFailed, "\(unit) \(number(block)) reads back \(bytes(back, block).hexString), \(bytes(target, block).hexString) was written")
        }
    }

    /// Puts back every block written since the message was emptied, then the length; reads them
    /// back; throws the refusal with the tag unchanged, or what the tag holds if that fails.
    func rollBack(refused block: Int, cause: any Error) throws -> Never {
        let why = "\(unit) \(number(block)) is locked or password-protected (\(cause))"
        var step = ""
        do {
            for b in written.reversed() {
                step = "put \(unit) \(number(b)) back"
                try put(b, bytes(image, b))
            }
            // The refusal is only an answer: the tag may have written the block all the same (a
            // reader's or a middle's error in place of its 90 00). Before the old length comes
            // back, the block must read as it was, or be put back like the others.
            step = "read \(unit) \(number(block)) back"
            if bytes(try readBack([block]), block) != bytes(image, block) {
                step = "put \(unit) \(number(block)) back"
                try put(block, bytes(image, block))
            }
        } catch {
            throw WriteInterrupted(state: .empty, underlying: error, step: step)
        }
        if clears {
            do {
                step = "write the old NDEF length back (\(unit) \(number(commitBlock)))"
                try put(commitBlock, bytes(image, commitBlock))
            } catch {
                throw WriteInterrupted(state: isRefusal(error) ? .empty : .oldOrEmpty, underlying: error, step: step)
            }
        }
        let touched = Set(written + [block, commitBlock]).sorted()
        let back: [UInt8]
        do { back = try readBack(touched) } catch {
            throw WriteInterrupted(state: .old, underlying: error, step: "read the \(unit)s put back")
        }
        if let bad = touched.first(where: { bytes(back, $0) != bytes(image, $0) }) {
            throw WriteInterrupted(state: .unknown, underlying: TagError(.verifyFailed, "\(why); \(unit) \(number(bad)) reads back \(bytes(back, bad).hexString) after it was put back as \(bytes(image, bad).hexString)"),
                                   step: "read the \(unit)s put back")
        }
        let undone = [written.isEmpty ? nil : "the \(unit)s written before it were put back", clears ? "the NDEF length was restored" : nil].compactMap { $0 }
        throw TagError(.readOnly, "\(why); \(undone.isEmpty ? "" : undone.joined(separator: " and ") + ": ")the tag is unchanged")
    }
}

/// Whether an error is the tag refusing a write (it did not do it), not the card going away.
func isRefusal(_ error: any Error) -> Bool {
    (error as? TagError).map { $0.kind == .writeFailed || $0.kind == .readOnly } ?? false
}

/// The last step of every write: the message read back and parsed from the tag must be the one
/// written. `reread` runs after every block was written and read back, so a failure in it leaves
/// the new message on the tag (`.new`); a different message is `.unknown`.
/// - Parameters:
///   - message: what was written.
///   - thing: "tag" or "card", for the message.
///   - reread: parses the message from what the tag now holds.
func confirmWritten(_ message: [UInt8], on thing: String = "tag", reread: () throws -> [UInt8]) throws {
    let back: [UInt8]
    do { back = try reread() } catch let e as WriteInterrupted {
        throw e
    } catch {
        throw WriteInterrupted(state: .new, underlying: error, step: "read the message back")
    }
    guard back == message else {
        throw WriteInterrupted(state: .unknown, underlying: TagError(.verifyFailed, "the \(thing) reads back a different message than was written (\(back.count) bytes vs \(message.count))"), step: "read the message back")
    }
}
