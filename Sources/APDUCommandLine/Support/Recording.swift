// `--record`: a session written as JSON Lines, secrets redacted, for `apdu emulate --replay`.
import FoundationEssentials
import Glibc
import ISO7816
import PCSC
import Synchronization

/// `--record FILE`: the session as JSON Lines, for `apdu emulate --replay FILE`.
///
///     {"type":"session","tool":"apdu 0.1.0","command":"ndef-read"}
///     {"type":"connect","reader":"ACS ACR122U 00 00","atr":"3B8F8001804F0CA0000003060300030000000068"}
///     {"type":"exchange","command":"00A4040007D276000085010100","response":"9000","us":812,"purpose":"command"}
///     {"type":"end","status":0}
///
/// Every line is written as it happens, so a session cut short still replays up to the cut.
/// Secrets (PINs, tag passwords, MIFARE keys, a passport's access cryptograms) are written as
/// `**` per byte, as `--trace` shows them, unless `--show-secrets` is given.
package enum Recording {
    /// Starts recording to `path` (truncating it), a private file: mode 0600 even when it was
    /// there with a wider one, never through a symlink (``openPrivateFile(_:option:)``).
    /// - Throws: `Failure(.usage)` when the file cannot be created, `Failure(.refused)` for a
    ///   symlink or a hard link.
    package static func start(path: String) throws {
        let fd = try openPrivateFile(path, option: "--record")
        let already = file.withLock { current -> Bool in
            if current != nil { return true }
            current = fd
            return false
        }
        if already { close(fd); return }
        // The subcommand only: its arguments may hold a PIN, a password or a key.
        write(.object([("type", .string("session")), ("tool", .string("apdu \(APDUCommand.version)")),
                       ("command", .string(CommandLine.arguments.dropFirst().first ?? ""))]))
        ConnectionLog.observe { event in
            write(.object([("type", .string(event.kind.rawValue)), ("reader", .string(event.reader)), ("atr", .hex(event.atr))]))
        }
        atexit { Recording.finish() }
    }

    /// Whether a recording is open.
    package static var isActive: Bool { file.withLock { $0 != nil } }

    /// One exchange, its secrets redacted unless `showSecrets`.
    package static func record(_ exchange: Exchange, showSecrets: Bool) {
        let command = Redaction.hex(exchange, showSecrets: showSecrets, separator: "")
        let micro = exchange.duration.components.seconds * 1_000_000 + exchange.duration.components.attoseconds / 1_000_000_000_000
        let response = Redaction.responseHex(exchange, showSecrets: showSecrets, separator: "")
        write(.object([("type", .string("exchange")), ("command", .string(command)), ("response", .string(response)),
                       ("us", .int(Int(micro))), ("purpose", .string(exchange.purpose.rawValue))]))
    }

    /// The closing line with the exit status the process ends with.
    package static func finish(status: Int32? = nil) {
        guard let fd = file.withLock({ current -> Int32? in defer { current = nil }; return current }) else { return }
        ConnectionLog.observe(nil)
        let line = JSON.object([("type", .string("end"))] + (status.map { [("status", JSON.int(Int($0)))] } ?? [])).serialized + "\n"
        StandardStream(descriptor: fd).write(Array(line.utf8))
        close(fd)
    }

    private static func write(_ json: JSON) {
        file.withLock { fd in
            guard let fd else { return }
            StandardStream(descriptor: fd).write(Array((json.serialized + "\n").utf8))
        }
    }

    private static let file = Mutex<Int32?>(nil)
}
