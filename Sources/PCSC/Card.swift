// A card connection over pcsclite (`SCARDHANDLE`): transmit, control, attributes, status,
// reconnect and transactions.
internal import CPCSCLite

/// A connection to the card in one reader: wraps `SCARDHANDLE`.
///
/// The card keeps its `Context` alive. Deinit disconnects quietly leaving the card as it is;
/// call `disconnect(_:)` to choose the disposition and see errors. Calls on one card are not
/// meant to overlap: use it from one thread at a time.
public final class Card: @unchecked Sendable {
    public let context: Context
    public let reader: String
    /// The protocol negotiated at connect or the last reconnect.
    // Read by every transmit; a card is used from one thread at a time, so the runtime's
    // dynamic exclusivity check on it adds nothing (issue 50).
    @exclusivity(unchecked) public private(set) var activeProtocol: Protocols
    let handle: SCARDHANDLE
    private var connected = true
    /// Reused for every response: an extended response can be 65,536 bytes plus SW1SW2, which
    /// pcsclite's `MAX_BUFFER_SIZE_EXTENDED` covers. Left uninitialised: only the pages the
    /// responses touch are ever faulted in (a connection that sees short answers costs 4 KiB).
    private let receiveBuffer: UnsafeMutableBufferPointer<UInt8>

    init(context: Context, handle: SCARDHANDLE, reader: String, activeProtocol: Protocols) {
        self.context = context
        self.handle = handle
        self.reader = reader
        self.activeProtocol = activeProtocol
        self.receiveBuffer = .allocate(capacity: Int(cpcsc_max_buffer_size_extended()))
    }

    deinit {
        if connected { _ = HandleTableLock.shared.with(.change(waitsForTransactionsOn: nil)) { SCardDisconnect(handle, DWORD(Disposition.leave.rawValue)) } }
        receiveBuffer.deallocate()
    }

    /// One pcsclite call on this card, under the handle-table lock (see `HandleTableLock`).
    private func cardCall<R>(_ call: () -> R) -> R {
        HandleTableLock.shared.with(.cardCall(handle: Int(handle)), call)
    }

    /// Ends the connection (`SCardDisconnect`), leaving the card as it is unless told otherwise.
    public func disconnect(_ disposition: Disposition = .leave) throws(PCSCError) {
        guard connected else { return }
        connected = false
        try check(HandleTableLock.shared.with(.change(waitsForTransactionsOn: disposition == .leave ? nil : (reader, Int(handle)))) { SCardDisconnect(handle, DWORD(disposition.rawValue)) })
    }

    /// Re-establishes the connection (`SCardReconnect`), for example after `PCSCError.resetCard`.
    /// - Parameters:
    ///   - share: the sharing mode to ask for.
    ///   - protocols: the protocols acceptable.
    ///   - initialization: `.leave` to just resync, `.reset` (warm reset) or `.unpower` (cold).
    public func reconnect(
        share: ShareMode = .shared, protocols: Protocols = .any, initialization: Disposition = .leave
    ) throws(PCSCError) {
        var active: DWORD = 0
        try check(cardCall {
            SCardReconnect(handle, DWORD(share.rawValue), DWORD(protocols.rawValue), DWORD(initialization.rawValue), &active)
        })
        activeProtocol = Protocols(rawValue: UInt32(active))
        ConnectionLog.report(.reconnect, self)
    }

    /// Sends one command and returns the card's whole response, SW1SW2 included (`SCardTransmit`).
    /// No GET RESPONSE or Le handling happens here: that is `ISO7816`'s job.
    public func transmit(_ command: [UInt8]) throws(PCSCError) -> [UInt8] {
        let pci: UnsafePointer<SCARD_IO_REQUEST>
        if activeProtocol.contains(.t1) { pci = cpcsc_pci_t1() }
        else if activeProtocol.contains(.t0) { pci = cpcsc_pci_t0() }
        else { pci = cpcsc_pci_raw() }
        var length = DWORD(receiveBuffer.count)
        let rv = command.withUnsafeBufferPointer { cmd in
            cardCall {
                SCardTransmit(handle, pci, cmd.baseAddress, DWORD(cmd.count), nil, receiveBuffer.baseAddress, &length)
            }
        }
        if rv != SCARD_S_SUCCESS_VALUE || length == 0 {
            throw diagnoseFailedExchange(rv == SCARD_S_SUCCESS_VALUE ? .commError : PCSCError(rawValue: UInt32(truncatingIfNeeded: rv)))
        }
        return Array(UnsafeBufferPointer(rebasing: receiveBuffer[0..<Int(min(length, DWORD(receiveBuffer.count)))]))
    }

    /// Errors after which the card may simply have left the reader.
    private static let possibleRemoval: Set<PCSCError> = [.commError, .notTransacted, .commDataLost, .unknownError, .unresponsiveCard]

