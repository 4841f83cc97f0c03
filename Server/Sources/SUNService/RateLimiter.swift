// Rate limiting: a token bucket per client address, in bounded memory.
import Synchronization

/// Requests per client address: a token bucket each, `rate` tokens a second up to `burst`.
/// Buckets of addresses gone quiet are dropped when the table grows, so a flood of addresses
/// costs bounded memory.
///
/// Rate and burst are held within `rates` and `bursts` (a value outside, or not a number, is
/// taken as the nearest bound), so no arithmetic on them can overflow: the longest refill,
/// `bursts.upperBound / rates.lowerBound`, is 10^9 seconds.
public final class RateLimiter: Sendable {
    /// Tokens a second: one every 1,000 seconds at the least, a million at the most.
    public static let rates: ClosedRange<Double> = 0.001...1_000_000
    /// Requests at once.
    public static let bursts: ClosedRange<Double> = 1...1_000_000
    public let rate: Double
    public let burst: Double
    let maximumAddresses: Int
    private let buckets = Mutex<[String: Bucket]>([:])

    struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    public init(rate: Double, burst: Double, maximumAddresses: Int = 100_000) {
        self.rate = Self.clamp(rate, Self.rates)
        self.burst = Self.clamp(burst, Self.bursts)
        self.maximumAddresses = max(maximumAddresses, 1)
    }

    static func clamp(_ value: Double, _ range: ClosedRange<Double>) -> Double {
        value.isNaN ? range.lowerBound : min(max(value, range.lowerBound), range.upperBound)
    }

    /// Takes one token for `address`; false when it has none left.
    public func allow(_ address: String, now: ContinuousClock.Instant = .now) -> Bool {
        buckets.withLock { table in
            var bucket = table[address] ?? Bucket(tokens: burst, updated: now)
            let elapsed = now - bucket.updated
            let seconds = max(0, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
            bucket.tokens = min(burst, bucket.tokens + seconds * rate)
            bucket.updated = now
            let allowed = bucket.tokens >= 1
            if allowed { bucket.tokens -= 1 }
            if table[address] == nil && table.count >= maximumAddresses {
                // Full buckets are no different from a fresh one: forget them.
                let refill = Duration.seconds(burst / rate)  // at most 10^9 s: rate and burst are bounded
                table = table.filter { now - $0.value.updated < refill }
                if table.count >= maximumAddresses { table.removeAll(keepingCapacity: true) }
            }
            table[address] = bucket
            return allowed
        }
    }
}
