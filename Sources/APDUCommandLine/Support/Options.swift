// The option groups most commands share: which reader, whether to wait, and the output format.
import ArgumentParser
import Dispatch
import FoundationEssentials
import Glibc

/// Which reader to use and whether to wait for a card.
package struct ReaderOptions: ParsableArguments {
    package init() {}
    @Option(name: .shortAndLong, help: ArgumentHelp(
        "Reader: exact name, index from 'apdu readers', or a unique part of the name. Default: $APDU_READER, else the only reader with a card.",
        valueName: "reader"))
    package var reader: String?

    @Option(help: ArgumentHelp("Wait up to this many seconds for a card instead of failing.", valueName: "seconds"))
    package var wait: Double?

    package func validate() throws {
        if let wait, !(wait >= 0 && wait <= 86_400) {
            throw ValidationError("--wait must be between 0 and 86400 seconds, got \(wait)")
        }
    }

    package var requestedReader: String? { reader ?? Self.environmentReader }

    package static var environmentReader: String? { ProcessInfo.processInfo.environment["APDU_READER"].flatMap { $0.isEmpty ? nil : $0 } }

    package var waitDuration: Duration? { wait.map { .milliseconds(Int64($0 * 1000)) } }
}

/// Output format.
package struct OutputOptions: ParsableArguments {
    package init() {}
    @Flag(help: "Print JSON for scripts (one document; one per line for streams).")
    package var json = false

    @Option(help: ArgumentHelp("Colour: auto (on a terminal, unless NO_COLOR is set), always or never.", valueName: "when"))
    package var color: ColorChoice = .auto

    /// Puts `--color` into effect for the whole command (ArgumentParser validates every option
    /// group before `run`).
    package func validate() throws {
        Style.choose(json ? .never : color)
    }
}
