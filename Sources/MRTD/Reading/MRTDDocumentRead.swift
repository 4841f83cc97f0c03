// A whole document read in one call: access control, EF.COM, EF.SOD, every data group listed,
// and the chip's proofs (chip authentication, its PACE mapping, active authentication), in the
// order ICAO 9303 Part 11 §6.2 and §7.1 suggest: DG14 and chip authentication before the rest,
// so that the holder's data travels under the stronger keys.
import ISO7816

/// What `MRTDReader.readDocument(key:request:progress:)` reads and proves.
public struct MRTDReadRequest: Sendable, Hashable {
    /// PACE or BAC (`.auto`: PACE when EF.CardAccess offers it).
    public var access: MRTDAccessMethod = .auto
    /// The data groups to read (1–16), asked for directly, whatever EF.COM lists; nil reads
    /// every one EF.COM or EF.SOD lists, and DG1 and DG2, which every document has.
    public var dataGroups: Set<Int>?
    /// Run chip authentication with DG14's key (or check PACE-CAM's proof) when the chip offers it.
    public var chipAuthentication = true
    /// Run active authentication with DG15's key when the chip offers it.
    public var activeAuthentication = true

    /// Every data group, both proofs, access chosen automatically.
    public init() {}
}

/// The access control that opened the chip, without the session itself (safe to keep, print and
/// pass between threads).
public struct MRTDAccess: Sendable, Hashable, CustomStringConvertible {
    /// PACE or BAC.
    public var method: MRTDAccessMethod
    /// The PACE protocol, when PACE opened the chip.
    public var pace: PACEInfo?
    /// The PACE domain parameters' name (`brainpoolP256r1`), when PACE opened the chip.
    public var domainParameters: String?
    /// MRZ or CAN (never the value).
    public var password: MRTDAccessKey.PasswordReference
    /// The session's cipher: 3DES for BAC, PACE's cipher otherwise.
    public var cipher: ProtocolCipher
    /// Why PACE failed when BAC was used after it (`allowBACFallback`); nil otherwise.
    public var paceFailure: MRTDProtocolError?

    /// True when PACE failed and BAC was used instead: output must say so.
    public var fellBackToBAC: Bool { paceFailure != nil }

    /// The summary of an access control run.
    public init(_ result: MRTDAccessResult, password: MRTDAccessKey.PasswordReference) {
        if let pace = result.pace {
            method = .pace
            self.pace = pace.info
            domainParameters = pace.domainParameters
            cipher = pace.info.cipher
        } else {
            method = .bac
            cipher = .tdes
        }
        self.password = password
        paceFailure = result.paceFailure
    }

    public var description: String {
        if let pace {
            return "PACE \(pace.keyAgreement) \(pace.mapping), \(pace.cipher)\(domainParameters.map { ", \($0)" } ?? ""), with the \(password)"
        }
        return "BAC (3DES)" + (paceFailure.map { " after PACE failed: \($0.message)" } ?? "")
    }
}

/// A proof that the chip is the document's own (not a copy of its data on another chip): chip
/// authentication, PACE's Chip Authentication Mapping, or active authentication.
public struct ChipProof: Sendable, Hashable, CustomStringConvertible {
    /// Which protocol.
    public enum Method: String, Sendable, Hashable, CustomStringConvertible {
        /// Chip authentication (DG14's key agreement key, new session keys).
        case chipAuthentication
        /// PACE with Chip Authentication Mapping (the proof carried in PACE's last answer).
        case chipAuthenticationMapping
        /// Active authentication (DG15's key signs a fresh challenge).
        case activeAuthentication
        public var description: String {
            switch self {
            case .chipAuthentication: return "chip authentication"
            case .chipAuthenticationMapping: return "PACE chip authentication mapping"
            case .activeAuthentication: return "active authentication"
            }
        }
    }

