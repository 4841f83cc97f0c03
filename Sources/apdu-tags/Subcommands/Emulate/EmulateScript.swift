// `apdu emulate script FILE`: a card that answers from a command→response table.
import APDUCommandLine
import ArgumentParser
import FoundationEssentials
import VirtualCard

struct EmulateScript: EmulateForm {
    static let configuration = CommandConfiguration(
        commandName: "script",
        abstract: "A card that answers from a command→response table (docs/testing-without-hardware.md).")

    @Argument(help: ArgumentHelp("The table: lines 'COMMAND => RESPONSE' in hex, '#' comments, an 'atr' line.", valueName: "file"))
    var file: String

    @OptionGroup var connection: EmulatorConnection

    func validate() throws {
        if !FileManager.default.isReadableFile(atPath: file) { throw ValidationError("cannot read '\(Terminal.safe(file))'") }
    }

    func emulatedCard() throws -> (card: any EmulatedCard, description: String) {
        try Self.card(file)
    }

    /// The scripted card in `file` (`apdu emulate script` and the old `--script`).
    static func card(_ file: String) throws -> (card: any EmulatedCard, description: String) {
        let text: String
        do { text = try String(contentsOfFile: file, encoding: .utf8) } catch {
            throw Failure(.badData, "cannot read '\(Terminal.safe(file))' as UTF-8 text")
        }
        do { return (try ScriptedCard(script: text), "scripted card from \(file)") } catch { throw Failure(.badData, "\(error)") }
    }
}
