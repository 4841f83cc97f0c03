// How `apdu mrtd read` and `apdu mrtd verify` show a document: a summary for people (✓/✗, colour
// on a terminal, every card-borne text made safe) and JSON with stable names for scripts.
import APDUCommandLine
import ISO7816
import MRTD

/// What a read or a verification produced, ready to print.
struct MRTDView {
    let report: MRTDReport
    /// The live read (nil for `verify DIR`).
    let read: MRTDDocumentRead?
    /// The reader's name (nil for `verify DIR`).
    let reader: String?
    /// Whether `--trust` was given (the chain is asked for only then).
    let trustGiven: Bool
    /// Where `--face` wrote the face, when it did.
    var faceFile: String?

    var verification: MRTDVerification { report.verification }
    var passive: PassiveAuthenticationResult { report.passiveAuthentication }

    var dg1: DataGroup1? { if case let .success(.dg1(g))? = verification.dataGroups[1] { return g }; return nil }
    var dg2: DataGroup2? { if case let .success(.dg2(g))? = verification.dataGroups[2] { return g }; return nil }
    var dg11: DataGroup11? { if case let .success(.dg11(g))? = verification.dataGroups[11] { return g }; return nil }
    var dg12: DataGroup12? { if case let .success(.dg12(g))? = verification.dataGroups[12] { return g }; return nil }
    var face: FaceImage? { dg2?.faces.first }
    /// DG5 (displayed portraits) and DG7 (signature or usual mark), when read.
    func displayed(_ number: Int) -> DisplayedImages? {
        if case let .success(.displayedImages(images))? = verification.dataGroups[number] { return images }
        return nil
    }

    // MARK: Exit status

    /// Why the document is not proven as far as asked (`MRTDReport.unproven`); empty for exit 0.
    var unproven: [String] { report.unproven(chainAsked: trustGiven) }

    // MARK: Text

    static func mark(_ status: VerdictStatus) -> String {
        switch status {
        case .verified: return Style.success.paint("✓")
        case .failed: return Style.error.paint("✗")
        case .notVerified: return Style.warning.paint("–")
        }
    }

    static func date(_ d: DocumentDate) -> String { Terminal.safe(d.iso8601 ?? d.text) }

    /// Groups as `DG1, DG2`.
    static func groups(_ numbers: [Int]) -> String { numbers.sorted().map { "DG\($0)" }.joined(separator: ", ") }

