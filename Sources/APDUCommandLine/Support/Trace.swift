// `--trace`, `--show-secrets` and `--record`: the observer every APDU exchange goes through.
import ArgumentParser
import Dispatch
import FoundationEssentials
import Glibc
import ISO7816

/// `--trace` and `--show-secrets`.
package struct TraceOptions: ParsableArguments {
    package init() {}
    @Flag(help: "Write every physical APDU and response, with timing, to stderr.")
    package var trace = false

    @Flag(help: "Show PINs (VERIFY, CHANGE REFERENCE DATA, RESET RETRY COUNTER data), tag passwords and passport access cryptograms instead of redacting them.")
    package var showSecrets = false

    @Option(help: ArgumentHelp("Record the session (reader, ATR, every command and response with timing) as JSON Lines, for 'apdu emulate --replay'. Secrets are redacted.", valueName: "file"))
    package var record: String?

    /// Opens the recording before anything connects (ArgumentParser validates option groups
    /// before `run`).
    package func validate() throws {
        if let record {
            do { try Recording.start(path: record) } catch let failure as Failure { throw ValidationError(failure.message) }
        }
    }

    /// The observer for an `APDUTransport`: `--trace` and `--record`; nil without either.
    package var observer: (@Sendable (Exchange) -> Void)? {
        let show = showSecrets
        let tracer = traceObserver
        guard record != nil else { return tracer }
        return { @Sendable exchange in
            Recording.record(exchange, showSecrets: show)
            tracer?(exchange)
        }
    }

    private var traceObserver: (@Sendable (Exchange) -> Void)? {
        guard trace else { return nil }
        let show = showSecrets
        return { @Sendable exchange in
            let micro = Double(exchange.duration.components.attoseconds) / 1e12 + Double(exchange.duration.components.seconds) * 1e6
            let ms = (micro / 10).rounded() / 100
            let note = exchange.purpose == .command ? "" : " [\(exchange.purpose.rawValue)]"
            var text = "trace: > \(Redaction.hex(exchange, showSecrets: show))\(note)\n"
            text += exchange.response.isEmpty
                ? "trace: < (no answer) \(ms) ms\n"
                : "trace: < \(Redaction.responseHex(exchange, showSecrets: show)) (\(ms) ms)\n"
            Terminal.writeError(text)
        }
    }
}