    /// The protocol run (or that would have run).
    public var method: Method
    /// `verified`: the chip holds the private key of the key in DG14 or DG15 (the key is the
    /// document's own only if passive authentication verified that data group). `failed`: it
    /// did not prove it, or it withheld a data group EF.SOD's signed list names. `notVerified`:
    /// the protocol did not run or did not finish (the chip offers none, it was not asked for, a
    /// parameter is not supported, the chip or reader refused a step).
    public var status: VerdictStatus
    /// Whether the document offers this proof: EF.SOD's signed list names DG14 (with a chip
    /// authentication key, when it was read) or DG15, or PACE ran with Chip Authentication Mapping.
    public var offered: Bool
    /// Whether the proof was asked for. False only when the caller left it out
    /// (`MRTDReadRequest.chipAuthentication`, `.activeAuthentication`, or a `dataGroups` set
    /// without DG14 or DG15): an offered proof that was asked for and is not verified leaves the
    /// document unproven.
    public var requested: Bool
    /// The algorithm, when known (`ECDH brainpoolP256r1, AES-128`, `RSA ISO/IEC 9796-2 …`).
    public var algorithm: String?
    /// One line: what was proven, or why not.
    public var reason: String
    /// The key the proof was checked against came from EF.CardSecurity (PACE-CAM without DG14),
    /// whose signature by EF.SOD's Document Signer was verified before the key was used.
    public var keyFromCardSecurity: Bool

    /// A proof with the given outcome.
    public init(method: Method, status: VerdictStatus, offered: Bool, requested: Bool = true, algorithm: String? = nil, reason: String,
                keyFromCardSecurity: Bool = false) {
        self.method = method
        self.status = status
        self.offered = offered
        self.requested = requested
        self.algorithm = algorithm
        self.reason = reason
        self.keyFromCardSecurity = keyFromCardSecurity
    }

    public var description: String { "\(method): \(status.rawValue) (\(reason))" }

    /// Whether this proof keeps the document from being proven genuine: offered and asked for,
    /// on a live read, and not verified (failed, refused, or could not finish).
    public var leavesChipUnproven: Bool { offered && requested && status != .verified }

    static func notOffered(_ method: Method, _ reason: String) -> ChipProof {
        ChipProof(method: method, status: .notVerified, offered: false, reason: reason)
    }

    static func notAsked(_ method: Method, _ reason: String) -> ChipProof {
        ChipProof(method: method, status: .notVerified, offered: true, requested: false, reason: reason)
    }

    /// A proof EF.SOD's signed list promises (DG14 or DG15 listed) whose data group the chip
    /// would not give: what a copy of the data on a blank chip does, since it cannot copy the
    /// private keys, and what anyone in the middle can answer without a key.
    static func withheld(_ group: Int, answer: String) -> ChipProof {
        ChipProof(method: group == 14 ? .chipAuthentication : .activeAuthentication, status: .failed, offered: true,
                  reason: "EF.SOD's signed list names DG\(group), but the chip \(answer): a copy of the document's data on another chip does this")
    }
}

/// Everything a live read brought back: the files as read, what the chip refused, and the
/// chip's proofs. `verify(trust:at:)` adds passive authentication.
public struct MRTDDocumentRead: Sendable {
    /// The access control that opened the chip (the last run, when a session was re-established).
    public var access: MRTDAccess
    /// Every file read, raw (write it with `MRTDDump.files`, verify it offline).
    public var dump: MRTDDump
    /// Data groups the chip refused (DG3/DG4 behind terminal authentication).
    public var protectedDataGroups: [Int]
    /// Data groups EF.COM or EF.SOD list that the chip does not have.
    public var missingDataGroups: [Int]
    /// Data groups asked for that EF.SOD lists, or DG1 and DG2 (every document has them: Part 10
    /// §4.7), that the chip did not give: not found, or refused. DG3 and DG4 refused with
    /// `69 82` are not among them (terminal authentication guards them). A keyless man in the
    /// middle can answer any read with a bare status word; each of these leaves the document
    /// unproven (issue 48).
    public var withheldDataGroups: [Int]
    /// Why EF.COM did not decode, when the chip gave one that does not (its list is then no
    /// guide: the read went by EF.SOD's list, DG1 and DG2).
    public var comProblem: String?
    /// Chip authentication, or PACE-CAM's proof.
    public var chipAuthentication: ChipProof
    /// Active authentication.
    public var activeAuthentication: ChipProof
    /// Exchanges and bytes of the whole read.
    public var statistics: MRTDReadStatistics
    /// Why the access was downgraded, when it was; it begins `downgraded to …:`. Under `.auto`
    /// a session opened with BAC because EF.CardAccess offered no PACE, while DG14 (signed in
    /// EF.SOD) lists a PACEInfo this reader can run. Or, unless BAC was asked for or chip
    /// authentication left out, DG14 lists PACE with Chip Authentication Mapping (the chip's
    /// proof) and no session of the read ran it, while no other proof of the chip held: PACE-CAM
    /// was stripped. EF.CardAccess is unsigned and anyone in the middle can withhold or change
    /// it; DG14 repeats its SecurityInfos (ICAO 9303 Part 11 §9.2.11), which tells. Nil otherwise.
    public var accessDowngrade: String?