    var lines: [String] {
        var out: [String] = []
        let mrz = dg1?.mrz
        let kind = mrz.map { zone -> String in
            let code = zone.documentCode.first
            return code == "P" ? "passport" : code == "V" ? "visa" : "ID card"
        } ?? "document"
        var head = reader.map { "\(Terminal.safe($0)): " } ?? ""
        head += Style.name.paint(kind) + (mrz.map { " (\($0.format.rawValue.uppercased())) of \(Terminal.safe($0.issuingState))" } ?? "")
        if let access = read?.access {
            head += ", opened with \(Terminal.safe(access.description))"
        }
        out.append(head)
        if let access = read?.access, access.fellBackToBAC {
            out.append(Style.warning.paint("  PACE failed; BAC was used instead (--allow-bac-fallback): \(Terminal.safe(access.paceFailure?.message ?? ""))"))
        }
        if let downgrade = report.accessDowngrade {
            out.append(Style.error.paint("  access      \(Terminal.safe(downgrade))"))
        }
        if let mrz {
            let names = dg11?.fullName.map { "\($0.surname), \($0.givenNames)" } ?? "\(mrz.surname), \(mrz.givenNames)"
            out.append("  holder      \(Terminal.safe(names)) · born \(Self.date(dg11?.fullDateOfBirth ?? mrz.dateOfBirth)) · sex \(mrz.sex.rawValue) · nationality \(Terminal.safe(mrz.nationality))")
            var document = "  document    \(Terminal.safe(mrz.documentCode)) \(Terminal.safe(mrz.documentNumber)) · issued by \(Terminal.safe(mrz.issuingState))"
            if let issued = dg12?.dateOfIssue { document += " on \(Self.date(issued))" }
            document += " · expires \(Self.date(mrz.dateOfExpiry))"
            out.append(document)
            if !mrz.checkDigitFailures.isEmpty {
                out.append(Style.warning.paint("  DG1's MRZ: " + mrz.checkDigitFailures.map(\.message).joined(separator: "; ")))
            }
        }
        if let place = dg11?.placeOfBirth, !place.isEmpty { out.append("  born in     \(Terminal.safe(place.joined(separator: ", ")))") }
        if let authority = dg12?.issuingAuthority { out.append("  authority   \(Terminal.safe(authority))") }
        var groups = "  data groups \(Self.groups(Array(verification.dataGroups.keys))) read"
        if let read, !read.protectedDataGroups.isEmpty { groups += "; \(Self.groups(read.protectedDataGroups)) protected (terminal authentication)" }
        if let read, !read.missingDataGroups.isEmpty { groups += "; \(Self.groups(read.missingDataGroups)) listed but absent" }
        out.append(groups)
        if let read, !read.withheldDataGroups.isEmpty {
            out.append(Style.error.paint("  withheld    \(Self.groups(read.withheldDataGroups)): EF.SOD lists them or every document has them; their hashes were not compared"))
        }
        if let problem = read?.comProblem {
            out.append(Style.warning.paint("  EF.COM does not decode (\(Terminal.safe(problem))): DG1, DG2 and EF.SOD's list were read instead"))
        }
        if let face {
            var text = "  face        \(face.image.format.rawValue.uppercased())"
            if let w = face.width, let h = face.height { text += " \(w)×\(h)" }
            text += ", \(face.image.bytes.count) bytes"
            if let faceFile { text += " → \(Terminal.safe(faceFile))" }
            out.append(text)
        }
        for (number, label) in [(5, "portrait   "), (7, "signature  ")] {
            guard let images = displayed(number) else { continue }
            out.append("  \(label) " + images.images.map { "\($0.format.rawValue.uppercased()), \($0.bytes.count) bytes" }.joined(separator: "; ") + " (DG\(number))")
        }
        for (number, result) in verification.dataGroups.sorted(by: { $0.key < $1.key }) {
            if case let .failure(error) = result { out.append(Style.warning.paint("  DG\(number) does not decode: \(Terminal.safe(error.message))")) }
        }
        out.append("passive authentication")
        out.append("  \(Self.mark(passive.hashes.status)) hashes       \(Terminal.safe(passive.hashes.reason))")
        out.append("  \(Self.mark(passive.signature.status)) signature    \(Terminal.safe(passive.signature.reason))")
        let chainReason = trustGiven || passive.chain.status != .notVerified ? passive.chain.reason : "not checked: give --trust (CSCA certificates or a master list)"
        out.append("  \(Self.mark(passive.chain.status)) chain        \(Terminal.safe(chainReason))")
        if let atSigning = passive.chain.atSigning {
            out.append("                 at signing (\(atSigning.time), \(atSigning.source)): \(Terminal.safe(atSigning.valid ? "the chain held" : atSigning.reason))")
        }
        out.append("chip")
        for proof in [report.chipAuthentication, report.activeAuthentication] {
            let name = proof.method == .activeAuthentication ? "active auth " : "chip auth   "
            let algorithm = proof.algorithm.map { "\(Terminal.safe($0)): " } ?? ""
            out.append("  \(Self.mark(proof.status)) \(name) \(proof.method == .chipAuthenticationMapping ? "(PACE-CAM) " : "")\(algorithm)\(Terminal.safe(proof.reason))")
        }
        out.append(verdict)
        return out
    }

