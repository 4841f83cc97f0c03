// The service's Prometheus counters and latency histogram, served at `/metrics`.
import Prometheus

/// The service's Prometheus metrics, served at `/metrics`. Counts and durations only: no UID,
/// no key, no URL ever becomes a label.
public final class ServiceMetrics: Sendable {
    public let registry = PrometheusCollectorRegistry()
    let verifications: Counter
    let valid: Counter
    let invalid: Counter
    let replays: Counter
    let malformed: Counter
    let unavailable: Counter
    let rateLimited: Counter
    let keyReloads: Counter
    let keyReloadFailures: Counter
    let latency: DurationHistogram

    /// The histogram's upper bounds: fine below 5 ms, where a healthy service answers.
    public static let buckets: [Duration] = [
        .microseconds(50), .microseconds(100), .microseconds(200), .microseconds(300), .microseconds(500), .microseconds(750),
        .milliseconds(1), .milliseconds(1.5), .milliseconds(2), .milliseconds(3), .milliseconds(5), .milliseconds(10),
        .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .seconds(1), .seconds(5),
    ]

    public init() {
        verifications = registry.makeCounter(descriptor: MetricNameDescriptor(namespace: "sun", metricName: "verifications", unitName: "total", helpText: "Tap URLs verified (every answer of GET / and GET /GROUP but 429 and 503)"))
        valid = registry.makeCounter(descriptor: MetricNameDescriptor(namespace: "sun", metricName: "valid", unitName: "total", helpText: "Taps accepted: MAC valid, counter fresh"))
        invalid = registry.makeCounter(descriptor: MetricNameDescriptor(namespace: "sun", metricName: "invalid", unitName: "total", helpText: "Taps refused: the MAC does not verify or the message is unusable"))
        replays = registry.makeCounter(descriptor: MetricNameDescriptor(namespace: "sun", metricName: "replays", unitName: "total", helpText: "Taps refused: the counter was not greater than the last one accepted for the UID"))
        malformed = registry.makeCounter(descriptor: MetricNameDescriptor(namespace: "sun", metricName: "malformed", unitName: "total", helpText: "Requests refused with 400 or 404: no SUN message, bad hex or lengths, unknown group, URL too long"))
        unavailable = registry.makeCounter(descriptor: MetricNameDescriptor(namespace: "sun", metricName: "store_unavailable", unitName: "total", helpText: "Requests answered 503: the counter store did not answer"))
        rateLimited = registry.makeCounter(descriptor: MetricNameDescriptor(namespace: "sun", metricName: "rate_limited", unitName: "total", helpText: "Requests answered 429: the client address was over its rate"))
        keyReloads = registry.makeCounter(descriptor: MetricNameDescriptor(namespace: "sun", metricName: "key_reloads", unitName: "total", helpText: "Key file reloads (SIGHUP) that took effect"))
        keyReloadFailures = registry.makeCounter(descriptor: MetricNameDescriptor(namespace: "sun", metricName: "key_reload_failures", unitName: "total", helpText: "Key file reloads refused (the old keys stay)"))
        latency = registry.makeDurationHistogram(descriptor: MetricNameDescriptor(namespace: "sun", metricName: "verification_duration", unitName: "seconds", helpText: "Time from a verification request's arrival to its answer, counter store included"), buckets: Self.buckets)
    }

    public func text() -> [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(4096)
        registry.emit(into: &buffer)
        return buffer
    }
}
