// A trap cannot be caught in-process: the matrix names the case it was running on the way down,
// from a signal handler (SIGILL is Swift's trap on x86-64 Linux, SIGTRAP on arm64).
import Foundation

/// The case each running matrix is at, printed to stderr if the process traps.
public final class HostileTrapNote: @unchecked Sendable {
    static let capacity = 512
    static let slots = 16
    /// One fixed buffer per running matrix, so the handler reads memory that never moves.
    nonisolated(unsafe) static let buffers: UnsafeMutablePointer<CChar> = {
        let p = UnsafeMutablePointer<CChar>.allocate(capacity: capacity * slots)
        p.initialize(repeating: 0, count: capacity * slots)
        return p
    }()
    static let lock = NSLock()
    nonisolated(unsafe) static var used = [Bool](repeating: false, count: slots)
    nonisolated(unsafe) static var installed = false

    let index: Int?
    init(index: Int?) { self.index = index }

    static func slot() -> HostileTrapNote {
        lock.lock(); defer { lock.unlock() }
        if !installed {
            installed = true
            for sig in [SIGILL, SIGTRAP, SIGSEGV, SIGBUS, SIGABRT] { signal(sig, hostileTrapHandler) }
        }
        guard let free = used.firstIndex(of: false) else { return HostileTrapNote(index: nil) }
        used[free] = true
        return HostileTrapNote(index: free)
    }

    static func release(_ note: HostileTrapNote) {
        guard let i = note.index else { return }
        lock.lock(); defer { lock.unlock() }
        buffers[i * capacity] = 0
        used[i] = false
    }

    func set(_ text: String) {
        guard let i = index else { return }
        let base = Self.buffers + i * Self.capacity
        base[0] = 0
        var n = 0
        for byte in ("hostile matrix: trapped while running " + text).utf8.prefix(Self.capacity - 2) { (base + 1 + n).pointee = CChar(bitPattern: byte); n += 1 }
        (base + 1 + n).pointee = 0
        base[0] = 1
    }
}

private func hostileTrapHandler(_ signal: Int32) {
    let buffers = HostileTrapNote.buffers
    for i in 0..<HostileTrapNote.slots {
        let base = buffers + i * HostileTrapNote.capacity
        guard base[0] == 1 else { continue }
        let text = base + 1
        _ = write(2, text, strlen(text))
        _ = write(2, "\n", 1)
    }
    Foundation.signal(signal, SIG_DFL)
    raise(signal)
}
