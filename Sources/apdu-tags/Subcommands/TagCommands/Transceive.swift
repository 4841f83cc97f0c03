// `apdu transceive`: a tag's own frames sent through the reader's dialect, the answers printed.
import APDUCommandLine
import ArgumentParser
import Dispatch
import FoundationEssentials
import Glibc
import ISO7816
import NFCTags
import TagReader

extension APDUCommand {
    struct Transceive: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "transceive",
            abstract: "Send a tag's own commands (NTAG/Ultralight frames) through the reader's dialect and print the answers.",
            discussion: """
                The desktop sendMiFareCommand: the reader adds the CRC. apdu transceive 60 (GET_VERSION), \
                apdu transceive 3A0010 (FAST_READ pages 0-16), apdu transceive C2FF 01000000 (SECTOR_SELECT sector 1: \
                silence after the second frame is its acknowledgement). A Type 1 tag (Topaz) takes its frames as T1TOP \
                writes them, without CRC: apdu transceive 78000000000000 (RID), 00000000000000 with UID0-3 last (RALL); \
                they go through the reader's Type 1 form (ACS InDataExchange, SCM FF 50-FF 60, or READ/UPDATE BINARY). All frames run in one transaction and one \
                transparent session, which ends on every path. A NAK or no answer stops the batch (the tag goes idle) \
                and exits 1. Readers: PC/SC Part 3 transparent exchange (ACR1252U, uTrust, OMNIKEY 5x22) or ACR122U; \
                --reader-dialect overrides the detection.
                """)

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions

        @OptionGroup var dialect: DialectOptions

        @Argument(help: ArgumentHelp("Native frames in hex, without CRC.", valueName: "hex"))
        var frames: [String] = []

        func validate() throws {
            if frames.isEmpty { throw ValidationError("give at least one frame in hex, e.g. 60 (GET_VERSION)") }
            for (i, text) in frames.enumerated() {
                do {
                    let bytes = try Hex.decode(text)
                    if bytes.count > 250 { throw ValidationError("frame \(i + 1) is \(bytes.count) bytes; a reader carries at most 250") }
                } catch let e as Hex.ParseError { throw ValidationError("frame \(i + 1) ('\(Terminal.safe(text))'): \(e)") }
            }
        }

        func run() throws {
            try reportingFailures {
                let frames = try self.frames.map { try Hex.decode($0) }
                var rows: [(frame: [UInt8], answer: TagAnswer)] = []
                // A NAK or silence (but SECTOR_SELECT's passive ACK) leaves the tag idle: stop there.
                var stopped = false
                var typeOneForm: Type1ReaderForm?
                let (reader, dialect) = try NativeCommands.run(reader: readerOptions.requestedReader, wait: readerOptions.waitDuration,
                                                               observer: traceOptions.observer, dialect: dialect.readerDialect) { reader, atr, commands in
                    // A Type 1 tag: its frames go through the form this reader carries them in.
                    let type1 = Type1Tag.isType1(atr: atr) ? try Type1Link.open(transport: commands.transport, atr: atr, readerName: reader, commands: commands) : nil
                    if type1 != nil {
                        // Every frame must be a T1TOP command before the first is sent.
                        for (i, frame) in frames.enumerated() {
                            do throws(TagCommandError) { _ = try Type1Command.parse(frame) } catch { throw Failure(.usage, "frame \(i + 1) (\(frame.hexString)): \(error.message)") }
                        }
                    }
                    for frame in frames {
                        let answer = try type1.map { try $0.transceive(frame) }
                            ?? commands.transceive(frame, secretFrom: frame.first == 0x1B && !traceOptions.showSecrets ? 1 : nil)
                        rows.append((frame, answer))
                        stopped = type1 == nil ? commands.tagIdle : answer == .noAnswer
                        if stopped { break }
                    }
                    typeOneForm = type1?.form
                    return (reader, commands.dialect)
                }
                if output.json {
                    Terminal.print(JSON.object([
                        ("reader", .string(reader)), ("dialect", .string(typeOneForm.map { "type1-\($0.rawValue)" } ?? dialect.rawValue)),
                        ("exchanges", .array(rows.map { Self.json($0.frame, $0.answer, showSecrets: traceOptions.showSecrets) })),
                    ]).serialized)
                } else {
                    for (frame, answer) in rows {
                        Terminal.print("> " + Self.shown(frame, showSecrets: traceOptions.showSecrets))
                        Terminal.print("< " + Self.text(answer))
                    }
                }
                if stopped, let last = rows.last {
                    throw Failure(.unexpected, "frame \(rows.count): the tag answered \(last.answer)" + (rows.count < frames.count ? "; the remaining \(frames.count - rows.count) frame(s) were not sent" : ""))
                }
            }
        }

        /// PWD_AUTH's password shown as `**`.
        static func shown(_ frame: [UInt8], showSecrets: Bool) -> String {
            guard frame.first == 0x1B, frame.count > 1, !showSecrets else { return Hex.encode(frame, separator: " ") }
            return "1B " + Array(repeating: "**", count: frame.count - 1).joined(separator: " ")
        }

        static func text(_ answer: TagAnswer) -> String {
            switch answer {
            case let .data(bytes): return Hex.encode(bytes, separator: " ") + "  |" + Terminal.ascii(bytes) + "|"
            case .ack: return "ACK"
            case let .nak(code): return "NAK \(code) (\(TagAnswer.nakMeaning(code)))"
            case .noAnswer: return "no answer (timeout)"
            }
        }

        static func json(_ frame: [UInt8], _ answer: TagAnswer, showSecrets: Bool) -> JSON {
            .object(jsonMembers(frame, answer, showSecrets: showSecrets))
        }

        /// One exchange's members: frame, answer, the NAK and its meaning, the bytes.
        static func jsonMembers(_ frame: [UInt8], _ answer: TagAnswer, showSecrets: Bool) -> [(String, JSON)] {
            var m: [(String, JSON)] = [("frame", .string(shown(frame, showSecrets: showSecrets).filter { $0 != " " })),
                                       ("answer", .string(answer.kind.rawValue))]
            if case let .nak(code) = answer { m += [("nak", .int(Int(code))), ("meaning", .string(TagAnswer.nakMeaning(code)))] }
            m.append(("bytes", answer.bytes.map { .hex($0) } ?? .null))
            return m
        }
    }
}
