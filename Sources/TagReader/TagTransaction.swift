// A detected NFC Forum tag inside one PC/SC transaction: the engine of the `ndef` commands
// (write with backup, restore, lock, inspect), and work on every reader at once.
import Dispatch
import FoundationEssentials
import Threading
import Glibc
import ISO7816
import NDEF
import NFCTags
import PCSC
import Synchronization

/// A connected, detected NFC Forum tag inside one PC/SC transaction: the engine under the
/// `apdu ndef-*` commands and under `NFCTag`'s async methods.
///
/// Detection and the work run in one transaction, so no other program's command lands between
/// reading the capability container and writing the message. Valid only inside the `run` body
/// that hands it over; use it from that body's thread.
public final class TagTransaction {
    public let reader: String
    public let card: Card
    /// The card's answer to reset, as pcscd reported it.
    public let atr: [UInt8]
    /// Every APDU of the tag's procedures goes through this (its observer sees them).
    public let transport: APDUTransport
    /// The tag's NDEF procedures: a `Type4Tag`, `Type2Tag`, `Type5Tag` or `Type3Tag`.
    public let tag: any NDEFTag
    /// The reader's native tag-command path for a Type 2, 5 or 3 tag (its dialect may be
    /// storage-only); nil for a Type 4 tag. Its transparent session ends with the transaction.
    public let commands: TagCommandChannel?

    init(reader: String, card: Card, atr: [UInt8], transport: APDUTransport, tag: any NDEFTag, commands: TagCommandChannel?) {
        self.reader = reader
        self.card = card
        self.atr = atr
        self.transport = transport
        self.tag = tag
        self.commands = commands
    }

    /// Chooses the reader (`ReaderSelection`), connects, begins a transaction, detects the tag and
    /// runs `body`; ends the transaction and disconnects afterwards.
    ///
    /// With a wait, a pcscd that goes away (restart, crash) before `body` starts is waited out
    /// until the deadline: the whole open starts over on a fresh context. Without one, its error
    /// is thrown at once. Once `body` has started, nothing is retried. Another program's
    /// transaction on the reader is waited out until the deadline, and at least
    /// `ReaderSelection.defaultPatience`; then `ReaderError.busy`, before anything reached the card.
    /// - Parameters:
    ///   - requested: a reader name, index or unique part of a name; nil for the only reader with a card.
    ///   - wait: how long to wait for a card (and for pcscd to come back); nil: not at all.
    ///   - observer: sees every APDU exchanged.
    ///   - tolerant: a Type 2 tag whose TLV area does not parse is still detected (to restore it).
    ///   - access: the reader dialect (nil: from the name and a probe) and a Type 2 password.
    ///   - body: the work, inside the transaction.
    /// - Throws: `ReaderError`, `PCSCError`, `TagError` (detection), `TagCommandError` (a password
    ///   on a reader with no raw path), and what `body` throws.
    public static func run<T>(reader requested: String?, wait: Duration?, observer: ((Exchange) -> Void)? = nil,
                              tolerant: Bool = false, access: TagAccess = TagAccess(), _ body: (TagTransaction) throws -> T) throws -> T {
        let start = ContinuousClock.now
        let deadline = start + (wait ?? .zero)
        while true {
            var started = false
            do {
                let selection = try ReaderSelection()
                let (reader, atr) = try selection.chooseCard(requested, wait: wait.map { _ in max(.zero, deadline - ContinuousClock.now) })
                let card = try selection.connect(reader, until: max(deadline, .now + ReaderSelection.defaultPatience), transaction: true)
                defer { try? card.disconnect() }
                return try inTransaction(card: card, atr: atr, observer: observer, tolerant: tolerant, access: access) { transaction in
                    started = true
                    return try body(transaction)
                }
            } catch let error as PCSCError {
                guard !started, wait != nil, retryable.contains(error) else { throw error }
                guard ContinuousClock.now < deadline else { throw ReaderError.serviceLost(error) }
                usleep(300_000)
            }
        }
    }

    static let retryable: Set<PCSCError> = ReaderSelection.serviceLost.union([PCSCError.removedCard, PCSCError.resetCard, PCSCError.noSmartcard])

    /// Detects the tag on a connection the caller made (and will end) and runs `body` inside a
    /// transaction. `atr`: what pcscd reported in the reader's state (empty: ask the connection).
    /// Were the card swapped in between, detection fails on the new card before anything is written.
    public static func run<T>(card: Card, atr: [UInt8] = [], observer: ((Exchange) -> Void)? = nil, tolerant: Bool = false,
                              access: TagAccess = TagAccess(), _ body: (TagTransaction) throws -> T) throws -> T {
        try card.beginTransaction()
        return try inTransaction(card: card, atr: atr, observer: observer, tolerant: tolerant, access: access, body)
    }

