// The lock that groups pcsclite calls so concurrent connects, disconnects and card calls never
// race on its unlocked handle lists.
import Glibc

/// Makes pcsclite's client library safe for cards used on several threads at once.
///
/// The library keeps, per context, a list of its card handles, and every call on a card starts
/// by walking the lists of *all* contexts to find its handle. `SCardConnect` adds to its
/// context's list and `SCardDisconnect` walks and removes, both without the lock the walks hold
/// (winscard_clnt.c: `SCardAddHandle`, `SCardRemoveHandle`; still so in pcsc-lite 2.x), and
/// `SCardReleaseContext` frees a list. One thread connecting while another transmits can read a
/// list mid-update and crash the process — seen with 16 threads writing tags.
///
/// So calls are grouped: card calls (which only walk) run together, connects (each touching only
/// its own context's list) run together, and disconnects and context releases run alone.
///
/// Deadlock freedom, given that pcscd itself makes calls wait for transactions of other handles
/// (a card call, a connect, a non-leave disconnect):
/// - a connect to, or a resetting disconnect of, a reader on which this process holds a
///   transaction (`Card.withTransaction`, announced before it begins) waits until that
///   transaction ends, so pcscd never holds a running connect or change back for this process;
/// - calls on a handle that holds a transaction always join running card calls, so a card call
///   that pcscd holds back for that transaction never waits on a thread this lock blocks.
/// Fairness: while a connect or change that could run waits, other new card calls wait behind it,
/// so a stream of card calls from many threads cannot starve it.
/// The price: a connect that pcscd holds back for another process's transaction keeps this
/// process's card calls waiting until that ends.
final class HandleTableLock: @unchecked Sendable {
    static let shared = HandleTableLock()

    enum Kind {
        /// A call on a card: transmit, control, status, transactions, reconnect, attributes.
        case cardCall(handle: Int)
        /// `SCardConnect` to this reader.
        case connect(reader: String)
        /// `SCardDisconnect` or `SCardReleaseContext`; with the reader and the disconnecting
        /// handle when pcscd may make it wait for other handles' transactions (a disconnect that
        /// resets or unpowers).
        case change(waitsForTransactionsOn: (reader: String, handle: Int)?)
    }

    private enum Group { case cardCalls, connects, change }

    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    // Every state below is read and written only with `mutex` held, which is what keeps them
    // apart; the runtime's dynamic exclusivity checks on them would add nothing but about 400
    // instructions to every card call (issue 50).
    @exclusivity(unchecked) private var running: Group?
    @exclusivity(unchecked) private var runningCount = 0
    /// Readers on which a `withTransaction` body of this process is running, with its handles.
    @exclusivity(unchecked) private var transactions: [String: [Int]] = [:]
    @exclusivity(unchecked) private var holders: [Int: Int] = [:]
    /// Connects and changes waiting to run, by ticket.
    @exclusivity(unchecked) private var waitingWriters: [Int: Kind] = [:]
    @exclusivity(unchecked) private var nextTicket = 0

    init() {
        mutex = .allocate(capacity: 1)
        condition = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    func with<R>(_ kind: Kind, _ call: () -> R) -> R {
        acquire(kind)
        defer { release() }
        return call()
    }

    /// `Card.withTransaction` reports the span of its transaction.
    func transactionBegan(on reader: String, handle: Int) {
        locked {
            transactions[reader, default: []].append(handle)
            holders[handle, default: 0] += 1
            // A connect waiting for this reader no longer holds card calls back.
            pthread_cond_broadcast(condition)
        }
    }

    func transactionEnded(on reader: String, handle: Int) {
        locked {
            if let i = transactions[reader]?.firstIndex(of: handle) { transactions[reader]!.remove(at: i) }
            if transactions[reader]?.isEmpty == true { transactions[reader] = nil }
            holders[handle, default: 1] -= 1
            if holders[handle] == 0 { holders[handle] = nil }
            pthread_cond_broadcast(condition)
        }
    }

    private func locked(_ body: () -> Void) {
        pthread_mutex_lock(mutex)
        body()
        pthread_mutex_unlock(mutex)
    }

    private func group(_ kind: Kind) -> Group {
        switch kind {
        case .cardCall: return .cardCalls
        case .connect: return .connects
        case .change: return .change
        }
    }

    /// Whether this process's transactions let pcscd run the call at once.
    private func transactionsAllow(_ kind: Kind) -> Bool {
        switch kind {
        case .cardCall: return true
        case let .connect(reader): return transactions[reader] == nil
        case let .change(waits):
            guard let waits else { return true }
            return (transactions[waits.reader] ?? []).allSatisfy { $0 == waits.handle }
        }
    }

    private func mayEnter(_ kind: Kind) -> Bool {
        switch kind {
        case let .cardCall(handle):
            guard running == nil || running == .cardCalls else { return false }
            // Nothing waits (the common case, every APDU of a script): no look-up to make.
            if waitingWriters.isEmpty || holders[handle] != nil { return true }
            return !waitingWriters.values.contains { transactionsAllow($0) }
        case .connect:
            return (running == nil || running == .connects) && transactionsAllow(kind)
        case .change:
            return running == nil && transactionsAllow(kind)
        }
    }

    private func acquire(_ kind: Kind) {
        pthread_mutex_lock(mutex)
        var ticket: Int?
        if !mayEnter(kind) {
            if case .cardCall = kind {} else {
                ticket = nextTicket
                nextTicket += 1
                waitingWriters[ticket!] = kind
            }
            repeat { pthread_cond_wait(condition, mutex) } while !mayEnterAsWaiter(kind, ticket: ticket)
        }
        if let ticket {
            waitingWriters[ticket] = nil
            // Card calls held back by this writer re-check.
            pthread_cond_broadcast(condition)
        }
        running = group(kind)
        runningCount += 1
        pthread_mutex_unlock(mutex)
    }

    /// A waiting writer does not hold itself back.
    private func mayEnterAsWaiter(_ kind: Kind, ticket: Int?) -> Bool {
        guard let ticket else { return mayEnter(kind) }
        let mine = waitingWriters.removeValue(forKey: ticket)
        defer { waitingWriters[ticket] = mine }
        return mayEnter(kind)
    }

    private func release() {
        pthread_mutex_lock(mutex)
        runningCount -= 1
        if runningCount == 0 {
            running = nil
            pthread_cond_broadcast(condition)
        }
        pthread_mutex_unlock(mutex)
    }
}