    /// Decodes the files and runs passive authentication against `trust` at `time`.
    public func verify(trust: TrustStore?, at time: Timestamp = .now) -> MRTDReport {
        var report = MRTDReport(verification: dump.verify(trust: trust, at: time), chipAuthentication: chipAuthentication,
                                activeAuthentication: activeAuthentication, live: true, withheldDataGroups: withheldDataGroups)
        report.accessDowngrade = accessDowngrade
        return report
    }
}

/// A document's data decoded and every verdict: passive authentication (is the data what the
/// issuer signed?) and the chip's proofs (is the chip the document's own?).
public struct MRTDReport: Sendable {
    /// The files decoded and passive authentication.
    public var verification: MRTDVerification
    /// Chip authentication or PACE-CAM.
    public var chipAuthentication: ChipProof
    /// Active authentication.
    public var activeAuthentication: ChipProof
    /// Whether the chip was there (a live read), or the report is of a dump.
    public var live: Bool
    /// Data groups the chip withheld that EF.SOD lists or every document has
    /// (`MRTDDocumentRead.withheldDataGroups`): any keeps the document from being genuine.
    public var withheldDataGroups: [Int]
    /// Why the access was downgraded (`MRTDDocumentRead.accessDowngrade`): keeps a live read
    /// from being genuine.
    public var accessDowngrade: String?

    /// A report of a live read, or of a dump (`live` false: the chip's proofs could not run).
    public init(verification: MRTDVerification, chipAuthentication: ChipProof, activeAuthentication: ChipProof, live: Bool,
                withheldDataGroups: [Int] = []) {
        self.verification = verification
        self.chipAuthentication = chipAuthentication
        self.activeAuthentication = activeAuthentication
        self.live = live
        self.withheldDataGroups = withheldDataGroups
    }

    /// A dump verified offline: passive authentication only; the chip is not there to prove itself.
    /// A proof is offered when the dump holds its data group or EF.SOD lists it.
    public init(dump: MRTDDump, trust: TrustStore?, at time: Timestamp = .now) {
        let offline = "offline: the chip is not there to prove it"
        let verification = dump.verify(trust: trust, at: time)
        let listed = Set(verification.passiveAuthentication.securityObject?.dataGroupHashes.keys.map { $0 } ?? [])
        self.init(verification: verification,
                  chipAuthentication: ChipProof(method: .chipAuthentication, status: .notVerified,
                                                offered: dump.dataGroups[14] != nil || listed.contains(14), reason: offline),
                  activeAuthentication: ChipProof(method: .activeAuthentication, status: .notVerified,
                                                  offered: dump.dataGroups[15] != nil || listed.contains(15), reason: offline),
                  live: false, withheldDataGroups: Self.absent(from: dump, listed: listed))
    }

    /// The groups a dump lacks that a live read must give: DG1 and DG2 always, and every group
    /// EF.SOD lists but DG3 and DG4 (which the chip gives only after terminal authentication, so
    /// a dump made without it lacks them honestly). Dropping DG1 or DG11 from a folder must not
    /// leave "data genuine" standing (review of issue 48).
    static func absent(from dump: MRTDDump, listed: Set<Int>) -> [Int] {
        (listed.union([1, 2]).subtracting([3, 4])).filter { dump.dataGroups[$0] == nil }.sorted()
    }

    /// Passive authentication.
    public var passiveAuthentication: PassiveAuthenticationResult { verification.passiveAuthentication }

    /// The data is what the issuer signed: hashes, signature and chain all verified, and the
    /// chip withheld no data group EF.SOD lists (a group not read is a hash not compared).
    public var dataGenuine: Bool { passiveAuthentication.valid && withheldDataGroups.isEmpty }

