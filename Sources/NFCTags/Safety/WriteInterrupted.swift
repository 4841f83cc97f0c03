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

    /// Runs one step; on failure, wraps the error with the state the tag can be in.
    /// `empties`: the step that sets the length to 0; `commits`: the step that sets the new length.
    mutating func step<T>(_ what: String, empties: Bool = false, commits: Bool = false, _ body: () throws -> T) throws -> T {
        started += 1
        observer?(WriteStep(number: started, total: max(total, started), action: what))
        do {
            let result = try body()
            if empties { phase = .emptied }
            if commits { phase = .committed }
            return result
        } catch {
            // A tag that refused the step did not do it; a card that went away may have.
            let refused = isRefusal(error)
            let state: WriteInterrupted.TagState
            switch phase {
            case .untouched:
                guard empties || commits else { throw error }   // nothing has changed: the error stands alone
                state = refused ? .old : .oldOrEmpty
            case .emptied:
                state = commits && !refused ? .emptyOrNew : .empty
            case .committed:
                state = (error as? TagError)?.kind == .verifyFailed ? .unknown : .new
            }
            throw WriteInterrupted(state: state, underlying: error, step: what)
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
///   - unit: "block" or "page", in the steps' words.
///   - number: the block number people see for a block index (a Classic area skips trailers).
///   - write: writes one block.
///   - readBack: reads the given blocks again from the tag (not from a cache) and returns the
///     area's bytes with them.
func writeInCommitOrder(image: [UInt8], target: [UInt8], changed: [Int], commitPosition: Int, blockSize: Int, unit: String = "block",
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
    let steps = (clears ? 1 : 0) + changed.count(where: { $0 != commitBlock }) + (commits ? 1 : 0) + 1
    var progress = WriteProgress(steps: steps, observer: observer)
    if !clears {
        progress.phase = .emptied
    } else {
        try progress.step("clear the NDEF length (\(unit) \(number(commitBlock)))", empties: true) { try put(commitBlock, emptied) }
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
    if commits {
        try progress.step("write the NDEF length (\(unit) \(number(commitBlock)))", commits: true) { try put(commitBlock, bytes(target, commitBlock)) }
    } else {
        progress.phase = .committed
    }
    try progress.step("read the written \(unit)s back") {
        let written = Set(changed + [commitBlock]).sorted()
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
        let touched = Set(written + [commitBlock]).sorted()
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
