// The apdu-sun-server command line: its options, read into a `ServerConfiguration`, and its
// exit codes.
import ArgumentParser
import Foundation
import NIOCore
import Logging
import SUNService
import SUN
import SUNStore

/// apdu-sun-server: verifies NTAG 424 DNA SUN taps over HTTP and refuses replays, with its
/// counters in SQLite (one instance) or PostgreSQL (many).
@main
struct SUNServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apdu-sun-server",
        abstract: "Verify NTAG 424 DNA SUN taps over HTTP, refusing replays.",
        discussion: """
            GET /?e=…&c=… (or /GROUP?…) answers {valid, uid, counter, fileData, code, reason}, or a page \
            to a browser (Accept: text/html): \
            200 valid, 403 invalid MAC or unusable message, 409 replay, 400 malformed, 404 unknown \
            group, 429 over the rate limit, 503 counter store unavailable. GET /healthz, GET /metrics \
            (Prometheus). SIGHUP re-reads the key file; SIGTERM finishes the requests in flight and stops.
            Exit codes: 0 stopped, 64 usage, 65 key file invalid, 66 key file missing, 69 counter \
            store unavailable or in use, 71 cannot listen. See docs/sun-service.md.
            """,
        version: "0.1.0"
    )

    @Option(help: "The address and port to listen on (port 0: any free port).")
    var listen = "127.0.0.1:8424"

    @Option(help: "The key file (JSON): tag groups and their SDM keys.")
    var keys: String

    @Option(help: "Where the counters are: a SQLite file (one instance; created on first start) or postgres://USER[:PASSWORD]@HOST[:PORT]/DB[?sslmode=disable|prefer|require] (many instances).")
    var database = "sun-counters.sqlite"

    @Option(help: "SQLite only: 'normal' syncs the log at checkpoints (a process crash loses nothing), 'full' syncs every accepted tap.")
    var sqliteSync = "normal"

    @Option(help: "The URL template the tags were provisioned with (as for `apdu ntag424 sdm --url`), for groups without a template of their own; default: the common names (e/picc_data, c/cmac/m, enc, uid + ctr).")
    var template: String?

    @Option(help: "Answer every verdict with a 302 to this URL, the verdict as a signed token (JWS HS256 under the key file's redirectKey) in its sun parameter.")
    var redirect: String?

    @Option(help: "Seconds a redirect's token is valid, 1 to 86400.")
    var redirectTtl = 300

    @Flag(help: "Put the verdict in the redirect's query unsigned (valid, uid, counter, code), as before: anyone can type it. Warned about at start.")
    var redirectUnsigned = false

    @Option(help: "A folder of page templates for browsers: page.html, and GROUP.html for one group; {{headline}}, {{uid}}, … are filled in HTML-escaped.")
    var pages: String?

    @Option(help: "Requests a second per client address, 0.001 to 1000000 (0: no limit).")
    var rateLimit: Double = 100

    @Option(help: "Requests a client address may send at once before the rate applies, 1 to 1000000.")
    var rateBurst: Double = 200

    @Option(help: "Take the client address from the last entry of this header (e.g. X-Forwarded-For behind a load balancer).")
    var clientAddressHeader: String?

    @Option(help: "The longest request URL accepted, in bytes.")
    var maxUrlBytes = 2048

    @Option(help: "Seconds a connection has to send a complete request head.")
    var requestTimeout = 10

    @Option(help: "Seconds the counter store has to answer before the request is answered 503.")
    var storeTimeout: Double = 2

    @Option(help: "Log format: json (one object a line) or text.")
    var logFormat = "json"

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical. Valid taps are logged at debug.")
    var logLevel = "info"

    func configuration() throws -> ServerConfiguration {
        var c = ServerConfiguration(keyFile: keys)
        guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]), (0...65535).contains(port) else {
            throw ValidationError("--listen: expected HOST:PORT, e.g. 127.0.0.1:8424")
        }
        c.host = String(listen[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        c.port = port
        c.database = database
        if let template {
            do { c.template = try SUNTemplate(url: template) } catch { throw ValidationError("--template: \(error.message)") }
        }
        guard let durability = SQLiteCounterStore.Durability(rawValue: sqliteSync) else {
            throw ValidationError("--sqlite-sync: expected normal or full")
        }
        c.sqliteDurability = durability
        if let redirect {
            guard redirect.hasPrefix("https://") || redirect.hasPrefix("http://") || redirect.hasPrefix("/") else {
                throw ValidationError("--redirect: expected an http(s) URL or a path")
            }
            c.options.redirect = redirect
        }
        guard (1...86400).contains(redirectTtl) else { throw ValidationError("--redirect-ttl: 1 to 86400 seconds") }
        c.options.redirectTTL = redirectTtl
        if redirectUnsigned {
            guard redirect != nil else { throw ValidationError("--redirect-unsigned goes with --redirect") }
            c.options.redirectUnsigned = true
        }
        if let pages {
            do { c.options.pages = try PageTemplates(directory: pages) } catch { throw ValidationError(error.message) }
        }
        guard rateLimit == 0 || RateLimiter.rates.contains(rateLimit) else {
            throw ValidationError("--rate-limit: 0 (no limit) or 0.001 to 1000000 requests a second")
        }
        guard RateLimiter.bursts.contains(rateBurst) else { throw ValidationError("--rate-burst: 1 to 1000000 requests") }
        c.options.rateLimit = rateLimit > 0 ? (rateLimit, rateBurst) : nil
        c.options.clientAddressHeader = clientAddressHeader
        guard (256...65536).contains(maxUrlBytes) else { throw ValidationError("--max-url-bytes: 256 to 65536") }
        c.options.maximumURLBytes = maxUrlBytes
        guard (1...300).contains(requestTimeout) else { throw ValidationError("--request-timeout: 1 to 300 seconds") }
        c.options.requestTimeout = .seconds(Int64(requestTimeout))
        guard storeTimeout > 0, storeTimeout <= 60 else { throw ValidationError("--store-timeout: more than 0, at most 60 seconds") }
        c.storeTimeout = .milliseconds(Int64(storeTimeout * 1000))
        return c
    }

    func run() async throws {
        let configuration = try configuration()
        guard let level = Logger.Level(rawValue: logLevel) else { throw ValidationError("--log-level: trace, debug, info, notice, warning, error or critical") }
        guard ["json", "text"].contains(logFormat) else { throw ValidationError("--log-format: json or text") }
        let json = logFormat == "json"
        LoggingSystem.bootstrap { label in
            if json { return JSONLogHandler(label: label, level: level) }
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "apdu-sun-server")
        do {
            try await SUNServer.run(configuration, logger: logger) { address in
                // One line on standard output, for scripts and tests that started it on port 0.
                writeLine(1, "apdu-sun-server: listening on \(address)")
            }
        } catch let error as StartError {
            fail(error.message, error.exitCode)
        } catch let error as IOError {
            fail("cannot listen on \(listen): \(error.description)", 71)
        } catch {
            fail("\(error)", 70)
        }
    }

    func fail(_ message: String, _ code: Int32) -> Never {
        writeLine(2, "apdu-sun-server: \(message)")
        Foundation.exit(code)
    }
}

/// One line, written whole to a file descriptor (no stdio buffering between processes).
func writeLine(_ fd: Int32, _ line: String) {
    var bytes = Array((line + "\n").utf8)[...]
    while !bytes.isEmpty {
        let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if n <= 0 { return }
        bytes = bytes.dropFirst(n)
    }
}