    /// The chip is the document's own: every proof the document offers was verified, and at
    /// least one used a key vouched for by passive authentication (DG14 or DG15 matched EF.SOD).
    /// One offered proof that failed, was refused, could not finish or was not asked for is
    /// enough to leave the chip unproven (only the exit status tells the last apart). A document
    /// that offers no proof has none to give: `chipProofOffered` is false then, and this too.
    public var chipGenuine: Bool {
        let proofs = [chipAuthentication, activeAuthentication]
        guard proofs.allSatisfy({ !$0.offered || $0.status == .verified }), !proofs.contains(where: { $0.status == .failed }) else { return false }
        return proofs.contains { proof in
            guard proof.status == .verified else { return false }
            // EF.CardSecurity's key: signed by EF.SOD's Document Signer (checked on the read),
            // so it stands as EF.SOD's signature stands.
            if proof.keyFromCardSecurity { return passiveAuthentication.signature.status == .verified }
            let group = proof.method == .activeAuthentication ? 15 : 14
            return passiveAuthentication.hashes.dataGroups.contains { $0.dataGroup == group && $0.outcome == .matches }
        }
    }

    /// Whether the document offers any proof of its chip.
    public var chipProofOffered: Bool { chipAuthentication.offered || activeAuthentication.offered }

    /// Genuine: the data is what the issuer signed, and the chip proved it is the document's own
    /// (or the document offers no such proof, which `chipProofOffered` says). Never true while a
    /// step that could run is unverified.
    public var genuine: Bool {
        dataGenuine && (chipGenuine || (live && !chipProofOffered) || MRTDRemovedChecks.cloneRule) && accessDowngrade == nil
    }

    /// Every verdict that failed, as one line each (empty when none did).
    public var failures: [String] {
        var out: [String] = []
        let pa = passiveAuthentication
        if pa.hashes.status == .failed { out.append("data group hashes: \(pa.hashes.reason)") }
        if pa.signature.status == .failed { out.append("signature: \(pa.signature.reason)") }
        if pa.chain.status == .failed { out.append("certificate chain: \(pa.chain.reason)") }
        if let withheld = withheldLine { out.append(withheld) }
        if let accessDowngrade { out.append("access: \(accessDowngrade)") }
        for proof in [chipAuthentication, activeAuthentication] where proof.status == .failed {
            out.append("\(proof.method): \(proof.reason)")
        }
        return out
    }

    /// The data groups the chip withheld, as one line naming them; nil when it withheld none.
    public var withheldLine: String? {
        guard !withheldDataGroups.isEmpty else { return nil }
        let names = withheldDataGroups.sorted().map { "DG\($0)" }.joined(separator: ", ")
        return "\(names): EF.SOD lists \(withheldDataGroups.count == 1 ? "it" : "them") (or every document has \(withheldDataGroups.count == 1 ? "it" : "them")), "
            + "but the chip did not give \(withheldDataGroups.count == 1 ? "it" : "them"): \(withheldDataGroups.count == 1 ? "its" : "their") hash was not compared"
    }

    /// The chip's proofs that keep a live read from being proven genuine, one line each:
    /// offered, asked for, and not verified (failed, withheld, refused or unfinished). Empty
    /// offline, where the chip cannot prove itself and nobody asked it to.
    public var unprovenChipProofs: [String] {
        guard live else { return [] }
        return [chipAuthentication, activeAuthentication].filter(\.leavesChipUnproven).map { proof in
            proof.status == .failed ? "\(proof.method): \(proof.reason)" : "\(proof.method) not proven: \(proof.reason)"
        }
    }
}

