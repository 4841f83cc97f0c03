// The protocol every emulated card model meets, and the lock that guards state tests read.
import Dispatch
import FoundationEssentials
import Glibc

/// A card model that a `VPCDClient` puts into a vpcd reader slot.
///
/// The client calls these from its own thread, one at a time; models that tests inspect
/// from other threads guard their state (see `Locked`).
public protocol EmulatedCard: AnyObject, Sendable {
    /// The answer to reset the reader reports.
    var atr: [UInt8] { get }
    /// Power on or warm/cold reset: volatile state (selected application, chains) starts over.
    func reset()
    /// Power off.
    func powerOff()
    /// Answers one command APDU with a response APDU (data + SW1SW2).
    func process(_ apdu: [UInt8]) -> [UInt8]
}

extension EmulatedCard {
    public func powerOff() { reset() }
}

/// A value behind a lock, for model state read by tests while the card thread runs.
public final class Locked<Value>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var value: Value
    public init(_ value: Value) {
        self.value = value
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }
    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }
    public func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
    public var current: Value { withLock { $0 } }
}
