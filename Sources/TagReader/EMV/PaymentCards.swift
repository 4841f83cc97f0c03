// The payment card a session delivered, as async calls in PC/SC transactions on the tag's queue.
import EMV
import ISO7816
import PCSC

extension ISO7816Tag {
    /// The card as a payment card (EMV), read-only: a reader that lists its applications and reads
    /// one, with offline data authentication, sending nothing that changes the card.
    ///
    /// ```swift
    /// let card = tag.paymentCardReader()
    /// let read = try await card.read()
    /// print(read.pan.map(EMVMasking.masked) ?? "-", read.oda.result)
    /// ```
    public func paymentCardReader(caKeys: CAPublicKeys = .builtIn, terminal: TerminalData) -> PaymentCards {
        PaymentCards(self, caKeys: caKeys, terminal: terminal)
    }
}

/// A payment card on a tag a session delivered: `EMV`'s `PaymentCardReader` behind async calls,
/// each on the tag's queue in one PC/SC transaction.
public final class PaymentCards: Sendable {
    private let owner: ISO7816Tag
    private let caKeys: CAPublicKeys
    private let terminal: TerminalData

    init(_ owner: ISO7816Tag, caKeys: CAPublicKeys, terminal: TerminalData) {
        self.owner = owner
        self.caKeys = caKeys
        self.terminal = terminal
    }

    private func run<T: Sendable>(_ body: @escaping @Sendable (PaymentCardReader) throws -> T) async throws -> T {
        let observer = owner.connection.session.observer
        let caKeys = caKeys, terminal = terminal
        return try await owner.connection.perform { card in
            try card.withTransaction {
                try body(PaymentCardReader(transport: APDUTransport(channel: PCSCChannel(card: card), observer: observer), caKeys: caKeys, terminal: terminal))
            }
        }
    }

    /// The card's payment applications (SELECT only).
    public func applications() async throws -> [PaymentApplication] { try await run { try $0.applications() } }

    /// Reads `aid` (default: the highest priority) with one GET PROCESSING OPTIONS.
    public func read(aid: [UInt8]? = nil) async throws -> PaymentCardRead { try await run { try $0.read(aid: aid) } }
}
