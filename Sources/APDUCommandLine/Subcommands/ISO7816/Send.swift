// `apdu send`: APDUs sent in order on one connection, each status word explained; and the JSON
// shape of an exchange the APDU commands share.
import ArgumentParser
import CardReaders
import Dispatch
import FoundationEssentials
import Glibc
import ISO7816
import PCSC

extension APDUCommand {
    package struct Send: ParsableCommand {
        package init() {}
        package static let configuration = CommandConfiguration(
            commandName: "send",
            abstract: "Send APDUs in order on one connection and explain each status word.",
            discussion: """
                Hex may use either case, spaces or colons: apdu send '00 A4 04 00 07 A0000000031010'. \
                GET RESPONSE (61xx), a wrong Le (6Cxx) and command chaining are handled unless --raw. \
                With --scp 02|03 and the keys of apdu gp (--key, --enc/--mac/--dek, --test-keys, --key-version, \
                --diversify, --level), the APDUs go through a GlobalPlatform secure channel with the card's Security \
                Domain, the card's cryptogram checked before EXTERNAL AUTHENTICATE: see apdu send --scp 03 --help.
                """)

        @OptionGroup package var readerOptions: ReaderOptions
        @OptionGroup package var output: OutputOptions
        @OptionGroup package var traceOptions: TraceOptions
        @OptionGroup package var allowlist: AllowlistOptions

        @Option(help: ArgumentHelp("Status words that count as success (comma-separated, e.g. 9000,6283); any other exits 1.", valueName: "SW,..."))
        package var expect: String?

        @Flag(help: "Send exactly these bytes: no GET RESPONSE, no Le correction, no chaining.")
        package var raw = false

        @Argument(help: ArgumentHelp("Command APDUs in hex.", valueName: "hex"))
        package var apdus: [String] = []

        /// The APDUs in order: those the parser took, then those set aside before it ran
        /// (`LongArgumentLists`: thousands of them, which it would take quadratic time over).
        private var allAPDUs: [String] { LongArgumentLists.sendTail.isEmpty ? apdus : apdus + LongArgumentLists.sendTail }

        /// The encodings `validate` made, for `run` to send (each APDU decoded once, issue 50),
        /// with the words they came from: `run` takes them only for the same words.
        nonisolated(unsafe) private static var validated: (words: [String], encodings: [[UInt8]])?

        package func validate() throws {
            let apdus = allAPDUs
            if apdus.isEmpty { throw ValidationError("give at least one APDU in hex") }
            var encodings: [[UInt8]] = []
            encodings.reserveCapacity(apdus.count)
            for (i, text) in apdus.enumerated() {
                do { encodings.append(try CommandAPDU.encoding(hex: text)) } catch {
                    throw ValidationError("APDU \(i + 1) ('\(Terminal.safe(text))'): \(error)")
                }
            }
            _ = try parseExpectedWords(expect)
            Self.validated = (apdus, encodings)
        }

        /// Each APDU as its encoding, sent as it is: a command is made only where the transport
        /// needs one (issue 50).
        private func encodings() throws(CommandAPDU.ParseError) -> [[UInt8]] {
            let apdus = allAPDUs
            if let validated = Self.validated, validated.words == apdus { return validated.encodings }
            return try apdus.map { text throws(CommandAPDU.ParseError) in try CommandAPDU.encoding(hex: text) }
        }

        package func run() throws {
            try reportingFailures {
                let encodings = try encodings()
                // Kept to the end of the process, which ends with them.
                _ = Unmanaged.passRetained(KeptToExit(encodings))
                let expected = try parseExpectedWords(expect)
                let policy = try allowlist.policy()
                // Refuse the whole batch before connecting: nothing reaches the card.
                if let policy {
                    for (i, encoded) in encodings.enumerated() {
                        if let aid = policy.refusal(forEncoded: encoded) {
                            throw Failure(.refused, "APDU \(i + 1): SELECT of AID \(aid.hexString) refused: not in the allowlist")
                        }
                    }
                }
                var exchanges: [JSON] = []
                var unexpected: (Int, StatusWord)?
                let reader = try readerOptions.withCard(transaction: true) { reader, card in
                let transport = APDUTransport(
                    channel: PCSCChannel(card: card), policy: TransmissionPolicy(raw: raw),
                    selectPolicy: policy, observer: traceOptions.observer)
                    let json = output.json
                    var lines = ExchangeLines(showSecrets: traceOptions.showSecrets)
                    for (i, encoded) in encodings.enumerated() {
                        let response = try transport.send(encoded: encoded)
                        let sw = response.statusWord
                        if json {
                            let shown = Redaction.hex(encoded, showSecrets: traceOptions.showSecrets, separator: "")
                            exchanges.append(ExchangeJSON.make(command: shown, redacted: shown != encoded.hexString, response: response))
                        } else {
                            lines.print(command: encoded, response: response)
                        }
                        if let expected, !expected.contains(sw), unexpected == nil {
                            unexpected = (i + 1, sw)
                        }
                    }
                    return reader
                }
                if output.json {
                    Terminal.print(JSON.object([("reader", .string(reader)), ("exchanges", .array(exchanges))]).serialized)
                }
                if let (index, sw) = unexpected {
                    let wanted = (expected ?? []).map(\.description).joined(separator: " or ")
                    throw Failure(.unexpected, "APDU \(index) answered \(sw) (\(sw.meaning.text)); expected \(wanted)")
                }
            }
        }
    }
}

