import Foundation
import Synchronization
import Testing

/// The server built beside the test bundle.
var serverBinary: String {
    let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    return URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("apdu-sun-server").path
}

/// The private PostgreSQL of Scripts/with-postgres, when the tests run beside one.
let postgresURL = ProcessInfo.processInfo.environment["APDU_TEST_POSTGRES_URL"]
let postgresControl = ProcessInfo.processInfo.environment["APDU_TEST_PGCTL"]

/// A scratch folder, removed when the value goes.
final class Scratch: @unchecked Sendable {
    let path: String
    init() {
        path = NSTemporaryDirectory() + "sun-service-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
    func file(_ name: String) -> String { path + "/" + name }
    @discardableResult
    func write(_ name: String, _ text: String, mode: Int = 0o600) -> String {
        let p = file(name)
        _ = FileManager.default.createFile(atPath: p, contents: Data(text.utf8), attributes: [.posixPermissions: mode])
        return p
    }
}

/// The factory keys (all zero) as a key file group, and another group with diversified keys.
let zeroKey = String(repeating: "0", count: 32)
let metaKey = "42AFF114F2CB3B6141BE6DC95DFC5416"
let masterKey = "B62A9BAF092439BD43C62AEE96B970C5"
let keyFileText = """
    {
      "default": "factory",
      "groups": {
        "factory": { "metaReadKey": "\(zeroKey)", "fileReadKey": "\(zeroKey)" },
        "brand": { "metaReadKey": "\(metaKey)", "fileReadMasterKey": "\(masterKey)", "systemIdentifier": "4272616E64" },
        "nxp": { "metaReadKey": "\(zeroKey)", "fileReadKey": "\(zeroKey)", "template": "https://x.example/?picc_data={picc}&enc={file}&cmac={mac}" }
      }
    }
    """

/// One running apdu-sun-server process.
final class ServerProcess: @unchecked Sendable {
    let process = Process()
    let port: Int
    let stderrPath: String
    private let stdout = Pipe()

    /// Starts the server and waits for its "listening on" line.
    init(keys: String, database: String, arguments: [String] = [], scratch: Scratch, name: String = UUID().uuidString) throws {
        stderrPath = scratch.file("server-\(name).log")
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: serverBinary)
        process.arguments = ["--keys", keys, "--database", database, "--listen", "127.0.0.1:0", "--log-level", "debug"] + arguments
        process.standardOutput = stdout
        process.standardError = FileHandle(forWritingAtPath: stderrPath)
        try process.run()
        var line = Data()
        let handle = stdout.fileHandleForReading
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard let range = text.range(of: "listening on 127.0.0.1:"), let port = Int(text[range.upperBound...].prefix { $0.isNumber }) else {
            process.waitUntilExit()
            throw ServerStartFailure(status: process.terminationStatus, log: (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "")
        }
        self.port = port
    }

    var log: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    func signal(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// SIGTERM, then the exit status.
    @discardableResult
    func stop() -> Int32 {
        if process.isRunning { signal(SIGTERM) }
        process.waitUntilExit()
        return process.terminationStatus
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

struct ServerStartFailure: Error, CustomStringConvertible {
    var status: Int32
    var log: String
    var description: String { "the server did not start (status \(status)): \(log)" }
}

/// Runs the server to its end (for start-up failures): exit status and standard error.
func runServer(_ arguments: [String]) throws -> (status: Int32, stderr: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: serverBinary)
    process.arguments = arguments
    let err = Pipe()
    process.standardError = err
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    let data = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

struct HTTPAnswer {
    var status: Int
    var headers: [String: String]
    var body: String
    var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:] }
}

struct HTTPFailure: Error, CustomStringConvertible {
    var description: String
}

/// A plain HTTP/1.1 client on one keep-alive connection, over a socket: what a load balancer
/// or a phone's browser sends, with nothing in between.
final class HTTPConnection: @unchecked Sendable {
    let fd: Int32
    private var buffer: [UInt8] = []

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            close(fd)
            throw HTTPFailure(description: "cannot connect to 127.0.0.1:\(port)")
        }
    }

    deinit { close(fd) }

