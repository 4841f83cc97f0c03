import ISO7816
import NFCTags
import TestSupport
import Testing
import VirtualCard

/// DESFire files under the man in the middle, as `apdu-tags desfire read` and `desfire write` run
/// them: detect, SelectApplication, an AES authentication with the files' key, GetFileSettings,
/// then the read (`contents`) or the change (`change`, with CommitTransaction where the file is
/// transactional). On an EV1 (AES `AA`, CMAC on every answer) and an EV2 (EV2First, its secure
/// messaging and command counter).
///
/// A read that returns data vouches for it (the CLI prints it as the card's): every answer is
/// MACed or enciphered with the session's keys, so a mutated run that returns data returns the
/// clean run's (invariant 2). A write is judged against the emulated card's committed files
/// afterwards (`DESFireJudge`). WriteData, Credit, WriteRecord and CommitTransaction change the
/// card (and every MACed command moves the EV2 command counter): none is sent twice in one run.
@Suite("Hostile matrix: DESFire reads and writes")
struct DESFireMatrixTests {
    typealias Model = VirtualCard.DESFireCard
    static let aid: UInt32 = 0x00D5F1
    /// The application's keys (AES, none the factory's zeros, so a leak is findable): 0 the
    /// master key, 1 reads and writes every file.
    static let keys: [[UInt8]] = (0..<3).map { k in (0..<16).map { UInt8(truncatingIfNeeded: 0x31 + k * 53 + $0 * 7) } }
    static let secrets: [HostileSecret] = keys.map { .bytes($0) }

