// Connecting to the card in the chosen reader, for the commands that send their own APDUs.
import CardReaders
import PCSC

extension ReaderOptions {
    /// Chooses the reader and connects to its card, for the commands that send their own APDUs;
    /// with `transaction`, `body` runs inside one. Another program's
    /// transaction is waited out until --wait, and at least two seconds. Disconnects afterwards.
    package func withCard<T>(transaction: Bool, _ body: (_ reader: String, _ card: Card) throws -> T) throws -> T {
        let selection = try ReaderSelection()
        let reader = try selection.chooseCard(requestedReader, wait: waitDuration).reader
        let card = try selection.connect(reader, until: .now + max(waitDuration ?? .zero, ReaderSelection.defaultPatience), transaction: transaction)
        defer { try? card.disconnect() }
        return transaction ? try card.endingTransaction { try body(reader, card) } : try body(reader, card)
    }
}
