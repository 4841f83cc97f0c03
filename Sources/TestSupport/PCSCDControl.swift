// For exclusive tests: killing and restarting the private pcscd of Scripts/with-virtual-readers.
import Foundation

/// Stops and restarts the private pcscd of `Scripts/with-virtual-readers` (exclusive tests only).
public enum PCSCDControl {
    static var env: [String: String] { ProcessInfo.processInfo.environment }

    /// Whether this run owns its pcscd (Scripts/test's exclusive phase).
    public static var isExclusive: Bool { env["APDU_EXCLUSIVE_PCSCD"] == "1" }

    public static func stop() throws {
        guard let pidFile = env["APDU_PCSCD_PIDFILE"], let text = try? String(contentsOfFile: pidFile, encoding: .utf8),
              let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) else { throw VirtualReadersMissing() }
        // Killed, as a crash would: no orderly shutdown that could wait on a driver.
        guard kill(pid, SIGKILL) == 0 else { throw PCSCDError(message: "cannot signal pcscd \(pid): errno \(errno)") }
        for _ in 0..<100 {
            let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
            if status.isEmpty || status.contains("State:\tZ") {
                try? FileManager.default.removeItem(atPath: "/run/pcscd/pcscd.comm")
                try? FileManager.default.removeItem(atPath: "/run/pcscd/pcscd.pid")
                return
            }
            usleep(50_000)
        }
        throw PCSCDError(message: "pcscd \(pid) did not die")
    }

    public static func start() throws {
        guard let config = env["APDU_PCSCD_CONFIG"], let pidFile = env["APDU_PCSCD_PIDFILE"] else { throw VirtualReadersMissing() }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/sbin/pcscd")
        p.arguments = ["-f", "-c", config]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        try String(p.processIdentifier).write(toFile: pidFile, atomically: true, encoding: .utf8)
        for _ in 0..<100 {
            if FileManager.default.fileExists(atPath: "/run/pcscd/pcscd.comm") { usleep(200_000); return }
            usleep(50_000)
        }
    }
}

public struct PCSCDError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
