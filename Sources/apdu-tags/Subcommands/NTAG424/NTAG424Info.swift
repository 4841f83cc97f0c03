// `apdu ntag424 info`: versions, UID, originality signature and each file's settings with SDM
// decoded.
import APDUCommandLine
import ArgumentParser
import FoundationEssentials
import ISO7816
import NFCTags
import SUN

extension APDUCommand {
    struct NTAG424Info: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "info",
            abstract: "Describe an NTAG 424 DNA: versions, storage, UID, random ID, the NXP originality signature checked, and each file's settings with SDM decoded.",
            discussion: """
                The originality signature (Read_Sig: NXP's ECDSA on secp224r1 over the 7-byte UID) is checked with NXP's \
                published NTAG 424 DNA key. One that does not verify is reported (originality.valid false, exit 0), not an \
                error: the tag answered. With random ID on, GetVersion shows no UID: give --key-file (any of the five keys, \
                --key-number) and the UID comes from GetCardUID in an authenticated session, where Read_Sig's answer is \
                enciphered and MACed. Without random ID a key is used only when --key-file is given. Keys are never printed.
                """)

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions

        @Option(help: ArgumentHelp("File holding a key of the tag, to read the UID with GetCardUID (needed with random ID on; then $APDU_NTAG424_KEY serves too).", valueName: "file"))
        var keyFile: String?

        @Option(help: ArgumentHelp("The number of that key, 0-4.", valueName: "n"))
        var keyNumber: UInt8 = 0

        func validate() throws {
            guard keyNumber < 5 else { throw ValidationError("--key-number is 0-4") }
        }

        func run() throws {
            try reportingFailures {
                let explicitKey = try keyFile.map { try aesKey(file: $0, option: "--key-file", environment: "APDU_NTAG424_KEY") }
                let (reader, version, readerUID, files, originality, tamper) = try withNTAG424(readerOptions, traceOptions) { reader, _, transport, tag in
                    let uidAnswer = try transport.send(.getUID)
                    let files = try [NTAG424Tag.ccFile, NTAG424Tag.ndefFile, NTAG424Tag.proprietaryFile].map { ($0, try tag.fileSettings($0)) }
                    // NT4H2421Gx §10.5.2: GetVersion's UID is all zeros when random ID is on.
                    let hidden = !tag.version.uid.contains { $0 != 0 }
                    var key = explicitKey
                    if key == nil, hidden, ProcessInfo.processInfo.environment["APDU_NTAG424_KEY"]?.isEmpty == false {
                        key = try aesKey(file: nil, option: "--key-file", environment: "APDU_NTAG424_KEY")
                    }
                    var originality: Result<NTAG424Originality, NTAG424Error>
                    if let key { try tag.authenticate(keyNumber: keyNumber, key: key) }
                    if key == nil, hidden {
                        originality = .failure(NTAG424Error(.permissionDenied, "random ID is on: GetVersion shows no UID; give --key-file (any key) to read it with GetCardUID and check the signature"))
                    } else {
                        do { originality = .success(try tag.originality()) } catch let e as NTAG424Error where e.statusWord != nil {
                            // The tag refused Read_Sig: a note, as tag-info reports a tag without one.
                            originality = .failure(e)
                        }
                    }
                    // GetTTStatus needs a session: read with the key given (NT4H2421Tx), else said why not.
                    var tamper: Result<SUNTagTamperStatus, NTAG424Error>?
                    if tag.version.productName == "NTAG 424 DNA TagTamper" {
                        if key == nil {
                            tamper = .failure(NTAG424Error(.permissionDenied, "GetTTStatus needs an authenticated session: give --key-file"))
                        } else {
                            do { tamper = .success(try tag.tagTamperStatus()) } catch let e as NTAG424Error where e.statusWord != nil { tamper = .failure(e) }
                        }
                    }
                    return (reader, tag.version, uidAnswer.statusWord == .success ? uidAnswer.data : [], files, originality, tamper)
                }
                let hidden = !version.uid.contains { $0 != 0 }
                // ISO 14443-3: a 4-byte UID starting 08 is random, new at every activation.
                let randomID = hidden || (readerUID.count == 4 && readerUID.first == 0x08)
                let known: [UInt8]? = (try? originality.get())?.uid ?? (randomID ? nil : version.uid)
                if output.json {
                    let signature: JSON
                    switch originality {
                    case let .success(o): signature = o.json
                    case let .failure(e): signature = .object([("valid", .null), ("reason", .string(e.message))])
                    }
                    Terminal.print(JSON.object([
                        ("reader", .string(reader)), ("chip", .string(version.productName)), ("uid", known.map { .hex($0) } ?? .null),
                        ("randomID", .bool(randomID)), ("hardwareVersion", .string(version.hardwareVersion)), ("softwareVersion", .string(version.softwareVersion)),
                        ("storageByte", .hex([version.storageByte])), ("version", .hex(version.bytes)), ("originality", signature),
                        ("files", .array(files.map { Self.json($0.0, $0.1) })), ("tagTamper", Self.tamperJSON(tamper)),
                    ]).serialized)
                    return
                }
                Terminal.print("\(Terminal.safe(reader)): \(version.productName), hardware \(version.hardwareVersion), software \(version.softwareVersion)")
                let seen = randomID && !readerUID.isEmpty ? " (random ID on: the reader sees \(readerUID.hexString))" : randomID ? " (random ID on)" : ", random ID off"
                Terminal.print("  UID \(known?.hexString ?? "unknown")\(seen)")
                switch originality {
                case let .success(o):
                    Terminal.print("  originality signature \(o.signature.signature.hexString)")
                    Terminal.print("    \(o.verdict)\(o.uidSource == .getCardUID ? " (UID from GetCardUID)" : "")")
                case let .failure(e):
                    Terminal.print("  originality signature not checked: \(e.message)")
                }
                switch tamper {
                case nil: break
                case let .success(t)?:
                    let letters = String(decoding: t.bytes.map { $0 >= 0x20 && $0 < 0x7F ? $0 : 0x3F }, as: UTF8.self)
                    Terminal.print("  TagTamper (GetTTStatus): \(letters), \(Self.sealWords(t.seal))")
                case let .failure(e)?:
                    Terminal.print("  TagTamper status not read: \(e.message)")
                }
                for (number, s) in files { for line in Self.lines(number, s) { Terminal.print(line) } }
            }
        }

        static func sealWords(_ seal: SUNTagTamperStatus.Seal) -> String {
            switch seal {
            case .intact: "loop closed, never opened"
            case .open: "loop open"
            case .reclosed: "opened once, closed again"
            case .notEnabled: "TagTamper not enabled"
            case .unknown: "not a status the chip writes"
            }
        }

        static func tamperJSON(_ tamper: Result<SUNTagTamperStatus, NTAG424Error>?) -> JSON {
            switch tamper {
            case nil: return .null
            case let .success(t)?: return .object([("permanent", .string(t.permanent.name)), ("current", .string(t.current.name)), ("seal", .string(t.seal.rawValue))])
            case let .failure(e)?: return .object([("permanent", .null), ("current", .null), ("reason", .string(e.message))])
            }
        }

        static let names: [UInt8: String] = [1: "CC (E103)", 2: "NDEF (E104)", 3: "proprietary (E105)"]

        static func lines(_ number: UInt8, _ s: NTAG424FileSettings) -> [String] {
            var out = ["  file \(number) \(names[number] ?? ""): \(s.size) bytes, \(s.commMode), read \(s.read.words), write \(s.write.words), read-write \(s.readWrite.words), change \(s.change.words)"]
            if let sdm = s.sdm {
                let mirrors = [sdm.mirrorsUID ? "UID" : nil, sdm.mirrorsCounter ? "read counter" : nil, sdm.encryptsFileData ? "encrypted file data" : nil].compactMap { $0 }
                out.append("    SDM: mirrors \(mirrors.joined(separator: ", ")); PICC data \(sdm.metaRead == .free ? "in the clear" : "encrypted with \(sdm.metaRead.words)"); MAC with \(sdm.fileRead.words)")
                let offsets: [(String, Int?)] = [("PICC data", sdm.piccDataOffset), ("UID", sdm.uidOffset), ("counter", sdm.counterOffset), ("TagTamper status", sdm.tamperOffset), ("MAC input", sdm.macInputOffset),
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
                    ("tamperOffset", sdm.tamperOffset.map(JSON.int) ?? .null),
                ])
        }
    }
}
