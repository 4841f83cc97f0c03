// `apdu felica`: Core NFC's FeliCa operations (poll, services, system codes, read, write)
// through the reader's raw path.
import APDUCommandLine
import ArgumentParser
import Dispatch
import FoundationEssentials
import Glibc
import ISO7816
import NFCTags
import TagReader

extension APDUCommand {
    struct FeliCaCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "felica",
            abstract: "Core NFC's NFCFeliCaTag operations: poll, services, system-codes, read, write (without encryption).",
            discussion: """
                apdu felica poll [SYSTEMCODE] (Polling, default FFFF: IDm, PMm, the IC) · apdu felica services CODE… \
                (Request Service: key versions, FFFF for a missing node) · apdu felica system-codes · \
                apdu felica read BLOCK… (Read Without Encryption, service 000B unless --service) · \
                apdu felica write BLOCK HEX (Write Without Encryption of 16-byte blocks from BLOCK on, service 0009). \
                Needs a reader with a PC/SC Part 3 transparent exchange (RC-S300, ACR1252U) or an ACR122U.
                """)

        enum Operation: String, ExpressibleByArgument, CaseIterable {
            case poll, services, systemCodes = "system-codes", read, write
        }

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions
        @OptionGroup var dialect: DialectOptions

        @Argument(help: "poll, services, system-codes, read or write.")
        var operation: Operation

        @Argument(help: ArgumentHelp("The operation's arguments: codes in hex, block numbers in decimal, data in hex.", valueName: "args"))
        var arguments: [String] = []

        @Option(help: ArgumentHelp("Service code for read/write, 4 hex digits (default 000B to read, 0009 to write).", valueName: "hex"))
        var service: String?

        func code(_ text: String) throws -> UInt16 {
            guard let bytes = try? Hex.decode(text), bytes.count == 2 else { throw ValidationError("'\(Terminal.safe(text))' is not a 2-byte code in hex (e.g. 12FC)") }
            return UInt16(bytes[0]) << 8 | UInt16(bytes[1])
        }

        func block(_ text: String) throws -> Int {
            guard let n = Int(text), (0...0xFFFF).contains(n) else { throw ValidationError("'\(Terminal.safe(text))' is not a block number 0-65535") }
            return n
        }

        func validate() throws {
            if let service { _ = try code(service) }
            switch operation {
            case .poll: if arguments.count > 1 { throw ValidationError("poll takes one system code at most") }; _ = try arguments.map(code)
            case .services: if arguments.isEmpty { throw ValidationError("services needs at least one code") }; _ = try arguments.map(code)
            case .systemCodes: if !arguments.isEmpty { throw ValidationError("system-codes takes no arguments") }
            case .read:
                if arguments.isEmpty || arguments.count > 12 { throw ValidationError("read needs 1-12 block numbers") }
                _ = try arguments.map(block)
            case .write:
                guard arguments.count == 2 else { throw ValidationError("write needs BLOCK and HEX data") }
                _ = try block(arguments[0])
                guard let data = try? Hex.decode(arguments[1]), !data.isEmpty, data.count % 16 == 0, data.count <= 12 * 16 else {
                    throw ValidationError("write data must be whole 16-byte blocks in hex (at most 12)")
                }
            }
        }

        func run() throws {
            try reportingFailures {
                let (reader, result) = try NativeCommands.run(reader: readerOptions.requestedReader, wait: readerOptions.waitDuration,
                                                              observer: traceOptions.observer, dialect: dialect.readerDialect) { reader, atr, commands in
                    guard Type3Tag.isType3(atr: atr) else { throw Failure(.unexpected, "not a FeliCa card (the ATR is not a PC/SC Part 3 FeliCa storage card)") }
                    let felica = try FeliCaCommands(channel: commands)
                    let wanted = operation == .poll ? try arguments.first.map(code) ?? 0xFFFF : 0xFFFF
                    guard let polled = try felica.polling(systemCode: operation == .poll ? wanted : 0xFFFF) else {
                        throw Failure(.unexpected, "no FeliCa card answered Polling for system code \(Terminal.hex4(wanted))")
                    }
                    return (reader, try perform(felica, polled))
                }
                output.print(result, reader: reader, header: [("operation", .string(operation.rawValue))])
            }
        }

        func perform(_ felica: FeliCaCommands, _ polled: FeliCaPolling) throws -> OperationResult {
            let hex4 = Terminal.hex4
            switch operation {
            case .poll:
                return OperationResult(json: [("idm", .hex(polled.idm)), ("pmm", .hex(polled.pmm)), ("ic", .string(polled.productName)),
                                     ("systemCode", polled.systemCode.map { .string(hex4($0)) } ?? .null)],
                              lines: ["IDm:  \(Hex.encode(polled.idm, separator: " "))", "PMm:  \(Hex.encode(polled.pmm, separator: " ")) (\(polled.productName))"]
                                  + (polled.systemCode.map { ["system code: \(hex4($0))"] } ?? []))
            case .services:
                let codes = try arguments.map(code)
                let versions = try felica.requestService(codes.map(FeliCaServiceCode.init))
                let rows = zip(codes, versions).map { (hex4($0), $1 == 0xFFFF ? nil : hex4($1)) }
                return OperationResult(json: [("services", .array(rows.map { .object([("code", .string($0.0)), ("exists", .bool($0.1 != nil)), ("keyVersion", $0.1.map(JSON.string) ?? .null)]) }))],
                              lines: rows.map { "\($0.0): \($0.1.map { "key version \($0)" } ?? "does not exist")" })
            case .systemCodes:
                let codes = try felica.requestSystemCode()
                return OperationResult(json: [("systemCodes", .array(codes.map { .string(hex4($0)) }))], lines: codes.map { hex4($0) + ($0 == 0x12FC ? " (NDEF)" : "") })
            case .read:
                let blocks = try arguments.map(block)
                let data = try felica.read(blocks: blocks, service: FeliCaServiceCode(try service.map(code) ?? 0x000B))
                let rows = blocks.enumerated().map { ($0.element, Array(data[($0.offset * 16)..<($0.offset * 16 + 16)])) }
                return OperationResult(json: [("blocks", .array(rows.map { .object([("block", .int($0.0)), ("bytes", .hex($0.1))]) }))],
                              lines: rows.map { Terminal.padded($0.0, width: 5) + "  " + Hex.encode($0.1, separator: " ") + "  |" + Terminal.ascii($0.1) + "|" })
            case .write:
                let first = try block(arguments[0]), data = try Hex.decode(arguments[1])
                let blocks = Array(first..<(first + data.count / 16))
                try felica.write(blocks: blocks, data: data, service: FeliCaServiceCode(try service.map(code) ?? 0x0009))
                return OperationResult(json: [("blocks", .array(blocks.map(JSON.int)))], lines: ["wrote block\(blocks.count > 1 ? "s" : "") \(blocks.map(String.init).joined(separator: ", "))"])
            }
        }
    }
}