    /// The closing line: genuine, or why not.
    var verdict: String {
        if !report.live && report.dataGenuine {
            return Style.success.paint("✓ data genuine") + ": it is what \(Terminal.safe(passive.chain.path.last?.subject ?? "the CSCA")) signed; the chip is not there to prove itself (offline)"
        }
        if report.genuine {
            let chip = report.chipProofOffered ? "the chip proved it is the document's own" : "the document offers no proof of its chip: a copy of its data on another chip would pass"
            return Style.success.paint("✓ genuine") + ": the data is what \(Terminal.safe(passive.chain.path.last?.subject ?? "the CSCA")) signed; \(chip)"
        }
        var why: [String] = []
        if passive.hashes.status != .verified { why.append("the data group hashes are \(passive.hashes.status == .failed ? "wrong" : "not checked")") }
        if passive.signature.status != .verified { why.append("the signature is \(passive.signature.status == .failed ? "wrong" : "not checked")") }
        if passive.chain.status != .verified { why.append(passive.chain.status == .failed ? "the chain to a CSCA does not hold" : "the chain to a CSCA is not checked\(trustGiven ? "" : " (no --trust)")") }
        if !report.withheldDataGroups.isEmpty { why.append("the chip withheld \(Self.groups(report.withheldDataGroups))") }
        // The downgrade's first clause: "downgraded to BAC", "downgraded to PACE ECDH Generic Mapping without PACE-CAM".
        if let downgrade = report.accessDowngrade { why.append("the access was \(Terminal.safe(String(downgrade.prefix { $0 != ":" })))") }
        let proofs = [report.chipAuthentication, report.activeAuthentication]
        if proofs.contains(where: { $0.status == .failed }) { why.append("the chip failed to prove it is the document's own") }
        else if report.chipProofOffered && !report.chipGenuine { why.append(report.live ? "the chip did not prove it is the document's own" : "the chip cannot prove itself offline") }
        // ✗ when a step ran and failed, or the data itself is unproven (no EF.SOD, hashes or
        // signature unchecked); – when what is missing is a chain not checked or a chip proof
        // that could not run.
        let dataUnproven = passive.hashes.status != .verified || passive.signature.status != .verified || !report.withheldDataGroups.isEmpty
        let failed = passive.chain.status == .failed || proofs.contains { $0.status == .failed } || report.accessDowngrade != nil
            || verification.dataGroups.values.contains { if case .failure = $0 { return true }; return false }
        let mark = dataUnproven || failed ? Style.error.paint("✗ NOT genuine") : Style.warning.paint("– not proven genuine")
        return "\(mark): " + why.joined(separator: "; ")
    }

    // MARK: JSON

    var json: JSON {
        var members: [(String, JSON)] = []
        if let reader { members.append(("reader", .string(reader))) }
        if let read { members.append(("access", Self.json(read.access))) }
        members.append(("mrz", dg1.map { Self.json($0.mrz) } ?? .null))
        if case let .success(com)? = verification.com {
            members.append(("com", .object([("ldsVersion", .optional(com.ldsVersion)), ("unicodeVersion", .optional(com.unicodeVersion)),
                                            ("dataGroups", .array(com.dataGroups.map(JSON.int)))])))
        } else {
            members.append(("com", .null))
        }
        if let read {
            members.append(("comError", .optional(read.comProblem)))
            members.append(("withheldDataGroups", .array(read.withheldDataGroups.map(JSON.int))))
            members.append(("accessDowngrade", .optional(read.accessDowngrade)))
        }
        members.append(("dataGroups", .array(dataGroupsJSON)))
        members.append(("face", face.map { f in
            .object([("format", .string(f.image.format.rawValue)), ("mimeType", .string(f.image.format.mimeType)), ("encoding", .string(f.encoding.rawValue)),
                     ("width", f.width.map(JSON.int) ?? .null), ("height", f.height.map(JSON.int) ?? .null), ("bytes", .int(f.image.bytes.count)),
                     ("file", .optional(faceFile))])
        } ?? .null))
        for (key, number) in [("displayedPortraits", 5), ("signatureImages", 7)] {
            members.append((key, displayed(number).map { d in
                .array(d.images.map { .object([("format", .string($0.format.rawValue)), ("mimeType", .string($0.format.mimeType)), ("bytes", .int($0.bytes.count))]) })
            } ?? .null))
        }
        members.append(("personalDetails", dg11.map(Self.json) ?? .null))
        members.append(("documentDetails", dg12.map(Self.json) ?? .null))
        members.append(("passiveAuthentication", passiveJSON))
        members.append(("chipAuthentication", Self.json(report.chipAuthentication)))
        members.append(("activeAuthentication", Self.json(report.activeAuthentication)))
        members.append(("genuine", .bool(report.genuine)))
        members.append(("dataGenuine", .bool(report.dataGenuine)))
        members.append(("chipGenuine", .bool(report.chipGenuine)))
        if let read {
            members.append(("statistics", .object([("exchanges", .int(read.statistics.exchanges)), ("bytesSent", .int(read.statistics.bytesSent)),
                                                   ("bytesReceived", .int(read.statistics.bytesReceived)), ("reads", .int(read.statistics.readCommands)),
                                                   ("sessionRestarts", .int(read.statistics.sessionRestarts))])))
        }
        return .object(members)
    }

