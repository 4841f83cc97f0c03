// The floor under `apdu sw 9000` for Scripts/bench startup: a command-line tool built the same
// way (swift-argument-parser, a root command with subcommands, the `sw` subcommand's options)
// that does nothing but print the line. Not a product.
import ArgumentParser

@main
struct Floor: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "floor", subcommands: [SW.self, Other.self])

    struct Output: ParsableArguments {
        @Flag(help: "JSON.") var json = false
        @Option(help: "Colour.") var color: String = "auto"
    }

    struct SW: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "sw")
        @OptionGroup var output: Output
        @Argument(help: "The status word.") var word: String

        func run() {
            print(word == "9000" ? "9000: success: normal processing" : "\(word): ?")
        }
    }

    struct Other: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "other")
        @Option(help: "A reader.") var reader: String?
    }
}