    /// `run(card:…)` on a connection that keeps what its reader turned out to speak across
    /// transactions (`forms`: read before, updated after), so the adaptation costs one retry per
    /// connection, not per operation.
    static func run<T>(card: Card, atr: [UInt8], observer: ((Exchange) -> Void)?, tolerant: Bool, forms: ConnectionForms,
                       _ body: (TagTransaction) throws -> T) throws -> T {
        try card.beginTransaction()
        return try inTransaction(card: card, atr: atr, observer: observer, tolerant: tolerant, access: TagAccess(), forms: forms, body)
    }

    /// Detects and runs `body` on a card whose transaction has begun; ends it.
    private static func inTransaction<T>(card: Card, atr knownATR: [UInt8], observer: ((Exchange) -> Void)?, tolerant: Bool,
                                         access: TagAccess, forms: ConnectionForms? = nil, _ body: (TagTransaction) throws -> T) throws -> T {
        try card.endingTransaction {
            let atr = knownATR.isEmpty ? ((try? card.status().atr) ?? []) : knownATR
            let transport = APDUTransport(channel: PCSCChannel(card: card), observer: observer)
            if let forms { transport.forms = forms.forms }
            defer { forms?.forms = transport.forms }
            // Types 2, 3, 5: the reader's native path (probes stay in the reader), ended on every path.
            let commands = usesTagCommands(atr: atr) ? try TagCommandChannel.open(transport: transport, readerName: card.reader, override: access.dialect) : nil
            defer { commands?.endSession() }
            let tag = try detectNDEFTag(transport, atr: atr, tolerant: tolerant, commands: commands, classicKeys: access.classicKeys, password: access.password)
            return try body(TagTransaction(reader: card.reader, card: card, atr: atr, transport: transport, tag: tag, commands: commands))
        }
    }
}

/// What one connection's reader turned out to speak, kept across its transactions (used on the
/// connection's own queue only).
final class ConnectionForms: @unchecked Sendable {
    var forms = ReaderForms()
}

/// How to reach a tag's own commands: the reader's dialect, a Type 2 password, MIFARE Classic keys.
public struct TagAccess: Sendable, Hashable {
    /// nil: from the reader's name, checked with a harmless probe.
    public var dialect: ReaderDialect?
    /// Sent with PWD_AUTH before anything else, on tags with AUTH0 protection.
    public var password: Type2Password?
    /// MIFARE Classic keys tried after the public MAD and NDEF keys (key B for a lock).
    public var classicKeys: [MifareClassicKeyCandidate]

    public init(dialect: ReaderDialect? = nil, password: Type2Password? = nil, classicKeys: [MifareClassicKeyCandidate] = []) {
        self.dialect = dialect
        self.password = password
        self.classicKeys = classicKeys
    }
}

// MARK: - What the ndef commands do, decided here once

/// What a write did.
public struct WriteReceipt: Sendable, Hashable {
    /// The message's length in bytes.
    public var written: Int
    public var capacity: Int
    /// Where the old message was kept (`BackupStore.save`'s answer); nil for a restore.
    public var backup: String?
}

/// What a lock did; returned only when the tag then refuses writes.
public struct LockReceipt: Sendable, Hashable {
    /// The permanent changes made now, in order ("CC write access 0F", …).
    public var done: [String]
    /// Those an earlier, interrupted lock had made already.
    public var alreadyDone: [String]
    /// Type 4: the capability container's write-access byte now.
    public var writeAccess: String?
}

/// What `TagTransaction.inspect()` finds.
public struct TagInspection: Sendable {
    /// The current message's length; nil when it cannot be read.
    public var length: Int?
    /// Why the message cannot be read or does not parse.
    public var messageError: String?
    /// Type 2: the lock state from the CC, lock bits and password configuration.
    public var locks: Type2LockState?
    /// Whether `makeReadOnly()` has anything left to do.
    public var canMakeReadOnly: Bool
    /// Type 5: the CC's write access and each block's lock.
    public var type5Locks: Type5LockState?
    /// Type 3: RWFlag and the memory configuration block.
    public var type3Locks: Type3LockState?
    /// MIFARE Classic: which NDEF sectors are read-only for good.
    public var classicLocks: MifareClassicLockState?
    /// Type 1: the CC's access byte, LOCK0/LOCK1 and the dynamic lock bytes.
    public var type1Locks: Type1LockState?
}

