// `apdu readers`: each reader, whether a card is present, its ATR and protocol.
import ArgumentParser
import ISO7816
import PCSC

extension APDUCommand {
    package struct Readers: ParsableCommand {
        package init() {}
        package static let configuration = CommandConfiguration(
            commandName: "readers",
            abstract: "List readers, whether a card is present, its ATR and protocol.")

        @OptionGroup package var output: OutputOptions

        package func run() throws {
            try reportingFailures {
                let context = try Context()
                let names = try context.readers()
                var states = names.map { ReaderState(reader: $0) }
                if !states.isEmpty { try context.statusChange(&states, timeout: .zero) }
                let rows = states.enumerated().map { index, state in
                    Row(index: index, state: state, protocols: protocolOf(state, context))
                }
                if output.json {
                    Terminal.print(JSON.object([("readers", .array(rows.map(\.json)))]).serialized)
                    return
                }
                if rows.isEmpty {
                    Terminal.print("no readers")
                    return
                }
                for row in rows { Terminal.print(row.text) }
            }
        }

        /// The protocol a shared connection negotiates; nil without a card or when it is in
        /// exclusive use. Connecting with LEAVE_CARD changes nothing on the card.
        package func protocolOf(_ state: ReaderState, _ context: Context) -> Protocols? {
            guard state.eventState.contains(.present), !state.eventState.contains(.mute) else { return nil }
            guard let card = try? context.connect(reader: state.reader) else { return nil }
            defer { try? card.disconnect() }
            return card.activeProtocol
        }

        package struct Row {
            package var index: Int
            package var state: ReaderState
            package var protocols: Protocols?

            package var present: Bool { state.eventState.contains(.present) }

            package var json: JSON {
                .object([
                    ("index", .int(index)),
                    ("name", .string(state.reader)),
                    ("cardPresent", .bool(present)),
                    ("atr", present ? .hex(state.atr) : .null),
                    ("protocol", protocols.map { .string($0.name) } ?? .null),
                    ("state", .array(state.eventState.subtracting(.changed).names.map(JSON.string))),
                ])
            }

            package var text: String {
                var line = "\(index)  " + Style.name.paint(Terminal.safe(state.reader))
                if present {
                    line += "  card  ATR \(Hex.encode(state.atr, separator: " "))"
                    if let protocols { line += "  \(protocols.name)" }
                    if state.eventState.contains(.exclusive) { line += "  (in exclusive use)" }
                    if state.eventState.contains(.mute) { line += "  (mute)" }
                } else {
                    line += "  " + Style.warning.paint("no card")
                }
                return line
            }
        }
    }
}