    var dataGroupsJSON: [JSON] {
        var numbers = Set(verification.dataGroups.keys)
        if let read { numbers.formUnion(read.protectedDataGroups); numbers.formUnion(read.missingDataGroups) }
        numbers.formUnion(passive.hashes.dataGroups.map(\.dataGroup))
        return numbers.sorted().map { n in
            var m: [(String, JSON)] = [("number", .int(n))]
            let status: String
            if verification.dataGroups[n] != nil { status = "read" }
            else if read?.withheldDataGroups.contains(n) == true { status = "withheld" }
            else if read?.protectedDataGroups.contains(n) == true { status = "protected" }
            else if read?.missingDataGroups.contains(n) == true { status = "absent" }
            else { status = "notRead" }
            m.append(("status", .string(status)))
            if let bytes = read?.dump.dataGroups[n] { m.append(("length", .int(bytes.count))) }
            if case let .failure(error)? = verification.dataGroups[n] { m.append(("error", .string(error.message))) }
            let hash = passive.hashes.dataGroups.first { $0.dataGroup == n }
            m.append(("hash", .optional(hash?.outcome.rawValue)))
            return .object(m)
        }
    }

    var passiveJSON: JSON {
        let h = passive.hashes, s = passive.signature, c = passive.chain
        return .object([
            ("valid", .bool(passive.valid)),
            ("hashes", .object([("status", .string(h.status.rawValue)), ("algorithm", .optional(h.algorithm.map { "\($0)" })), ("reason", .string(h.reason)),
                                ("dataGroups", .array(h.dataGroups.map { g in
                                    .object([("number", .int(g.dataGroup)), ("outcome", .string(g.outcome.rawValue)),
                                             ("expected", g.expected.map { .hex($0) } ?? .null), ("computed", g.computed.map { .hex($0) } ?? .null)])
                                }))])),
            ("signature", .object([("status", .string(s.status.rawValue)), ("algorithm", .optional(s.scheme.map { "\($0)" })),
                                   ("messageDigestMatches", s.messageDigestMatches.map(JSON.bool) ?? .null),
                                   ("signer", s.signer.map(Self.json) ?? .null), ("signingTime", .optional(s.signingTime?.iso8601)),
                                   ("notes", .array(s.notes.map(JSON.string))), ("reason", .string(s.reason))])),
            ("chain", .object([("status", .string(c.status.rawValue)), ("checkedAt", .string(c.checkedAt.iso8601)), ("trustGiven", .bool(trustGiven)),
                               ("path", .array(c.path.map(Self.json))), ("reason", .string(c.reason)),
                               ("atSigning", c.atSigning.map { a in
                                   .object([("time", .string(a.time.iso8601)), ("source", .string(a.source)), ("valid", .bool(a.valid)), ("reason", .string(a.reason))])
                               } ?? .null)])),
        ])
    }

