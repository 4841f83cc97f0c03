// `apdu mrtd info`: what a passport or ID card offers without a key.
import APDUCommandLine
import ArgumentParser
import ISO7816
import MRTD

extension APDUCommand {
    struct MRTDInfo: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "info",
            abstract: "What a passport or ID card offers, without a key: its PACE protocols (EF.CardAccess), ATR, EF.DIR.",
            discussion: """
                Reads the master file's free files (EF.CardAccess, EF.DIR, EF.ATR/INFO) and selects the eMRTD application. \
                Nothing here is signed: it says what the chip offers, not that it is genuine. A chip without EF.CardAccess \
                offers BAC only. Exit codes: 0 an eMRTD; 1 not a passport or ID card; 69 no reader or card; 74 I/O.
                """)

        @OptionGroup var readerOptions: ReaderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var traceOptions: TraceOptions

        func run() throws {
            try reportingFailures {
                let (reader, atr, info) = try withMRTDReader(readerOptions, traceOptions) { name, atr, passport in
                    (name, atr, try passport.readChipInfo(historicalBytes: (try? ATR(bytes: atr))?.historicalBytes ?? []))
                }
                let historical = (try? ATR(bytes: atr))?.historicalBytes ?? []
                if output.json {
                    Terminal.print(Self.json(reader: reader, atr: atr, historical: historical, info: info).serialized)
                } else {
                    for line in Self.lines(reader: reader, atr: atr, historical: historical, info: info) { Terminal.print(line) }
                }
                guard info.isMRTD else { throw Failure(.unexpected, "not a passport or ID card: no eMRTD application (A0000002471001) and no PACE in EF.CardAccess") }
            }
        }

        static func paceJSON(_ p: PACEInfo) -> JSON {
            let standard = p.standardDomainParameters
            return .object([
                ("protocol", .string(p.protocolIdentifier.dotted)), ("name", .optional(p.protocolIdentifier.name)),
                ("keyAgreement", .string(p.keyAgreement.rawValue)), ("mapping", .string(p.mapping.rawValue)),
                ("cipher", .string(p.cipher.rawValue)), ("keyLength", .int(p.cipher == .tdes ? 112 : p.cipher.algorithm.keySize * 8)),
                ("parameterId", p.parameterId.map(JSON.int) ?? .null), ("parameters", .optional(standard?.name)),
                ("parametersBits", standard.map { .int($0.bits) } ?? .null), ("version", .int(p.version)),
            ])
        }

        static func json(reader: String, atr: [UInt8], historical: [UInt8], info: MRTDChipInfo) -> JSON {
            let infos = info.securityInfos
            let preferred = info.preferredPACE
            return .object([
                ("reader", .string(reader)), ("atr", .hex(atr)), ("historicalBytes", .hex(historical)),
                ("mrtd", .bool(info.isMRTD)), ("application", .bool(info.hasApplication)),
                ("extendedLength", info.extendedLength.map(JSON.bool) ?? .null),
                ("cardAccess", .optional(info.cardAccess?.hexString)), ("cardAccessError", .optional(info.cardAccessError)),
                ("pace", .array((infos?.paceInfos ?? []).map(paceJSON))),
                ("preferredPACE", preferred.map(paceJSON) ?? .null),
                ("bacOnly", .bool(info.cardAccess == nil && info.hasApplication)),
                ("chipAuthentication", .array((infos?.chipAuthenticationInfos ?? []).map { .string($0.description) })),
                ("terminalAuthentication", .bool(!(infos?.terminalAuthenticationInfos.isEmpty ?? true))),
                ("otherSecurityInfos", .array((infos?.unknown ?? []).map { u in
                    .object([("protocol", .optional(u.protocolIdentifier?.dotted)), ("name", .optional(u.protocolIdentifier?.name)), ("reason", .optional(u.reason))])
                })),
                ("dir", info.directory.map { d in .object([("hex", .hex(d)), ("applications", .array(info.directoryApplications.map(JSON.string)))]) } ?? .null),
                ("atrInfo", .optional(info.atrInfo?.hexString)),
            ])
        }

        static func lines(reader: String, atr: [UInt8], historical: [UInt8], info: MRTDChipInfo) -> [String] {
            var out: [String] = []
            let what = info.isMRTD ? Style.name.paint("passport or ID card (eMRTD)") : Style.warning.paint("not an eMRTD")
            out.append("\(Terminal.safe(reader)): \(what)")
            out.append("  ATR \(atr.hexString)" + (historical.isEmpty ? "" : ", historical bytes \(historical.hexString)"))
            let extended: String
            switch info.extendedLength {
            case true?: extended = "announced" + (info.atrInfo != nil ? " (EF.ATR/INFO)" : " (historical bytes)")
            case false?: extended = "not supported"
            case nil: extended = "not announced (short APDUs)"
            }
            out.append("  extended length: \(extended)")
            out.append("  eMRTD application A0000002471001: \(info.hasApplication ? "present" : "not found")")
            if let error = info.cardAccessError {
                out.append(Style.warning.paint("  EF.CardAccess does not parse: \(Terminal.safe(error))"))
            } else if let infos = info.securityInfos {
                out.append("  PACE (EF.CardAccess): \(infos.paceInfos.count) protocol\(infos.paceInfos.count == 1 ? "" : "s")")
                let preferred = info.preferredPACE
                for p in infos.paceInfos {
                    let parameters = p.standardDomainParameters.map { "\($0.name) (id \($0.id))" } ?? p.parameterId.map { "proprietary parameters \($0)" } ?? "no parameter id"
                    let chosen = p == preferred ? Style.success.paint("  ← read uses this") : ""
                    out.append("    • \(p.keyAgreement), \(p.mapping), \(p.cipher), \(Terminal.safe(parameters))\(chosen)")
                    out.append("      \(Terminal.safe(p.protocolIdentifier.description))")
                }
                for c in infos.chipAuthenticationInfos { out.append("  \(c)") }
                if !infos.terminalAuthenticationInfos.isEmpty { out.append("  terminal authentication (EAC) for DG3/DG4") }
                for u in infos.unknown { out.append("  other: \(Terminal.safe(u.protocolIdentifier?.description ?? "an unreadable SecurityInfo"))\(u.reason.map { " (\(Terminal.safe($0)))" } ?? "")") }
            } else if info.hasApplication {
                out.append("  no EF.CardAccess: BAC only (the MRZ opens it; a CAN cannot)")
            }
            if info.directory != nil {
                out.append("  EF.DIR: " + (info.directoryApplications.isEmpty ? "no application templates" : info.directoryApplications.joined(separator: ", ")))
            }
            return out
        }
    }
}
