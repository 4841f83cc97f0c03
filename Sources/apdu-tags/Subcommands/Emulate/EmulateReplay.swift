// `apdu emulate replay FILE`: a card that answers as a recorded session did.
import APDUCommandLine
import ArgumentParser
import FoundationEssentials
import VirtualCard

extension ReplayCard.Order: ExpressibleByArgument {}

struct EmulateReplay: EmulateForm {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "A card that answers as a recording made with --record did: its ATR, its responses.")

    @Argument(help: ArgumentHelp("The recording (JSON Lines, as --record writes it).", valueName: "file"))
    var file: String

    @Option(help: ArgumentHelp("strict (the recorded commands in the recorded order; anything else gets 6F00) or by-command (any recorded command, its responses in turn).", valueName: "order"))
    var order: ReplayCard.Order = .strict

    @OptionGroup var connection: EmulatorConnection

    func emulatedCard() throws -> (card: any EmulatedCard, description: String) {
        try Self.card(file, order: order)
    }

    /// The replayed card (`apdu emulate replay` and the old `--replay`).
    static func card(_ file: String, order: ReplayCard.Order) throws -> (card: any EmulatedCard, description: String) {
        guard let bytes = FileManager.default.contents(atPath: file) else {
            throw Failure(.usage, "cannot read the recording '\(Terminal.safe(file))'")
        }
        let card: ReplayCard
        do { card = try ReplayCard(recording: [UInt8](bytes), order: order) } catch {
            throw Failure(.badData, "\(Terminal.safe(file)): \(error)")
        }
        return (card, "the recording \(file) (\(card.count) exchanges, \(order.rawValue)\(card.reader.map { ", made on \($0)" } ?? ""))")
    }
}
