// Reader and card events from pcscd, watched across readers unplugged and pcscd restarts.
import Dispatch
import FoundationEssentials
import Glibc
import PCSC
import Synchronization

/// A change in the readers pcscd knows or in their cards.
public enum ReaderEvent: Sendable, Hashable {
    case readerAdded(String)
    case readerRemoved(String)
    /// A card that was in the reader when the monitor first saw the reader.
    case cardPresent(reader: String, atr: [UInt8])
    case cardInserted(reader: String, atr: [UInt8])
    case cardRemoved(reader: String)
    /// pcscd is not reachable (`detail` says why); the monitor keeps trying, with backoff.
    case serviceDown(detail: String)
    /// pcscd is reachable again; its readers follow as `readerAdded`.
    case serviceUp

    /// The reader the event is about, if any.
    public var reader: String? {
        switch self {
        case let .readerAdded(r), let .readerRemoved(r), let .cardPresent(r, _), let .cardInserted(r, _), let .cardRemoved(r): return r
        case .serviceDown, .serviceUp: return nil
        }
    }
}

/// Watches every reader and card, and outlives readers unplugged and pcscd restarts: when pcscd
/// goes away it reports `serviceDown` and every reader removed, reconnects with backoff (0.1 s
/// doubling to 2 s), and reports `serviceUp` and the readers again.
///
/// `run` blocks its thread; `cancel()` from any other thread ends it (`SCardCancel`).
public final class ReaderMonitor: Sendable {
    private let current = Mutex<Context?>(nil)
    private let cancelled = Mutex(false)

    public init() {}

    /// Reports events to `handle` until it returns false or `cancel()` is called.
    /// - Throws: `PCSCError.cancelled` when another program's `SCardCancel` ended a wait.
    public func run(_ handle: (ReaderEvent) -> Bool) throws {
        var known: [String: ReaderState] = [:]
        var backoff: UInt32 = 100_000
        var announcedDown = false
        var stop = false
        func emit(_ event: ReaderEvent) -> Bool {
            if !handle(event) { stop = true }
            return !stop
        }
        while !stop && !isCancelled {
            let context: Context
            do { context = try Context() } catch {
                if !announcedDown {
                    guard emit(.serviceDown(detail: "pcscd is not reachable (\(error.constantName ?? "\(error)"))")) else { return }
                    announcedDown = true
                }
                usleep(backoff)
                backoff = min(backoff * 2, 2_000_000)
                continue
            }
            current.withLock { $0 = context }
            defer { current.withLock { $0 = nil } }
            if isCancelled { return }
            if announcedDown {
                guard emit(.serviceUp) else { return }
                announcedDown = false
            }
            backoff = 100_000
            do {
                try watch(context, &known, emit)
            } catch let error as PCSCError {
                if error == .cancelled {
                    if isCancelled { return }
                    throw error
                }
                // A dying pcscd shows up as several different codes (no service, comm error,
                // unknown or unavailable reader…); the monitor outlives all of them. Unexpected
                // codes wait a little, so a persistent error repeats slowly instead of spinning.
                guard emit(.serviceDown(detail: "pcscd went away (\(error.constantName ?? "\(error)")); reconnecting")) else { return }
                announcedDown = true
                for name in known.keys.sorted() { guard emit(.readerRemoved(name)) else { return } }
                known = [:]
                if !ReaderSelection.serviceLost.contains(error) { usleep(500_000) }
            }
        }
    }

    /// Ends `run` from another thread.
    public func cancel() {
        cancelled.withLock { $0 = true }
        current.withLock { context in try? context?.cancel() }
    }

    private var isCancelled: Bool { cancelled.withLock { $0 } }

    private func watch(_ context: Context, _ known: inout [String: ReaderState], _ emit: (ReaderEvent) -> Bool) throws {
        while !isCancelled {
            let readers = try context.readers()
            for gone in known.keys.sorted() where !readers.contains(gone) {
                known[gone] = nil
                guard emit(.readerRemoved(gone)) else { return }
            }
            for name in readers where known[name] == nil {
                known[name] = ReaderState(reader: name)
                guard emit(.readerAdded(name)) else { return }
            }
            var states = readers.map { known[$0]! }
            // pcsclite takes at most 16 states per wait; with 16 readers the once-a-second
            // reader list check below stands in for the pseudo-reader.
            if states.count < 16 { states.append(ReaderState(reader: ReaderState.plugAndPlayNotification)) }
            // A bounded wait so a reader list change is noticed even where the pseudo-reader
            // is not reported (pcscd 1.9 counts only during the wait).
            try context.statusChange(&states, timeout: .seconds(1))
            for state in states where state.reader != ReaderState.plugAndPlayNotification {
                guard let before = known[state.reader] else { continue }
                let was = before.currentState, now = state.eventState
                let countChanged = state.eventCount != before.currentEventCount && was != .unaware
                if now.contains(.unknown) { continue }
                var updated = state
                updated.acknowledge()
                known[state.reader] = updated
                var events: [ReaderEvent] = []
                if was == .unaware {
                    if now.contains(.present) { events = [.cardPresent(reader: state.reader, atr: state.atr)] }
                } else if now.contains(.present) && (!was.contains(.present) || countChanged) {
                    if was.contains(.present) { events.append(.cardRemoved(reader: state.reader)) }
                    events.append(.cardInserted(reader: state.reader, atr: state.atr))
                } else if now.contains(.empty) && was.contains(.present) {
                    events = [.cardRemoved(reader: state.reader)]
                }
                for event in events { guard emit(event) else { return } }
            }
        }
    }
}
