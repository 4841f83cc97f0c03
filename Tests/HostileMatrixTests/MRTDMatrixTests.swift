import CardCrypto
import ISO7816
import MRTD
import TestSupport
import Testing
import VirtualCard

/// Passports under the man in the middle: `mrtd read` (PACE or BAC, every data group, chip and
/// active authentication, then passive authentication), and the hostile chips of issue 48.
@Suite("Hostile matrix: MRTD")
struct MRTDMatrixTests {
    static let now = Timestamp(year: 2026, month: 6, day: 1)!

    /// Specimens are slow to make (RSA keys): one per profile, per process.
    static func specimen(_ configure: (inout MRTDSpecimen.Options) -> Void = { _ in }, name: String) -> MRTDSpecimen {
        var options = MRTDSpecimen.Options()
        options.seed = Array("hostile matrix \(name)".utf8)
        options.csca = .ecdsa(parameterID: 12)
        options.documentSigner = .ecdsa(parameterID: 12)
        options.faceSize = 1500
        configure(&options)
        return try! MRTDSpecimen.generate(options)
    }

    static let standard = specimen(name: "standard")
    static let binaryCurve = specimen({ $0.chipAuthenticationKeyOnBinaryCurve = true }, name: "binary curve")
    static let comAsText = specimen({ $0.comTagListAsText = true }, name: "EF.COM as text")
    /// A BAC-only document: no EF.CardAccess, no PACEInfo in DG14.
    static let bacOnly = specimen({ $0.pace = [] }, name: "BAC only")
    /// A CAM-only document: EF.CardAccess and DG14 list PACE-CAM and Generic Mapping, the chip
    /// authentication key only in EF.CardSecurity, no DG15.
    static let camOnly = specimen({
        $0.pace = [.init(mapping: .chipAuthenticationECDH, cipher: .aes128, parameterID: 13), .init(mapping: .genericECDH, cipher: .aes128, parameterID: 13)]
        $0.chipAuthenticationKeyInDG14 = false
        $0.activeAuthentication = nil
    }, name: "PACE-CAM only")

    static func mrzKey(_ s: MRTDSpecimen) -> MRTDAccessKey {
        let line = Array(s.mrz[1])
        return try! MRTDAccessKey.mrz(documentNumber: String(line[0..<9]), dateOfBirth: String(line[13..<19]), dateOfExpiry: String(line[21..<27]))
    }

    /// The MRZ-derived key seed (ICAO 9303 Part 11 §9.7.1: the first 16 bytes of SHA-1 of the
    /// document number, birth date and expiry with their check digits): what BAC's keys come from.
    static func keySeed(_ s: MRTDSpecimen) -> [UInt8] {
        let line = Array(s.mrz[1])
        let information = String(line[0..<10]) + String(line[13..<20]) + String(line[21..<28])
        return Array(Digest.sha1.hash(Array(information.utf8)).prefix(16))
    }

    /// What a genuine verdict vouches for: every data group read (its hash) and each proof.
    static func vouched(_ read: MRTDDocumentRead, _ report: MRTDReport) -> String {
        let groups = read.dump.dataGroups.keys.sorted().map { "DG\($0) \(Hex.encode(Array(Digest.sha256.hash(read.dump.dataGroups[$0]!).prefix(8))))" }
        return groups.joined(separator: " ") + " | SOD \(read.dump.sod.map { Hex.encode(Array(Digest.sha256.hash($0).prefix(8))) } ?? "-")"
            + " | CA \(report.chipAuthentication.status.rawValue) AA \(report.activeAuthentication.status.rawValue) PA \(report.passiveAuthentication.valid)"
            + " | withheld \(read.withheldDataGroups) protected \(read.protectedDataGroups)"
            // The access a genuine read ran: a middle must not bring a PACE chip down to BAC and
            // keep the verdict (issue 48's downgrade; the helper's revert table, row 9).
            + " | access \(read.access)"
    }

    static func shown(_ read: MRTDDocumentRead, _ report: MRTDReport) -> String {
        ([read.access.description, read.comProblem ?? "", report.withheldLine ?? "", "\(read.chipAuthentication)", "\(read.activeAuthentication)", "\(read.statistics)"]
         + report.failures + report.unprovenChipProofs + read.dump.files.map(\.name)).joined(separator: "\n")
    }

