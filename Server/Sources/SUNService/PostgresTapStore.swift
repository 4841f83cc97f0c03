// The counter store in PostgreSQL, shared by many server instances: the atomic upsert, the
// schema migrations under an advisory lock, and a deadline on every query.
import Foundation
import ISO7816
import Logging
import NIOCore
import NIOSSL
import PostgresNIO
import Synchronization

/// The shared store: counters in PostgreSQL, so that any number of server instances behind a
/// load balancer have one view of every UID's last counter.
///
/// The check and the update are one statement (`INSERT … ON CONFLICT (uid) DO UPDATE … WHERE
/// counter < excluded.counter RETURNING uid`): PostgreSQL takes the row's lock, so two instances
/// that get the same tap at the same moment accept it once. Taps that arrive together share one
/// multi-row statement (``PostgresBatcher``). A query that cannot get an answer within the timeout (the
/// server down, restarting, unreachable) is `StoreUnavailable`; the connection pool reconnects
/// by itself when PostgreSQL is back.
public final class PostgresTapStore: TapCounterStore {
    public let client: PostgresClient
    public let displayName: String
    let timeout: Duration
    let logger: Logger
    /// Migrations run on a connection of their own, closed at the end: their lock can never
    /// stay behind on a pooled connection.
    let migrationConfiguration: PostgresConnection.Configuration
    /// Group commit: the taps that arrive while statements run share the next one.
    private let batcher: PostgresBatcher

    /// The schema versions, in order; each runs once, in a transaction, under an advisory lock
    /// (instances that start together migrate once).
    static let migrations: [String] = [
        "CREATE TABLE sun_counters (uid bytea PRIMARY KEY, counter bigint NOT NULL, updated timestamptz NOT NULL DEFAULT now())",
    ]
    /// pg_advisory_lock key of the migrations ("SUN" in ASCII).
    static let migrationLock = 0x53554E

    /// - Parameter url: `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require]`;
    ///   without a password in it, `PGPASSWORD` from the environment.
    public init(url: String, timeout: Duration, logger: Logger) throws(StoreUnavailable) {
        guard let components = URLComponents(string: url), ["postgres", "postgresql"].contains(components.scheme ?? ""),
              let host = components.host, !host.isEmpty
        else {
            throw StoreUnavailable("--database: expected postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE or a SQLite file path")
        }
        let user = components.user.flatMap { $0.removingPercentEncoding } ?? "postgres"
        // A password on the command line is visible to every user (ps); PGPASSWORD, as libpq
        // reads it, keeps it out of sight.
        let password = components.password.flatMap { $0.removingPercentEncoding } ?? ProcessInfo.processInfo.environment["PGPASSWORD"]
        let database = components.path.split(separator: "/").first.map(String.init)
        let tls: PostgresClient.Configuration.TLS
        let connectionTLS: PostgresConnection.Configuration.TLS
        do {
            switch components.queryItems?.first(where: { $0.name == "sslmode" })?.value ?? "prefer" {
            case "disable":
                tls = .disable
                connectionTLS = .disable
            case "prefer":
                tls = .prefer(.makeClientConfiguration())
                connectionTLS = .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
            case "require":
                tls = .require(.makeClientConfiguration())
                connectionTLS = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            case let other:
                throw StoreUnavailable("--database: sslmode \(KeyRing.safe(other)) is not one of disable, prefer, require")
            }
        } catch let error as StoreUnavailable {
            throw error
        } catch {
            throw StoreUnavailable("--database: TLS: \(error)")
        }
        var configuration = PostgresClient.Configuration(host: host, port: components.port ?? 5432, username: user, password: password, database: database, tls: tls)
        configuration.options.connectTimeout = timeout
        configuration.options.maximumConnections = 16
        client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        migrationConfiguration = PostgresConnection.Configuration(host: host, port: components.port ?? 5432, username: user, password: password, database: database, tls: connectionTLS)
        displayName = "postgres://\(user)@\(host):\(components.port ?? 5432)/\(database ?? "")"
        batcher = PostgresBatcher { [client] batch throws(StoreUnavailable) in
            try await Self.upsert(batch, client: client, timeout: timeout, logger: logger)
        }
        self.timeout = timeout
        self.logger = logger
    }

    public func accept(uid: [UInt8], counter: Int) async throws(StoreUnavailable) -> Bool {
        try await batcher.accept(uid: uid, counter: counter)
    }

    /// One multi-row upsert for a batch (each UID once, sorted); the UIDs accepted.
    static func upsert(_ batch: [(uid: [UInt8], counter: Int)], client: PostgresClient, timeout: Duration, logger: Logger) async throws(StoreUnavailable) -> Set<[UInt8]> {
        let sorted = batch.sorted { $0.uid.lexicographicallyPrecedes($1.uid) }
        let uids = sorted.map { Hex.encode($0.uid) }
        let counters = sorted.map { Int64($0.counter) }
        let query: PostgresQuery = """
            INSERT INTO sun_counters AS c (uid, counter) \
            SELECT decode(u, 'hex'), n FROM unnest(\(uids)::text[], \(counters)::bigint[]) AS t(u, n) \
            ON CONFLICT (uid) DO UPDATE SET counter = excluded.counter, updated = now() \
            WHERE c.counter < excluded.counter RETURNING uid
            """
        return try await withDeadline(timeout: timeout, what: "accept") {
            var accepted = Set<[UInt8]>()
            for try await uid in try await client.query(query, logger: logger).decode(ByteBuffer.self) {
                accepted.insert(Array(buffer: uid))
            }
            return accepted
        }
    }

