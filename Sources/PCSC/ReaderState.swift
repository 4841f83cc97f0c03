// One reader's entry in a status-change wait: what the caller knew, and what pcscd reports.

/// One reader's entry in a `Context.statusChange(_:timeout:)` wait.
///
/// Set `currentState`/`currentEventCount` to what you know (or leave them unaware to learn
/// the state at once); after the wait, `eventState`, `eventCount` and `atr` say what is now.
/// Call `acknowledge()` before waiting again.
public struct ReaderState: Hashable, Sendable {
    /// The pseudo-reader whose event count is the number of readers: a change means a reader
    /// was added or removed.
    public static let plugAndPlayNotification = "\\\\?PnP?\\Notification"

    public var reader: String
    public var currentState: ReaderStatus
    public var currentEventCount: UInt16
    public internal(set) var eventState: ReaderStatus = []
    /// pcsclite's per-reader event counter (card insertions and removals), or the number of
    /// readers for the plug-and-play pseudo-reader.
    public internal(set) var eventCount: UInt16 = 0
    public internal(set) var atr: [UInt8] = []

    public init(reader: String, currentState: ReaderStatus = .unaware, currentEventCount: UInt16 = 0) {
        self.reader = reader
        self.currentState = currentState
        self.currentEventCount = currentEventCount
    }

    /// Whether the last wait reported a change for this reader.
    public var hasChanged: Bool { eventState.contains(.changed) }

    /// Takes the reported state as known, so the next wait blocks until something else happens.
    public mutating func acknowledge() {
        currentState = eventState.subtracting(.changed)
        currentEventCount = eventCount
    }
}
