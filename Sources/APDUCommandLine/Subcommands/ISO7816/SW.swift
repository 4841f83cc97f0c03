// `apdu sw`: a status word explained, offline.
import ArgumentParser
import ISO7816

extension APDUCommand {
    package struct SW: ParsableCommand {
        package init() {}
        package static let configuration = CommandConfiguration(
            commandName: "sw", abstract: "Explain a status word (offline).")

        @OptionGroup package var output: OutputOptions

        @Argument(help: ArgumentHelp("The status word, e.g. 6A82 or '63 C2'.", valueName: "sw"))
        package var word: String

        package func validate() throws {
            if StatusWord(hex: word) == nil {
                throw ValidationError("'\(Terminal.safe(word))' is not a status word: give two bytes in hex, e.g. 9000")
            }
        }

        package func run() throws {
            let sw = StatusWord(hex: word)!
            let meaning = sw.meaning
            if output.json {
                Terminal.print(JSON.object([
                    ("sw", .string(sw.description)), ("sw1", .hex([sw.sw1])), ("sw2", .hex([sw.sw2])),
                    ("category", .string(meaning.category.rawValue)), ("meaning", .string(meaning.text)),
                ]).serialized)
            } else {
                Terminal.print(Style.of(sw).paint("\(sw): \(meaning.category.rawValue)") + ": \(meaning.text)")
            }
        }
    }
}