extension MRTDReader {
    /// Reads the whole document: access control (PACE or BAC as `request.access` says), EF.COM,
    /// EF.SOD, every data group they list (or those asked for), chip authentication right after
    /// DG14 and active authentication after DG15. Data groups behind terminal authentication are
    /// reported as protected, not as failures. A failed proof is a verdict, not an error: the
    /// session is re-established and the read goes on.
    ///
    /// - Parameters:
    ///   - key: the MRZ or the CAN.
    ///   - request: access control, the data groups and the proofs to run.
    ///   - progress: called before each file with its name, the files done and the total.
    /// - Throws: `MRTDProtocolError` when access control fails or a file cannot be read;
    ///   transport errors (a pulled card) as the transport throws them.
    public func readDocument(key: MRTDAccessKey, request: MRTDReadRequest = MRTDReadRequest(),
                             progress: ((_ file: String, _ done: Int, _ total: Int) -> Void)? = nil) throws -> MRTDDocumentRead {
        let start = statistics
        sessionWithoutMapping = false
        bacWithoutPACEOffer = false
        var dump = MRTDDump()
        // EF.CardAccess (PACE's parameters) before anything else; on a chip that has it, EF.ATR/INFO
        // too, for extended length. Neither on a BAC-only chip, which may refuse MF reads before
        // BAC (gmrtd #226).
        if request.access != .bac {
            dump.cardAccess = try readCardAccess()
            if dump.cardAccess != nil, options.chipSupportsExtendedLength == nil {
                do { _ = try readATRInfo() } catch is MRTDProtocolError {}
            }
        }
        var result = try establishAccess(request.access, key: key)
        let password = key.passwordReference

        progress?("EF.COM", 0, 2)
        if case let .read(bytes) = try readFile(.com) { dump.com = bytes }
        progress?("EF.SOD", 1, 2)
        if case let .read(bytes) = try readFile(.sod) { dump.sod = bytes }
        // EF.COM is unsigned and only a hint; one that does not decode (vsmartcard's ePass writes
        // its tag list as ASCII text) is said, not dropped in silence (issue 48).
        var comProblem: String?
        var listed: Set<Int> = []
        if let bytes = dump.com {
            do throws(LDSError) { listed = Set(try EFCOM(decoding: bytes).dataGroups) } catch { comProblem = error.description }
        }
        // EF.SOD's list is signed (EF.COM's is not): a group it names is the issuer's word that
        // the chip has it, and DG14 and DG15 are the chip's proofs (checked against the
        // signature by passive authentication, after the read).
        let signedList = Set((dump.sod.flatMap { try? DocumentSecurityObject(decoding: $0) }?.dataGroupHashes.keys).map(Array.init) ?? [])
        listed.formUnion(signedList)
        // DG1 and DG2 are mandatory (Part 10 §4.7): read whatever EF.COM and EF.SOD say.
        listed.formUnion([1, 2])
        let everyListed = listed
        // Groups asked for are read directly, listed or not.
        if let wanted = request.dataGroups { listed = wanted }
        // DG14 first: chip authentication's keys then carry everything else (Part 11 §7.1).
        let order = listed.sorted { a, b in a == 14 ? true : b == 14 ? false : a < b }

        var protected: [Int] = [], missing: [Int] = [], withheldGroups: [Int] = []
        var chipProof = ChipProof.notOffered(.chipAuthentication, "the document has no DG14 with a chip authentication key")
        var activeProof = ChipProof.notOffered(.activeAuthentication, "the document has no DG15")
        // Listed but left out by the request: offered, not proven (never "the document has none").
        if everyListed.contains(14) && !listed.contains(14) { chipProof = .notAsked(.chipAuthentication, "DG14 was not read") }
        if everyListed.contains(15) && !listed.contains(15) { activeProof = .notAsked(.activeAuthentication, "DG15 was not read") }
        var dg14: SecurityInfos?
        for (index, number) in order.enumerated() {
            guard let file = MRTDFile.dataGroup(number) else { continue }
            progress?(file.name, 2 + index, 2 + order.count)
            // What the chip answered instead of the group, when it did not give it.
            let withheld: String?
            let content = try readFile(file)
            switch content {
            case let .read(bytes):
                dump.dataGroups[number] = bytes
                withheld = nil
            case let .protected(sw):
                protected.append(number)
                withheld = "refuses to give it (\(sw))"
            case .notFound:
                missing.append(number)
                withheld = "answers that it has no such file (6A 82)"
            }
            if let withheld {
                // Every group EF.SOD lists must be read and its hash compared, DG1 and DG2 always;
                // only DG3 and DG4 may stay behind terminal authentication, and only with 69 82.
                var excused = false
                if case .protected(.securityStatusNotSatisfied) = content, number == 3 || number == 4 { excused = true }
                if !excused && (signedList.contains(number) || number == 1 || number == 2) { withheldGroups.append(number) }
                if signedList.contains(number), number == 14 || number == 15 {
                    if number == 14 { chipProof = .withheld(14, answer: withheld) } else { activeProof = .withheld(15, answer: withheld) }
                }
                continue
            }
            if number == 14 {
                let decoded: Result<SecurityInfos, MRTDProtocolError>
                do throws(MRTDProtocolError) { decoded = .success(try SecurityInfos(dg14: dump.dataGroups[14] ?? [])) } catch { decoded = .failure(error) }
                dg14 = try? decoded.get()
                chipProof = try proveChip(dg14: decoded, access: result, request: request, key: key, dump: &dump, reestablished: &result)
            }
        }
        if chipProof.method == .chipAuthentication, !chipProof.offered, let mapping = result.pace?.chipAuthenticationMapping {
            // PACE-CAM without DG14: the key is in EF.CardSecurity, whose signature is checked.
            chipProof = try proveMapping(mapping, dg14: nil, request: request, dump: &dump)
        }
        if chipProof.method == .chipAuthenticationMapping, chipProof.status == .verified, sessionWithoutMapping {
            chipProof = ChipProof(method: chipProof.method, status: .notVerified, offered: true, algorithm: chipProof.algorithm,
                                  reason: "a session of this read was opened again without PACE-CAM (\(self.access?.pace == nil ? "with BAC" : "without the mapping")): what was read in it is not covered by the mapping's proof")
        }
        if chipProofLapsed && chipProof.status == .verified {
            // The session was opened again after the proof, and the chip did not prove itself
            // again: what was read since did not travel under its keys (issue 48).
            chipProof = ChipProof(method: chipProof.method, status: .notVerified, offered: true, algorithm: chipProof.algorithm,
                                  reason: "the session was opened again after \(chipProof.method), and the chip did not prove itself again")
        }
        if let aaKey = dump.dataGroups[15] {
            if request.activeAuthentication {
                activeProof = try proveActive(dg15: aaKey, dg14: dg14)
                if !channel.isSecured { result = try establishAccess(method(of: result), key: key) }
            } else {
                activeProof = .notAsked(.activeAuthentication, "not asked for")
            }
        }
        // A downgrade: BAC because EF.CardAccess offered no PACE, while the signed DG14 repeats
        // a PACEInfo we can run. ICAO 9303 Part 11 §9.2.11 requires DG14 on a chip that supports
        // PACE with Generic or Integrated Mapping, holding the SecurityInfos of EF.CardAccess;
        // EF.CardAccess is unsigned, so a keyless man in the middle answering 6A 82 to it had
        // made the read fall back to BAC in silence (issue 48). DG14's hash is compared by
        // passive authentication: a DG14 changed to add a PACEInfo fails there.
        var downgrade: String?
        if request.access == .auto, bacWithoutPACEOffer, let signed = dg14, let offer = Self.preferredPACEInfo(signed) {
            let why = dump.cardAccess == nil ? "was not given" : "offered no PACE this reader runs"
            downgrade = "downgraded to BAC: DG14 lists PACE (\(offer)), but EF.CardAccess \(why); "
                + "the chip was opened with BAC, which a man in the middle withholding EF.CardAccess brings about (ICAO 9303 Part 11 §9.2.11)"
        }
        // A chip proof stripped: the signed DG14 lists PACE-CAM, the chip's proof that it is the
        // document's own (a CAM-only chip keeps its key in EF.CardSecurity, not DG14), but no
        // session of this read ran it (Generic or Integrated Mapping, or BAC), and no other proof
        // of the chip held. EF.CardAccess is unsigned: a clone, or a keyless man in the middle
        // leaving PACE-CAM out of it, had ended in "the document offers no proof of its chip",
        // genuine (review of issue 48). BAC asked for cannot run PACE-CAM: the proof is then not
        // asked for, as with chip authentication left out; no access is downgraded.
        if let signed = dg14, let cam = Self.chipAuthenticationMappingOffer(signed), chipProof.method != .chipAuthenticationMapping,
           chipProof.status != .verified, activeProof.status != .verified {
            let last = self.access ?? result
            let ran = last.pace.map { "PACE \($0.info.keyAgreement) \($0.info.mapping)" } ?? "BAC"
            if request.access == .bac || !request.chipAuthentication {
                if !chipProof.offered {
                    chipProof = .notAsked(.chipAuthenticationMapping, request.access == .bac
                        ? "DG14 lists PACE-CAM (\(cam)), which only PACE runs, and BAC was asked for"
                        : "not asked for (DG14 lists PACE-CAM: \(cam))")
                }
            } else {
                let offered = cardAccess.flatMap { Self.chipAuthenticationMappingOffer($0) } != nil
                let why = dump.cardAccess == nil ? "was not given" : offered ? "offered it, but PACE failed" : "did not offer it"
                if downgrade == nil {
                    downgrade = "downgraded to \(ran) without PACE-CAM: DG14 lists \(cam), the chip's proof that it is the document's own, "
                        + "but EF.CardAccess \(why) and no other proof of the chip held; "
                        + "a copy of the data on another chip, or a man in the middle leaving PACE-CAM out of EF.CardAccess, does this"
                }
                if !chipProof.offered {
                    chipProof = ChipProof(method: .chipAuthenticationMapping, status: .failed, offered: true,
                                          reason: "DG14 lists PACE-CAM, but the chip was opened with \(ran) and gave no proof of its own: "
                                            + "EF.CardAccess \(why)")
                }
            }
        }
        var used = statistics
        used.exchanges -= start.exchanges
        used.bytesSent -= start.bytesSent
        used.bytesReceived -= start.bytesReceived
        used.readCommands -= start.readCommands
        used.sessionRestarts -= start.sessionRestarts
        // The access of the session the read ended in: a restart that fell back to BAC is said.
        return MRTDDocumentRead(access: MRTDAccess(self.access ?? result, password: password), dump: dump, protectedDataGroups: protected,
                                missingDataGroups: missing, withheldDataGroups: withheldGroups.sorted(), comProblem: comProblem,
                                chipAuthentication: chipProof, activeAuthentication: activeProof, statistics: used, accessDowngrade: downgrade)
    }

