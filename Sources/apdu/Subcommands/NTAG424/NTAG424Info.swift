import ArgumentParser
import ISO7816
import NFCTags

extension APDUCommand {
    struct NTAG424Info: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "info",
            abstract: "Describe an NTAG 424 DNA: versions, storage, UID, random ID, and each file's settings with SDM decoded.")

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions

        func run() throws {
            try reportingFailures {
                let (reader, version, uid, files) = try withNTAG424(readerOptions, traceOptions) { reader, _, transport, tag in
                    let uidAnswer = try transport.send(.getUID)
                    let files = try [NTAG424Tag.ccFile, NTAG424Tag.ndefFile, NTAG424Tag.proprietaryFile].map { ($0, try tag.fileSettings($0)) }
                    return (reader, tag.version, uidAnswer.statusWord == .success ? uidAnswer.data : [], files)
                }
                // ISO 14443-3: a 4-byte UID starting 08 is random, new at every activation.
                let randomID = uid.count == 4 && uid.first == 0x08
                if output.json {
                    Terminal.print(JSON.object([
                        ("reader", .string(reader)), ("chip", .string(version.productName)), ("uid", .hex(randomID ? version.uid : uid)),
                        ("randomID", .bool(randomID)), ("hardwareVersion", .string(version.hardwareVersion)), ("softwareVersion", .string(version.softwareVersion)),
                        ("storageByte", .hex([version.storageByte])), ("version", .hex(version.bytes)),
                        ("files", .array(files.map { Self.json($0.0, $0.1) })),
                    ]).serialized)
                    return
                }
                Terminal.print("\(Terminal.safe(reader)): \(version.productName), hardware \(version.hardwareVersion), software \(version.softwareVersion)")
                Terminal.print("  UID \((randomID ? version.uid : uid).hexString)\(randomID ? " (random ID on: the reader sees \(uid.hexString))" : ", random ID off")")
                for (number, s) in files { for line in Self.lines(number, s) { Terminal.print(line) } }
            }
        }

        static let names: [UInt8: String] = [1: "CC (E103)", 2: "NDEF (E104)", 3: "proprietary (E105)"]

        static func lines(_ number: UInt8, _ s: NTAG424FileSettings) -> [String] {
            var out = ["  file \(number) \(names[number] ?? ""): \(s.size) bytes, \(s.commMode), read \(s.read.words), write \(s.write.words), read-write \(s.readWrite.words), change \(s.change.words)"]
            if let sdm = s.sdm {
                let mirrors = [sdm.mirrorsUID ? "UID" : nil, sdm.mirrorsCounter ? "read counter" : nil, sdm.encryptsFileData ? "encrypted file data" : nil].compactMap { $0 }
                out.append("    SDM: mirrors \(mirrors.joined(separator: ", ")); PICC data \(sdm.metaRead == .free ? "in the clear" : "encrypted with \(sdm.metaRead.words)"); MAC with \(sdm.fileRead.words)")
                let offsets: [(String, Int?)] = [("PICC data", sdm.piccDataOffset), ("UID", sdm.uidOffset), ("counter", sdm.counterOffset), ("MAC input", sdm.macInputOffset),
                                                 ("file data", sdm.encOffset), ("MAC", sdm.macOffset)]
                out.append("    offsets: " + offsets.compactMap { n, o in o.map { "\(n) \($0)" } }.joined(separator: ", ") + (sdm.counterLimit.map { "; counter limit \($0)" } ?? ""))
            }
            return out
        }

        static func json(_ number: UInt8, _ s: NTAG424FileSettings) -> JSON {
            var m: [(String, JSON)] = [("file", .int(Int(number))), ("size", .int(s.size)), ("commMode", .string(s.commMode.rawValue)),
                                       ("read", .string(s.read.description)), ("write", .string(s.write.description)),
                                       ("readWrite", .string(s.readWrite.description)), ("change", .string(s.change.description))]
            m.append(("sdm", sdmJSON(s.sdm)))
            return .object(m)
        }

        static func sdmJSON(_ sdm: SDMSettings?) -> JSON {
            guard let sdm else { return .null }
            return .object([
                    ("mirrorsUID", .bool(sdm.mirrorsUID)), ("mirrorsCounter", .bool(sdm.mirrorsCounter)), ("encryptsFileData", .bool(sdm.encryptsFileData)),
                    ("metaRead", .string(sdm.metaRead.description)), ("fileRead", .string(sdm.fileRead.description)),
                    ("piccDataOffset", sdm.piccDataOffset.map(JSON.int) ?? .null), ("uidOffset", sdm.uidOffset.map(JSON.int) ?? .null),
                    ("counterOffset", sdm.counterOffset.map(JSON.int) ?? .null), ("macInputOffset", sdm.macInputOffset.map(JSON.int) ?? .null),
                    ("encOffset", sdm.encOffset.map(JSON.int) ?? .null), ("encLength", sdm.encLength.map(JSON.int) ?? .null),
                    ("macOffset", sdm.macOffset.map(JSON.int) ?? .null), ("counterLimit", sdm.counterLimit.map(JSON.int) ?? .null),
                ])
        }
    }
}
