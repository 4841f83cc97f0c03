// `apdu iso15693`: Core NFC's ISO 15693 operations on a Type 5 tag (info, read, write, lock,
// security, custom).
import APDUCommandLine
import ArgumentParser
import Dispatch
import FoundationEssentials
import Glibc
import ISO7816
import NFCTags
import TagReader

extension APDUCommand {
    struct ISO15693Command: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "iso15693",
            abstract: "Core NFC's NFCISO15693Tag operations on a Type 5 tag: info, read, write, lock, security, custom.",
            discussion: """
                apdu iso15693 info (GET SYSTEM INFO; the extended form where the standard one leaves the memory size out) · \
                apdu iso15693 read FIRST [COUNT] (READ MULTIPLE BLOCKS in as few frames as the reader carries) · \
                apdu iso15693 write BLOCK HEX · apdu iso15693 lock BLOCK --yes (permanent) · \
                apdu iso15693 security FIRST [COUNT] (GET MULTIPLE BLOCK SECURITY STATUS) · \
                apdu iso15693 custom CODE [HEX] (A0-DF custom commands with the IC manufacturer code from the UID). \
                Requests are addressed to the tag's UID; TI Tag-it gets the option flag on write and lock; blocks past 255 \
                use the extended commands. Needs a reader with a PC/SC Part 3 transparent exchange (ACR1552U, OMNIKEY 5x22, uTrust).
                """)

        enum Operation: String, ExpressibleByArgument, CaseIterable { case info, read, write, lock, security, custom }

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions
        @OptionGroup var dialect: DialectOptions

        @Argument(help: "info, read, write, lock, security or custom.")
        var operation: Operation

        @Argument(help: ArgumentHelp("The operation's arguments: block numbers (decimal), then hex data.", valueName: "args"))
        var arguments: [String] = []

        @Flag(help: "Use the extended commands (2-byte block numbers) even below block 256.")
        var extended = false

        @Flag(help: "lock: confirm that the block becomes read-only for good.")
        var yes = false

        func number(_ i: Int, _ name: String, default value: Int? = nil) throws -> Int {
            guard i < arguments.count else {
                if let value { return value }
                throw ValidationError("\(operation.rawValue) needs \(name)")
            }
            guard let n = Int(arguments[i]), (0...0xFFFF).contains(n) else { throw ValidationError("\(name) must be a number 0-65535, not '\(Terminal.safe(arguments[i]))'") }
            return n
        }

        func hex(_ i: Int, _ name: String, required: Bool) throws -> [UInt8] {
            guard i < arguments.count else {
                if required { throw ValidationError("\(operation.rawValue) needs \(name) in hex") }
                return []
            }
            do { return try Hex.decode(arguments[i], allowEmpty: !required) } catch { throw ValidationError("\(name): \(error)") }
        }

        func validate() throws {
            let allowed = [Operation.info: 0, .read: 2, .write: 2, .lock: 1, .security: 2, .custom: 2][operation]!
            if arguments.count > allowed { throw ValidationError("\(operation.rawValue) takes at most \(allowed) argument(s)") }
            switch operation {
            case .info: break
            case .read, .security: _ = try number(0, "FIRST"); _ = try number(1, "COUNT", default: 1)
            case .write: _ = try number(0, "BLOCK"); _ = try hex(1, "data", required: true)
            case .lock: _ = try number(0, "BLOCK")
            case .custom:
                let code = try hex(0, "CODE", required: true)
                guard code.count == 1, (0xA0...0xFF).contains(code[0]) else { throw ValidationError("CODE must be one byte A0-FF (custom or proprietary)") }
                _ = try hex(1, "parameters", required: false)
            }
        }

        func run() throws {
            try reportingFailures {
                if operation == .lock && !yes { throw Failure(.refused, "LOCK BLOCK is permanent; run again with --yes to do it") }
                let (reader, result) = try NativeCommands.run(reader: readerOptions.requestedReader, wait: readerOptions.waitDuration,
                                                              observer: traceOptions.observer, dialect: dialect.readerDialect) { reader, atr, commands in
                    guard Type5Tag.isType5(atr: atr) else { throw Failure(.unexpected, "not an ISO 15693 tag (the ATR is not a PC/SC Part 3 ISO 15693 storage card)") }
                    let iso = try ISO15693Commands(channel: commands)
                    return (reader, try perform(iso, try iso.systemInfoWithMemorySize()))
                }
                output.print(result, reader: reader, header: [("operation", .string(operation.rawValue))])
            }
        }

        func perform(_ iso: ISO15693Commands, _ info: ISO15693SystemInfo) throws -> OperationResult {
            let size = info.blockSize ?? 4
            let ext = extended || (info.blockCount ?? 0) > 256
            switch operation {
            case .info:
                return OperationResult(json: [("uid", .hex(info.displayUID)), ("manufacturer", .string(info.manufacturerName)),
                                     ("dsfid", info.dsfid.map { .hex([$0]) } ?? .null), ("afi", info.afi.map { .hex([$0]) } ?? .null),
                                     ("blockCount", info.blockCount.map(JSON.int) ?? .null), ("blockSize", info.blockSize.map(JSON.int) ?? .null),
                                     ("icReference", info.icReference.map { .hex([$0]) } ?? .null)],
                              lines: ["UID:          \(Hex.encode(info.displayUID, separator: " ")) (\(info.manufacturerName))",
                                      "memory:       \(info.blockCount.map(String.init) ?? "?") blocks of \(info.blockSize.map(String.init) ?? "?") bytes",
                                      "DSFID \(info.dsfid.map { Hex.encode([$0]) } ?? "-"), AFI \(info.afi.map { Hex.encode([$0]) } ?? "-"), IC reference \(info.icReference.map { Hex.encode([$0]) } ?? "-")"])
            case .read:
                let first = try number(0, "FIRST"), count = try number(1, "COUNT", default: 1)
                let perFrame = max(1, (iso.channel.maxAnswerBytes - 1) / size)
                var bytes: [UInt8] = []
                var b = first
                while b < first + count {
                    let n = min(perFrame, first + count - b)
                    bytes += n == 1 ? try iso.readSingleBlock(b, blockSize: size, extended: ext || b > 255)
                        : try iso.readMultipleBlocks(b, count: n, blockSize: size, extended: ext || b + n > 256)
                    b += n
                }
                let rows = (0..<count).map { i in (first + i, Array(bytes[(i * size)..<((i + 1) * size)])) }
                return OperationResult(json: [("blocks", .array(rows.map { .object([("block", .int($0.0)), ("bytes", .hex($0.1))]) }))],
                              lines: rows.map { Terminal.padded($0.0, width: 5) + "  " + Hex.encode($0.1, separator: " ") + "  |" + Terminal.ascii($0.1) + "|" })
            case .write:
                let block = try number(0, "BLOCK"), data = try hex(1, "data", required: true)
                guard data.count == size else { throw Failure(.usage, "block \(block) holds \(size) bytes; \(data.count) were given") }
                try iso.writeSingleBlock(block, data: data, extended: ext || block > 255)
                return OperationResult(json: [("block", .int(block)), ("written", .hex(data))], lines: ["wrote block \(block)"])
            case .lock:
                let block = try number(0, "BLOCK")
                try iso.lockBlock(block, extended: ext || block > 255)
                let locked = try iso.securityStatus(block, count: 1, extended: ext || block > 255).first == true
                guard locked else { throw Failure(.unexpected, "the tag acknowledged LOCK BLOCK \(block) but does not report it locked") }
                return OperationResult(json: [("block", .int(block)), ("locked", .bool(true))], lines: ["block \(block) is locked for good"])
            case .security:
                let first = try number(0, "FIRST"), count = try number(1, "COUNT", default: 1)
                let flags = try iso.securityStatus(first, count: count, extended: ext || first + count > 256)
                return OperationResult(json: [("blocks", .array(flags.enumerated().map { .object([("block", .int(first + $0.offset)), ("locked", .bool($0.element))]) }))],
                              lines: flags.enumerated().map { "\(first + $0.offset): \($0.element ? "locked" : "unlocked")" })
            case .custom:
                let code = try hex(0, "CODE", required: true)[0], params = try hex(1, "parameters", required: false)
                let answer = try iso.customCommand(code, manufacturer: info.manufacturer, parameters: params)
                return OperationResult(json: [("code", .hex([code])), ("answer", .hex(answer))], lines: ["< " + Hex.encode(answer, separator: " ") + "  |" + Terminal.ascii(answer) + "|"])
            }
        }
    }
}