extension TagTransaction {
    /// Refuses, before touching the tag, a write that cannot work: a read-only tag, a message
    /// over capacity.
    /// - Throws: `TagError` `.readOnly` or `.tooLarge`.
    public func checkWritable(_ message: [UInt8]) throws(TagError) {
        guard tag.status == .readWrite else {
            let access = (tag as? Type4Tag).map { " (write access \($0.capabilityContainer.writeAccess))" } ?? ""
            throw TagError(.readOnly, "the tag is \(tag.status == .readOnly ? "read-only" : "not writable (\(tag.status.rawValue))")\(access); nothing was written")
        }
        guard message.count <= tag.capacity else {
            throw TagError(.tooLarge, "the message is \(message.count) bytes; the tag holds \(tag.capacity) (\(message.count - tag.capacity) bytes over); nothing was written")
        }
    }

    /// Saves the old message to `backups`, then writes and verifies `message`.
    ///
    /// - Parameters:
    ///   - message: the encoded NDEF message.
    ///   - backups: where the old message is kept before the tag changes.
    ///   - progress: told of each step as it begins (a block, a chunk, the read-back); on a slow
    ///     tag a big message takes seconds.
    /// - Throws: `TagError` or `BackupError` when nothing was written; `WriteInterrupted`, whose
    ///   `state` says what the tag holds and whose `backup` says where the old message is, once
    ///   the tag has changed.
    @discardableResult
    public func writeNDEF(_ message: [UInt8], backups: any BackupStore, progress: ((WriteStep) -> Void)? = nil) throws -> WriteReceipt {
        try checkWritable(message)
        tag.writeObserver = progress
        defer { tag.writeObserver = nil }
        var saved: String?
        do {
            try tag.replaceNDEF(with: message) { old in
                saved = try backups.save(old, reader: reader)
            }
        } catch var interrupted as WriteInterrupted {
            interrupted.backup = saved
            throw interrupted
        }
        return WriteReceipt(written: message.count, capacity: tag.capacity, backup: saved)
    }

    /// Puts a backup back exactly, from whatever state a cut write left; refuses a backup of
    /// another tag unless `allowingOtherTag`; `progress` is told of each step as it begins.
    /// - Throws: `TagError` (`.differentTag`, …) before any change; `WriteInterrupted` after.
    public func restore(_ backup: TagBackup, allowingOtherTag: Bool = false, progress: ((WriteStep) -> Void)? = nil) throws -> WriteReceipt {
        tag.writeObserver = progress
        defer { tag.writeObserver = nil }
        try tag.restore(backup, allowingOtherTag: allowingOtherTag)
        return WriteReceipt(written: backup.message.count, capacity: tag.capacity, backup: nil)
    }

    /// Makes the tag read-only for good, finishing a lock an earlier run left half done, and
    /// reports it only once the lock bits read back set and a probe write is refused.
    /// - Throws: `TagError` `.readOnly` when already locked, `.lockFailed` when the lock did not
    ///   take; `LockInterrupted` when the card went away part-way (run it again to finish).
    public func makeReadOnly() throws -> LockReceipt {
        if let t4 = tag as? Type4Tag {
            guard t4.status == .readWrite else { throw TagError(.readOnly, "the tag is already \(t4.status.rawValue); nothing was written") }
            guard try t4.makeReadOnly() else { throw Self.lockDidNotTake }
            return LockReceipt(done: ["CC write access FF"], alreadyDone: [], writeAccess: t4.capabilityContainer.writeAccess.description)
        }
        if let lockable = tag as? any PermanentlyLockable { return try lock(lockable) }
        throw TagError(.notNDEF, "no lock procedure for this tag")
    }

    /// Types 2, 5 and 3: refused when already locked; reported only once the locks read back
    /// set and the tag refuses a write.
    private func lock<T: PermanentlyLockable>(_ tag: T) throws -> LockReceipt {
        guard !(try tag.readLockState()).isFullyLocked else {
            throw TagError(.readOnly, "the tag is already locked (\(T.locksDescription)); nothing was written")
        }
        let report = try tag.makeReadOnly()
        guard report.refusesWrites, report.state.isFullyLocked else { throw Self.lockDidNotTake }
        return LockReceipt(done: report.done, alreadyDone: report.alreadyDone, writeAccess: nil)
    }

    /// Not "the lock did not take": the answers that decide it may be a reader's or a middle's
    /// (issue 49's matrix: a READ of the lock bytes cut short left a fully locked tag reported
    /// as not locked). What is known is that the lock is not confirmed.
    static let lockDidNotTake = TagError(.lockFailed, "the lock is not confirmed: the tag still accepted a write, or its lock bits did not read back set; "
        + "some or all locks may be set (apdu tag-info shows them; running the lock again finishes it)")

