import ISO7816
import MRTD
import Synchronization
import Testing

/// Bytes from hex written with spaces, as the ICAO appendices print them.
func h(_ text: String) -> [UInt8] { (try? Hex.decode(text)) ?? [] }

/// A chip that replays a published exchange: each command must be the expected bytes (or the
/// test fails), and the recorded answer comes back.
final class ScriptedChip: CardChannel {
    struct Step { var command: [UInt8]; var response: [UInt8] }
    var steps: [Step]
    var sent: [[UInt8]] = []
    let supportsExtendedLength: Bool

    init(_ pairs: [(String, String)], extendedLength: Bool = false) {
        steps = pairs.map { Step(command: h($0.0), response: h($0.1)) }
        supportsExtendedLength = extendedLength
    }

    struct Unexpected: Error, CustomStringConvertible { var description: String }

    func transmit(_ command: [UInt8]) throws -> [UInt8] {
        sent.append(command)
        guard !steps.isEmpty else { throw Unexpected(description: "no exchange left for \(command.hexString)") }
        let step = steps.removeFirst()
        #expect(command.hexString == step.command.hexString, "exchange \(sent.count)")
        guard command == step.command else { throw Unexpected(description: "unexpected command \(command.hexString)") }
        return step.response
    }

    var finished: Bool { steps.isEmpty }
}

/// Fixed "random" bytes, handed out in order (a published example's nonces and private keys).
func fixedRandom(_ chunks: [String]) -> RandomSource {
    let queue = Mutex(chunks.map { h($0) })
    return RandomSource { count in
        queue.withLock { q in
            guard !q.isEmpty else { return [UInt8](repeating: 0, count: count) }
            return q.removeFirst()
        }
    }
}
