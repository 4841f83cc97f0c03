// The hostile matrix (issue 49): every operation run clean, then once per (exchange, mutation)
// with that one answer replaced, each run judged by five invariants.
//
// How to add an operation (a family's tests, in-process, no pcscd):
//
//     let op = HostileOperation(family: "EMV", name: "read",
//                               secrets: [.text(pan), .bytes(track2)],
//                               counted: { $0.count > 1 && $0[1] == 0xA8 ? "GET PROCESSING OPTIONS" : nil }) {
//         let card = PaymentCardModel(.visa)                 // a fresh card for every run
//         return HostileRun(card: card) { context in         // the body: the library over the man in the middle
//             let read = try PaymentCardReader(transport: context.transport(), ...).read()
//             return HostileOutcome(verdict: read.oda.result == .verified,
//                                   vouched: "\(read.pan) \(read.oda.method)", shown: "…everything printed…")
//         } claims: { result in nil }                        // optional: the card's real state against what the run said
//     }
//     let report = HostileMatrix.run(op)                     // sample, or every case under APDU_HOSTILE_FULL=1
//     #expect(report.failures.isEmpty, "\(report)")
//
// The invariants (`HostileInvariant`):
// 1. no trap, no hang: a value or a thrown error, within a bounded number of exchanges (a trap
//    cannot be caught in-process: `HostileTrapNote` names the case on the way down);
// 2. the same verdict means the same answer: a mutated run whose `verdict` is true vouches for
//    exactly what the clean run vouched for; the clean run's verdict is the one expected
//    (`expectVerdict`: false for a hostile card that cannot prove itself);
// 3. claims match the card: `claims` compares what the run said with the card's state;
// 4. no secret leaks: no `secrets` in `shown`, the error's text, or the redacted trace;
// 5. counted commands once: no key `counted` gives is sent twice in one run.
import Foundation
import ISO7816
import VirtualCard

/// What a run ended with, as a user would see it.
public struct HostileOutcome: Sendable {
    /// The run ends with the verdict its operation promises: verified, genuine, done, exit 0.
    public var verdict: Bool
    /// What that verdict vouches for (the data and the proofs run), compared with the clean run's.
    public var vouched: String
    /// Everything the run shows (text, JSON, notes), searched for secrets.
    public var shown: String
    /// Parts shown beside the verdict only when the card gave them (an unsigned file a reader may
    /// do without): one the mutated run shows must equal the clean run's; one it leaves out is
    /// no claim.
    public var partsIfGiven: [String: String]
    /// The run ends without the verdict, yet in a way a script takes as success (exit 0: "no
    /// key for this scheme", "not verified"). A card that earns the verdict in the clean run
    /// must not be brought there by a man in the middle: under a mutation it ends verified with
    /// the same answer, or failed (a non-zero exit), never downgraded to an unproven exit 0.
    public var unprovenExitZero: Bool

    public init(verdict: Bool, vouched: String, shown: String, partsIfGiven: [String: String] = [:], unprovenExitZero: Bool = false) {
        self.verdict = verdict
        self.vouched = vouched
        self.shown = shown
        self.partsIfGiven = partsIfGiven
        self.unprovenExitZero = unprovenExitZero
    }
}

/// A secret the card holds, searched for in every output.
public enum HostileSecret: Sendable, Hashable, CustomStringConvertible {
    /// Bytes, found as hex (either case, with or without spaces) or raw.
    case bytes([UInt8])
    /// Text (a PAN's digits, a PIN), found as it is.
    case text(String)

    public var description: String {
        switch self {
        case .bytes(let b): "bytes \(b.count)"
        case .text(let t): "text of \(t.count) characters"
        }
    }

    func found(in haystack: String) -> Bool {
        switch self {
        case .text(let t): return !t.isEmpty && haystack.contains(t)
        case .bytes(let b):
            guard b.count >= 4 else { return false }
            let upper = Hex.encode(b), spaced = Hex.encode(b, separator: " ")
            let flat = haystack.uppercased()
            return flat.contains(upper) || flat.contains(spaced) || haystack.utf8.count >= b.count && Array(haystack.utf8).firstRange(of: b) != nil
        }
    }
}

/// One run's context: the man in the middle, and the trace the run leaves.
public final class HostileContext {
    public let channel: HostileChannel
    /// Every logical exchange the transport observed, with its secret marks.
    public private(set) var trace: [Exchange] = []
    init(channel: HostileChannel) { self.channel = channel }

    /// Records an exchange for the trace (pass it as `APDUTransport`'s observer).
    public func record(_ exchange: Exchange) { trace.append(exchange) }

    /// An `APDUTransport` over the man in the middle, its exchanges recorded for the trace.
    public func transport(policy: TransmissionPolicy = .standard) -> APDUTransport {
        APDUTransport(channel: channel, policy: policy, observer: { [unowned self] in self.record($0) })
    }