    func send(_ text: String) throws {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw HTTPFailure(description: "send failed") }
            bytes = bytes.dropFirst(n)
        }
    }

    func get(_ target: String, headers: [String: String] = [:]) throws -> HTTPAnswer {
        var request = "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (k, v) in headers { request += "\(k): \(v)\r\n" }
        try send(request + "\r\n")
        return try readAnswer()
    }

    /// True when the server closed the connection (read returns 0).
    func isClosedByPeer() -> Bool {
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, 0) == 0
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { throw HTTPFailure(description: n == 0 ? "connection closed" : "receive failed (errno \(errno))") }
        buffer += chunk[0..<n]
    }

    func readAnswer() throws -> HTTPAnswer {
        let separator: [UInt8] = [13, 10, 13, 10]
        var end: Int?
        while end == nil {
            if buffer.count >= 4 {
                for i in 0...(buffer.count - 4) where Array(buffer[i..<(i + 4)]) == separator {
                    end = i
                    break
                }
            }
            if end == nil { try fill() }
        }
        let head = String(decoding: buffer[0..<end!], as: UTF8.self)
        buffer.removeFirst(end! + 4)
        let lines = head.components(separatedBy: "\r\n")
        let status = Int(lines[0].split(separator: " ")[1]) ?? 0
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        while buffer.count < length { try fill() }
        let body = String(decoding: buffer[0..<length], as: UTF8.self)
        buffer.removeFirst(length)
        return HTTPAnswer(status: status, headers: headers, body: body)
    }
}

/// Fresh tap URLs (path and query) from the sun-taps tool built beside the tests: distinct
/// UIDs from `first`, factory keys unless `keys` says otherwise.
func freshTaps(count: Int, first: Int, counter: Int = 1, path: String = "/", keys: [String] = []) throws -> [String] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: serverBinary).deletingLastPathComponent().appendingPathComponent("sun-taps")
    process.arguments = ["--count", "\(count)", "--first", "\(first)", "--counter", "\(counter)", "--path", path] + keys
    let out = Pipe()
    process.standardOutput = out
    try process.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
}

/// Sends each target once, `workers` connections at a time; the answers in the targets' order
/// (status 0 where the connection failed).
func sendAll(_ targets: [String], port: Int, workers: Int = 16) -> [HTTPAnswer] {
    let answers = Mutex([HTTPAnswer?](repeating: nil, count: targets.count))
    onThreads(workers) { worker in
        var connection = try? HTTPConnection(port: port)
        for i in stride(from: worker, to: targets.count, by: workers) {
            var answer = HTTPAnswer(status: 0, headers: [:], body: "")
            if connection == nil { connection = try? HTTPConnection(port: port) }
            if let c = connection {
                do { answer = try c.get(targets[i]) } catch { connection = nil }
            }
            answers.withLock { $0[i] = answer }
        }
    }
    return answers.withLock { $0.map { $0! } }
}

/// Runs a short command to its end with posix_spawn and waitpid: its status and standard
/// output. (Foundation's Process missed the exit of pg_ctl, whose server lives on.)
func spawn(_ path: String, _ arguments: [String], capture: Bool = true) throws -> (status: Int32, output: String) {
    var pipe: [Int32] = [0, 0]
    guard Glibc.pipe(&pipe) == 0 else { throw HTTPFailure(description: "pipe failed") }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    if capture {
        posix_spawn_file_actions_adddup2(&actions, pipe[1], 1)
    } else {
        // A daemon it starts would hold the pipe open: nothing to read then.
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    }
    posix_spawn_file_actions_addclose(&actions, pipe[1])
    posix_spawn_file_actions_addclose(&actions, pipe[0])
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    defer { for a in argv { free(a) } }
    var pid: pid_t = 0
    let result = posix_spawn(&pid, path, &actions, nil, argv, environ)
    close(pipe[1])
    guard result == 0 else {
        close(pipe[0])
        throw HTTPFailure(description: "cannot run \(path)")
    }
    var output = [UInt8]()
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(pipe[0], $0.baseAddress, $0.count) }
        if n <= 0 { break }
        output += chunk[0..<n]
    }
    close(pipe[0])
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    return ((status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F), String(decoding: output, as: UTF8.self))
}

/// Runs `body(0..<count)` on `count` threads of their own, all at once (DispatchQueue's
/// concurrentPerform runs only as many at a time as there are cores), and waits for them.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let done = DispatchGroup()
    for i in 0..<count {
        done.enter()
        let thread = Thread {
            body(i)
            done.leave()
        }
        thread.start()
    }
    done.wait()
}
