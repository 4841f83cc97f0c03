import Foundation
import Synchronization
import Testing

/// Runs `psql` on the test database (the client of Debian's postgresql package).
func psql(_ sql: String) throws -> String {
    let (_, out) = try spawn("/usr/bin/env", ["psql", "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-c", sql, String(postgresURL!.split(separator: "?")[0])])
    return out.trimmingCharacters(in: .whitespacesAndNewlines)
}

/// pg_ctl on the private cluster: stop, start, restart.
func pgctl(_ action: String) throws {
    let (status, _) = try spawn(postgresControl!, [action], capture: false)
    guard status == 0 else { throw HTTPFailure(description: "pg_ctl \(action) failed with \(status)") }
}

/// The shared store: several server processes on one real PostgreSQL (Scripts/with-postgres).
/// One test at a time: some stop and restart the database.
@Suite("apdu-sun-server on PostgreSQL: many instances, one view", .serialized, .enabled(if: postgresURL != nil, "needs Scripts/with-postgres"))
struct PostgresTests {
    @Test("Two instances, the same 1,000 fresh taps sent to both at once: exactly 1,000 accepted, every duplicate refused")
    func twoInstances() throws {
        let scratch = Scratch()
        let keys = scratch.write("keys.json", keyFileText)
        let a = try ServerProcess(keys: keys, database: postgresURL!, arguments: ["--rate-limit", "0"], scratch: scratch, name: "a")
        let b = try ServerProcess(keys: keys, database: postgresURL!, arguments: ["--rate-limit", "0"], scratch: scratch, name: "b")
        let taps = try freshTaps(count: 1000, first: 1_000_000)
        let workers = 16
        let results = Mutex([[Int]](repeating: [0, 0], count: taps.count))
        // Worker w sends taps w, w + 16, … to A; worker 16 + w the same taps, in the same order, to B.
        onThreads(2 * workers) { worker in
            let server = worker < workers ? a : b
            guard let connection = try? HTTPConnection(port: server.port) else { return }
            for i in stride(from: worker % workers, to: taps.count, by: workers) {
                let status = (try? connection.get(taps[i]).status) ?? 0
                results.withLock { $0[i][worker < workers ? 0 : 1] = status }
            }
        }
        let all = results.withLock { $0 }
        let accepted = all.flatMap { $0 }.filter { $0 == 200 }.count
        let refused = all.flatMap { $0 }.filter { $0 == 409 }.count
        #expect(accepted == 1000 && refused == 1000)
        #expect(all.allSatisfy { Set($0) == [200, 409] }, "each tap: accepted by one instance, refused as a replay by the other")
        // Both instances won races: the database, not one process, decided.
        #expect(all.contains { $0[0] == 200 } && all.contains { $0[1] == 200 })
        #expect(try psql("SELECT count(*) FROM sun_counters WHERE uid >= '\\x04000000000000'::bytea AND counter = 1 AND uid BETWEEN '\\x040000000F4240'::bytea AND '\\x040000000F4627'::bytea") == "1000")
        #expect(a.stop() == 0 && b.stop() == 0)
    }

