// The key file re-read on SIGHUP; a file that does not load whole leaves the keys in use.
import Logging
import ServiceLifecycle
import UnixSignals

/// Re-reads the key file on SIGHUP. A file that does not load whole leaves the keys in use as
/// they were (logged, counted in `sun_key_reload_failures_total`); the message never holds a key.
public struct KeyReloader: Service {
    let path: String
    let verifier: Verifier
    let logger: Logger
    /// To check a new file's redirect keys as at start.
    let options: ServiceOptions?

    public init(path: String, verifier: Verifier, logger: Logger, options: ServiceOptions? = nil) {
        self.options = options
        self.path = path
        self.verifier = verifier
        self.logger = logger
    }

    public func run() async throws {
        for await _ in await UnixSignalsSequence(trapping: .sighup).cancelOnGracefulShutdown() {
            reload()
        }
    }

    public func reload() {
        do {
            let keys = try KeyRing.load(path: path)
            if let options {
                do { try SUNServer.checkRedirectKeys(keys, options: options, logger: logger) } catch {
                    verifier.metrics.keyReloadFailures.increment()
                    logger.error("keys not reloaded; the previous keys stay in use", metadata: ["error": "\(error.message)"])
                    return
                }
            }
            verifier.replaceKeys(keys)
            verifier.metrics.keyReloads.increment()
            logger.notice("keys reloaded", metadata: ["file": "\(path)", "groups": "\(keys.groups.keys.sorted().joined(separator: ","))"])
            SUNServer.warnAboutFactoryKeys(keys, logger: logger)
        } catch {
            verifier.metrics.keyReloadFailures.increment()
            logger.error("keys not reloaded; the previous keys stay in use", metadata: ["error": "\(error.message)"])
        }
    }
}
