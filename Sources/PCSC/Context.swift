// A pcsclite resource manager context (`SCARDCONTEXT`): reader lists, status-change waits and
// connects.
internal import CPCSCLite
#if canImport(Glibc)
import Glibc
#endif

/// A connection to the PC/SC resource manager (pcscd): wraps `SCARDCONTEXT`.
///
/// Thread rules: pcsclite serialises calls on one context, so a context may be shared, but a
/// blocking `statusChange` holds it; use one context per thread of use and call `cancel()`
/// from another thread to interrupt a wait. Cards made from a context keep it alive.
public final class Context: @unchecked Sendable {
    let handle: SCARDCONTEXT
    private let releaseLock = NSLockLite()
    private var released = false

    /// Establishes a context (`SCardEstablishContext`).
    /// - Throws: `PCSCError.noService` when pcscd is not running.
    public init(scope: Scope = .system) throws(PCSCError) {
        var h: SCARDCONTEXT = 0
        try check(SCardEstablishContext(DWORD(scope.rawValue), nil, nil, &h))
        handle = h
    }

    deinit {
        if !released { _ = HandleTableLock.shared.with(.change(waitsForTransactionsOn: nil)) { SCardReleaseContext(handle) } }
    }

    /// Releases the context (`SCardReleaseContext`), reporting errors. Idempotent.
    public func release() throws(PCSCError) {
        let first = releaseLock.withLock { () -> Bool in
            defer { released = true }
            return !released
        }
        if first { try check(HandleTableLock.shared.with(.change(waitsForTransactionsOn: nil)) { SCardReleaseContext(handle) }) }
    }

    /// Whether pcscd still knows this context (`SCardIsValidContext`); false after pcscd restarts.
    public var isValid: Bool {
        SCardIsValidContext(handle) == SCARD_S_SUCCESS_VALUE
    }

    /// Interrupts a `statusChange` wait in progress on this context (`SCardCancel`); safe from any thread.
    public func cancel() throws(PCSCError) {
        try check(SCardCancel(handle))
    }

    /// The names of the readers pcscd knows (`SCardListReaders`), in its order.
    /// An empty array, not an error, when there are none.
    public func readers() throws(PCSCError) -> [String] {
        // One round trip: pcsclite allocates the list (SCARD_AUTOALLOCATE) instead of being asked
        // for its size first.
        var length = cpcsc_autoallocate()
        var list: UnsafeMutablePointer<CChar>?
        let rv = withUnsafeMutablePointer(to: &list) { slot in
            slot.withMemoryRebound(to: CChar.self, capacity: MemoryLayout<UnsafeMutablePointer<CChar>?>.size) {
                SCardListReaders(handle, nil, $0, &length)
            }
        }
        if rv == PCSCError.noReadersAvailable.cValue { return [] }
        try check(rv)
        guard let list else { return [] }
        defer { _ = SCardFreeMemory(handle, list) }
        return MultiString.split(UnsafeRawBufferPointer(start: list, count: Int(length)).map { $0 })
    }

    /// Waits until the state of one of `states` differs from what the caller last saw
    /// (`SCardGetStatusChange`), then updates each entry's `event…` fields.
    ///
    /// Include `ReaderState(reader: ReaderState.plugAndPlayNotification)` to learn of readers
    /// added or removed. The event counter travels in the high 16 bits of the state, so a
    /// card pulled and put back between two waits is still seen as a change.
    ///
    /// pcsclite refuses more than 16 entries (`SCARD_E_INVALID_PARAMETER`), its reader limit.
    ///
    /// - Parameters:
    ///   - states: the readers to watch, with what the caller last saw of each; updated in place.
    ///   - timeout: `nil` waits forever (until `cancel()`); `.zero` polls.
    /// - Returns: `false` when the timeout expired with no change.
    @discardableResult
    public func statusChange(_ states: inout [ReaderState], timeout: Duration? = nil) throws(PCSCError) -> Bool {
        let ms: DWORD
        if let timeout {
            let (seconds, attoseconds) = timeout.components
            let total = max(0, seconds) * 1000 + max(0, attoseconds) / 1_000_000_000_000_000
            ms = DWORD(min(total, Int64(UInt32.max - 1)))
        } else {
            ms = cpcsc_infinite()
        }
        if states.isEmpty { return false }

        let names = states.map { strdup($0.reader)! }
        defer { names.forEach { free($0) } }
        var cStates = states.enumerated().map { index, state -> SCARD_READERSTATE in
            var c = SCARD_READERSTATE()
            c.szReader = UnsafePointer(names[index])
            c.dwCurrentState = DWORD(state.currentState.rawValue) | DWORD(state.currentEventCount) << 16
            return c
        }
        let rv = cStates.withUnsafeMutableBufferPointer {
            SCardGetStatusChange(handle, ms, $0.baseAddress, DWORD($0.count))
        }
        if rv == PCSCError.timeout.cValue { return false }
        try check(rv)
        for index in states.indices {
            let c = cStates[index]
            states[index].eventState = ReaderStatus(rawValue: UInt32(truncatingIfNeeded: c.dwEventState))
            states[index].eventCount = UInt16(truncatingIfNeeded: c.dwEventState >> 16)
            let count = min(Int(c.cbAtr), 33)
            states[index].atr = withUnsafeBytes(of: c.rgbAtr) { Array($0.prefix(count)) }
        }
        return true
    }

    /// Connects to the card in `reader` (`SCardConnect`).
    public func connect(
        reader: String, share: ShareMode = .shared, protocols: Protocols = .any
    ) throws(PCSCError) -> Card {
        var card: SCARDHANDLE = 0
        var active: DWORD = 0
        try check(HandleTableLock.shared.with(.connect(reader: reader)) { SCardConnect(handle, reader, DWORD(share.rawValue), DWORD(protocols.rawValue), &card, &active) })
        let connected = Card(context: self, handle: card, reader: reader, activeProtocol: Protocols(rawValue: UInt32(active)))
        ConnectionLog.report(.connect, connected)
        return connected
    }
}

/// A tiny lock over pthread_mutex, so the PCSC module needs no Foundation.
final class NSLockLite: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    init() { pthread_mutex_init(&mutex, nil) }
    deinit { pthread_mutex_destroy(&mutex) }
    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return try body()
    }
}
