import EMV
import ISO7816
import TestSupport
import Testing
import VirtualCard

/// Payment cards under the man in the middle: `emv read` (with offline data authentication) and
/// `emv info` on every profile, and the hostile cards of issue 48, each judged by the five
/// invariants of issue 49.
@Suite("Hostile matrix: EMV")
struct EMVMatrixTests {
    static let keys = CAPublicKeys(try! CAPublicKeys.parse(capkFile: PaymentCardModel.caKeyFile, test: true))

    /// GET PROCESSING OPTIONS moves the card's ATC: once per session.
    static let counted: @Sendable ([UInt8]) -> String? = { $0.count > 1 && $0[1] == 0xA8 ? "GET PROCESSING OPTIONS" : nil }

    static func secrets(_ card: PaymentCardModel) -> [HostileSecret] {
        [.text(card.pan)]
    }

    /// What `apdu emv read` shows, PAN masked as it prints it.
    static func shown(_ read: PaymentCardRead) -> String {
        var lines = [read.application.label ?? "", read.pan.map(EMVMasking.masked) ?? "no PAN", "\(read.oda.method) \(read.oda.result) \(read.oda.reason ?? "")"]
        lines += read.notes + read.conflicts + read.unreadableRecords
        lines += read.log.map { "\($0.amount.map(String.init) ?? "") \($0.currency ?? "") \($0.date ?? "")" }
        return lines.joined(separator: "\n")
    }

    /// What a verified verdict vouches for: the card's identity and the proof run.
    static func vouched(_ read: PaymentCardRead) -> String {
        // Not the cardholder name: a card may give it in an unsigned record (the Mastercard
        // profile does), where no verdict covers it, and `emv read` shows it only with --show-pan.
        return "AID \(Hex.encode(read.application.aid)) PAN \(read.pan ?? "-") (proven \(read.panProven)) expiry \(read.expiry.map { "\($0)" } ?? "-") "
            + "ODA \(read.oda.method) \(read.oda.result) CA \(read.oda.caIndex.map { Hex.encode([$0]) } ?? "-") DAC \(read.oda.dataAuthenticationCode.map { Hex.encode($0) } ?? "-")"
    }

    static func read(_ name: String, expectVerdict: Bool?, mutationMayEarnVerdict: Bool = false, relabel: (real: [UInt8], shown: [UInt8])? = nil,
                     card make: @escaping @Sendable () -> PaymentCardModel) -> HostileOperation {
        let sample = make()
        // Beside the issue's mutations, the fields a middle changes to downgrade a proof: the
        // AIP's DDA bit (a CDA card then spared INTERNAL AUTHENTICATE) and the CA key index 8F
        // (a proof turned into "no key"): judged by the downgrade clause of invariant 2.
        let fields: [HostileMutation] = [.tlvXor(tag: [0x82], mask: [0x20]), .tlvXor(tag: [0x80], mask: [0x20]), .tlvXor(tag: [0x8F], mask: [0x01])]
        var op = HostileOperation(family: "EMV", name: "read \(name)", secrets: secrets(sample), counted: counted, expectVerdict: expectVerdict,
                                  mutations: HostileMutation.allCases + fields) {
            let card = make()
            let seen: any EmulatedCard = relabel.map { RelabellingMiddle(card, real: $0.real, shown: $0.shown) } ?? card
            return HostileRun(card: seen) { context in
                let reader = PaymentCardReader(transport: context.transport(), caKeys: keys, terminal: TerminalData(date: [0x26, 0x11, 0x27]))
                let read = try reader.read()
                // `emv read` exits 0 unless ODA failed (65) or the CA index is unknown (1).
                let exitZero = read.oda.result != .failed && read.oda.result != .unknownCAIndex
                let verdict = read.oda.result == .verified && read.conflicts.isEmpty
                return HostileOutcome(verdict: verdict, vouched: vouched(read), shown: shown(read), unprovenExitZero: !verdict && exitZero)
            } claims: { result in
                // A card listed under another scheme's AID by a middle who passes the SELECT on
                // under the real one is given away by its FCI's DF name: failed, never the
                // unproven exit 0 of "no CA key" (issue 48, the review's downgrade).
                if relabel != nil, case .success(let o) = result, o.unprovenExitZero {
                    return "relabelled: ended unproven with exit 0 (\(o.vouched))"
                }
                // A verified read names the card's own PAN (the emulator's truth), never another.
                guard case .success(let o) = result, o.verdict else { return nil }
                return o.vouched.contains("PAN \(card.pan) ") ? nil : "verified, but the PAN shown is not the card's (\(card.pan)): \(o.vouched)"
            }
        }
        op.mutationMayEarnVerdict = mutationMayEarnVerdict
        return op
    }

    static func info(_ profile: PaymentCardModel.Profile) -> HostileOperation {
        let sample = PaymentCardModel(profile)
        return HostileOperation(family: "EMV", name: "info \(profile)", secrets: secrets(sample), counted: counted, expectVerdict: nil) {
            let card = PaymentCardModel(profile)
            return HostileRun(card: card) { context in
                let apps = try PaymentCardReader(transport: context.transport(), caKeys: keys, terminal: TerminalData(date: [0x26, 0x11, 0x27])).applications()
                let text = apps.map { "\(Hex.encode($0.aid)) \($0.label ?? "") \($0.priority.map(String.init) ?? "")" }.joined(separator: "\n")
                return HostileOutcome(verdict: false, vouched: text, shown: text)
            }
        }
    }

    static var operations: [String: HostileOperation] {
        var ops: [String: HostileOperation] = [:]
        for profile in PaymentCardModel.Profile.allCases {
            // A card without ODA (contact, interac) reads without a verdict to earn.
            let proves = profile == .visa || profile == .mastercard || profile == .amex
            ops["read \(profile)"] = read("\(profile)", expectVerdict: proves ? true : false) { PaymentCardModel(profile) }
            ops["info \(profile)"] = info(profile)
        }
        // The directory lists the card under Discover's RID (no key for it here) and the middle
        // passes the SELECT on under the real AID: the review's downgrade of issue 48.
        ops["read visa relabelled"] = read("visa relabelled", expectVerdict: false,
                                           relabel: ([0xA0, 0x00, 0x00, 0x00, 0x03, 0x10, 0x10], [0xA0, 0x00, 0x00, 0x01, 0x52, 0x30, 0x10])) {
            PaymentCardModel(.visa)
        }
        for hostile in PaymentCardModel.Hostile.allCases {
            // None of them can prove itself: each must end unverified (issue 48 §2).
            // The unsigned record first: a man in the middle who withholds it leaves the card's
            // signed records alone, which may verify (its PAN then the card's: `claims`).
            ops["read \(hostile.rawValue)"] = read(hostile.rawValue, expectVerdict: false, mutationMayEarnVerdict: hostile == .unsignedRecordFirst) {
                PaymentCardModel(hostile: hostile)
            }
        }
        return ops
    }

    static let names = operations.keys.sorted()

    @Test("every operation and hostile card, every mutation", arguments: names)
    func matrix(_ name: String) throws {
        let report = HostileMatrix.run(try #require(Self.operations[name]))
        HostileMatrixLog.record(report)
        HostileKnownIssues.expectNoFailures(report)
    }
}
