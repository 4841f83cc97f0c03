// Rate limiting: a token bucket per client address, in bounded memory.
import Synchronization

/// Requests per client address: a token bucket each, `rate` tokens a second up to `burst`.
/// Buckets of addresses gone quiet are dropped when the table grows, so a flood of addresses
/// costs bounded memory.
public final class RateLimiter: Sendable {
    public let rate: Double
    public let burst: Double
    let maximumAddresses: Int
    private let buckets = Mutex<[String: Bucket]>([:])

    struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    public init(rate: Double, burst: Double, maximumAddresses: Int = 100_000) {
        self.rate = rate
        self.burst = max(burst, 1)
        self.maximumAddresses = maximumAddresses
    }

    /// Takes one token for `address`; false when it has none left.
    public func allow(_ address: String, now: ContinuousClock.Instant = .now) -> Bool {
        buckets.withLock { table in
            var bucket = table[address] ?? Bucket(tokens: burst, updated: now)
            let elapsed = now - bucket.updated
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            bucket.tokens = min(burst, bucket.tokens + seconds * rate)
            bucket.updated = now
            let allowed = bucket.tokens >= 1
            if allowed { bucket.tokens -= 1 }
            if table[address] == nil && table.count >= maximumAddresses {
                // Full buckets are no different from a fresh one: forget them.
                let refill = Duration.seconds(burst / rate)
                table = table.filter { now - $0.value.updated < refill }
                if table.count >= maximumAddresses { table.removeAll(keepingCapacity: true) }
            }
            table[address] = bucket
            return allowed
        }
    }
}
