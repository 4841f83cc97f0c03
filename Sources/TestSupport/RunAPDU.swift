// Running the built `apdu` binary from tests: its exit status and output, background and
// streaming runs, and a seeded random generator.
import Foundation
import VirtualCard

/// What a run of the `apdu` binary produced.
public struct CommandResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
    public var stdoutData = Data()

    public init(status: Int32, stdout: String, stderr: String, stdoutData: Data = Data()) {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
        self.stdoutData = stdoutData
    }

    /// stdout parsed as one JSON document.
    public func json() throws -> Any {
        try JSONSerialization.jsonObject(with: Data(stdout.utf8), options: [.fragmentsAllowed])
    }
}

/// The `apdu` executable built beside the test bundle (or `$APDU_BIN`).
public var apduBinary: String {
    if let bin = ProcessInfo.processInfo.environment["APDU_BIN"] { return bin }
    let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    return URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("apdu").path
}

/// Runs `apdu` with arguments, returning its exit status and output.
public func runAPDU(_ arguments: [String], environment: [String: String] = [:], stdin: String? = nil) throws -> CommandResult {
    try runProgram(apduBinary, arguments, environment: environment, stdin: stdin)
}

/// Runs a program (apdu, or `script(1)` around it for a terminal), returning its exit status and
/// output. The test's environment is passed on without `unsetting` (`APDU_READER` by default,
/// so no test picks a reader by accident), with `environment` on top.
public func runProgram(_ path: String, _ arguments: [String], environment: [String: String] = [:], unsetting: [String] = ["APDU_READER"],
                       stdin: String? = nil) throws -> CommandResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    var env = ProcessInfo.processInfo.environment
    for key in unsetting { env.removeValue(forKey: key) }
    for (k, v) in environment { env[k] = v }
    process.environment = env
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    let input = Pipe()
    process.standardInput = input
    try process.run()
    if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
    try? input.fileHandleForWriting.close()
    // Drain both pipes concurrently so a chatty child never blocks on a full pipe.
    let errData = Locked(Data())
    let reader = Thread { errData.withLock { $0 = err.fileHandleForReading.readDataToEndOfFile() } }
    reader.start()
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    while !reader.isFinished { usleep(1000) }
    return CommandResult(
        status: process.terminationStatus,
        stdout: String(decoding: outData, as: UTF8.self),
        stderr: String(decoding: errData.current, as: UTF8.self),
        stdoutData: outData)
}

/// Starts `apdu` in the background (for `emulate`, `watch`); its standard error goes to
/// `errorLog` when given (the emulator's start line), else nowhere.
public func startAPDU(_ arguments: [String], errorLog: String? = nil) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: apduBinary)
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    if let errorLog {
        guard FileManager.default.createFile(atPath: errorLog, contents: nil), let handle = FileHandle(forWritingAtPath: errorLog) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: errorLog])
        }
        process.standardError = handle
    } else {
        process.standardError = FileHandle.nullDevice
    }
    try process.run()
    return process
}

/// A running `apdu` whose stdout lines are collected as they arrive (for `watch`).
public final class StreamingAPDU: @unchecked Sendable {
    public let process = Process()
    private let lines = Locked([String]())
    private var reader: Thread?

    public init(_ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: apduBinary)
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let handle = out.fileHandleForReading
        let lines = self.lines
        let t = Thread {
            var buffer = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                buffer += chunk
                while let nl = buffer.firstIndex(of: 0x0A) {
                    let line = String(decoding: buffer[buffer.startIndex..<nl], as: UTF8.self)
                    buffer.removeSubrange(buffer.startIndex...nl)
                    lines.withLock { $0.append(line) }
                }
            }
        }
        reader = t
        t.start()
    }

    public var output: [String] { lines.current }

    /// Waits until a line satisfies `predicate`; returns it, or nil on timeout.
    public func waitForLine(timeout: Duration = .seconds(10), where predicate: (String) -> Bool) -> String? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let line = output.first(where: predicate) { return line }
            usleep(10_000)
        }
        return nil
    }

    public func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}

/// A small seeded generator (SplitMix64), so a failing random test run can be replayed from the
/// seed it printed.
public struct SplitMix: RandomNumberGenerator {
    public var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
