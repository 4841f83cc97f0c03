// `apdu atr`: an ATR explained, given in hex or read from the card in a reader.
import ArgumentParser
import CardReaders
import Dispatch
import FoundationEssentials
import Glibc
import ISO7816
import PCSC

extension APDUCommand {
    package struct ATRCommand: ParsableCommand {
        package init() {}
        package static let configuration = CommandConfiguration(
            commandName: "atr",
            abstract: "Explain an ATR given in hex, or the ATR of the card in a reader.",
            discussion: "Names come from pcsc-tools' smartcard_list.txt when installed; nothing is looked up on the network.")

        @OptionGroup package var readerOptions: ReaderOptions
        @OptionGroup package var output: OutputOptions

        @Option(help: ArgumentHelp("The card-name list to use.", valueName: "file"))
        package var smartcardList = "/usr/share/pcsc/smartcard_list.txt"

        @Argument(help: ArgumentHelp("The ATR in hex; without it, the ATR of the card in the reader.", valueName: "hex"))
        package var hex: String?

        package func validate() throws {
            if let hex {
                do { _ = try ATR(hex: hex) } catch { throw ValidationError("\(error)") }
            }
        }

        package func run() throws {
            try reportingFailures {
                let atr: ATR
                var reader: String?
                if let hex {
                    atr = try ATR(hex: hex)
                } else {
                    let chosen = try ReaderSelection().chooseCard(readerOptions.requestedReader, wait: readerOptions.waitDuration)
                    do { atr = try ATR(bytes: chosen.atr) } catch {
                        throw Failure(.badData, "the card's ATR \(chosen.atr.hexString) is malformed: \(error)")
                    }
                    reader = chosen.reader
                }
                let names = (try? String(contentsOfFile: smartcardList, encoding: .utf8))
                    .map { ATR.names(forHex: atr.bytes.hexString, list: $0) } ?? []
                if output.json {
                    var members: [(String, JSON)] = []
                    if let reader { members.append(("reader", .string(reader))) }
                    members += [
                        ("atr", .hex(atr.bytes)), ("convention", .string(atr.convention)),
                        ("protocols", .array(atr.protocols.map { .string("T=\($0)") })),
                        ("interfaceBytes", .array(atr.interfaceBytes.map { g in
                            .object([("index", .int(g.index)), ("TA", g.ta.map { .hex([$0]) } ?? .null),
                                     ("TB", g.tb.map { .hex([$0]) } ?? .null), ("TC", g.tc.map { .hex([$0]) } ?? .null),
                                     ("TD", g.td.map { .hex([$0]) } ?? .null)])
                        })),
                        ("historicalBytes", .hex(atr.historicalBytes)),
                        ("tck", atr.tck.map { .hex([$0]) } ?? .null),
                        ("tckValid", atr.tckValid.map(JSON.bool) ?? .null),
                        ("storageCard", atr.storageCard.map { s in
                            .object([("standard", .hex([s.standard])), ("standardName", .optional(s.standardName)),
                                     ("cardName", .hex([UInt8(s.cardName >> 8), UInt8(s.cardName & 0xFF)])),
                                     ("name", .optional(s.name))])
                        } ?? .null),
                        ("names", .array(names.map(JSON.string))),
                    ]
                    Terminal.print(JSON.object(members).serialized)
                    return
                }
                if let reader { Terminal.print("reader \(Terminal.safe(reader))") }
                Terminal.print("ATR \(Hex.encode(atr.bytes, separator: " "))")
                Terminal.print("  TS \(Hex.encode([atr.ts]))  \(atr.convention) convention")
                Terminal.print("  T0 \(Hex.encode([atr.t0]))  \(atr.historicalBytes.count) historical bytes")
                for g in atr.interfaceBytes {
                    for (name, value) in [("TA", g.ta), ("TB", g.tb), ("TC", g.tc), ("TD", g.td)] {
                        guard let value else { continue }
                        var line = "  \(name)\(g.index) \(Hex.encode([value]))"
                        if name == "TD" { line += "  next protocol T=\(value & 0x0F)" }
                        Terminal.print(line)
                    }
                }
                Terminal.print("  protocols: " + atr.protocols.map { "T=\($0)" }.joined(separator: ", "))
                if !atr.historicalBytes.isEmpty {
                    Terminal.print("  historical bytes: \(Hex.encode(atr.historicalBytes, separator: " "))  \"\(Terminal.ascii(atr.historicalBytes))\"")
                }
                if let tck = atr.tck {
                    Terminal.print("  TCK \(Hex.encode([tck]))  \(atr.tckValid == true ? "valid" : "INVALID checksum")")
                }
                if let s = atr.storageCard {
                    Terminal.print("  PC/SC storage card: \(s.standardName ?? "standard \(Hex.encode([s.standard]))"), \(s.name ?? "card") (\(Terminal.hex4(s.cardName)))")
                }
                for name in names { Terminal.print("  known as: " + Style.name.paint(Terminal.safe(name))) }
            }
        }
    }
}
