import Foundation
import NFCTags

/// Backups of messages before they are overwritten: `$XDG_STATE_HOME/apdu/backups/`
/// (`~/.local/state/apdu/backups/`). A backup is on disk (written, synced, renamed into place)
/// before the tag is touched, and an existing backup is never replaced.
enum Backups {
    static let directory: String = {
        if let state = getenv("XDG_STATE_HOME").map({ String(cString: $0) }), !state.isEmpty {
            return state + "/apdu/backups"
        }
        let home = getenv("HOME").map { String(cString: $0) } ?? NSTemporaryDirectory()
        return home + "/.local/state/apdu/backups"
    }()

    /// Creates the directory once per process (writes to many readers share it).
    private static let directoryReady: Result<Void, Failure> = {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            return .success(())
        } catch {
            return .failure(Failure(.ioError, "cannot create the backup directory \(directory): refusing to write without a backup"))
        }
    }()

    /// Saves the backup and returns the file's path.
    static func save(_ backup: TagBackup, reader: String) throws -> String {
        var backup = backup
        backup.reader = reader
        let message = Array(backup.encoded().utf8)
        let kind = backup.kind ?? "ndef", uid = backup.uid
        try directoryReady.get()
        let slug = reader.map { $0.isLetter || $0.isNumber ? $0 : "-" }.reduce(into: "") { s, c in
            if !(c == "-" && s.hasSuffix("-")) { s.append(c) }
        }
        let stem = directory + "/" + [slug, kind, uid.map(\.hexString), timestamp()].compactMap { $0 }.joined(separator: "-")
        let partial = stem + ".partial"
        let refuse = { (what: String) in Failure(.ioError, "cannot write the backup \(stem).backup (\(what)): refusing to write without a backup") }
        let fd = open(partial, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw refuse(String(cString: strerror(errno))) }
        defer { unlink(partial) }
        let written = message.withUnsafeBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let n = Foundation.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return false }
                offset += n
            }
            return true
        }
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