    /// The trace as `--trace` prints it: redacted.
    public var traceText: String {
        trace.map { Redaction.hex($0) + " -> " + Redaction.responseHex($0) }.joined(separator: "\n")
    }
}

/// One run of an operation: a fresh card, the body over the man in the middle, and the judge of
/// the card's state.
public struct HostileRun {
    public var card: any EmulatedCard
    public var supportsExtendedLength: Bool
    public var body: (HostileContext) throws -> HostileOutcome
    /// What the run said (its outcome or error) against the card's real state: nil when they
    /// agree, else the disagreement.
    public var claims: ((Result<HostileOutcome, any Error>) -> String?)?

    public init(card: any EmulatedCard, supportsExtendedLength: Bool = true, body: @escaping (HostileContext) throws -> HostileOutcome,
                claims: ((Result<HostileOutcome, any Error>) -> String?)? = nil) {
        self.card = card
        self.supportsExtendedLength = supportsExtendedLength
        self.body = body
        self.claims = claims
    }
}

/// An operation of a family, as the matrix runs it.
public struct HostileOperation: Sendable {
    public var family: String
    public var name: String
    public var secrets: [HostileSecret]
    /// The key of a command that moves a card counter (nil for any other): no key twice in one run.
    public var counted: @Sendable ([UInt8]) -> String?
    /// The clean run's verdict: true for a card that proves itself, false for a hostile card
    /// that cannot (a DDOL without 9F37), nil when either is right.
    public var expectVerdict: Bool?
    /// Whether a mutated run may reach the verdict a clean run of this card does not: only a
    /// hostile card whose fault is an extra the man in the middle can take away (an unsigned
    /// record beside signed ones); its verdict is then judged by `claims` alone.
    public var mutationMayEarnVerdict = false
    /// The mutations to run (all of them unless a family says otherwise).
    public var mutations: [HostileMutation]
    /// Makes a fresh card and the run over it.
    public var makeRun: @Sendable () -> HostileRun

    public init(family: String, name: String, secrets: [HostileSecret] = [], counted: @escaping @Sendable ([UInt8]) -> String? = { _ in nil },
                expectVerdict: Bool? = true, mutations: [HostileMutation] = HostileMutation.allCases,
                makeRun: @escaping @Sendable () -> HostileRun) {
        self.family = family
        self.name = name
        self.secrets = secrets
        self.counted = counted
        self.expectVerdict = expectVerdict
        self.mutations = mutations
        self.makeRun = makeRun
    }
}

/// The invariants of issue 49, numbered as there.
public enum HostileInvariant: Int, Sendable, CaseIterable, CustomStringConvertible {
    case noTrap = 1, sameVerdict, claims, noSecrets, countedOnce
    public var description: String {
        switch self {
        case .noTrap: "1 no trap, no hang"
        case .sameVerdict: "2 same verdict, same answer"
        case .claims: "3 claims match the card"
        case .noSecrets: "4 no secret leaks"
        case .countedOnce: "5 counted commands once"
        }
    }
}

/// One broken invariant, naming its case.
public struct HostileFailure: Sendable, CustomStringConvertible {
    public var invariant: HostileInvariant
    public var family: String
    public var operation: String
    /// nil: the clean run.
    public var exchange: Int?
    /// The mutation's name (`HostileMutation.description`, or a `HostileLineMutation`'s).
    public var mutation: String?
    public var detail: String

    /// "EMV read exchange 5 tlv-empty", or "EMV read clean".
    public var caseName: String {
        "\(family) \(operation) " + (exchange.map { "exchange \($0) \(mutation ?? "")" } ?? "clean")
    }
    public var description: String { "\(caseName): invariant \(invariant): \(detail)" }
}

/// What a matrix run did and found.
public struct HostileReport: Sendable, CustomStringConvertible {
    public var family: String
    public var operation: String
    /// Runs made, the clean one included.
    public var runs = 0
    /// The clean run's exchanges (the positions mutated).
    public var exchanges = 0
    /// Exchanges sent in every run together.
    public var exchangesSent = 0
    /// Runs per mutation that were applied.
    public var mutations: [String: Int] = [:]
    /// Cases skipped: the mutation had nothing to act on (no data to cut, no TLV, no earlier answer).
    public var notApplicable = 0
    /// How the product met the applied mutations: a thrown error, a verdict withheld, the same
    /// verdict with the same answer (the mutation changed nothing the verdict covers).
    public var threw = 0, verdictWithheld = 0, sameAnswer = 0
    /// Failures by invariant.
    public var failures: [HostileFailure] = []
    public var seconds = 0.0

