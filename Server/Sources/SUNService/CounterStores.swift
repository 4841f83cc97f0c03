import Foundation
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
        displayName = "sqlite:\(path)"
    }

    deinit { close(lockDescriptor) }

    public func accept(uid: [UInt8], counter: Int) async throws(StoreUnavailable) -> Bool {
        do { return try store.accept(uid: uid, counter: counter) } catch let error as CounterStoreError { throw StoreUnavailable(error.message) } catch { throw StoreUnavailable("\(error)") }
    }

    public func check() async throws(StoreUnavailable) {
        do { _ = try store.lastCounter(uid: []) } catch let error as CounterStoreError { throw StoreUnavailable(error.message) } catch { throw StoreUnavailable("\(error)") }
    }
}
