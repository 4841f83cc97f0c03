// Choosing the reader and waiting for its card as `apdu` does, and a connect that gives up
// when another program holds the reader.
import Dispatch
import FoundationEssentials
import Threading
import Glibc
import PCSC
import Synchronization

/// Picks the reader to work on and waits for its card, the way `apdu` does it
/// (docs/cli.md, "Choosing a reader"): a reader named exactly, by index or by a unique part of
/// its name; else the only reader with a card.
///
/// Waits outlive a pcscd restart: the selection reconnects and goes on waiting, so connect
/// through `context` afterwards (it may be a new one). Use one selection from one thread.
public final class ReaderSelection {
    public private(set) var context: Context

    /// - Throws: `PCSCError.noService` when pcscd is not running.
    public init() throws(PCSCError) {
        context = try Context()
    }

    /// The errors by which a dying or restarting pcscd shows itself.
    public static let serviceLost: Set<PCSCError> = [.noService, .serviceStopped, .commError, .invalidHandle, .unknownError, .noReadersAvailable, .unknownReader]

    /// pcscd went away during a wait: reconnect until `deadline`.
    private func renewContext(until deadline: ContinuousClock.Instant, after error: PCSCError) throws(ReaderError) {
        while ContinuousClock.now < deadline {
            usleep(200_000)
            if let fresh = try? Context() {
                context = fresh
                return
            }
        }
        throw .serviceLost(error)
    }

    /// The reader to use and the ATR pcscd reported for its card, waiting up to `wait` for one
    /// (`nil`: do not wait).
    /// - Throws: `ReaderError`, `PCSCError`.
    public func chooseCard(_ requested: String?, wait: Duration?) throws -> (reader: String, atr: [UInt8]) {
        let readers = try context.readers()
        if let requested {
            let name = try match(requested, in: readers)
            return (name, try waitForCard(in: name, wait: wait))
        }
        if readers.isEmpty { throw ReaderError.noReaders }
        if readers.count == 1 {
            return (readers[0], try waitForCard(in: readers[0], wait: wait))
        }
        var states = readers.map { ReaderState(reader: $0) }
        try context.statusChange(&states, timeout: .zero)
        let withCard = states.filter { $0.eventState.contains(.present) }
        if withCard.count == 1 { return (withCard[0].reader, withCard[0].atr) }
        if withCard.count > 1 { throw ReaderError.severalCards(readers: withCard.map(\.reader)) }
        guard let wait else { throw ReaderError.noCard(reader: nil) }
        // Wait for the first card in any reader.
        let deadline = ContinuousClock.now + wait
        for i in states.indices { states[i].acknowledge() }
        while ContinuousClock.now < deadline {
            let changed = try context.statusChange(&states, timeout: deadline - ContinuousClock.now)
            if !changed { break }
            if let s = states.first(where: { $0.eventState.hasUsableCard }) {
                return (s.reader, s.atr)
            }
            for i in states.indices { states[i].acknowledge() }
        }
        throw ReaderError.noCardWithin(wait, reader: nil)
    }

    /// Resolves a reader asked for by exact name, index, or unique case-insensitive substring.
    public func match(_ requested: String, in readers: [String]) throws(ReaderError) -> String {
        if readers.contains(requested) { return requested }
        if let index = Int(requested) {
            guard readers.indices.contains(index) else { throw .noReaderAtIndex(index, known: readers) }
            return readers[index]
        }
        let hits = readers.filter { $0.lowercased().contains(requested.lowercased()) }
        if hits.count == 1 { return hits[0] }
        if hits.isEmpty { throw .unknownReader(requested, known: readers) }
        throw .ambiguousReader(requested, matches: hits)
    }