    public func check() async throws(StoreUnavailable) {
        try await Self.withDeadline(timeout: timeout, what: "check") {
            for try await _ in try await self.client.query("SELECT 1", logger: self.logger) {}
        }
    }

    /// Runs the migrations past the database's version. Waits up to `wait` for PostgreSQL to
    /// answer (a server and its database started together).
    public func migrate(wait: Duration) async throws(StoreUnavailable) {
        let clock = ContinuousClock()
        let end = clock.now + wait
        while true {
            do {
                try await migrateOnce()
                return
            } catch let error as StoreUnavailable where clock.now < end {
                logger.notice("the counter database does not answer yet; retrying", metadata: ["database": "\(displayName)", "error": "\(error.detail)"])
                try? await Task.sleep(for: .milliseconds(500))
            } catch let error as StoreUnavailable {
                throw error
            } catch let error as SchemaTooNew {
                throw StoreUnavailable("the counter database has schema version \(error.version); this server knows up to \(Self.migrations.count)")
            } catch {
                throw StoreUnavailable("\(error)")
            }
        }
    }

    /// One transaction: the advisory lock (released at its end, or when the connection drops),
    /// the version table, the missing migrations. DDL is transactional in PostgreSQL, so a
    /// migration is applied whole with its version or not at all.
    func migrateOnce() async throws {
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(configuration: migrationConfiguration, id: 0, logger: logger)
        } catch let error as PSQLError {
            throw StoreUnavailable("PostgreSQL: \(Self.describe(error)) (migrate)")
        }
        defer { Task { try? await connection.close() } }
        do {
            try await connection.query("BEGIN", logger: logger)
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.migrationLock))", logger: logger)
            try await connection.query("CREATE TABLE IF NOT EXISTS sun_schema_migrations (version integer PRIMARY KEY, applied timestamptz NOT NULL DEFAULT now())", logger: logger)
            var version = 0
            for try await v in try await connection.query("SELECT coalesce(max(version), 0) FROM sun_schema_migrations", logger: logger).decode(Int32.self) {
                version = Int(v)
            }
            guard version <= Self.migrations.count else {
                throw SchemaTooNew(version: version)
            }
            for (i, sql) in Self.migrations.enumerated().dropFirst(version) {
                try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
                try await connection.query("INSERT INTO sun_schema_migrations (version) VALUES (\(Int32(i + 1)))", logger: logger)
                logger.info("counter database migrated", metadata: ["version": "\(i + 1)"])
            }
            try await connection.query("COMMIT", logger: logger)
        } catch let error as SchemaTooNew {
            _ = try? await connection.query("ROLLBACK", logger: logger)
            throw error
        } catch let error as PSQLError {
            _ = try? await connection.query("ROLLBACK", logger: logger)
            throw StoreUnavailable("PostgreSQL: \(Self.describe(error)) (migrate)")
        }
    }

    struct SchemaTooNew: Error {
        var version: Int
    }

    /// `body`, or `StoreUnavailable` when it has not answered within the timeout (the pool
    /// waits for a connection while PostgreSQL is down). The answer never waits for `body`
    /// past the deadline: it is cancelled and left to end by itself, so a request is never held
    /// (nor a graceful shutdown) by a query that does not notice its cancellation.
    static func withDeadline<T: Sendable>(timeout: Duration, what: String, _ body: @escaping @Sendable () async throws -> T) async throws(StoreUnavailable) -> T {
        let pending = ResumeOnce<T>()
        let take = { @Sendable in pending.take() }
        do {
            return try await withCheckedThrowingContinuation { continuation in
                pending.set(continuation)
                let timer = Task {
                    try? await Task.sleep(for: timeout)
                    guard !Task.isCancelled else { return }
                    take()?.resume(throwing: StoreUnavailable("PostgreSQL did not answer within \(timeout) (\(what))"))
                }
                Task {
                    let result: Result<T, any Error>
                    do { result = .success(try await body()) } catch { result = .failure(error) }
                    timer.cancel()
                    take()?.resume(with: result)
                }
            }
        } catch let error as StoreUnavailable {
            throw error
        } catch let error as PSQLError {
            throw StoreUnavailable("PostgreSQL: \(Self.describe(error)) (\(what))")
        } catch {
            throw StoreUnavailable("PostgreSQL: \(error) (\(what))")
        }
    }

    /// A continuation resumed once, by whichever of the answer and the deadline comes first.
    final class ResumeOnce<T: Sendable>: Sendable {
        private let continuation = Mutex<CheckedContinuation<T, any Error>?>(nil)
        func set(_ c: CheckedContinuation<T, any Error>) { continuation.withLock { $0 = c } }
        func take() -> CheckedContinuation<T, any Error>? {
            continuation.withLock { c in
                defer { c = nil }
                return c
            }
        }
    }

    /// What went wrong, without the query's bindings: the code and the server's message.
    static func describe(_ error: PSQLError) -> String {
        if let message = error.serverInfo?[.message] { return "\(error.code): \(message)" }
        return "\(error.code)"
    }
}