    static func read(_ name: String, _ specimen: @escaping @Sendable () -> MRTDSpecimen, expectVerdict: Bool?,
                     document change: @escaping @Sendable (inout MRTDDocument) -> Void = { _ in },
                     chip configure: @escaping @Sendable (inout MRTDChip.Configuration) -> Void = { _ in },
                     request: MRTDReadRequest = MRTDReadRequest()) -> HostileOperation {
        let s = specimen()
        // The MRZ key seed never shows; the MRZ itself is DG1's data, shown by design.
        return HostileOperation(family: "MRTD", name: "read \(name)", secrets: [.bytes(keySeed(s))], expectVerdict: expectVerdict) {
            let s = specimen()
            var document = s.document
            change(&document)
            var configuration = MRTDChip.Configuration()
            configure(&configuration)
            let chip = MRTDChip(document: document, configuration: configuration)
            return HostileRun(card: chip) { context in
                let reader = MRTDReader(transport: context.transport())
                let read = try reader.readDocument(key: mrzKey(s), request: request)
                let report = read.verify(trust: TrustStore(certificates: [try Certificate(der: s.cscaCertificate)]), at: now)
                // EF.COM is not signed, and a read does without it (EF.SOD lists the groups): shown
                // when given, as the chip wrote it, which only secure messaging's MAC ensures.
                let com = read.dump.com.map { ["EF.COM": Hex.encode($0)] } ?? [:]
                // `mrtd read --trust` exits 0 when nothing is unproven: a read that is not genuine
                // must have a reason there, or a middle has downgraded it to exit 0.
                let exitZero = report.unproven(chainAsked: true).isEmpty
                return HostileOutcome(verdict: report.genuine, vouched: vouched(read, report), shown: shown(read, report), partsIfGiven: com,
                                      unprovenExitZero: !report.genuine && exitZero)
            }
        }
    }

    static var operations: [String: HostileOperation] {
        var bac = MRTDReadRequest()
        bac.access = .bac
        return [
            "read PACE": read("PACE", { standard }, expectVerdict: true),
            "read BAC": read("BAC", { standard }, expectVerdict: true, request: bac),
            "read BAC-only chip": read("BAC-only chip", { bacOnly }, expectVerdict: true, chip: { $0.accessControl = .bac }),
            // A chip that hides EF.CardAccess while its signed DG14 lists PACE: a downgrade (issue 48).
            "read card-access-withheld": read("card-access-withheld", { standard }, expectVerdict: false, chip: { $0.accessControl = .bac }),
            "read PACE-CAM only": read("PACE-CAM only", { camOnly }, expectVerdict: true),
            // A clone of a CAM-only document offering Generic Mapping in its EF.CardAccess: the
            // proof DG14 lists was stripped (review of issue 48).
            "read cam-stripped": read("cam-stripped", { camOnly }, expectVerdict: false,
                                      document: { $0.files[.cardAccess] = MRTDMatrixTests.standard.document.files[.cardAccess] }),
            // Hostile chips (issue 48 §1): none may be called genuine.
            "read sod-lists-missing-dg11": read("sod-lists-missing-dg11", { standard }, expectVerdict: false, document: { $0.files[.dataGroup(11)] = nil }),
            "read sod-lists-missing-dg2": read("sod-lists-missing-dg2", { standard }, expectVerdict: false, document: { $0.files[.dataGroup(2)] = nil }),
            // A forged chip: the issuer's EF.SOD beside another face.
            "read altered-dg2": read("altered-dg2", { standard }, expectVerdict: false, document: { $0.files[.dataGroup(2)]![$0.files[.dataGroup(2)]!.count - 10] ^= 0x01 }),
            "read dg14-binary-curve": read("dg14-binary-curve", { binaryCurve }, expectVerdict: false),
            // EF.COM undecodable: EF.SOD's list, DG1 and DG2 still read, and the read can be genuine.
            "read com-as-text": read("com-as-text", { comAsText }, expectVerdict: true),
            // A clone: the issuer's signed files copied onto a chip that lacks the document's
            // active authentication key (it holds another document's). Passive authentication
            // holds; the chip cannot prove itself, so it is no genuine document.
            "read clone": read("clone", { bacOnly }, expectVerdict: false,
                               document: { $0.activeAuthenticationKey = MRTDMatrixTests.standard.document.activeAuthenticationKey },
                               chip: { $0.accessControl = .bac }),
        ]
    }

    static let names = operations.keys.sorted()

    @Test("every operation and hostile chip, every mutation", arguments: names)
    func matrix(_ name: String) throws {
        let report = HostileMatrix.run(try #require(Self.operations[name]))
        HostileMatrixLog.record(report)
        HostileKnownIssues.expectNoFailures(report)
    }
}