    public func caught(_ invariant: HostileInvariant) -> Int { failures.filter { $0.invariant == invariant }.count }

    public var description: String {
        var lines = ["\(family) \(operation): \(runs) runs, \(exchanges) exchanges mutated, \(mutations.count) mutations, \(exchangesSent) exchanges sent, "
                     + "\(notApplicable) cases not applicable; the product threw \(threw), withheld its verdict \(verdictWithheld), kept it with the same answer \(sameAnswer); "
                     + HostileInvariant.allCases.map { "invariant \($0.rawValue) caught \(caught($0))" }.joined(separator: ", ")
                     + String(format: "; %.1f s", seconds)]
        lines += failures.prefix(40).map { "  \($0)" }
        if failures.count > 40 { lines.append("  … and \(failures.count - 40) more") }
        return lines.joined(separator: "\n")
    }
}

/// Runs the matrix.
public enum HostileMatrix {
    /// Every (exchange, mutation) case (`APDU_HOSTILE_FULL=1`), or the sample: every mutation and
    /// every exchange at least once, about `budget` runs per operation.
    public enum Mode: Sendable, Equatable {
        case full
        case sample(budget: Int)
        /// `APDU_HOSTILE_FULL=1` gives `.full`, anything else the sample.
        public static func fromEnvironment(budget: Int = 300) -> Mode {
            ProcessInfo.processInfo.environment["APDU_HOSTILE_FULL"] == "1" ? .full : .sample(budget: budget)
        }
    }

    /// The cases of a mode over `exchanges` positions.
    public static func cases(exchanges n: Int, mutations: [HostileMutation], mode: Mode) -> [(Int, HostileMutation)] {
        guard n > 0 else { return [] }
        switch mode {
        case .full:
            return (0..<n).flatMap { i in mutations.map { (i, $0) } }
        case .sample(let budget):
            // Each mutation at every s-th exchange, offset by its place, so the mutations
            // together reach every exchange and each reaches at least one.
            let s = max(1, (n * mutations.count + budget - 1) / max(budget, 1))
            var out: [(Int, HostileMutation)] = []
            for (k, m) in mutations.enumerated() {
                let picks = Array(stride(from: k % s, to: n, by: s))
                out += (picks.isEmpty ? [k % n] : picks).map { ($0, m) }
            }
            return out
        }
    }

    /// Runs `operation` clean, then every case of `mode`, and judges each run.
    public static func run(_ operation: HostileOperation, mode: Mode = .fromEnvironment()) -> HostileReport {
        let start = ContinuousClock.now
        var report = HostileReport(family: operation.family, operation: operation.name)
        let note = HostileTrapNote.slot()
        defer { HostileTrapNote.release(note) }

        note.set("\(operation.family) \(operation.name) clean")
        let clean = execute(operation, target: nil, mutation: nil, limit: 100_000, earlier: [])
        report.runs += 1
        report.exchangesSent += clean.channel.exchanges.count
        report.exchanges = clean.channel.exchanges.count
        judge(operation, clean, clean: nil, exchange: nil, mutation: nil, into: &report)
        let cleanOutcome: HostileOutcome
        switch clean.result {
        case .success(let outcome): cleanOutcome = outcome
        case .failure(let error):
            // A hostile card may end every run in an error; a card that proves itself may not.
            if operation.expectVerdict == true {
                report.failures.append(HostileFailure(invariant: .sameVerdict, family: operation.family, operation: operation.name, exchange: nil,
                                                      mutation: nil, detail: "the clean run failed: \(error)"))
                report.seconds = seconds(since: start)
                return report
            }
            cleanOutcome = HostileOutcome(verdict: false, vouched: "(the clean run threw: \(error))", shown: "")
        }
        let cleanExchanges = clean.channel.exchanges
        let limit = max(64, cleanExchanges.count * 4 + 64)
        /// Whether `mutation` has anything to act on at exchange `i`, judged on the clean run's answer.
        func applies(_ mutation: HostileMutation, at i: Int) -> Bool {
            guard mutation != .transmitError, mutation != .withheld else { return true }
            let key = HostileChannel.replayKey(cleanExchanges[i].command)
            let before = cleanExchanges[..<i].filter { HostileChannel.replayKey($0.command) == key }.map(\.response)
            let prior = mutation == .replay ? [cleanExchanges[i].response] + before : before
            return mutation.apply(to: cleanExchanges[i].response, earlier: prior) != nil || (mutation == .replay && !prior.isEmpty)
        }
        func attempt(_ i: Int, _ mutation: HostileMutation) {
            note.set("\(operation.family) \(operation.name) exchange \(i) \(mutation)")
            let run = execute(operation, target: i, mutation: mutation, limit: limit, earlier: cleanExchanges)
            report.runs += 1
            report.exchangesSent += run.channel.exchanges.count
            guard run.channel.applied != nil else { report.notApplicable += 1; return }
            report.mutations[mutation.description, default: 0] += 1
            switch run.result {
            case .failure: report.threw += 1
            case .success(let o) where !o.verdict: report.verdictWithheld += 1
            case .success: report.sameAnswer += 1
            }
            judge(operation, run, clean: cleanOutcome, exchange: i, mutation: mutation, into: &report)
        }
        for (i, mutation) in cases(exchanges: cleanExchanges.count, mutations: operation.mutations, mode: mode) {
            guard applies(mutation, at: i) else { report.notApplicable += 1; continue }
            attempt(i, mutation)
        }
        // The sample's promise, every mutation at least once: one whose picks all missed (no TLV,
        // no signature-sized block there) goes to the first exchange it can act on.
        if case .sample = mode {
            for mutation in operation.mutations where report.mutations[mutation.description] == nil {
                if let i = cleanExchanges.indices.first(where: { applies(mutation, at: $0) }) { attempt(i, mutation) }
            }
        }
        report.seconds = seconds(since: start)
        return report
    }

