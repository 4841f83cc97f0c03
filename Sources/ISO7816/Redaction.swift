// Which commands carry a PIN or key, and their hex with those bytes shown as `**`.

/// Which commands carry a secret, and how to show them without it: for traces, recordings and
/// logs of what was sent.
public enum Redaction {
    /// VERIFY, CHANGE REFERENCE DATA, RESET RETRY COUNTER (ISO 7816-4 §11.5.6-§11.5.10), with
    /// the even and odd INS forms: their data field is a PIN, a PUK or a new reference value.
    public static let secretInstructions: Set<UInt8> = [0x20, 0x21, 0x24, 0x2C]

    /// Whether the command's data field is a secret: a PIN command, or PC/SC Part 3 LOAD KEYS
    /// (`FF 82`, a MIFARE Classic key for the reader's key slot).
    public static func isSecret(_ command: [UInt8]) -> Bool {
        command.count > 5 && (secretInstructions.contains(command[1]) || (command[0] == 0xFF && command[1] == 0x82))
    }

    /// Hex of a command, its data field replaced by `**` per byte when it carries a secret
    /// (so the length still shows).
    public static func hex(_ command: [UInt8], showSecrets: Bool = false, separator: String = " ") -> String {
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

    /// Hex of an exchange's response: its data shown as `**` per byte when the sender marked it
    /// secret (`Exchange.secretResponse`), the status word always as it is.
    public static func responseHex(_ exchange: Exchange, showSecrets: Bool = false, separator: String = " ") -> String {
        let r = exchange.response
        guard !showSecrets, exchange.secretResponse, r.count > 2 else { return Hex.encode(r, separator: separator) }
        let hidden = Array(repeating: "**", count: r.count - 2).joined(separator: separator)
        return hidden + separator + Hex.encode(r.suffix(2), separator: separator)
    }

    /// Hex of an exchange's command: its marked secret bytes (`Exchange.secretRange`) or the
    /// data of a PIN command shown as `**`.
    public static func hex(_ exchange: Exchange, showSecrets: Bool = false, separator: String = " ") -> String {
        guard !showSecrets, let range = exchange.secretRange?.clamped(to: 0..<exchange.command.count), !range.isEmpty else {
            return hex(exchange.command, showSecrets: showSecrets, separator: separator)
        }
        let c = exchange.command
        return [Hex.encode(c[..<range.lowerBound], separator: separator), Array(repeating: "**", count: range.count).joined(separator: separator),
                Hex.encode(c[range.upperBound...], separator: separator)].filter { !$0.isEmpty }.joined(separator: separator)
    }
}