    private func method(of result: MRTDAccessResult) -> MRTDAccessMethod { result.pace != nil ? .pace : .bac }

    /// A PACEInfo with Chip Authentication Mapping among `infos` that this reader can run (its
    /// domain parameters build), nil when there is none.
    static func chipAuthenticationMappingOffer(_ infos: SecurityInfos) -> PACEInfo? {
        infos.paceInfos.first { $0.mapping == .chipAuthentication && (try? infos.domainParameters(for: $0)) != nil }
    }

    /// Chip authentication after DG14, or PACE-CAM's proof checked against DG14's key.
    private func proveChip(dg14 decoded: Result<SecurityInfos, MRTDProtocolError>, access: MRTDAccessResult, request: MRTDReadRequest,
                           key: MRTDAccessKey, dump: inout MRTDDump, reestablished result: inout MRTDAccessResult) throws -> ChipProof {
        // DG14 is the document's offer of a proof: one this library cannot read or run (a curve
        // over a binary field, say) is an offered proof not verified, never "no proof" (issue 48).
        let dg14: SecurityInfos
        switch decoded {
        case let .success(infos): dg14 = infos
        case let .failure(error):
            return ChipProof(method: .chipAuthentication, status: .notVerified, offered: true, reason: "DG14 does not decode: \(error.message)")
        }
        guard !dg14.chipAuthenticationPublicKeyInfos.isEmpty else {
            // With PACE-CAM, EF.CardSecurity holds the key too: it is tried after the read.
            if access.pace?.chipAuthenticationMapping != nil { return .notOffered(.chipAuthentication, "DG14 holds no chip authentication key") }
            let unreadable = dg14.unknown.first { info in
                guard let oid = info.protocolIdentifier else { return false }
                return oid.isUnder(ObjectIdentifier9303.chipAuthenticationPublicKey) || oid.isUnder(ObjectIdentifier9303.chipAuthentication)
            }
            if let unreadable {
                return ChipProof(method: .chipAuthentication, status: .notVerified, offered: true,
                                 reason: "DG14 offers chip authentication with a key this reader cannot use: \(unreadable.reason ?? "not understood")")
            }
            if !dg14.chipAuthenticationInfos.isEmpty {
                return ChipProof(method: .chipAuthentication, status: .notVerified, offered: true,
                                 reason: "DG14 names chip authentication but holds no key for it")
            }
            return .notOffered(.chipAuthentication, "DG14 holds no chip authentication key")
        }
        if let mapping = access.pace?.chipAuthenticationMapping {
            return try proveMapping(mapping, dg14: dg14, request: request, dump: &dump)
        }
        guard request.chipAuthentication else { return .notAsked(.chipAuthentication, "not asked for") }
        do {
            let ca = try performChipAuthentication(dg14: dg14)
            let algorithm = "\(ca.keyAgreement) \(ca.domainParameters), \(ca.cipher)"
            guard ca.isConfirmed else {
                return ChipProof(method: .chipAuthentication, status: .failed, offered: true, algorithm: algorithm,
                                 reason: "the chip gave no answer under the new keys")
            }
            return ChipProof(method: .chipAuthentication, status: .verified, offered: true, algorithm: algorithm,
                             reason: "the chip answered under keys agreed with DG14's key: it holds the private key")
        } catch let error as MRTDProtocolError {
            // Whatever happened, the session is not one to read on: open the chip again.
            result = try establishAccess(method(of: access), key: key)
            switch error.kind {
            case .unsupported, .invalidPublicKey:
                return ChipProof(method: .chipAuthentication, status: .notVerified, offered: true, reason: error.message)
            default:
                return ChipProof(method: .chipAuthentication, status: .failed, offered: true,
                                 reason: error.kind == .secureMessagingEnded
                                    ? "the chip's answer under the keys agreed with DG14's key does not verify: it does not hold the private key (\(error.message))"
                                    : error.message)
            }
        }
    }

