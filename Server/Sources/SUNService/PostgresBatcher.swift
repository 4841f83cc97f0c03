// Group commit for the PostgreSQL store: the taps that arrive together share one upsert.
import Logging
import PostgresNIO
import Synchronization

/// Group commit for PostgreSQL: the taps an instance receives while its previous statement runs
/// go together in the next one, one multi-row upsert:
///
/// ```sql
/// INSERT INTO sun_counters AS c (uid, counter)
/// SELECT decode(u, 'hex'), n FROM unnest($1::text[], $2::bigint[]) AS t(u, n)
/// ON CONFLICT (uid) DO UPDATE SET counter = excluded.counter, updated = now()
/// WHERE c.counter < excluded.counter RETURNING encode(uid, 'hex')
/// ```
///
/// Each row is still decided by its own row lock, so instances stay exactly as correct as with
/// one statement a tap; a batch holds a UID once (a second tap of the same tag waits for the
/// next batch, so the two are decided in turn), and its rows are sorted by UID, so two instances
/// always take row locks in the same order and never deadlock. A statement that fails or times
/// out fails every tap of its batch (503).
final class PostgresBatcher: Sendable {
    typealias Waiter = (uid: [UInt8], counter: Int, continuation: CheckedContinuation<Bool, any Error>)
    private let state = Mutex<(pending: [Waiter], running: Int)>(([], 0))
    private let run: @Sendable ([(uid: [UInt8], counter: Int)]) async throws(StoreUnavailable) -> Set<[UInt8]>
    /// Statements in flight at once, each with its own batch.
    static let concurrency = 4
    static let maximumBatch = 512

    init(run: @escaping @Sendable ([(uid: [UInt8], counter: Int)]) async throws(StoreUnavailable) -> Set<[UInt8]>) {
        self.run = run
    }

    func accept(uid: [UInt8], counter: Int) async throws(StoreUnavailable) -> Bool {
        do {
            return try await withCheckedThrowingContinuation { continuation in
                let start = state.withLock { s -> Bool in
                    s.pending.append((uid, counter, continuation))
                    guard s.running < Self.concurrency else { return false }
                    s.running += 1
                    return true
                }
                if start { Task { await self.drain() } }
            }
        } catch let error as StoreUnavailable {
            throw error
        } catch {
            throw StoreUnavailable("\(error)")
        }
    }

    /// Takes a batch (each UID once, the first taps first), runs it, and goes on while taps wait.
    private func drain() async {
        while true {
            let batch = state.withLock { s -> [Waiter] in
                var seen = Set<[UInt8]>()
                var batch: [Waiter] = []
                var rest: [Waiter] = []
                for waiter in s.pending {
                    if batch.count < Self.maximumBatch, seen.insert(waiter.uid).inserted { batch.append(waiter) } else { rest.append(waiter) }
                }
                s.pending = rest
                if batch.isEmpty { s.running -= 1 }
                return batch
            }
            if batch.isEmpty { return }
            do {
                let accepted = try await run(batch.map { ($0.uid, $0.counter) })
                for waiter in batch { waiter.continuation.resume(returning: accepted.contains(waiter.uid)) }
            } catch {
                for waiter in batch { waiter.continuation.resume(throwing: error) }
            }
        }
    }
}
