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
/// - card calls never wait for anything but a running connect or change, so a card call that
///   pcscd holds back never keeps the transaction holder it waits for from its own calls;
/// - a connect to, or a resetting disconnect of, a reader on which this process holds a
///   transaction (`Card.withTransaction`) waits until that transaction ends, so pcscd never
///   holds a running connect or change back for a transaction of this process.
/// The price: a connect or disconnect waits while other threads' card calls overlap without a
/// gap, and a connect that pcscd holds back for another process's transaction keeps this
/// process's card calls waiting until that ends.
final class HandleTableLock: @unchecked Sendable {
    static let shared = HandleTableLock()

    enum Kind {
        /// A call on a card: transmit, control, status, transactions, reconnect, attributes.
        case cardCall
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
    private var running: Group?
    private var runningCount = 0
    /// Readers on which a `withTransaction` body of this process is running, with its handles.
    private var transactions: [String: [Int]] = [:]

    private init() {
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
        locked { transactions[reader, default: []].append(handle) }
    }

    func transactionEnded(on reader: String, handle: Int) {
        locked {
            if let i = transactions[reader]?.firstIndex(of: handle) { transactions[reader]!.remove(at: i) }
            if transactions[reader]?.isEmpty == true { transactions[reader] = nil }
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

    private func mayEnter(_ kind: Kind) -> Bool {
        switch kind {
        case .cardCall:
            return running == nil || running == .cardCalls
        case let .connect(reader):
            return (running == nil || running == .connects) && transactions[reader] == nil
        case let .change(waits):
            guard running == nil else { return false }
            guard let waits else { return true }
            return (transactions[waits.reader] ?? []).allSatisfy { $0 == waits.handle }
        }
    }

    private func acquire(_ kind: Kind) {
        pthread_mutex_lock(mutex)
        while !mayEnter(kind) { pthread_cond_wait(condition, mutex) }
        running = group(kind)
        runningCount += 1
        pthread_mutex_unlock(mutex)
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