    /// PACE-CAM: PK_Map,IC = CA_IC · PK_IC with DG14's key, or EF.CardSecurity's when there is no DG14.
    private func proveMapping(_ mapping: ChipAuthenticationMappingData, dg14: SecurityInfos?, request: MRTDReadRequest,
                              dump: inout MRTDDump) throws -> ChipProof {
        var infos = dg14
        var source = "DG14"
        if infos == nil {
            if case let .read(bytes) = try readFile(.cardSecurity) {
                dump.cardSecurity = bytes
                // The key counts only when EF.CardSecurity is signed as EF.SOD is (issue 48).
                switch PassiveAuthentication.signedCardSecurity(bytes, securityObject: dump.sod) {
                case let .success(signed):
                    infos = signed
                    source = "EF.CardSecurity (signed by EF.SOD's Document Signer)"
                case let .failure(error):
                    return ChipProof(method: .chipAuthenticationMapping, status: .notVerified, offered: true,
                                     reason: "PACE-CAM ran, but its key is not vouched for: \(error.message)")
                }
            }
        }
        guard let keys = infos?.chipAuthenticationPublicKeyInfos.filter({ $0.keyAgreement == .ecdh }), !keys.isEmpty else {
            return ChipProof(method: .chipAuthenticationMapping, status: .notVerified, offered: true,
                             reason: "PACE-CAM ran, but no ECDH chip authentication key was found to check its proof against")
        }
        guard request.chipAuthentication else { return .notAsked(.chipAuthenticationMapping, "not asked for") }
        var lastError: MRTDProtocolError?
        // Every PACE session of this read carried its own proof (a restart runs PACE again):
        // each must hold, or what was read in it did not come from the chip with the key.
        let mappings = mappingsSinceAccess.isEmpty ? [mapping] : mappingsSinceAccess
        for key in keys {
            do {
                var allHold = true
                for each in mappings where !(try each.verify(against: key)) { allHold = false }
                if allHold {
                    let name = (try? key.publicKey.specification.domain().description) ?? "\(key.publicKey.specification)"
                    rememberMappingProof(key)
                    return ChipProof(method: .chipAuthenticationMapping, status: .verified, offered: true, algorithm: "ECDH \(name)",
                                     reason: "PACE's mapping key is the chip's key from \(source) times the secret the chip sent: it holds the private key",
                                     keyFromCardSecurity: dg14 == nil)
                }
            } catch {
                lastError = error
            }
        }
        if let lastError, keys.count == 1 {
            return ChipProof(method: .chipAuthenticationMapping, status: .notVerified, offered: true, reason: lastError.message)
        }
        return ChipProof(method: .chipAuthenticationMapping, status: .failed, offered: true,
                         reason: "PACE's mapping key does not match the chip's key from \(source): the chip does not hold its private key")
    }

