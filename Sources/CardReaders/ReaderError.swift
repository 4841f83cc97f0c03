// Why no reader or card could be had: the errors of reader selection.
import PCSC

/// Why no reader or card could be had: the reader-selection layer's errors.
///
/// Errors from pcscd itself stay `PCSCError`; the card's answers are `ISO7816` status words;
/// a tag's format problems are `NFCTags.TagError`; a write that stopped part-way is
/// `NFCTags.WriteInterrupted`.
public enum ReaderError: Error, Hashable, Sendable, CustomStringConvertible {
    /// pcscd knows no reader.
    case noReaders
    /// No reader matches the name asked for (`known`: the readers there are).
    case unknownReader(String, known: [String])
    /// An index past the reader list.
    case noReaderAtIndex(Int, known: [String])
    /// The name matches several readers.
    case ambiguousReader(String, matches: [String])
    /// No reader was named and several have a card.
    case severalCards(readers: [String])
    /// No card, and no wait was asked for. `reader` is nil when any reader would do.
    case noCard(reader: String?)
    /// No card came within the wait.
    case noCardWithin(Duration, reader: String?)
    /// The reader went away.
    case readerGone(String)
    /// pcscd went away (restart, crash) during a wait and did not come back before its end.
    case serviceLost(PCSCError)
    /// Another program held the reader in a transaction past the patience given; nothing was
    /// sent to the card.
    case busy(reader: String)

    public var description: String {
        switch self {
        case .noReaders: return "no readers found (pcscd sees none)"
        case let .unknownReader(name, known):
            return "unknown reader '\(name)'" + (known.isEmpty ? " (pcscd sees no readers)" : "; readers: \(known.joined(separator: ", "))")
        case let .noReaderAtIndex(index, known): return "no reader with index \(index); readers: \(known.joined(separator: ", "))"
        case let .ambiguousReader(name, matches): return "'\(name)' matches several readers: \(matches.joined(separator: ", "))"
        case let .severalCards(readers): return "several readers have a card: \(readers.joined(separator: ", "))"
        case let .noCard(reader): return reader.map { "no card in reader '\($0)'" } ?? "no card in any reader"
        case let .noCardWithin(wait, reader): return "no card presented\(reader.map { " in '\($0)'" } ?? "") within \(wait.secondsText)"
        case let .readerGone(reader): return "reader '\(reader)' is gone"
        case let .serviceLost(error): return "pcscd went away while waiting (\(error.constantName ?? "\(error)")) and did not come back in time"
        case let .busy(reader): return "reader '\(reader)' is busy: another program holds it in a transaction; nothing was done"
        }
    }
}

extension Duration {
    /// "2 s", "0.5 s".
    var secondsText: String {
        let (s, a) = components
        let seconds = Double(s) + Double(a) / 1e18
        return seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\(seconds) s"
    }
}
