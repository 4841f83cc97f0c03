// A process-wide hook that learns each connect and reconnect with the card's ATR, for
// `apdu --record`.

/// A process-wide view of connections, for recordings (`apdu --record`): each time a card is
/// connected or reconnected, the handler learns the reader and the card's ATR. With no handler
/// (the default) nothing is asked of pcscd.
public enum ConnectionLog {
    /// One connection.
    public struct Event: Sendable, Hashable {
        public enum Kind: String, Sendable, Hashable {
            /// `SCardConnect`.
            case connect
            /// `SCardReconnect`: a reset, or a resync after another program reset the card.
            case reconnect
        }
        public let kind: Kind
        public let reader: String
        /// The ATR as `SCardStatus` reports it after the connection; empty when it could not be read.
        public let atr: [UInt8]
    }

    /// Sets the handler; nil stops observing.
    /// - Parameter handler: called on the connecting thread, after the connection succeeded.
    public static func observe(_ handler: (@Sendable (Event) -> Void)?) {
        lock.withLock { storage.handler = handler }
    }

    static func report(_ kind: Event.Kind, _ card: Card) {
        guard let handler = lock.withLock({ storage.handler }) else { return }
        handler(Event(kind: kind, reader: card.reader, atr: (try? card.status().atr) ?? []))
    }

    private final class Storage: @unchecked Sendable {
        var handler: (@Sendable (Event) -> Void)?
    }
    private static let storage = Storage()
    private static let lock = NSLockLite()
}