    /// Active authentication with DG15's key: a failure of the chip is a verdict, not an error.
    private func proveActive(dg15 bytes: [UInt8], dg14: SecurityInfos?) throws -> ChipProof {
        let key: ChipPublicKey
        do { key = try ChipPublicKey(encoded: bytes) } catch {
            return ChipProof(method: .activeAuthentication, status: .notVerified, offered: true, reason: "DG15 does not decode: \(error.message)")
        }
        do {
            let result = try performActiveAuthentication(dg15: key, dg14: dg14)
            return ChipProof(method: .activeAuthentication, status: result.signatureValid ? .verified : .failed, offered: true,
                             algorithm: result.algorithm,
                             reason: result.signatureValid ? "the chip signed a fresh challenge with DG15's key"
                                : "the chip's signature over the challenge does not verify with DG15's key")
        } catch let error as MRTDProtocolError {
            if error.kind == .unsupported {
                return ChipProof(method: .activeAuthentication, status: .notVerified, offered: true, reason: error.message)
            }
            if error.statusWord == .wrongLength {
                // A length the reader or chip could not carry says nothing about the chip's key.
                return ChipProof(method: .activeAuthentication, status: .notVerified, offered: true,
                                 reason: "the signature did not fit the answer (67 00): the chip or reader lacks extended length")
            }
            return ChipProof(method: .activeAuthentication, status: .failed, offered: true, reason: error.message)
        }
    }
}
