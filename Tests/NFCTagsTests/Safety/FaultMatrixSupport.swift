import Foundation
import ISO7816
import NFCTags
import Testing
import VirtualCard

/// The card went away: what a cut channel throws.
struct CardPulled: Error, CustomStringConvertible {
    var description: String { "the card was removed" }
}

/// A channel to an emulated card that is pulled after `budget` exchanges: the next command is
/// either never executed (`.beforeExecution`) or executed with its answer lost
/// (`.answerLost`) — the two things a pull can do to the APDU in flight.
final class CutChannel: CardChannel {
    enum Mode: CaseIterable { case beforeExecution, answerLost }
    let card: any EmulatedCard
    var budget: Int?
    let mode: Mode
    private(set) var exchanges = 0
    var supportsExtendedLength: Bool

    init(card: any EmulatedCard, cutAfter budget: Int?, mode: Mode = .beforeExecution, extendedLength: Bool = true) {
        self.card = card
        self.budget = budget
        self.mode = mode
        supportsExtendedLength = extendedLength
    }

    func transmit(_ command: [UInt8]) throws -> [UInt8] {
        if let budget, exchanges >= budget {
            if mode == .answerLost && !wasCut { _ = card.process(command) }
            wasCut = true
            throw CardPulled()
        }
        exchanges += 1
        return card.process(command)
    }

    private(set) var wasCut = false
}


/// Messages of an exact size with recognisable bytes (the tag layer writes any bytes).
func patternMessage(_ size: Int, seed: Int) -> [UInt8] {
    (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed &* 7 &+ 1) }
}

/// The message sizes at the boundaries: 0, 1, 254/255/256 (1- and 3-byte TLV lengths), the
/// capacity and one less.
func boundarySizes(capacity: Int) -> [Int] {
    Array(Set([0, 1, 254, 255, 256, capacity - 1, capacity].filter { $0 >= 0 && $0 <= capacity })).sorted()
}

/// `APDU_FULL_MATRIX=1` (Scripts/stress): every size on every configuration, however slow.
let fullMatrix = ProcessInfo.processInfo.environment["APDU_FULL_MATRIX"] == "1"

/// Watches a write's progress reports (`NDEFTag.writeObserver`): the steps must come numbered
/// 1, 2, … against one total planned before the first; a finished write must report exactly
/// that many, the read-back last; and a write cut short must name, as the step it failed in,
/// the last step it reported.
final class StepLog {
    private(set) var steps: [WriteStep] = []

    func attach(_ tag: any NDEFTag) {
        tag.writeObserver = { [unowned self] in steps.append($0) }
    }

    /// What is wrong with the reports, for a write that `finished` or failed with `failure`.
    func problems(finished: Bool, failure: WriteInterrupted? = nil) -> [String] {
        var out: [String] = []
        if steps.enumerated().contains(where: { $0.offset + 1 != $0.element.number }) {
            out.append("steps numbered \(steps.map(\.number))")
        }
        if Set(steps.map(\.total)).count > 1 { out.append("the total changed: \(steps.map(\.total))") }
        if let total = steps.first?.total, steps.count > total { out.append("\(steps.count) steps of \(total)") }
        if finished, let last = steps.last {
            if steps.count != last.total { out.append("finished after \(steps.count) of \(last.total) steps") }
            if !last.action.hasPrefix("read") { out.append("the last step is '\(last.action)', not the read-back") }
        }
        if let failure, steps.contains(where: { $0.action == failure.step }), steps.last?.action != failure.step {
            out.append("failed in '\(failure.step)', but the last step reported was '\(steps.last?.action ?? "-")'")
        }
        return out
    }

    /// Records each of `problems(finished:failure:)` as an issue, naming the case.
    func expectSound(finished: Bool, failure: WriteInterrupted? = nil, _ context: @autoclosure () -> String,
                     sourceLocation: SourceLocation = #_sourceLocation) {
        for problem in problems(finished: finished, failure: failure) {
            Issue.record("\(context()): \(problem)", sourceLocation: sourceLocation)
        }
    }
}
