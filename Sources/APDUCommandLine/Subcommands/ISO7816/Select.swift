// `apdu select`: SELECT by AID, with the FCI decoded.
import ArgumentParser
import CardReaders
import ISO7816
import PCSC

extension APDUCommand {
    package struct Select: ParsableCommand {
        package init() {}
        package static let configuration = CommandConfiguration(
            commandName: "select",
            abstract: "SELECT an application by AID and decode its FCI.")

        @OptionGroup package var readerOptions: ReaderOptions
        @OptionGroup package var output: OutputOptions
        @OptionGroup package var traceOptions: TraceOptions
        @OptionGroup package var allowlist: AllowlistOptions

        @Argument(help: ArgumentHelp("The application identifier in hex (1-16 bytes).", valueName: "aid"))
        package var aid: String

        package func parsedAID() throws -> [UInt8] {
            let bytes: [UInt8]
            do { bytes = try Hex.decode(aid) } catch { throw ValidationError("AID: \(error)") }
            guard (1...16).contains(bytes.count) else {
                throw ValidationError("AID: an AID has 1 to 16 bytes, '\(Terminal.safe(aid))' has \(bytes.count)")
            }
            return bytes
        }

        package func validate() throws { _ = try parsedAID() }

        package func run() throws {
            try reportingFailures {
                let aidBytes = try parsedAID()
                let command = CommandAPDU.select(aid: aidBytes)
                let policy = try allowlist.policy()
                if let policy, policy.refusal(for: command) != nil {
                    throw Failure(.refused, "SELECT of AID \(aidBytes.hexString) refused: not in the allowlist")
                }
                let (reader, response) = try readerOptions.withCard(transaction: false) { reader, card in
                    (reader, try APDUTransport(channel: PCSCChannel(card: card), selectPolicy: policy, observer: traceOptions.observer).send(command))
                }
                let sw = response.statusWord
                let tlv = try? BERTLV.decode(response.data)
                if output.json {
                    Terminal.print(JSON.object([
                        ("reader", .string(reader)), ("aid", .hex(aidBytes)), ("sw", .string(sw.description)),
                        ("category", .string(sw.meaning.category.rawValue)), ("meaning", .string(sw.meaning.text)),
                        ("fci", .hex(response.data)), ("tlv", tlv.map { .array($0.map(tlvJSON)) } ?? .null),
                    ]).serialized)
                } else {
                    Terminal.print("SELECT \(aidBytes.hexString): " + Style.of(sw).paint("\(sw) (\(sw.meaning.text))"))
                    if let tlv, !tlv.isEmpty {
                        for line in BERTLV.tree(tlv) { Terminal.print(Terminal.safe(line)) }
                    } else if !response.data.isEmpty {
                        Terminal.print(Hex.encode(response.data, separator: " "))
                    }
                }
                if !sw.isSuccess {
                    throw Failure(.unexpected, "SELECT \(aidBytes.hexString) answered \(sw) (\(sw.meaning.text))")
                }
            }
        }

        package func tlvJSON(_ object: TLV) -> JSON {
            var members: [(String, JSON)] = [("tag", .string(object.tagHex))]
            if let name = BERTLV.tagNames[object.tagHex] { members.append(("name", .string(name))) }
            members.append(("value", .hex(object.value)))
            if let children = object.children { members.append(("children", .array(children.map(tlvJSON)))) }
            return .object(members)
        }
    }
}