    /// When an exchange breaks because the card was pulled, drivers report it in different
    /// ways (vpcd: an empty answer, then `SCARD_E_NOT_TRANSACTED`) until pcscd's next presence
    /// poll. Wait briefly for that poll so callers get `removedCard`, the error that says
    /// what happened, instead of a generic one.
    private func diagnoseFailedExchange(_ error: PCSCError) -> PCSCError {
        guard Self.possibleRemoval.contains(error) else { return error }
        var states = [ReaderState(reader: reader)]
        let deadline = ContinuousClock.now + .milliseconds(1500)
        do {
            try context.statusChange(&states, timeout: .zero)
            while true {
                let s = states[0].eventState
                if s.contains(.empty) { return .removedCard }
                if s.contains(.unknown) || s.contains(.unavailable) { return .readerUnavailable }
                if s.contains(.mute) { return .unresponsiveCard }
                let now = ContinuousClock.now
                guard now < deadline else { return error }
                states[0].acknowledge()
                try context.statusChange(&states, timeout: deadline - now)
            }
        } catch {
            return error == .timeout ? .commError : error
        }
    }

    /// Sends a control code to the reader (`SCardControl`). Works on a `.direct` connection
    /// without a card.
    public func control(_ code: UInt32, _ input: [UInt8] = []) throws(PCSCError) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(cpcsc_max_buffer_size_extended()))
        var returned: DWORD = 0
        let outputCount = output.count
        let rv = input.withUnsafeBytes { inBytes in
            output.withUnsafeMutableBytes { outBytes in
                cardCall {
                    SCardControl(handle, DWORD(code), inBytes.baseAddress, DWORD(inBytes.count),
                                 outBytes.baseAddress, DWORD(outputCount), &returned)
                }
            }
        }
        try check(rv)
        return Array(output.prefix(Int(returned)))
    }

    /// Reads a reader attribute (`SCardGetAttrib`).
    public func attribute(_ attribute: Attribute) throws(PCSCError) -> [UInt8] {
        // pcsclite refuses a buffer larger than MAX_BUFFER_SIZE (264) with
        // SCARD_E_INSUFFICIENT_BUFFER, and sizes nothing for a NULL one: ask with exactly that.
        let size = Int(cpcsc_max_buffer_size())
        var buffer = [UInt8](repeating: 0, count: size)
        var length = DWORD(size)
        try check(cardCall { SCardGetAttrib(handle, DWORD(attribute.rawValue), &buffer, &length) })
        return Array(buffer.prefix(Int(min(length, DWORD(size)))))
    }

    /// The card's answer to reset, as the reader holds it now.
    public func atr() throws(PCSCError) -> [UInt8] { try status().atr }

    /// The connection's view of the reader and card (`SCardStatus`).
    public func status() throws(PCSCError) -> CardStatus {
        // One call with buffers that always suffice: reader names are at most MAX_READERNAME
        // and an ATR at most 33 bytes.
        var names = [CChar](repeating: 0, count: Int(cpcsc_max_readername()) * 2 + 2)
        var nameLength = DWORD(names.count)
        var state: DWORD = 0
        var proto: DWORD = 0
        var atr = [UInt8](repeating: 0, count: 33)
        var atrLength = DWORD(atr.count)
        try check(cardCall { SCardStatus(handle, &names, &nameLength, &state, &proto, &atr, &atrLength) })
        return CardStatus(
            readerNames: MultiString.split(names.prefix(Int(min(nameLength, DWORD(names.count)))).map { UInt8(bitPattern: $0) }),
            state: CardState(rawValue: UInt32(truncatingIfNeeded: state)),
            activeProtocol: Protocols(rawValue: UInt32(truncatingIfNeeded: proto)),
            atr: Array(atr.prefix(Int(min(atrLength, 33))))
        )
    }

    /// Runs `body` inside a transaction (`SCardBeginTransaction` … `SCardEndTransaction`), so no
    /// other process's command lands between this body's exchanges. The card is left as it is.
    public func withTransaction<R>(_ body: () throws -> R) throws -> R {
        try beginTransaction()
        return try endingTransaction(body)
    }

    /// Runs `body` inside the transaction `beginTransaction()` began, then ends it, whether
    /// `body` returns or throws (for a transaction begun elsewhere, e.g. on another thread).
    public func endingTransaction<R>(_ body: () throws -> R) throws -> R {
        let result: R
        do {
            result = try body()
        } catch {
            try? endTransaction()
            throw error
        }
        try endTransaction()
        return result
    }

    /// Begins a transaction (`SCardBeginTransaction`). pcscd makes this wait for as long as
    /// another program holds a transaction on the reader; pair every success with
    /// `endTransaction(_:)`. Prefer `withTransaction(_:)`.
    public func beginTransaction() throws(PCSCError) {
        let lock = HandleTableLock.shared
        // Announced before it begins: a connect to this reader must not slip in between the
        // begin and the announcement, or pcscd would hold it back for this very transaction.
        lock.transactionBegan(on: reader, handle: Int(handle))
        do {
            try check(cardCall { SCardBeginTransaction(handle) })
        } catch {
            lock.transactionEnded(on: reader, handle: Int(handle))
            throw error
        }
    }

    /// Ends the transaction `beginTransaction()` began (`SCardEndTransaction`), leaving the card
    /// as it is unless told otherwise.
    public func endTransaction(_ disposition: Disposition = .leave) throws(PCSCError) {
        let ended = cardCall { SCardEndTransaction(handle, DWORD(disposition.rawValue)) }
        HandleTableLock.shared.transactionEnded(on: reader, handle: Int(handle))
        try check(ended)
    }
}

/// What `SCardStatus` reports for a connection.
public struct CardStatus: Hashable, Sendable {
    public var readerNames: [String]
    public var state: CardState
    public var activeProtocol: Protocols
    public var atr: [UInt8]
}