    static func bytes(_ n: Int, seed: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ seed &* 41 &+ 7) } }

    /// Files 1 standard full (80 bytes, two frames enciphered), 2 standard MAC (80 bytes),
    /// 3 backup full (48 bytes), 4 value MAC (1000, limits 0…100000), 5 linear record full
    /// (16-byte records, two of four held): every access right key 1, change key 0. File 6,
    /// standard plain (32 bytes), is read free (a transit card's public file).
    /// `des`: the application's keys 2K3DES (the same bytes), so that an EV1 opens an ISO (`1A`)
    /// session with them, and a legacy (`0A`) one when GetVersion names an MF3ICD40.
    static func model(_ generation: Model.Generation, hostile: Model.Hostile? = nil, des: Bool = false) -> Model {
        let access = Model.AccessRights(read: 1, write: 1, readWrite: 1, change: 0)
        var app = Model.Application(aid: aid, keyType: des ? .tdes : .aes, keyCount: 3, files: [
            Model.File(number: 1, commMode: .full, access: access, content: .standard(bytes(80, seed: 1))),
            Model.File(number: 2, commMode: .mac, access: access, content: .standard(bytes(80, seed: 2))),
            Model.File(number: 3, commMode: .full, access: access, content: .backup(bytes(48, seed: 3))),
            Model.File(number: 4, commMode: .mac, access: access, content: .value(Model.ValueFile(value: 1000, lowerLimit: 0, upperLimit: 100_000))),
            Model.File(number: 5, commMode: .full, access: access,
                       content: .linearRecord(Model.RecordFile(recordSize: 16, maxRecords: 4, records: [bytes(16, seed: 5), bytes(16, seed: 6)]))),
            Model.File(number: 6, access: Model.AccessRights(read: 0xE, write: 1, readWrite: 1, change: 0), content: .standard(bytes(32, seed: 4))),
            // Plain under a key (EV2: no MAC either way), and MAC with free read that key 1 may not
            // read by right (its reads travel plain): the second review of issue 49.
            Model.File(number: 7, commMode: .plain, access: access, content: .backup(bytes(48, seed: 7))),
            Model.File(number: 8, commMode: .mac, access: Model.AccessRights(read: 0xE, write: 2, readWrite: 2, change: 0), content: .standard(bytes(32, seed: 8))),
        ])
        app.keys = keys.map { Model.Key(des ? .tdes : .aes, bytes: $0, version: des ? 0 : 1) }
        return Model(image: Model.Image(chip: Model.Chip(generation: generation), applications: [app]), hostile: hostile)
    }

    /// The CLI's steps before a read or a write: detect, select, authenticate with key 1 (the
    /// scheme the card's generation takes: AA on EV1, EV2First on EV2; none without --key),
    /// GetFileSettings.
    static func open(_ context: HostileContext, file: UInt8, authenticated: Bool = true, des: Bool = false, legacy: Bool = false) throws -> (NFCTags.DESFireCard, DESFireFileSettings) {
        guard let card = try NFCTags.DESFireCard.detect(context.transport()) else { throw TagError(.notNDEF, "not a DESFire") }
        try card.selectApplication(DESFireApplicationID(rawValue: aid)!)
        if authenticated {
            let key = des ? try DESFireKey(.tdes2, keys[1], version: 0) : try DESFireKey(.aes, keys[1], version: 1)
            // `--auth legacy` for the legacy operations: every answer and the file settings unMACed.
            try card.authenticate(keyNumber: 1, key: key, scheme: legacy ? .legacy : nil)
        }
        return (card, try card.fileSettings(file))
    }

    static let generations: [(name: String, generation: Model.Generation)] = [("DESFire EV1", .ev1), ("DESFire EV2", .ev2)]

    // MARK: - Reads

    /// `desfire read --file n`: the verdict is data returned; it vouches for the settings the
    /// CLI prints beside it (GetFileSettings is MACed in the session) and the contents.
    static func read(_ family: String, _ generation: Model.Generation, file: UInt8, name: String, hostile: Model.Hostile? = nil, des: Bool = false,
                     legacy: Bool = false, ev2Proven: Bool = true) -> HostileOperation {
        HostileOperation(family: family, name: "read \(name)" + (hostile.map { ", hostile card: \($0.rawValue)" } ?? ""), secrets: secrets,
                         expectVerdict: legacy || (generation == .ev2 && !ev2Proven) ? false : hostile == nil ? true : nil) {
            HostileRun(card: model(generation, hostile: hostile, des: des)) { context in
                let (card, settings) = try open(context, file: file, des: des, legacy: legacy)
                let contents = try card.contents(file, settings: settings)
                let shown = "file \(file): \(settings.type), \(settings.commMode), \(settings.access) \(settings.size.map(String.init) ?? "-"): \(describe(contents))"
                // The CLI's `proven`: a legacy session's answers (the settings among them) prove nothing.
                return HostileOutcome(verdict: card.answersProve(settings), vouched: shown, shown: shown)
            } claims: { result in
                // The data shown is the card's own (a fresh card's: reads change nothing), not only
                // the clean run's.
                guard case .success(let o) = result, o.verdict else { return nil }
                return o.vouched.hasSuffix(": " + describe(truth(model(generation), file: file))) ? nil
                    : "the read shows what the card does not hold: \(o.vouched)"
            }
        }
    }

    /// `desfire read --file 6` without --key: a free file read plain, with no session. Nothing
    /// in it is proven (a man in the middle may change any byte), so it earns no verdict: only
    /// invariants 1 (no trap, no hang) and 4 (no secret leaks) apply.
    static func readFree(_ family: String, _ generation: Model.Generation) -> HostileOperation {
        HostileOperation(family: family, name: "read standard plain (free, no key)", secrets: secrets, expectVerdict: false) {
            HostileRun(card: model(generation)) { context in
                let (card, settings) = try open(context, file: 6, authenticated: false)
                guard settings.access.freeRead else { throw TagError(.notNDEF, "file 6 is not free to read: give --key") }
                let shown = describe(try card.contents(6, settings: settings))
                return HostileOutcome(verdict: false, vouched: shown, shown: shown)
            }
        }
    }

    static func describe(_ contents: DESFireFileContents) -> String {
        switch contents {
        case .data(let d): return "data " + Hex.encode(d)
        case .value(let v): return "value \(v)"
        case .records(let r): return "records " + r.map { Hex.encode($0) }.joined(separator: " ")
        }
    }

    /// A file's committed contents on the emulated card.
    static func truth(_ card: Model, file: UInt8) -> DESFireFileContents {
        switch card.image.application(aid)?.file(file)?.content {
        case .standard(let d)?, .backup(let d)?: return .data(d)
        case .value(let v)?: return .value(v.value)
        case .linearRecord(let r)?, .cyclicRecord(let r)?: return .records(r.records)
        case nil: return .data([])
        }
    }

    // MARK: - Writes

    /// A write: its file, the change, and the file's contents after it.
    struct Write: Sendable {
        var name: String
        var file: UInt8
        var change: DESFireFileChange
        var new: DESFireFileContents
        /// Whether an EV2 session proves it (a plain file's change does not, whatever the commit's MAC says).
        var ev2Proven = true
    }

    static let writes: [Write] = [
        Write(name: "write standard MAC", file: 2, change: .data(bytes(80, seed: 9), offset: 0), new: .data(bytes(80, seed: 9))),
        Write(name: "write standard full", file: 1, change: .data(bytes(80, seed: 12), offset: 0), new: .data(bytes(80, seed: 12))),
        Write(name: "write backup full", file: 3, change: .data(bytes(40, seed: 10), offset: 4),
              new: .data(Array(bytes(48, seed: 3).prefix(4)) + bytes(40, seed: 10) + Array(bytes(48, seed: 3).suffix(4)))),
        Write(name: "credit value MAC", file: 4, change: .credit(250), new: .value(1250)),
        Write(name: "debit value MAC", file: 4, change: .debit(300), new: .value(700)),
        Write(name: "add record full", file: 5, change: .record(bytes(16, seed: 11), offset: 0),
              new: .records([bytes(16, seed: 5), bytes(16, seed: 6), bytes(16, seed: 11)])),
        Write(name: "clear records", file: 5, change: .clearRecords, new: .records([])),
        Write(name: "write backup plain", file: 7, change: .data(bytes(20, seed: 13), offset: 0),
              new: .data(bytes(20, seed: 13) + Array(bytes(48, seed: 7).suffix(28))), ev2Proven: false),
    ]

    /// The commands that change the card: none twice in one run (keyed by INS, as ChangeKey is:
    /// a frame after the first goes as 90 AF).
    static let counted: @Sendable ([UInt8]) -> String? = { c in
        guard c.count > 1, c[0] == 0x90 else { return nil }
        return [0x3D: "WriteData", 0x0C: "Credit", 0xDC: "Debit", 0x3B: "WriteRecord", 0xEB: "ClearRecordFile", 0xC7: "CommitTransaction"][c[1]]
    }

    /// `desfire write`: "written"/"committed" is the verdict (the receipt); `DESFireJudge` holds
    /// what every outcome says against the file's contents afterwards.
    static func write(_ family: String, _ generation: Model.Generation, _ w: Write, hostile: Model.Hostile? = nil, des: Bool = false, legacy: Bool = false) -> HostileOperation {
        HostileOperation(family: family, name: w.name + (hostile.map { ", hostile card: \($0.rawValue)" } ?? ""), secrets: secrets, counted: counted,
                         expectVerdict: legacy || (generation == .ev2 && !w.ev2Proven) ? false : hostile == nil ? true : nil) {
            let card = model(generation, hostile: hostile, des: des)
            let old = truth(card, file: w.file)
            return HostileRun(card: card) { context in
                let (desfire, settings) = try open(context, file: w.file, des: des, legacy: legacy)
                guard w.change.applies(to: settings.type) else { throw TagError(.notNDEF, "the change does not apply to a \(settings.type) file") }
                let receipt = try desfire.change(w.file, settings: settings, w.change)
                let how = receipt.type.isTransactional ? (receipt.committed ? "committed" : "not committed") : "written"
                // As the CLI: a keyed change nothing proves is exit 1, not the verdict.
                let verdict = receipt.proven && (receipt.committed || !receipt.type.isTransactional)
                return HostileOutcome(verdict: verdict, vouched: how, shown: "file \(w.file) (\(receipt.type)): \(how)\(receipt.proven ? "" : ", unproven")")
            } claims: { result in
                DESFireJudge.judge(result, held: truth(card, file: w.file), old: old, new: w.new)
            }
        }
    }

    static let operations: [HostileOperation] = generations.flatMap { family, generation in
        [read(family, generation, file: 1, name: "standard full"), read(family, generation, file: 2, name: "standard MAC"),
         read(family, generation, file: 4, name: "value MAC"), read(family, generation, file: 5, name: "records full"), readFree(family, generation),
         read(family, generation, file: 8, name: "standard MAC, free read, the key without the read right", ev2Proven: false)]
            + writes.map { write(family, generation, $0) }
    }.map(plainOnEV2) + desOperations

    /// Unproven on an EV2 by the file's plain answers; a GetVersion changed to an EV1's makes an
    /// AES session whose CMACs prove them: that verdict is judged by its claims alone.
    static func plainOnEV2(_ op: HostileOperation) -> HostileOperation {
        let plain = op.name.hasPrefix("read standard MAC, free read") || op.name == "write backup plain"
        return op.family == "DESFire EV2" && plain ? mayLoseItsClaim(op) : op
    }

    /// An EV1 whose application keys are 2K3DES: an ISO session, and a legacy one wherever a
    /// middle makes GetVersion name an MF3ICD40 (whose answers and file settings carry no MAC).
    static let desOperations: [HostileOperation] = {
        [("DESFire EV1 (2K3DES keys)", false), ("DESFire EV1 (2K3DES keys, legacy session)", true)].flatMap { family, legacy in
            [read(family, .ev1, file: 1, name: "standard full", des: true, legacy: legacy), read(family, .ev1, file: 2, name: "standard MAC", des: true, legacy: legacy)]
                + writes.filter { ["write standard MAC", "write backup full", "credit value MAC"].contains($0.name) }.map { write(family, .ev1, $0, des: true, legacy: legacy) }
        }
    }()

    /// The clean card's operations, then the hostile cards' (`DESFireHostileCards.swift`).
    static let all = operations + hostileOperations

    @Test("desfire read and write through the man in the middle, and on hostile cards", arguments: all.map { "\($0.family) \($0.name)" })
    func matrix(_ name: String) throws {
        let op = try #require(Self.all.first { "\($0.family) \($0.name)" == name })
        let report = HostileMatrix.run(op)
        HostileMatrixLog.record(report)
        HostileKnownIssues.expectNoFailures(report)
    }
}

