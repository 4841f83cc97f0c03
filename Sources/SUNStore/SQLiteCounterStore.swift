// SUN replay counters in one SQLite file: the one-statement check and update, group commit,
// durability and schema migrations.
internal import CSQLite
import SUN
import Synchronization

/// Why the counter store could not be used.
public struct CounterStoreError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Replay counters in one SQLite file, created on first use: the embedded store for one
/// verifier process (one machine). Several processes on one file are serialised by SQLite's
/// locks and stay correct, but a service that runs on many machines needs a shared database.
///
/// The check and the update are one statement,
/// `INSERT … ON CONFLICT(uid) DO UPDATE SET counter = excluded.counter WHERE excluded.counter > counter`,
/// and a tap is accepted only when it changed a row. The schema is versioned
/// (`PRAGMA user_version`) and migrated on open.
public final class SQLiteCounterStore: SUNCounterStore, @unchecked Sendable {
    private let db: OpaquePointer
    private let upsert: OpaquePointer
    private let lock = Mutex(())
    public let path: String

    /// The schema versions, in order; each runs once, in a transaction, on open.
    static let migrations: [String] = [
        "CREATE TABLE sun_counters (uid BLOB PRIMARY KEY, counter INTEGER NOT NULL, updated INTEGER NOT NULL) WITHOUT ROWID",
    ]

    /// When an accepted counter is on disk.
    public enum Durability: String, Sendable, CaseIterable {
        /// Each accepted tap is synced to disk before it is reported accepted (SQLite
        /// `synchronous = FULL`): nothing accepted is forgotten, even on power loss.
        case full
        /// The write-ahead log is synced at checkpoints only (`synchronous = NORMAL`): a crash of
        /// the process loses nothing, a power loss or kernel crash may forget the last taps
        /// accepted (which could then be accepted once more). Many times faster on real disks.
        case normal
    }

    public init(path: String, durability: Durability = .full) throws(CounterStoreError) {
        self.path = path
        var handle: OpaquePointer?
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nil) == SQLITE_OK, let handle else {
            let why = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            if let handle { sqlite3_close(handle) }
            throw CounterStoreError("cannot open the counter store \(path): \(why)")
        }
        db = handle
        sqlite3_busy_timeout(db, 5000)
        do throws(CounterStoreError) {
            try Self.exec(db, "PRAGMA journal_mode = WAL")
            try Self.exec(db, durability == .full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL")
            try Self.migrate(db)
            var statement: OpaquePointer?
            let sql = "INSERT INTO sun_counters (uid, counter, updated) VALUES (?1, ?2, strftime('%s','now')) "
                + "ON CONFLICT(uid) DO UPDATE SET counter = excluded.counter, updated = excluded.updated WHERE excluded.counter > sun_counters.counter"
            guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
                throw CounterStoreError("the counter store \(path): \(String(cString: sqlite3_errmsg(db)))")
            }
            upsert = statement
        } catch {
            sqlite3_close(db)
            throw error
        }
    }

    deinit {
        sqlite3_finalize(upsert)
        sqlite3_close(db)
    }

    public func accept(uid: [UInt8], counter: Int) throws -> Bool {
        try lock.withLock { _ throws(CounterStoreError) -> Bool in try step(uid: uid, counter: counter) }
    }

    /// Several taps in one transaction (a group commit): one write to the log, and one sync with
    /// `.full`, for all of them. Each is decided as by ``accept(uid:counter:)``, in order (a UID
    /// twice in the batch: the second sees the first). All are recorded, or, when the commit
    /// fails, none.
    public func accept(batch: [(uid: [UInt8], counter: Int)]) throws(CounterStoreError) -> [Bool] {
        if batch.count == 1 {
            return [try lock.withLock { _ throws(CounterStoreError) -> Bool in try step(uid: batch[0].uid, counter: batch[0].counter) }]
        }
        return try lock.withLock { _ throws(CounterStoreError) -> [Bool] in
            try Self.exec(db, "BEGIN IMMEDIATE")
            do throws(CounterStoreError) {
                var results: [Bool] = []
                results.reserveCapacity(batch.count)
                for tap in batch { results.append(try step(uid: tap.uid, counter: tap.counter)) }
                try Self.exec(db, "COMMIT")
                return results
            } catch {
                try? Self.exec(db, "ROLLBACK")
                throw error
            }
        }
    }

    /// One upsert; the caller holds the lock.
    private func step(uid: [UInt8], counter: Int) throws(CounterStoreError) -> Bool {
        defer { sqlite3_reset(upsert); sqlite3_clear_bindings(upsert) }
        _ = uid.withUnsafeBytes { sqlite3_bind_blob(upsert, 1, $0.baseAddress, Int32($0.count), apdu_sqlite_transient()) }
        sqlite3_bind_int64(upsert, 2, sqlite3_int64(counter))
        guard sqlite3_step(upsert) == SQLITE_DONE else {
            throw CounterStoreError("the counter store \(path): \(String(cString: sqlite3_errmsg(db)))")
        }
        return sqlite3_changes(db) == 1
    }

    /// The last counter accepted for `uid`, if any.
    public func lastCounter(uid: [UInt8]) throws -> Int? {
        try lock.withLock { _ throws(CounterStoreError) -> Int? in
            var statement: OpaquePointer?
            guard sqlite3_prepare_v2(db, "SELECT counter FROM sun_counters WHERE uid = ?1", -1, &statement, nil) == SQLITE_OK, let statement else {
                throw CounterStoreError("the counter store \(path): \(String(cString: sqlite3_errmsg(db)))")
            }
            defer { sqlite3_finalize(statement) }
            _ = uid.withUnsafeBytes { sqlite3_bind_blob(statement, 1, $0.baseAddress, Int32($0.count), apdu_sqlite_transient()) }
            return sqlite3_step(statement) == SQLITE_ROW ? Int(sqlite3_column_int64(statement, 0)) : nil
        }
    }

    static func exec(_ db: OpaquePointer, _ sql: String) throws(CounterStoreError) {
        var error: UnsafeMutablePointer<CChar>?
        guard sqlite3_exec(db, sql, nil, nil, &error) == SQLITE_OK else {
            let why = error.map { String(cString: $0) } ?? "unknown error"
            sqlite3_free(error)
            throw CounterStoreError("the counter store: \(why)")
        }
    }

    /// Runs the migrations past the file's `user_version`, each with its version bump, in one
    /// transaction; a file from a newer version of this tool is refused.
    static func migrate(_ db: OpaquePointer) throws(CounterStoreError) {
        // The version is read inside the write transaction: two processes opening a new file at
        // once migrate it once.
        try exec(db, "BEGIN IMMEDIATE")
        do throws(CounterStoreError) {
            var statement: OpaquePointer?
            guard sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &statement, nil) == SQLITE_OK, let statement else {
                throw CounterStoreError("the counter store: \(String(cString: sqlite3_errmsg(db)))")
            }
            let version = sqlite3_step(statement) == SQLITE_ROW ? Int(sqlite3_column_int(statement, 0)) : 0
            sqlite3_finalize(statement)
            guard version <= migrations.count else {
                throw CounterStoreError("the counter store has schema version \(version); this tool knows up to \(migrations.count)")
            }
            for (i, sql) in migrations.enumerated().dropFirst(version) {
                try exec(db, sql)
                try exec(db, "PRAGMA user_version = \(i + 1)")
            }
            try exec(db, "COMMIT")
        } catch {
            try? exec(db, "ROLLBACK")
            throw error
        }
    }
}
