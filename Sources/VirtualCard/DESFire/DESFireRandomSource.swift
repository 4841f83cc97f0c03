import CardCrypto

extension DESFireCard {
    /// Where the chip's random numbers come from: RndB of every authentication, EV2's TI, and the
    /// random UID. Tests fix them so that a published trace replays byte for byte.
    public struct RandomSource: Sendable {
        private let draw: @Sendable (Int) -> [UInt8]

        /// `draw(n)` returns n bytes; shorter answers are padded with zeros, longer ones cut.
        public init(_ draw: @escaping @Sendable (Int) -> [UInt8]) { self.draw = draw }

        /// libcrypto's CSPRNG.
        public static let system = RandomSource { secureRandomBytes($0) }

        /// The given bytes in order, then zeros: give RndB (8 or 16 bytes) for each
        /// authentication, then TI (4 bytes) after an EV2First's RndB.
        public static func fixed(_ bytes: [UInt8]) -> RandomSource {
            let queue = Locked(bytes[...])
            return RandomSource { n in
                queue.withLock { q in
                    let out = Array(q.prefix(n))
                    q = q.dropFirst(n)
                    return out
                }
            }
        }

        func bytes(_ n: Int) -> [UInt8] {
            let b = draw(n)
            return b.count >= n ? Array(b.prefix(n)) : b + [UInt8](repeating: 0, count: n - b.count)
        }
    }
}