/// What a write's outcome says about the file, against what the card holds after it:
/// - "written"/"committed" (the receipt): the new contents;
/// - `DESFireInterrupted`: its state's promise (unchanged and uncommitted: the old contents;
///   commit unknown and done-or-not: the old or the new; partly written: the old, the new, or
///   the new bytes up to some point; done: the new);
/// - any other error (a refusal, a MAC that fails before the change): the old contents.
/// Never a third value (a credit twice, a record added twice).
enum DESFireJudge {
    static func judge(_ result: Result<HostileOutcome, any Error>, held: DESFireFileContents, old: DESFireFileContents, new: DESFireFileContents) -> String? {
        let name = held == old ? "old" : held == new ? "new" : "a third value (\(DESFireMatrixTests.describe(held)))"
        switch result {
        case .success(let o) where o.verdict:
            return held == new ? nil : "reported \(o.vouched), the card holds \(name)"
        case .success(let o):
            return held == old || held == new ? nil : "reported \(o.vouched), the card holds \(name)"
        case .failure(let e as DESFireInterrupted):
            let allowed: Bool
            switch e.state {
            case .unchanged, .uncommitted: allowed = held == old
            case .commitUnknown, .doneOrNot: allowed = held == old || held == new
            case .notAsAnswered: allowed = held != new
            case .partlyWritten: allowed = held == old || held == new || prefixOfNew(held, old: old, new: new)
            case .done: allowed = held == new
            }
            return allowed ? nil : "reported \(e.state) (\(e)), the card holds \(name)"
        case .failure(let e):
            return held == old ? nil : "an error that claims nothing changed (\(e)), yet the card holds \(name)"
        }
    }

    /// New bytes up to some point, old ones after (a standard data file's write cut short).
    static func prefixOfNew(_ held: DESFireFileContents, old: DESFireFileContents, new: DESFireFileContents) -> Bool {
        guard case .data(let h) = held, case .data(let o) = old, case .data(let n) = new, h.count == o.count, n.count == o.count else { return false }
        return (0...h.count).contains { h == Array(n.prefix($0)) + o.dropFirst($0) }
    }
}
