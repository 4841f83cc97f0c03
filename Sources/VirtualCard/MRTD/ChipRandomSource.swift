// Where the emulated chips' random numbers come from (system, seeded or fixed), and the seeded
// SHA-256 stream.
import CardCrypto

/// Where the chip's random numbers come from (RND.IC and K.IC of BAC, PACE's nonce and key
/// pairs, Active Authentication's nonce): libcrypto's generator, a seeded stream, or fixed values
/// in order, so a test can replay a published worked example from the chip's side.
public final class ChipRandomSource: @unchecked Sendable {
    private enum Kind { case system, seeded, sequence }
    private let kind: Kind
    private let queue: Locked<(values: [[UInt8]], stream: SeededStream?)>

    private init(kind: Kind, values: [[UInt8]], seed: [UInt8]?) {
        self.kind = kind
        queue = Locked((values, seed.map(SeededStream.init)))
    }

    /// libcrypto's CSPRNG.
    public static var system: ChipRandomSource { ChipRandomSource(kind: .system, values: [], seed: nil) }

    /// A deterministic stream from `seed` (SHA-256 in counter mode): the same seed, the same chip.
    public static func seeded(_ seed: [UInt8]) -> ChipRandomSource { ChipRandomSource(kind: .seeded, values: [], seed: seed) }

    /// `values` in order, one per request (cut or completed from the CSPRNG when a request is
    /// for another length), then the CSPRNG.
    public static func sequence(_ values: [[UInt8]]) -> ChipRandomSource { ChipRandomSource(kind: .sequence, values: values, seed: nil) }

    /// How many fixed values are still waiting.
    public var remaining: Int { queue.current.values.count }

    func bytes(_ count: Int) -> [UInt8] {
        queue.withLock { q in
            switch kind {
            case .system:
                return secureRandomBytes(count)
            case .seeded:
                return q.stream?.next(count) ?? secureRandomBytes(count)
            case .sequence:
                guard !q.values.isEmpty else { return secureRandomBytes(count) }
                let v = q.values.removeFirst()
                return v.count >= count ? Array(v.prefix(count)) : v + secureRandomBytes(count - v.count)
            }
        }
    }
}

/// SHA-256(seed ‖ counter) blocks: reproducible bytes for the specimen and seeded chips (not
/// a generator for secrets that matter).
final class SeededStream: @unchecked Sendable {
    private let seed: [UInt8]
    private var counter: UInt64 = 0
    private var buffer: [UInt8] = []

    init(_ seed: [UInt8]) { self.seed = seed }

    /// A stream of its own for `label`, so adding a draw in one place leaves the others alone.
    func fork(_ label: String) -> SeededStream { SeededStream(Digest.sha256.hash(seed + Array(label.utf8))) }

    func next(_ count: Int) -> [UInt8] {
        while buffer.count < count {
            var c = counter.bigEndian
            let bytes = withUnsafeBytes(of: &c) { Array($0) }
            buffer += Digest.sha256.hash(seed + bytes)
            counter += 1
        }
        defer { buffer.removeFirst(count) }
        return Array(buffer.prefix(count))
    }
}
