import Foundation
import PCSC
import VirtualCard

/// Bounds how long a command waits for a reader that another program holds.
///
/// pcscd makes a connect, or the start of a transaction, wait for as long as another program
/// keeps its own transaction open on the reader, and pcsclite offers no timeout for either. So a
/// watchdog thread gives the command until `deadline` to get its transaction going; if it has not
/// by then, the command is abandoned before it touched the card: exit 75 with a message. Once the
/// transaction has begun, the watchdog stands down — a write is never cut short by it.
final class BusyReaderGate: @unchecked Sendable {
    private enum State { case waiting, began, abandoned }
    private let state = Locked(State.waiting)
    private let begun = DispatchSemaphore(value: 0)

    /// Without `--wait`, how long another program's transaction is waited out.
    static let defaultPatience: Duration = .seconds(2)

    init(reader: String, deadline: ContinuousClock.Instant, waitGiven: Bool) {
        let remaining = (deadline - .now).components
        let seconds = max(0, Double(remaining.seconds) + Double(remaining.attoseconds) * 1e-18)
        Thread { [state, begun] in
            if begun.wait(timeout: .now() + seconds) == .success { return }
            let abandon = state.withLock { s -> Bool in
                guard s == .waiting else { return false }
                s = .abandoned
                return true
            }
            guard abandon else { return }
            Terminal.error("reader '\(reader)' is busy: another program holds it in a transaction; nothing was done"
                + (waitGiven ? " (waited the --wait time)" : "; try again, or wait longer with --wait SECONDS"))
            // Not exit(): the command's own thread is blocked inside pcsclite, whose locks an
            // orderly exit could wait on. Nothing was sent to the card.
            _exit(ExitStatus.tryAgain.rawValue)
        }.start()
    }

    /// Call once the command's transaction has begun (or, for a command without one, once it is
    /// connected). If the watchdog has already given up, the process is exiting with 75 and this
    /// never returns, so the caller never touches the card.
    func proceed() {
        if !settle(.began) { while true { pause() } }
    }

    /// The attempt ended (done, or failed before its transaction): the watchdog stands down.
    func standDown() {
        settle(.began)
    }

    @discardableResult
    private func settle(_ outcome: State) -> Bool {
        let ok = state.withLock { s -> Bool in
            if s == .waiting { s = outcome }
            return s != .abandoned
        }
        begun.signal()
        return ok
    }
}

extension ReaderSelection {
    /// Connects to `reader`, watched by a `BusyReaderGate`: another program's transaction is
    /// waited out until `wait` after `waitStarted` (and at least `BusyReaderGate.defaultPatience`
    /// from now), then exit 75. Call `gate.proceed()` once the command's transaction has begun,
    /// `gate.standDown()` after.
    func connectWatched(_ reader: String, wait: Duration?, waitStarted: ContinuousClock.Instant = .now) throws -> (card: Card, gate: BusyReaderGate) {
        let deadline = max(waitStarted + (wait ?? .zero), .now + BusyReaderGate.defaultPatience)
        let gate = BusyReaderGate(reader: reader, deadline: deadline, waitGiven: wait != nil)
        do {
            return (try context.connect(reader: reader), gate)
        } catch {
            gate.standDown()
            throw error
        }
    }
}