    struct Executed {
        var channel: HostileChannel
        var context: HostileContext
        var result: Result<HostileOutcome, any Error>
        var claims: String?
    }

    static func execute(_ operation: HostileOperation, target: Int?, mutation: HostileMutation?, limit: Int,
                        earlier: [(command: [UInt8], response: [UInt8])]) -> Executed {
        let run = operation.makeRun()
        let channel = HostileChannel(card: run.card, supportsExtendedLength: run.supportsExtendedLength, target: target, mutation: mutation,
                                     limit: limit, earlier: earlier)
        let context = HostileContext(channel: channel)
        let result = Result { try run.body(context) }
        return Executed(channel: channel, context: context, result: result, claims: run.claims?(result))
    }

    static func judge(_ op: HostileOperation, _ run: Executed, clean: HostileOutcome?, exchange: Int?, mutation: HostileMutation?,
                      into report: inout HostileReport) {
        func fail(_ invariant: HostileInvariant, _ detail: String) {
            report.failures.append(HostileFailure(invariant: invariant, family: op.family, operation: op.name, exchange: exchange,
                                                  mutation: mutation?.description, detail: detail))
        }
        // 1: no hang (a trap never gets here: HostileTrapNote names it).
        if run.channel.hitLimit { fail(.noTrap, "the run did not end within \(run.channel.exchanges.count) exchanges") }
        // 2: the same verdict means the same answer.
        switch run.result {
        case .success(let outcome):
            if let clean {
                if outcome.verdict && !clean.verdict && op.mutationMayEarnVerdict {
                    // judged by claims alone
                } else if outcome.verdict && !clean.verdict {
                    fail(.sameVerdict, "the mutated run reached the verdict the clean run did not: \(outcome.vouched)")
                } else if outcome.verdict && outcome.vouched != clean.vouched {
                    fail(.sameVerdict, "verdict kept with another answer:\n    mutated: \(outcome.vouched)\n    clean:   \(clean.vouched)")
                } else if outcome.verdict {
                    for (part, value) in outcome.partsIfGiven.sorted(by: { $0.key < $1.key }) where clean.partsIfGiven[part] != value {
                        fail(.sameVerdict, "verdict kept with another \(part): \(value), clean \(clean.partsIfGiven[part] ?? "not given")")
                    }
                } else if clean.verdict && outcome.unprovenExitZero {
                    fail(.sameVerdict, "downgraded: the clean run earns the verdict, this one ends unproven with exit 0: \(outcome.vouched)")
                }
            } else if let expected = op.expectVerdict, outcome.verdict != expected {
                fail(.sameVerdict, "the clean run's verdict is \(outcome.verdict), the card's truth \(expected): \(outcome.vouched)")
            }
        case .failure:
            break
        }
        // 3: claims match the card.
        if let disagreement = run.claims { fail(.claims, disagreement) }
        // 4: no secrets in what the run shows, its error or its trace.
        var shown = run.context.traceText
        switch run.result {
        case .success(let o): shown += "\n" + o.shown
        case .failure(let e): shown += "\n" + String(describing: e)
        }
        for secret in op.secrets where secret.found(in: shown) {
            fail(.noSecrets, "a secret (\(secret)) is in the output or the trace")
        }
        // 5: counted commands once.
        var seen: [String: Int] = [:]
        for e in run.channel.exchanges { if let key = op.counted(e.command) { seen[key, default: 0] += 1 } }
        for (key, n) in seen.sorted(by: { $0.key < $1.key }) where n > 1 { fail(.countedOnce, "\(key) sent \(n) times") }
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let d = ContinuousClock.now - start
        return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
}
