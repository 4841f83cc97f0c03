// A `CardChannel` straight into an emulated card, for unit tests without pcscd.
import ISO7816

/// A `CardChannel` straight into an emulated card, no pcscd in between: NIO's embedded channel,
/// for unit tests of protocol code.
public final class EmulatedChannel: CardChannel {
    public let card: any EmulatedCard
    public var supportsExtendedLength: Bool
    public private(set) var exchanges = 0

    public init(card: any EmulatedCard, supportsExtendedLength: Bool = true) {
        self.card = card
        self.supportsExtendedLength = supportsExtendedLength
        card.reset()
    }

    public func transmit(_ command: [UInt8]) throws -> [UInt8] {
        exchanges += 1
        return card.process(command)
    }
}