    static func json(_ access: MRTDAccess) -> JSON {
        var m: [(String, JSON)] = [("method", .string(access.method == .pace ? "PACE" : "BAC")), ("password", .string(access.password.description)),
                                   ("cipher", .string(access.cipher.rawValue))]
        if let pace = access.pace {
            m += [("protocol", .string(pace.protocolIdentifier.dotted)), ("protocolName", .optional(pace.protocolIdentifier.name)),
                  ("keyAgreement", .string(pace.keyAgreement.rawValue)), ("mapping", .string(pace.mapping.rawValue)),
                  ("parameterId", pace.parameterId.map(JSON.int) ?? .null), ("parameters", .optional(access.domainParameters))]
        }
        m += [("fellBackToBAC", .bool(access.fellBackToBAC)), ("paceFailure", .optional(access.paceFailure?.message))]
        return .object(m)
    }

    static func json(_ zone: MachineReadableZone) -> JSON {
        func date(_ d: DocumentDate) -> JSON { .string(d.iso8601 ?? d.text) }
        return .object([
            ("format", .string(zone.format.rawValue)), ("documentCode", .string(zone.documentCode)), ("issuingState", .string(zone.issuingState)),
            ("documentNumber", .string(zone.documentNumber)), ("surname", .string(zone.surname)), ("givenNames", .string(zone.givenNames)),
            ("nationality", .string(zone.nationality)), ("dateOfBirth", date(zone.dateOfBirth)), ("sex", .string(zone.sex.rawValue)),
            ("dateOfExpiry", date(zone.dateOfExpiry)), ("optionalData", .string(zone.optionalData)), ("optionalData2", .optional(zone.optionalData2)),
            ("checkDigitsValid", .bool(zone.checkDigitFailures.isEmpty)), ("checkDigitFailures", .array(zone.checkDigitFailures.map { .string($0.message) })),
        ])
    }

    static func json(_ g: DataGroup11) -> JSON {
        .object([
            ("fullName", .optional(g.fullName.map { "\($0.surname), \($0.givenNames)" })), ("otherNames", .array(g.otherNames.map { .string($0.text) })),
            ("personalNumber", .optional(g.personalNumber)), ("fullDateOfBirth", .optional(g.fullDateOfBirth.map { $0.iso8601 ?? $0.text })),
            ("placeOfBirth", .array(g.placeOfBirth.map(JSON.string))), ("address", .array(g.address.map(JSON.string))),
            ("telephone", .optional(g.telephone)), ("profession", .optional(g.profession)), ("title", .optional(g.title)),
            ("personalSummary", .optional(g.personalSummary)), ("otherTravelDocumentNumbers", .array(g.otherTravelDocumentNumbers.map(JSON.string))),
            ("custodyInformation", .optional(g.custodyInformation)),
        ])
    }

    static func json(_ g: DataGroup12) -> JSON {
        .object([
            ("issuingAuthority", .optional(g.issuingAuthority)), ("dateOfIssue", .optional(g.dateOfIssue.map { $0.iso8601 ?? $0.text })),
            ("otherPersons", .array(g.otherPersons.map { .string($0.text) })), ("endorsementsAndObservations", .optional(g.endorsementsAndObservations)),
            ("taxOrExitRequirements", .optional(g.taxOrExitRequirements)), ("personalizationTime", .optional(g.personalizationTime)),
            ("personalizationSystemSerialNumber", .optional(g.personalizationSystemSerialNumber)),
        ])
    }

    static func json(_ c: CertificateSummary) -> JSON {
        .object([("subject", .string(c.subject)), ("issuer", .string(c.issuer)), ("serialNumber", .string(c.serialNumber)),
                 ("notBefore", .optional(c.notBefore?.iso8601)), ("notAfter", .optional(c.notAfter?.iso8601)),
                 ("publicKey", .string(c.publicKey)), ("sha256", .string(c.sha256Fingerprint))])
    }

    static func json(_ proof: ChipProof) -> JSON {
        .object([("status", .string(proof.status.rawValue)), ("method", .string(proof.method.rawValue)), ("offered", .bool(proof.offered)),
                 ("algorithm", .optional(proof.algorithm)), ("reason", .string(proof.reason))])
    }
}