extension APDUCommand.Send {
    /// Whether these arguments (`send` first) ask for a secure channel (`--scp 03`, `--scp=03`):
    /// that `send` runs in `apdu-tags`, which holds the GlobalPlatform module (`apdu` hands it
    /// over before parsing, as the key options are that module's). Words after `--` are APDUs.
    package static func asksForSecureChannel(_ arguments: [String]) -> Bool {
        guard arguments.first == "send" else { return false }
        for word in arguments.dropFirst() {
            // Thousands of APDUs may follow: a word that is no option is passed over at its first byte.
            guard word.utf8.first == UInt8(ascii: "-") else { continue }
            if word == "--" { return false }
            if word == "--scp" || word.hasPrefix("--scp=") { return true }
        }
        return false
    }
}

/// `--expect 9000,6283`
package func parseExpectedWords(_ text: String?) throws -> [StatusWord]? {
    guard let text else { return nil }
    return try text.split(separator: ",").map { part in
        guard let sw = StatusWord(hex: part.trimmingWhitespace) else {
            throw ValidationError("--expect: '\(Terminal.safe(String(part)))' is not a status word like 9000")
        }
        return sw
    }
}

/// The JSON and text shapes of one logical exchange, shared by send, select and script.
package enum ExchangeJSON {
    package static func make(command: String, redacted: Bool, response: ResponseAPDU) -> JSON {
        let sw = response.statusWord
        var members: [(String, JSON)] = [
            ("command", .string(command)),
            ("response", .hex(response.bytes)),
            ("data", .hex(response.data)),
            ("sw", .string(sw.description)),
            ("category", .string(sw.meaning.category.rawValue)),
            ("meaning", .string(sw.meaning.text)),
        ]
        if redacted { members.append(("redacted", .bool(true))) }
        return .object(members)
    }

    package static func spaced(_ response: ResponseAPDU) -> String {
        Hex.encode(response.bytes, separator: " ")
    }
}

/// The text of one logical exchange, shared by send and script: `> ` and the command's hex (its
/// secrets as `**`), then `< `, the response's hex and `  (SW: meaning)`, painted. Written
/// straight into stdout's buffer with the annotation made once per status word: `apdu script`
/// prints thousands of these, and their cost is most of what it adds to pcscd's (issue 50).
package struct ExchangeLines {
    let showSecrets: Bool
    private var annotations: [StatusWord: [UInt8]] = [:]
    private var last: (word: StatusWord, annotation: [UInt8])?
    private static let mismatch = Array(("  " + Style.error.paint("MISMATCH")).utf8)

    package init(showSecrets: Bool) { self.showSecrets = showSecrets }

    /// Prints the exchange of the command `encoding` (its `bytes`); `mismatch` adds the painted
    /// `MISMATCH` of a script's expectation.
    package mutating func print(command encoding: [UInt8], response: ResponseAPDU, mismatch: Bool = false) {
        let sw = response.statusWord
        let annotation = annotation(sw)
        let tail = mismatch ? Self.mismatch : []
        guard showSecrets || !Redaction.isSecret(encoding) else {
            Terminal.print("> " + Redaction.hex(encoding) + "\n< " + ExchangeJSON.spaced(response) + String(decoding: annotation + tail, as: UTF8.self))
            return
        }
        // Both lines built on the stack and copied into stdout's buffer in one piece.
        let capacity = 3 * (encoding.count + response.data.count) + 8 + annotation.count + tail.count
        encoding.withUnsafeBufferPointer { command in
            response.data.withUnsafeBufferPointer { data in
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { line in
                    line[0] = UInt8(ascii: ">"); line[1] = UInt8(ascii: " ")
                    var o = Hex.write(command, separator: UInt8(ascii: " "), into: line, at: 2)
                    line[o] = UInt8(ascii: "\n"); line[o + 1] = UInt8(ascii: "<"); line[o + 2] = UInt8(ascii: " ")
                    o += 3
                    if !data.isEmpty {
                        o = Hex.write(data, separator: UInt8(ascii: " "), into: line, at: o)
                        line[o] = UInt8(ascii: " ")
                        o += 1
                    }
                    withUnsafeBytes(of: sw.rawValue.bigEndian) { word in
                        o = Hex.write(word.bindMemory(to: UInt8.self), separator: UInt8(ascii: " "), into: line, at: o)
                    }
                    // Copied whole (capacity counted them above), not byte by byte.
                    annotation.withUnsafeBufferPointer { piece in
                        if let from = piece.baseAddress { (line.baseAddress! + o).update(from: from, count: piece.count) }
                        o += piece.count
                    }
                    tail.withUnsafeBufferPointer { piece in
                        if let from = piece.baseAddress { (line.baseAddress! + o).update(from: from, count: piece.count) }
                        o += piece.count
                    }
                    let text = UnsafeBufferPointer(rebasing: line[0..<o])
                    Terminal.printLine { $0.append(contentsOf: text) }
                }
            }
        }
    }

    /// "  (9000: normal processing)", painted, made once per status word (a script's answers
    /// are mostly one word: the last is kept apart from the table).
    private mutating func annotation(_ sw: StatusWord) -> [UInt8] {
        if let last, last.word == sw { return last.annotation }
        let text = annotations[sw] ?? Array(("  (" + Style.of(sw).paint("\(sw): \(sw.meaning.text)") + ")").utf8)
        annotations[sw] = text
        last = (sw, text)
        return text
    }
}
