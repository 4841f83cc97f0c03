// `apdu reader-control`: the LED and buzzer of ACS readers, no card needed.
import ArgumentParser
import CardReaders
import ISO7816

extension APDUCommand {
    package struct ReaderControlCommand: ParsableCommand {
        package init() {}
        package static let configuration = CommandConfiguration(
            commandName: "reader-control",
            abstract: "LED and buzzer of ACS readers (ACR122U, ACR1252U) through escape commands; no card needed.",
            discussion: """
                apdu reader-control --beep-on-card off  silences the beep an ACR122U gives on every tag. \
                apdu reader-control --signal green       blinks the green LED with a short beep. Escapes go through \
                SCardControl(SCARD_CTL_CODE(3500)) on a direct connection; when the ccid driver refuses them, the \
                message says how to allow them.
                """)

        @Option(name: .shortAndLong, help: ArgumentHelp("Reader: exact name, index or unique part of the name (default: the only reader).", valueName: "reader"))
        package var reader: String?

        @Option(help: ArgumentHelp("Turn the beep on card detection on or off.", valueName: "on|off"))
        package var beepOnCard: String?

        @Option(help: ArgumentHelp("Blink an LED with a beep: red, green or both.", valueName: "led"))
        package var signal: String?

        @Flag(help: "With --signal: no beep.")
        package var quiet = false

        @OptionGroup package var output: OutputOptions

        package func validate() throws {
            if beepOnCard == nil && signal == nil { throw ValidationError("give --beep-on-card on|off or --signal red|green|both") }
            if let b = beepOnCard, !["on", "off"].contains(b) { throw ValidationError("--beep-on-card takes on or off") }
            if let s = signal, !["red", "green", "both"].contains(s) { throw ValidationError("--signal takes red, green or both") }
        }

        package func run() throws {
            try reportingFailures {
                var commands: [[UInt8]] = []
                if let b = beepOnCard { commands.append(ReaderControl.beepOnCardCommand(b == "on")) }
                if let s = signal {
                    commands.append(ReaderControl.signalCommand(red: s != "green", green: s != "red", buzzer: quiet ? 0 : 1))
                }
                for command in commands {
                    let (reader, answer) = try ReaderControl.escape(command, reader: reader ?? readerFromEnvironment)
                    let ok = answer.suffix(2) == [0x90, 0x00] || (answer.count == 2 && answer.first == 0x90)
                    if output.json {
                        Terminal.print(JSON.object([("reader", .string(reader)), ("command", .hex(command)), ("answer", .hex(answer)), ("ok", .bool(ok))]).serialized)
                    } else {
                        Terminal.print("\(Terminal.safe(reader)): \(Hex.encode(command, separator: " ")) → \(Hex.encode(answer, separator: " "))")
                    }
                    if !ok { throw Failure(.unexpected, "the reader answered \(answer.hexString) to \(command.hexString); it may not be an ACS reader") }
                }
            }
        }

        package var readerFromEnvironment: String? { ReaderOptions.environmentReader }
    }
}
