// Files that hold what a card gave up (a recording with a clear PIN under --show-secrets, a
// passport's data groups and face, a converted log): created readable by the owner only, and
// never written through a symlink (issue 48).
import Glibc

/// Opens `path` for writing, empty, with mode 0600: created when missing (`O_EXCL`, so nothing
/// slips in between the check and the open); an existing regular file is truncated and its
/// mode narrowed to 0600 (a wider mode, `chmod 644` before, would leave the secret readable by
/// all). Never through a symlink (`O_NOFOLLOW`), and never into a file with another name (a
/// hard link), whose other names would see what is written.
/// - Parameter option: the flag that named the file, for the error (`--record`, `--out`).
/// - Returns: the descriptor, which the caller closes.
/// - Throws: `Failure(.refused)` (77) for a symlink, a hard link or what is not a regular file;
///   `Failure(.usage)` when the file cannot be opened or its mode cannot be narrowed.
package func openPrivateFile(_ path: String, option: String) throws -> Int32 {
    func failure(_ what: String) -> Failure {
        Failure(.usage, "\(option): cannot write '\(Terminal.safe(path))': \(what)")
    }
    var fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
    if fd >= 0 { return fd }
    guard errno == EEXIST else {
        if errno == ELOOP { throw Failure(.refused, "\(option): '\(Terminal.safe(path))' is a symlink; a private file is never written through one") }
        throw failure(String(cString: strerror(errno)))
    }
    // No O_TRUNC yet: what is there is checked before a byte of it is lost.
    fd = open(path, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
    guard fd >= 0 else {
        if errno == ELOOP { throw Failure(.refused, "\(option): '\(Terminal.safe(path))' is a symlink; a private file is never written through one") }
        throw failure(String(cString: strerror(errno)))
    }
    var info = stat()
    guard fstat(fd, &info) == 0 else {
        let reason = String(cString: strerror(errno))
        close(fd)
        throw failure(reason)
    }
    guard info.st_mode & S_IFMT == S_IFREG else {
        close(fd)
        throw Failure(.refused, "\(option): '\(Terminal.safe(path))' is not a regular file")
    }
    guard info.st_nlink <= 1 else {
        close(fd)
        throw Failure(.refused, "\(option): '\(Terminal.safe(path))' has other names (a hard link); a private file is written under one name only")
    }
    guard fchmod(fd, 0o600) == 0, ftruncate(fd, 0) == 0 else {
        let reason = String(cString: strerror(errno))
        close(fd)
        throw failure(reason)
    }
    // O_NONBLOCK only guarded the open against a FIFO; writes to a regular file are plain.
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
    return fd
}

/// Writes `bytes` to `path` as ``openPrivateFile(_:option:)`` opens it.
/// - Throws: its failures, and `Failure(.ioError)` when writing fails.
package func writePrivate(_ bytes: [UInt8], to path: String, option: String) throws {
    let fd = try openPrivateFile(path, option: option)
    defer { close(fd) }
    var offset = 0
    while offset < bytes.count {
        let written = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        if written < 0 {
            if errno == EINTR { continue }
            throw Failure(.ioError, "\(option): writing '\(Terminal.safe(path))' failed: \(String(cString: strerror(errno)))")
        }
        offset += written
    }
}