    /// The status, the current message's length and whether it parses, and (Type 2) the locks.
    public func inspect() throws -> TagInspection {
        let locks = try (tag as? Type2Tag)?.readLockState()
        let t5 = tag as? Type5Tag, t3 = tag as? Type3Tag
        let locks5 = try t5?.readLockState(), locks3 = try t3?.readLockState()
        var canLock = locks.map { !$0.isFullyLocked } ?? (tag.status == .readWrite)
        if let t5, let locks5 { canLock = t5.commands != nil && locks5.lockedBlocks != nil && !locks5.isFullyLocked }
        if let t3, let locks3 { canLock = t3.polling.isLite && t3.attribute != nil && !locks3.isFullyLocked }
        let classicLocks = try (tag as? MifareClassicNDEFTag)?.readLockState()
        if let classicLocks { canLock = !classicLocks.isFullyLocked }
        let t1 = tag as? Type1Tag
        let locks1 = try t1?.readLockState()
        if let t1, let locks1 { canLock = t1.lockRefusal == nil && !locks1.isFullyLocked && t1.capabilityContainer.valid }
        var inspection = TagInspection(locks: locks, canMakeReadOnly: canLock, type5Locks: locks5, type3Locks: locks3, classicLocks: classicLocks, type1Locks: locks1)
        do {
            let message = try tag.readNDEF()
            if !message.isEmpty { _ = try NDEFMessage(decoding: message) }
            inspection.length = message.count
        } catch let e as TagError {
            inspection.messageError = e.message
        } catch let e as NDEFError {
            inspection.messageError = "the message does not parse: \(e)"
        }
        return inspection
    }
}

extension TagTransaction {
    /// Runs `body` on the tag in every reader that has one now, all in parallel: one thread and
    /// PC/SC context each (a context's calls are serialised by pcsclite), each tag in its own
    /// transaction. Returns each reader's result, in pcscd's reader order.
    ///
    /// Three phases, because pcsclite's handle lists make connects, card calls and disconnects
    /// take turns (see `PCSC`'s handle-table lock): all threads connect at once, then all work at
    /// once, then the connections end, one by one, after all are done.
    /// - Parameters:
    ///   - observer: sees every exchange with every tag (a trace), from the readers' threads.
    ///   - finished: told as each reader's work ends, one call at a time: which reader, and how
    ///     many of how many have ended (for a progress display).
    ///   - body: the work on one tag, run on that reader's thread.
    /// - Throws: `ReaderError.noCard` when no reader has a card; `PCSCError`.
    public static func runOnEveryReader<T: Sendable>(observer: (@Sendable (Exchange) -> Void)? = nil,
                                                     finished: (@Sendable (_ reader: String, _ done: Int, _ of: Int) -> Void)? = nil,
                                                     _ body: @escaping @Sendable (TagTransaction) throws -> T) throws -> [(reader: String, result: Result<T, any Error>)] {
        let context = try Context()
        let names = try context.readers()
        var states = names.map { ReaderState(reader: $0) }
        if !states.isEmpty { try context.statusChange(&states, timeout: .zero) }
        let targets = states.filter { $0.eventState.hasUsableCard }
        guard !targets.isEmpty else { throw ReaderError.noCard(reader: nil) }
        let results = Mutex([String: Result<T, any Error>]())
        let connections = Mutex([Card]())
        defer { for card in connections.withLock({ $0 }) { try? card.disconnect() } }
        let done = DispatchSemaphore(value: 0)
        let connected = DispatchGroup()
        let go = DispatchSemaphore(value: 0)
        for target in targets {
            connected.enter()
            do throws(DetachedThread.StartError) {
                try DetachedThread.start {
                    defer { done.signal() }
                    let result: Result<T, any Error>
                    do {
                        let card: Card
                        do {
                            defer { connected.leave(); go.wait() }
                            card = try Context().connect(reader: target.reader)
                        }
                        connections.withLock { $0.append(card) }
                        result = .success(try run(card: card, atr: target.atr, observer: observer, body))
                    } catch {
                        result = .failure(error)
                    }
                    results.withLock {
                        $0[target.reader] = result
                        finished?(target.reader, $0.count, targets.count)
                    }
                }
            } catch {
                results.withLock {
                    $0[target.reader] = .failure(error)
                    finished?(target.reader, $0.count, targets.count)
                }
                connected.leave()
                done.signal()
            }
        }
        connected.wait()
        for _ in targets { go.signal() }
        for _ in targets { done.wait() }
        let all = results.withLock { $0 }
        return targets.map { ($0.reader, all[$0.reader]!) }
    }
}
