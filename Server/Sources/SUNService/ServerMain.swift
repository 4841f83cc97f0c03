// The service started from its configuration: keys, counter store, routes and key reloads,
// run until SIGTERM or SIGINT; start-up failures carry their exit code.
import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import SUN
import SUNStore

/// A start-up failure: a one-line message and the exit code documented in docs/sun-service.md.
public struct StartError: Error, CustomStringConvertible {
    public var message: String
    public var exitCode: Int32
    public var description: String { message }
    public init(_ message: String, exitCode: Int32) {
        self.message = message
        self.exitCode = exitCode
    }
}

/// Everything the command line decides.
public struct ServerConfiguration: Sendable {
    public var host = "127.0.0.1"
    public var port = 8424
    public var keyFile: String
    /// A SQLite file path, or a postgres:// URL.
    public var database = "sun-counters.sqlite"
    /// The URL template of groups without their own (`--template`): which parameters carry what.
    public var template = SUNTemplate.common
    public var sqliteDurability: SQLiteCounterStore.Durability = .normal
    public var storeTimeout: Duration = .seconds(2)
    public var databaseWait: Duration = .seconds(30)
    public var options = ServiceOptions()

    public init(keyFile: String) { self.keyFile = keyFile }
}

/// Starts the service and runs it until SIGTERM or SIGINT, then finishes the requests in
/// flight and returns.
public enum SUNServer {
    public static func run(_ configuration: ServerConfiguration, logger: Logger, onListening: @escaping @Sendable (String) -> Void) async throws {
        let keys: KeyRing
        do {
            keys = try KeyRing.load(path: configuration.keyFile)
        } catch {
            throw StartError(error.message, exitCode: error.kind == .missing ? 66 : 65)
        }
        checkPermissions(configuration.keyFile, logger: logger)
        warnAboutFactoryKeys(keys, logger: logger)
        try checkRedirectKeys(keys, options: configuration.options, logger: logger)
        let metrics = ServiceMetrics()
        var services: [any Service] = []
        var migrate: (@Sendable () async throws -> Void)?
        let store: any TapCounterStore
        do {
            if configuration.database.hasPrefix("postgres://") || configuration.database.hasPrefix("postgresql://") {
                let postgres = try PostgresTapStore(url: configuration.database, timeout: configuration.storeTimeout, logger: logger)
                services.append(postgres.client)
                let wait = configuration.databaseWait
                migrate = { try await postgres.migrate(wait: wait) }
                store = postgres
            } else {
                store = try SQLiteTapStore(path: configuration.database, durability: configuration.sqliteDurability)
            }
        } catch {
            throw StartError(error.detail, exitCode: 69)
        }
        let verifier = Verifier(keys: keys, store: store, metrics: metrics, defaultTemplate: configuration.template)
        services.append(KeyReloader(path: configuration.keyFile, verifier: verifier, logger: logger, options: configuration.options))
        let routes = ServiceRoutes(verifier: verifier, options: configuration.options)
        var app = Application(
            router: routes.router(),
            server: .http1(configuration: routes.http1Configuration()),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "apdu-sun-server"),
            onServerRunning: { channel in
                let address = channel.localAddress
                onListening("\(address?.ipAddress ?? configuration.host):\(address?.port ?? configuration.port)")
            },
            logger: logger
        )
        app.addServices(services)
        if let migrate {
            app.beforeServerStarts {
                do { try await migrate() } catch let error as StoreUnavailable {
                    throw StartError(error.detail, exitCode: 69)
                }
            }
        }
        logger.notice("starting", metadata: [
            "store": "\(store.displayName)", "groups": "\(keys.groups.keys.sorted().joined(separator: ","))",
            "default_group": "\(keys.defaultGroup ?? "-")",
        ])
        var lifecycle = ServiceGroupConfiguration(services: [app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        // Requests in flight get this long to finish (each is bounded by --store-timeout anyway);
        // within systemd's TimeoutStopSec of 30 s.
        lifecycle.maximumGracefulShutdownDuration = .seconds(20)
        lifecycle.maximumCancellationDuration = .seconds(5)
        let group = ServiceGroup(configuration: lifecycle)
        try await group.run()
        logger.notice("stopped")
    }

    /// A signed redirect needs a key for every verdict: each group's own or the file's, and one
    /// for verdicts that name no group. The unsigned one is warned about: anyone can type it.
    public static func checkRedirectKeys(_ keys: KeyRing, options: ServiceOptions, logger: Logger) throws(StartError) {
        guard options.redirect != nil else { return }
        if options.redirectUnsigned {
            logger.warning("--redirect-unsigned: the landing page gets valid=1 in a query anyone can type; it cannot tell a real verdict from a forged one. Sign it: give the key file a redirectKey and drop --redirect-unsigned")
            return
        }
        for name in keys.groups.keys.sorted() where keys.redirectKey(group: name) == nil {
            throw StartError("--redirect signs each verdict: the key file needs \"redirectKey\" (64 to 128 hex digits), for all groups or in group \"\(name)\"", exitCode: 65)
        }
        guard keys.redirectKey(group: nil) != nil else {
            throw StartError("--redirect signs each verdict: the key file needs a top-level \"redirectKey\" (or one in its default group) for taps that name no group", exitCode: 65)
        }
    }

    /// A warning for each group with an all-zero key: anyone can make taps it accepts.
    static func warnAboutFactoryKeys(_ keys: KeyRing, logger: Logger) {
        for group in keys.groups.values.sorted(by: { $0.name < $1.name }) where group.usesFactoryKey {
            logger.warning("a key of this group is the factory key (all zero): anyone can make taps it accepts", metadata: ["group": "\(group.name)"])
        }
    }

    /// Warns when the key file can be read by others than its owner and group.
    static func checkPermissions(_ path: String, logger: Logger) {
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & 0o004 != 0 {
            logger.warning("the key file can be read by every user; chmod 640 it", metadata: ["file": "\(path)"])
        }
    }
}