    @Test("Migrations are versioned and run once, also when instances start together; a newer schema is refused")
    func migrations() throws {
        let scratch = Scratch()
        let keys = scratch.write("keys.json", keyFileText)
        _ = try psql("DROP TABLE IF EXISTS sun_counters; DROP TABLE IF EXISTS sun_schema_migrations")
        let started = Mutex([ServerProcess]())
        onThreads(3) { i in
            if let s = try? ServerProcess(keys: keys, database: postgresURL!, scratch: scratch, name: "m\(i)") { started.withLock { $0.append(s) } }
        }
        let servers = started.withLock { $0 }
        #expect(servers.count == 3)
        #expect(try psql("SELECT string_agg(version::text, ',') FROM sun_schema_migrations") == "1")
        #expect(servers.filter { $0.log.contains("counter database migrated") }.count == 1)
        for s in servers { #expect(s.stop() == 0) }
        _ = try psql("INSERT INTO sun_schema_migrations (version) VALUES (99)")
        let r = try runServer(["--keys", keys, "--database", postgresURL!, "--listen", "127.0.0.1:0"])
        #expect(r.status == 69 && r.stderr.contains("schema version 99"))
        _ = try psql("DELETE FROM sun_schema_migrations WHERE version = 99")
    }

    @Test("PostgreSQL restarted mid-load: 503 while it is down, no tap accepted twice, service resumes without a server restart")
    func restartMidLoad() throws {
        let scratch = Scratch()
        let server = try ServerProcess(keys: scratch.write("keys.json", keyFileText), database: postgresURL!,
                                       arguments: ["--rate-limit", "0", "--store-timeout", "0.5"], scratch: scratch)
        let taps = try freshTaps(count: 1200, first: 2_000_000)
        let statuses = Mutex([Int](repeating: -1, count: taps.count))
        let sent = Atomic(0)
        let restarter = Thread {
            while sent.load(ordering: .relaxed) < 300 { Thread.sleep(forTimeInterval: 0.01) }
            try? pgctl("stop")
            Thread.sleep(forTimeInterval: 1.5)
            try? pgctl("start")
        }
        restarter.start()
        onThreads(4) { worker in
            var connection = try? HTTPConnection(port: server.port)
            for i in stride(from: worker, to: taps.count, by: 4) {
                if connection == nil { connection = try? HTTPConnection(port: server.port) }
                let status = (try? connection?.get(taps[i]).status) ?? nil
                if status == nil { connection = nil }
                statuses.withLock { $0[i] = status ?? 0 }
                sent.add(1, ordering: .relaxed)
                // Paced, so the load spans the restart.
                Thread.sleep(forTimeInterval: 0.005)
            }
        }
        while restarter.isExecuting { Thread.sleep(forTimeInterval: 0.05) }
        let first = statuses.withLock { $0 }
        #expect(Set(first).isSubset(of: [200, 503]), "\(Set(first))")
        #expect(first.contains(503), "no request saw the database down")
        #expect(first.suffix(100).allSatisfy { $0 == 200 }, "the service did not resume")
        // Every tap again: an accepted one is a replay now; one answered 503 may be accepted now,
        // once (unless its update reached the database before the answer was lost).
        let second = sendAll(taps, port: server.port, workers: 4).map(\.status)
        for (i, (s1, s2)) in zip(first, second).enumerated() {
            #expect(!(s1 == 200 && s2 == 200), "tap \(i) accepted twice")
            #expect(s2 == 200 || s2 == 409, "tap \(i): \(s2)")
        }
        #expect(server.log.contains("counter store unavailable"))
        #expect(server.stop() == 0)
    }

    @Test("SIGTERM finishes the request in flight (here waiting for a stopped database) before the server exits")
    func gracefulShutdown() throws {
        let scratch = Scratch()
        let server = try ServerProcess(keys: scratch.write("keys.json", keyFileText), database: postgresURL!,
                                       arguments: ["--store-timeout", "2"], scratch: scratch)
        let tap = try freshTaps(count: 1, first: 3_000_000)[0]
        let connection = try HTTPConnection(port: server.port)
        try pgctl("stop")
        defer { try? pgctl("start") }
        let answer = Mutex<HTTPAnswer?>(nil)
        let client = Thread { answer.withLock { $0 = try? connection.get(tap) } }
        client.start()
        Thread.sleep(forTimeInterval: 0.5)
        server.signal(SIGTERM)
        let status = server.stop()
        while client.isExecuting { Thread.sleep(forTimeInterval: 0.05) }
        #expect(answer.withLock { $0?.status } == 503, "the request in flight was not answered")
        #expect(status == 0)
        // New connections are refused once it has stopped.
        #expect(throws: HTTPFailure.self) { try HTTPConnection(port: server.port) }
    }
}
