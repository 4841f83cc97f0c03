// Whole-file reads and writes by plain system calls, for the modules that keep Foundation out.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Whole reads and writes with plain system calls, for the modules of this package that keep
/// Foundation out of their start path (PCSC, TagReader's backups, Diagnostics, the CLI's
/// standard streams). Package access: not part of the public API.
package enum FileIO {
    /// A file's bytes, read until end of file or until at least `limit` bytes are in; nil when
    /// it cannot be opened or read (missing, another user's `/proc` entry).
    package static func read(path: String, limit: Int = .max) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return readAll(descriptor: fd, limit: limit)
    }

    /// Everything a descriptor gives until end of file (or `limit`), going on after interrupted
    /// reads; nil when a read fails.
    package static func readAll(descriptor: Int32, limit: Int = .max) -> [UInt8]? {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while bytes.count < limit {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress!, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return nil }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[..<n])
        }
        return bytes
    }

    /// Writes all of `bytes`, going on after interrupted and short writes. False when a write
    /// fails (`errno` says why) or writes nothing.
    @discardableResult
    package static func write(_ bytes: [UInt8], to descriptor: Int32) -> Bool {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return false }
                offset += n
            }
            return true
        }
    }
}
