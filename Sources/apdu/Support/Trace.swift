import ArgumentParser
import Foundation
import ISO7816

/// `--trace` and `--show-secrets`.
struct TraceOptions: ParsableArguments {
    @Flag(help: "Write every physical APDU and response, with timing, to stderr.")
    var trace = false

    @Flag(help: "Show PINs (VERIFY, CHANGE REFERENCE DATA, RESET RETRY COUNTER data) and tag passwords instead of redacting them.")
    var showSecrets = false

    /// The observer for an `APDUTransport`, or nil without `--trace`.
    var observer: (@Sendable (Exchange) -> Void)? {
        guard trace else { return nil }
        let show = showSecrets
        return { @Sendable exchange in
            let micro = Double(exchange.duration.components.attoseconds) / 1e12 + Double(exchange.duration.components.seconds) * 1e6
            let ms = (micro / 10).rounded() / 100
            let note = exchange.purpose == .command ? "" : " [\(exchange.purpose.rawValue)]"
            var text = "trace: > \(Redaction.hex(exchange, showSecrets: show))\(note)\n"
            text += exchange.response.isEmpty
                ? "trace: < (no answer) \(ms) ms\n"
                : "trace: < \(Hex.encode(exchange.response, separator: " ")) (\(ms) ms)\n"
            FileHandle.standardError.write(Data(text.utf8))
        }
    }
}
