// A man in the middle who rewrites commands as well as answers, for the whole of a run: the
// hostile matrix's single mutations then act on top of it.
import VirtualCard

/// A card seen through a middle who swaps one byte string for another of the same length in
/// both directions: in every answer `real` becomes `shown`, and in every command `shown`
/// becomes `real`. With an application identifier it lists the card under another AID and
/// passes the SELECT of that AID on under the real one (the review of issue 48: a payment card
/// listed under a scheme whose keys the terminal lacks, "no CA key" instead of a proof), so that
/// only the card's own words in the answer to SELECT (the FCI's DF name, 84) give it away.
/// The answer to a command the middle rewrote is passed back as the card gave it (a middle who
/// rewrote the FCI's 84 too would leave nothing unsigned to tell: docs/emv.md).
public final class RelabellingMiddle: EmulatedCard, @unchecked Sendable {
    public let card: any EmulatedCard
    public let real: [UInt8]
    public let shown: [UInt8]
    /// Commands the middle rewrote.
    public private(set) var rewritten = 0

    public init(_ card: any EmulatedCard, real: [UInt8], shown: [UInt8]) {
        precondition(real.count == shown.count && !real.isEmpty, "a relabel keeps every length")
        self.card = card
        self.real = real
        self.shown = shown
    }

    public var atr: [UInt8] { card.atr }
    public func reset() { card.reset() }

    public func process(_ apdu: [UInt8]) -> [UInt8] {
        let command = Self.swap(apdu, shown, real)
        guard command == apdu else {
            rewritten += 1
            return card.process(command)
        }
        return Self.swap(card.process(command), real, shown)
    }

    /// `bytes` with every occurrence of `from` replaced by `to` (same length).
    static func swap(_ bytes: [UInt8], _ from: [UInt8], _ to: [UInt8]) -> [UInt8] {
        guard bytes.count >= from.count else { return bytes }
        var out = bytes
        var i = 0
        while i + from.count <= out.count {
            if Array(out[i..<(i + from.count)]) == from {
                out.replaceSubrange(i..<(i + from.count), with: to)
                i += from.count
            } else {
                i += 1
            }
        }
        return out
    }
}
