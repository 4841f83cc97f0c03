// Read-only access to /proc, /sys, /etc and /usr under a root that tests can point elsewhere.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import PCSC

/// The files a diagnosis reads (`/proc`, `/sys`, `/etc`, `/usr`), under a root that tests point
/// at a faked tree. Nothing here writes.
public struct SystemFiles: Sendable {
    /// Prefixed to every absolute path; "" for the running system.
    public let root: String

    /// The running system.
    public static let live = SystemFiles(root: "")

    /// Files under `root` instead of `/`.
    /// - Parameter root: a directory that holds `proc`, `sys`, `etc`, `usr` as the system would.
    public init(root: String) {
        self.root = root.hasSuffix("/") ? String(root.dropLast()) : root
    }

    /// The file's text; nil when it is missing or unreadable (permission: another user's process).
    public func read(_ path: String, limit: Int = 1 << 20) -> String? {
        FileIO.read(path: root + path, limit: limit).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Whether the path exists.
    public func exists(_ path: String) -> Bool { access(root + path, F_OK) == 0 }

    /// Whether the path exists and is a socket.
    public func isSocket(_ path: String) -> Bool {
        var info = stat()
        return stat(root + path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFSOCK
    }

    /// The names in a directory, sorted; empty when it is missing.
    public func list(_ path: String) -> [String] {
        guard let dir = opendir(root + path) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// A symbolic link's target as it is written (`/proc/self/exe` → the running executable).
    public func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink(root + path, &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        return String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The last part of a symbolic link's target (`…/drivers/pn533_usb` → `pn533_usb`).
    public func linkName(_ path: String) -> String? {
        linkTarget(path)?.split(separator: "/").last.map(String.init)
    }
}
