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

/// What a reader sees on a Type 2 tag, decided here from the bytes alone — independently of
/// the library's parser, so the library cannot grade its own work. Follows T2T 1.0: CC at
/// page 3, TLVs from byte 16, lock and memory control TLVs reserving bytes, the first NDEF TLV.
enum ReferenceType2 {
    enum Reading: Equatable, CustomStringConvertible {
        case message([UInt8])
        case broken(String)
        var description: String {
            switch self {
            case let .message(m): return "message of \(m.count) bytes"
            case let .broken(why): return "broken: \(why)"
            }
        }
    }

    /// The TLV walk: reserved bytes, where the NDEF TLV starts, and what a reader sees.
    static func walk(_ m: [UInt8]) -> (reserved: Set<Int>, ndefStart: Int?, reading: Reading) {
        guard m.count >= 16, m[12] == 0xE1, m[13] >> 4 == 1 else { return ([], nil, .broken("no valid CC")) }
        return walkTLVs(m, from: 16, end: min(16 + Int(m[14]) * 8, m.count))
    }

    /// The TLVs of `m[from..<end]` (Types 2 and 1): lock and memory control TLVs reserving bytes
    /// on top of `reserved`, the first NDEF TLV.
    static func walkTLVs(_ m: [UInt8], from: Int, end: Int, reserved initial: Set<Int> = []) -> (reserved: Set<Int>, ndefStart: Int?, reading: Reading) {
        var reserved = initial
        var p = from
        func next() -> UInt8? {
            while reserved.contains(p) { p += 1 }
            guard p < end else { return nil }
            defer { p += 1 }
            return m[p]
        }
        while true {
            while reserved.contains(p) { p += 1 }
            let start = p
            guard let tag = next() else { break }
            if tag == 0x00 { continue }
            if tag == 0xFE { break }
            guard var length = next().map(Int.init) else { return (reserved, nil, .broken("TLV cut off")) }
            if length == 0xFF {
                guard let h = next(), let l = next() else { return (reserved, nil, .broken("TLV length cut off")) }
                length = Int(h) << 8 | Int(l)
            }
            if tag == 0x01 || tag == 0x02 {
                guard length == 3, let a = next(), let b = next(), let c = next() else { return (reserved, nil, .broken("bad control TLV")) }
                let e = Int(c & 0x0F)
                let position = Int(a >> 4) << e + Int(a & 0x0F)
                let size = tag == 0x01 ? ((b == 0 ? 256 : Int(b)) + 7) / 8 : (b == 0 ? 256 : Int(b))
                reserved.formUnion(position..<(position + size))
                continue
            }
            var value: [UInt8] = []
            for _ in 0..<length {
                guard let b = next() else { return (reserved, tag == 0x03 ? start : nil, .broken("TLV \(tag) claims \(length) bytes past the data area")) }
                value.append(b)
            }
            if tag == 0x03 { return (reserved, start, .message(value)) }
        }
        return (reserved, nil, .broken("no NDEF TLV"))
    }

    static func read(_ m: [UInt8]) -> Reading { walk(m).reading }

    /// Addresses a write may change: the data area from the NDEF TLV on, less reserved bytes.
    static func writableBytes(_ m: [UInt8]) -> Set<Int> {
        let (reserved, start, _) = walk(m)
        guard let start else { return [] }
        return Set(start..<min(16 + Int(m[14]) * 8, m.count)).subtracting(reserved)
    }
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
