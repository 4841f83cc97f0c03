// Where a tag's old message is kept before a write: the store protocol, the backup directory
// `apdu` uses, and an in-memory store.
import Dispatch
import FoundationEssentials
import Glibc
import NFCTags
import PCSC
import Synchronization

/// Where `TagTransaction.writeNDEF` keeps a tag's old message before the tag changes.
///
/// `save` must not return until the backup is safe: a card pulled during the write leaves the
/// tag holding the old message, an empty one or the new one, and the backup is how the old one
/// comes back (`TagTransaction.restore`).
public protocol BackupStore: Sendable {
    /// Keeps `backup` and returns where it is (a path, a key), for the restore hint.
    /// Throwing stops the write before anything reaches the tag.
    func save(_ backup: TagBackup, reader: String) throws -> String
}

/// Why a backup could not be kept; the write did not start.
public struct BackupError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Backups as files in a directory, the way `apdu ndef-write` keeps them: each written, synced
/// and linked into place before the tag is touched; an existing backup is never replaced.
public struct DirectoryBackupStore: BackupStore {
    public let directory: String

    public init(directory: String) {
        self.directory = directory
    }

    /// `$XDG_STATE_HOME/apdu/backups`, else `~/.local/state/apdu/backups`.
    public static var standard: DirectoryBackupStore {
        if let state = ProcessInfo.processInfo.environment["XDG_STATE_HOME"], !state.isEmpty {
            return DirectoryBackupStore(directory: state + "/apdu/backups")
        }
        let home = ProcessInfo.processInfo.environment["HOME"] ?? "/tmp"
        return DirectoryBackupStore(directory: home + "/.local/state/apdu/backups")
    }

    /// Saves the backup as `<reader>-<kind>-<uid>-<UTC time>.backup` and returns its path.
    public func save(_ backup: TagBackup, reader: String) throws -> String {
        var backup = backup
        backup.reader = reader
        let contents = Array(backup.encoded().utf8)
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw BackupError("cannot create the backup directory \(directory): refusing to write without a backup")
        }
        let slug = reader.map { $0.isLetter || $0.isNumber ? $0 : "-" }.reduce(into: "") { s, c in
            if !(c == "-" && s.hasSuffix("-")) { s.append(c) }
        }
        let stem = directory + "/" + [slug, backup.kind ?? "ndef", backup.uid.map(\.hexString), Self.timestamp()].compactMap { $0 }.joined(separator: "-")
        let partial = stem + ".partial"
        let refuse = { (what: String) in BackupError("cannot write the backup \(stem).backup (\(what)): refusing to write without a backup") }
        let fd = open(partial, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw refuse(String(cString: strerror(errno))) }
        defer { unlink(partial) }
        let written = FileIO.write(contents, to: fd)
        let error = String(cString: strerror(errno))
        guard written, fsync(fd) == 0, close(fd) == 0 else {
            close(fd)
            throw refuse(error)
        }
        // link() rather than rename(): it fails instead of replacing a backup of the same name.
        for attempt in 1...100 {
            let path = stem + (attempt == 1 ? "" : "-\(attempt)") + ".backup"
            if link(partial, path) == 0 { return path }
            if errno == EEXIST { continue }
            // File systems without hard links (vfat, some network mounts): check, then rename.
            guard errno == EPERM || errno == EOPNOTSUPP else { throw refuse(String(cString: strerror(errno))) }
            if access(path, F_OK) == 0 { continue }
            if rename(partial, path) == 0 { return path }
            throw refuse(String(cString: strerror(errno)))
        }
        throw refuse("100 backups with the same name")
    }

    /// The newest backup of a tag of `kind` with `uid` here (names end in the UTC time, so the
    /// greatest name is the newest), nil when there is none.
    public func newest(kind: String, uid: [UInt8]?) -> String? {
        guard let uid, let dir = opendir(directory) else { return nil }
        defer { closedir(dir) }
        let marker = "-\(kind)-\(uid.hexString)-"
        var best: String?
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name.hasSuffix(".backup"), name.contains(marker) else { continue }
            if best.map({ name > $0 }) ?? true { best = name }
        }
        return best.map { directory + "/" + $0 }
    }

    /// UTC, to the millisecond: 20261122-135532-192.
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var t = tm()
        var seconds = now.tv_sec
        gmtime_r(&seconds, &t)
        func pad(_ v: Int32, _ width: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return pad(t.tm_year + 1900, 4) + pad(t.tm_mon + 1, 2) + pad(t.tm_mday, 2) + "-"
            + pad(t.tm_hour, 2) + pad(t.tm_min, 2) + pad(t.tm_sec, 2) + "-" + pad(Int32(now.tv_nsec / 1_000_000), 3)
    }
}

/// Backups kept in memory, for programs that hold on to them themselves (and for tests).
/// They are gone with the process: a write cut short can then only be undone while it runs.
public final class MemoryBackupStore: BackupStore {
    private let kept = Mutex<[TagBackup]>([])

    public init() {}

    /// Every backup saved so far, oldest first.
    public var backups: [TagBackup] { kept.withLock { $0 } }

    public func save(_ backup: TagBackup, reader: String) throws -> String {
        var backup = backup
        backup.reader = reader
        return kept.withLock { list in
            list.append(backup)
            return "memory:\(list.count - 1)"
        }
    }
}
