import ArgumentParser
import Foundation
import ISO7816

/// `--trace` and `--show-secrets`.
struct TraceOptions: ParsableArguments {
    @Flag(help: "Write every physical APDU and response, with timing, to stderr.")
    var trace = false

    @Flag(help: "Show PINs (VERIFY, CHANGE REFERENCE DATA, RESET RETRY COUNTER data) instead of redacting them.")
    var showSecrets = false

    /// The observer for an `APDUTransport`, or nil without `--trace`.
    var observer: (@Sendable (Exchange) -> Void)? {
        guard trace else { return nil }
        let show = showSecrets
        return { @Sendable exchange in
            let micro = Double(exchange.duration.components.attoseconds) / 1e12 + Double(exchange.duration.components.seconds) * 1e6
            let ms = (micro / 10).rounded() / 100
            let note = exchange.purpose == .command ? "" : " [\(exchange.purpose.rawValue)]"
            var text = "trace: > \(Redaction.hex(exchange.command, showSecrets: show))\(note)\n"
            text += exchange.response.isEmpty
                ? "trace: < (no answer) \(ms) ms\n"
                : "trace: < \(Hex.encode(exchange.response, separator: " ")) (\(ms) ms)\n"
            FileHandle.standardError.write(Data(text.utf8))
        }
    }
}

/// PIN-bearing commands have their data hidden in traces, JSON and messages.
enum Redaction {
    /// VERIFY, CHANGE REFERENCE DATA, RESET RETRY COUNTER (ISO 7816-4), interindustry or not.
    static let secretInstructions: Set<UInt8> = [0x20, 0x21, 0x24, 0x2C]

    static func isSecret(_ command: [UInt8]) -> Bool {
        command.count > 5 && secretInstructions.contains(command[1])
    }

    /// Spaced hex of a command, its data field replaced by `**` per byte when it carries a secret.
    static func hex(_ command: [UInt8], showSecrets: Bool, separator: String = " ") -> String {
        guard !showSecrets, isSecret(command), let parsed = try? CommandAPDU(bytes: command) else {
            return Hex.encode(command, separator: separator)
        }
        let headerLength = parsed.isExtended ? 7 : 5
        let dataEnd = headerLength + parsed.data.count
        let head = Hex.encode(command.prefix(headerLength), separator: separator)
        let hidden = Array(repeating: "**", count: parsed.data.count).joined(separator: separator)
        let tail = command.count > dataEnd ? separator + Hex.encode(command[dataEnd...], separator: separator) : ""
        return head + separator + hidden + tail
    }
}
