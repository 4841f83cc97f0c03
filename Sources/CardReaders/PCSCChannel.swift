// The one place a PC/SC card becomes a `CardChannel`.
import ISO7816
import PCSC

/// Where a `PCSC.Card` becomes a `CardChannel`: the one place that knows both.
///
/// Use it from one thread at a time, as the card itself.
public final class PCSCChannel: CardChannel {
    public let card: Card

    public init(card: Card) {
        self.card = card
    }

    /// The reader's Part 10 properties say whether it passes more than short APDUs; a reader
    /// that says nothing (most contactless and virtual ones) is trusted with extended length,
    /// and the card's own answer (6700) tells otherwise. Asked on first use only: most tag
    /// procedures never need to know, and the question is a round trip to the reader.
    public lazy var supportsExtendedLength: Bool = {
        if let max = (try? card.readerProperties())??.maxAPDUDataSize { return max > 255 }
        return true
    }()

    public func transmit(_ command: [UInt8]) throws -> [UInt8] {
        try card.transmit(command)
    }
}