    /// Waits up to `wait` for a card in `reader` and returns its ATR as pcscd last saw it.
    /// A reader that vanishes during the wait (pcscd restarting) is waited for.
    @discardableResult
    public func waitForCard(in reader: String, wait: Duration?) throws -> [UInt8] {
        var states = [ReaderState(reader: reader)]
        try context.statusChange(&states, timeout: .zero)
        if states[0].eventState.hasUsableCard { return states[0].atr }
        if states[0].eventState.contains(.unknown) { throw ReaderError.readerGone(reader) }
        guard let wait else { throw ReaderError.noCard(reader: reader) }
        let deadline = ContinuousClock.now + wait
        while ContinuousClock.now < deadline {
            states[0].acknowledge()
            let changed: Bool
            do {
                changed = try context.statusChange(&states, timeout: deadline - ContinuousClock.now)
            } catch {
                guard Self.serviceLost.contains(error) else { throw error }
                try renewContext(until: deadline, after: error)
                states = [ReaderState(reader: reader)]
                continue
            }
            if states[0].eventState.hasUsableCard { return states[0].atr }
            if states[0].eventState.contains(.unknown) {
                usleep(200_000)
                states = [ReaderState(reader: reader)]
                continue
            }
            if !changed { break }
        }
        throw ReaderError.noCardWithin(wait, reader: reader)
    }

    /// How long another program's transaction on the reader is waited out when no wait is given.
    public static let defaultPatience: Duration = .seconds(2)

    /// Connects to `reader` and, with `transaction`, begins a PC/SC transaction, giving up with
    /// `ReaderError.busy` at `deadline` while another program holds the reader.
    ///
    /// pcscd makes a connect and a transaction's start wait for as long as another program keeps
    /// its transaction open, and pcsclite has no timeout for either. So both run on a thread of
    /// their own; if the deadline passes first, this returns `busy` before anything was sent, and
    /// that thread, once pcscd lets it through, ends what it began and disconnects. Until then
    /// this selection's context is held by it: make a new `ReaderSelection` for further work.
    /// - Returns: the card, with its transaction begun when asked; end it with
    ///   `Card.endTransaction(_:)` (or use `TagTransaction`).
    public func connect(_ reader: String, until deadline: ContinuousClock.Instant, transaction: Bool) throws -> Card {
        let context = self.context
        let attempt = OpenAttempt()
        try DetachedThread.start {
            let result: Result<Card, PCSCError>
            do throws(PCSCError) {
                let card = try context.connect(reader: reader)
                if transaction {
                    do throws(PCSCError) { try card.beginTransaction() } catch {
                        try? card.disconnect()
                        throw error
                    }
                }
                result = .success(card)
            } catch {
                result = .failure(error)
            }
            attempt.finish(result, transaction: transaction)
        }
        guard let result = attempt.wait(until: deadline) else { throw ReaderError.busy(reader: reader) }
        return try result.get()
    }
}

/// The hand-over between `ReaderSelection.connect`'s waiting caller and its connecting thread.
private final class OpenAttempt: Sendable {
    private enum State { case waiting, finished(Result<Card, PCSCError>), abandoned }
    private let state = Mutex(State.waiting)
    private let done = DispatchSemaphore(value: 0)

    func finish(_ result: Result<Card, PCSCError>, transaction: Bool) {
        let abandoned = state.withLock { s -> Bool in
            if case .abandoned = s { return true }
            s = .finished(result)
            return false
        }
        if abandoned, case let .success(card) = result {
            if transaction { try? card.endTransaction() }
            try? card.disconnect()
        }
        done.signal()
    }

    /// The result, or nil when the deadline came first (the attempt is then abandoned).
    func wait(until deadline: ContinuousClock.Instant) -> Result<Card, PCSCError>? {
        let (s, a) = max(.zero, deadline - .now).components
        _ = done.wait(timeout: .now() + Double(s) + Double(a) * 1e-18)
        return state.withLock { s -> Result<Card, PCSCError>? in
            if case let .finished(result) = s { return result }
            s = .abandoned
            return nil
        }
    }
}
