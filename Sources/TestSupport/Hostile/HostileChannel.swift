// The man in the middle of the hostile matrix: a `CardChannel` in front of an emulated card
// that records every exchange and replaces the answer to one of them.
import ISO7816
import VirtualCard

/// A `CardChannel` in front of an emulated card: passes every command to the card, records each
/// exchange, replaces the answer to exchange `target` by `mutation`, and throws after `limit`
/// exchanges (a run that does not end is a failure, not a hang).
public final class HostileChannel: CardChannel {
    public let card: any EmulatedCard
    public var supportsExtendedLength: Bool
    /// Every exchange of this run: the command, and the answer the library got.
    public private(set) var exchanges: [(command: [UInt8], response: [UInt8])] = []
    /// Where the mutation went: the exchange's index and what the card had answered.
    public private(set) var applied: (index: Int, original: [UInt8], replaced: [UInt8]?)?
    let target: Int?
    let mutation: HostileMutation?
    let limit: Int
    /// Answers of earlier sessions (the clean run), by command, for `replay`.
    let earlier: [[UInt8]: [[UInt8]]]
    public private(set) var hitLimit = false

    public init(card: any EmulatedCard, supportsExtendedLength: Bool = true, target: Int? = nil, mutation: HostileMutation? = nil,
                limit: Int = 10_000, earlier: [(command: [UInt8], response: [UInt8])] = []) {
        self.card = card
        self.supportsExtendedLength = supportsExtendedLength
        self.target = target
        self.mutation = mutation
        self.limit = limit
        var byCommand: [[UInt8]: [[UInt8]]] = [:]
        for e in earlier { byCommand[Self.replayKey(e.command), default: []].append(e.response) }
        self.earlier = byCommand
        card.reset()
    }

    /// Commands that are "the same command" for a replay: the header (CLA INS P1 P2), so that a
    /// command carrying a fresh challenge still finds the answer an earlier session got.
    static func replayKey(_ command: [UInt8]) -> [UInt8] { Array(command.prefix(4)) }

    public func transmit(_ command: [UInt8]) throws -> [UInt8] {
        let index = exchanges.count
        guard index < limit else {
            hitLimit = true
            throw HostileExchangeLimit(limit: limit)
        }
        if index == target, mutation == .transmitError {
            // The command may or may not have reached the card: here it did, and its answer is lost.
            let original = card.process(command)
            applied = (index, original, nil)
            exchanges.append((command, []))
            throw HostileTransmitError()
        }
        if index == target, mutation == .withheld {
            // The card never sees the command; the middle says it went well.
            applied = (index, [], [0x90, 0x00])
            exchanges.append((command, [0x90, 0x00]))
            return [0x90, 0x00]
        }
        let answer = card.process(command)
        var response = answer
        if index == target, let mutation {
            let key = Self.replayKey(command)
            let ours = exchanges.filter { Self.replayKey($0.command) == key }.map(\.response)
            if let replaced = mutation.apply(to: answer, earlier: (earlier[key] ?? []) + ours) {
                response = replaced
                applied = (index, answer, replaced)
            }
        }
        exchanges.append((command, response))
        return response
    }
}

/// A run sent more exchanges than the matrix allows: it would not have ended.
public struct HostileExchangeLimit: Error, CustomStringConvertible, Sendable {
    public var limit: Int
    public var description: String { "more than \(limit) exchanges: the run does not end" }
}
