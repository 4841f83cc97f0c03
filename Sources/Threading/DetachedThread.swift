// A detached POSIX thread for blocking work, kept off Swift's cooperative pool and free of
// Foundation.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A thread of its own for blocking work (a PC/SC call that waits for pcscd, a socket read):
/// off Swift's cooperative pool, which must never block, and without Foundation's `Thread`, so
/// a program that uses the library need not load Foundation at start.
public enum DetachedThread {
    /// Starts `body` on a new detached thread and returns at once.
    /// - Parameters:
    ///   - stackSize: the stack in bytes; nil keeps the system default.
    ///   - body: the work; the thread ends when it returns.
    /// - Throws: ``StartError`` when the system has no thread to give (then `body` never runs).
    public static func start(stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void) throws(StartError) {
        let box = Unmanaged.passRetained(Work(body: body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        if let stackSize { pthread_attr_setstacksize(&attributes, max(stackSize, Int(PTHREAD_STACK_MIN))) }
        var thread = pthread_t()
        let status = pthread_create(&thread, &attributes, { context in
            let work = Unmanaged<Work>.fromOpaque(context!).takeRetainedValue()
            work.body()
            return nil
        }, box)
        if status != 0 {
            Unmanaged<Work>.fromOpaque(box).release()
            throw StartError(message: String(cString: strerror(status)))
        }
    }

    /// The system refused a new thread (`pthread_create` failed: too many threads, no memory).
    public struct StartError: Error, CustomStringConvertible {
        /// The system's reason.
        public let message: String
        public var description: String { "cannot start a thread: \(message)" }
    }

    private final class Work: Sendable {
        let body: @Sendable () -> Void
        init(body: @escaping @Sendable () -> Void) {
            self.body = body
        }
    }
}
