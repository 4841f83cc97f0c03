// `apdu script`: a scriptor-format APDU script run with its expected status words and tag
// frames. A core command: `apdu` runs a plain APDU script itself (no second process, no tag
// family loaded) and hands one with `tag` lines to `apdu-tags`, which holds the raw paths.
import ArgumentParser
import CardReaders
import FoundationEssentials
import Glibc
import ISO7816
import PCSC

extension APDUCommand {
    package struct Script: ParsableCommand {
        package static let configuration = CommandConfiguration(
            commandName: "script",
            abstract: "Run a scriptor-format APDU script, checking optional expected status words.",
            discussion: """
                pcsc-tools scriptor scripts run unchanged: '#' comments, 'reset', '\\' continuation, \
                'exit'. Add '=> 9000' (or '=> 9000,61xx') after an APDU to stop with exit 1 on any \
                other status word. 'tag HEX [=> data|ack|nak|none]' sends a tag's own command through the \
                reader's raw path (as apdu transceive); a script with such lines runs in one transaction. \
                '-' reads the script from standard input.
                """)

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions
        @OptionGroup var allowlist: AllowlistOptions

        @Flag(help: "Send exactly the script's bytes: no GET RESPONSE, no Le correction.")
        var raw = false

        @Flag(help: "Go on after a status word mismatch (still exits 1).")
        var keepGoing = false

        @Argument(help: ArgumentHelp("The script file, or - for standard input.", valueName: "file"))
        var file: String

        package init() {}

        /// The script, and what was read from standard input (for `-`), to hand on with it.
        func load() throws -> (script: APDUScript, standardInput: [UInt8]?) {
            let text: String
            var standardInput: [UInt8]?
            if file == "-" {
                guard let input = StandardStream.standardInput.readToEnd() else { throw Failure(.usage, "cannot read the script from standard input") }
                standardInput = input
                text = TextInput.normalized(input)
            } else {
                guard let data = FileManager.default.contents(atPath: file) else {
                    throw Failure(.usage, "cannot read script '\(Terminal.safe(file))'")
                }
                text = TextInput.normalized(data)
            }
            let script: APDUScript
            do { script = try APDUScript(parsingNormalized: text) } catch { throw Failure(.badData, "\(Terminal.safe(file)): \(error)") }
            // A script with nothing to send is a mistake (an empty file, everything commented
            // out, the wrong file), never a silent success.
            guard !script.items.isEmpty else {
                throw Failure(.badData, "\(Terminal.safe(file)): no APDU to send (the script is empty or all comments)")
            }
            return (script, standardInput)
        }

        package func run() throws {
            // Thousands of lines: gathered into few writes when nobody watches them live.
            Terminal.batch()
            try reportingFailures {
                let (script, standardInput) = try load()
                // The script stays allocated to the end of the process, which ends with it:
                // freeing thousands of lines one by one costs more than reading them (issue 50).
                _ = Unmanaged.passRetained(KeptToExit(script))
                let hasTagSteps = script.items.contains { if case .tag = $0 { return true } else { return false } }
                guard !hasTagSteps || ScriptTagLines.open != nil else {
                    // Tag lines need a family's raw path: `apdu-tags` runs the script, nothing sent here.
                    FamilyDoor.run(CommandLine.arguments, standardInput: standardInput)
                }
                let policy = try allowlist.policy()
                if let policy {
                    for case let .apdu(encoded, _, line) in script.items {
                        if let aid = policy.refusal(forEncoded: encoded) {
                            throw Failure(.refused, "line \(line): SELECT of AID \(aid.hexString) refused: not in the allowlist")
                        }
                    }
                }
                // Read once: an option's property wrapper costs more per read than the rest of a
                // line's formatting.
                let json = output.json, showSecrets = traceOptions.showSecrets, keepGoing = self.keepGoing
                var lines = ExchangeLines(showSecrets: showSecrets)
                var steps: [JSON] = []
                var mismatches: [String] = []
                let reader = try readerOptions.withCard(transaction: hasTagSteps) { reader, card in
                let transport = APDUTransport(channel: PCSCChannel(card: card), policy: TransmissionPolicy(raw: raw),
                                              selectPolicy: policy, observer: traceOptions.observer)
                // The raw path, opened at the first tag line; its session ends before a reset and at the end.
                var commands: (any ScriptTagChannel)?
                defer { commands?.end() }
                for step in script.items {
                    switch step {
                    case let .tag(frame, expect, line):
                        guard let open = ScriptTagLines.open else { throw Failure(.unavailable, "line \(line): tag lines run in \(FamilyDoor.executableName)") }
                        if commands == nil { commands = try open(transport, reader) }
                        let answer = try commands!.transceive(frame, showSecrets: showSecrets)
                        let ok = expect.map { $0.contains(answer.kind) } ?? true
                        if json {
                            var members = answer.json
                            members.insert(("line", .int(line)), at: 0)
                            if let expect {
                                members.append(("expected", .array(expect.map { .string($0.rawValue) })))
                                members.append(("ok", .bool(ok)))
                            }
                            steps.append(.object(members))
                        } else {
                            Terminal.print("tag> " + answer.frame)
                            Terminal.print("tag< " + answer.text + (ok ? "" : "  " + Style.error.paint("MISMATCH")))
                        }
                        if !ok {
                            mismatches.append("line \(line): the tag answered \(answer.summary); expected \((expect ?? []).map(\.rawValue).joined(separator: " or "))")
                            if !keepGoing { break }
                        }
                    case let .reset(line):
                        commands?.end()
                        commands = nil
                        try card.reconnect(initialization: .reset)
                        if json { steps.append(.object([("line", .int(line)), ("reset", .bool(true))])) }
                        else { Terminal.print("reset") }
                    case let .apdu(encoded, expect, line):
                        let response: ResponseAPDU
                        do {
                            response = try transport.send(encoded: encoded)
                        } catch {
                            // pcscd refuses, unsent, the first APDU after another program reset the
                            // card. Resync the handle and stop: whatever the earlier lines set up
                            // (selected application, verified PIN) is gone, and replaying them
                            // silently could repeat writes.
                            guard let pcsc = error as? PCSCError, pcsc == .resetCard else { throw error }
                            let resynced = (try? card.reconnect(initialization: .leave)) != nil
                            throw Failure(.ioError, "line \(line): the card was reset by another program before this APDU, which was not sent; "
                                + (resynced ? "reconnected, but " : "") + "the card's state from the earlier lines is gone, so the script stops here (nothing was replayed)")
                        }
                        let sw = response.statusWord
                        let ok = expect.map { $0.contains { $0.matches(sw) } } ?? true
                        if json {
                            let shown = Redaction.hex(encoded, showSecrets: showSecrets, separator: "")
                            guard case var .object(members) = ExchangeJSON.make(command: shown, redacted: shown != encoded.hexString, response: response) else { continue }
                            members.insert(("line", .int(line)), at: 0)
                            if let expect {
                                members.append(("expected", .array(expect.map { .string($0.description) })))
                                members.append(("ok", .bool(ok)))
                            }
                            steps.append(.object(members))
                        } else {
                            lines.print(command: encoded, response: response, mismatch: !ok)
                        }
                        if !ok {
                            let wanted = (expect ?? []).map(\.description).joined(separator: " or ")
                            mismatches.append("line \(line): answered \(sw) (\(sw.meaning.text)); expected \(wanted)")
                            if !keepGoing { break }
                        }
                    }
                    if !mismatches.isEmpty && !keepGoing { break }
                }
                return reader
                }
                if output.json {
                    Terminal.print(JSON.object([("reader", .string(reader)), ("steps", .array(steps)),
                                                ("ok", .bool(mismatches.isEmpty))]).serialized)
                }
                if !mismatches.isEmpty {
                    throw Failure(.unexpected, mismatches.joined(separator: "\n"))
                }
            }
        }
    }
}
