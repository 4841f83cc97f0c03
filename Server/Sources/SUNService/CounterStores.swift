// Where the service keeps each UID's last accepted counter: the store protocol, its error, and
// the embedded SQLite store with its group commit.
import Foundation
import Synchronization
import Logging
import SUN
import SUNStore

/// Why the counter store could not answer. The HTTP answer is a 503 that says only that; the
/// log gets `detail`.
public struct StoreUnavailable: Error, CustomStringConvertible, Sendable {
    public var detail: String
    public init(_ detail: String) { self.detail = detail }
    public var description: String { detail }
}

/// Where the service keeps each UID's last accepted read counter. The check and the update are
/// one atomic step in the backend, so any number of requests (and, with PostgreSQL, any number
/// of server instances) accept a tap once.
public protocol TapCounterStore: Sendable {
    /// True when `counter` is greater than the last one accepted for `uid` (or the first), and
    /// it is now the last one; false, changing nothing, for a replay.
    /// - Throws: `StoreUnavailable` when the backend cannot answer in time.
    func accept(uid: [UInt8], counter: Int) async throws(StoreUnavailable) -> Bool
    /// Whether the backend answers now (for `/healthz`).
    func check() async throws(StoreUnavailable)
    /// Where the counters are, for logs: never a password.
    var displayName: String { get }
}

/// The embedded store: one SQLite file for one server instance, created on first start. A
/// second instance on the same file is refused at start (an advisory lock on the file): two
/// instances would each be correct, but could not be told apart from a deployment that needs
/// the shared store, and one SQLite file is not shared across machines.
public final class SQLiteTapStore: TapCounterStore {
    let store: SQLiteCounterStore
    private let lockDescriptor: Int32
    public let displayName: String
    private let committer: GroupCommitter

    public init(path: String, durability: SQLiteCounterStore.Durability) throws(StoreUnavailable) {
        let lockPath = path + ".lock"
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StoreUnavailable("cannot create \(lockPath): \(String(cString: strerror(errno)))") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            throw StoreUnavailable("the SQLite counter store \(path) is in use by another apdu-sun-server; SQLite serves one instance: run more instances with --database postgres://…")
        }
        lockDescriptor = fd
        do {
            store = try SQLiteCounterStore(path: path, durability: durability)
        } catch {
            close(fd)
            throw StoreUnavailable(error.message)
        }
        committer = GroupCommitter(store: store)
        displayName = "sqlite:\(path)"
    }

    deinit { close(lockDescriptor) }

    public func accept(uid: [UInt8], counter: Int) async throws(StoreUnavailable) -> Bool {
        try await committer.accept(uid: uid, counter: counter)
    }

    public func check() async throws(StoreUnavailable) {
        do { _ = try store.lastCounter(uid: []) } catch let error as CounterStoreError { throw StoreUnavailable(error.message) } catch { throw StoreUnavailable("\(error)") }
    }
}

/// Group commit for SQLite: the taps that arrive while a transaction is being written wait, and
/// go together in the next one (one log write, and with `--sqlite-sync full` one sync, for all
/// of them). Under light load each tap has a transaction of its own; under heavy load the
/// batches grow and the cost per tap falls. Writes happen on one thread of their own, never on
/// the server's event loops. A failed commit fails every tap of its batch (none is recorded).
final class GroupCommitter: Sendable {
    typealias Waiter = (uid: [UInt8], counter: Int, continuation: CheckedContinuation<Bool, any Error>)
    private let store: SQLiteCounterStore
    private let queue = DispatchQueue(label: "apdu-sun-server.sqlite-writer")
    private let state = Mutex<(pending: [Waiter], writing: Bool)>(([], false))
    /// The largest batch: a bound on the time the first tap of a batch waits for the last.
    static let maximumBatch = 256

    init(store: SQLiteCounterStore) { self.store = store }

    func accept(uid: [UInt8], counter: Int) async throws(StoreUnavailable) -> Bool {
        do {
            return try await withCheckedThrowingContinuation { continuation in
                let start = state.withLock { s -> Bool in
                    s.pending.append((uid, counter, continuation))
                    guard !s.writing else { return false }
                    s.writing = true
                    return true
                }
                if start { queue.async { self.drain() } }
            }
        } catch let error as StoreUnavailable {
            throw error
        } catch {
            throw StoreUnavailable("\(error)")
        }
    }

    private func drain() {
        while true {
            let batch = state.withLock { s -> [Waiter] in
                let n = min(s.pending.count, Self.maximumBatch)
                let batch = Array(s.pending.prefix(n))
                s.pending.removeFirst(n)
                if batch.isEmpty { s.writing = false }
                return batch
            }
            if batch.isEmpty { return }
            do {
                let results = try store.accept(batch: batch.map { ($0.uid, $0.counter) })
                for (waiter, accepted) in zip(batch, results) { waiter.continuation.resume(returning: accepted) }
            } catch {
                for waiter in batch { waiter.continuation.resume(throwing: StoreUnavailable(error.message)) }
            }
        }
    }
}
