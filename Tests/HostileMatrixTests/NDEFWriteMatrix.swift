import ISO7816
import NFCTags
import TestSupport

/// The NDEF write with its backup under the man in the middle, shared by every tag family: the
/// run, and its judge against what the tag really holds afterwards (read from its memory by the
/// reference readers, never by the library's own parser), as the fault matrix judges a cut.
enum NDEFWriteMatrix {
    /// `replaceNDEF` over the middle: "written" is the verdict; an interruption is the state it
    /// names; any other error is thrown.
    static func run(_ tag: any NDEFTag, new: [UInt8]) throws -> HostileOutcome {
        do {
            try tag.replaceNDEF(with: new) { _ in }
            return HostileOutcome(verdict: true, vouched: "written", shown: "written")
        } catch let e as WriteInterrupted {
            return HostileOutcome(verdict: false, vouched: "interrupted: \(e.state.rawValue)", shown: "\(e)")
        }
    }

    /// What the tag may hold after each interruption state, by name.
    static let allowed: [String: [String]] = [
        "interrupted: old": ["old"], "interrupted: oldOrEmpty": ["old", "empty"], "interrupted: empty": ["empty"],
        "interrupted: emptyOrNew": ["empty", "new"], "interrupted: new": ["new"], "interrupted: unknown": ["old", "empty", "new"],
    ]

    /// The run's claim against the tag: `held` the message it holds (nil: it reads as no
    /// message, `why`); written means the new message, an interruption a state it names, any
    /// other error nothing changed (`unchanged`, which a family may make stricter than "still
    /// reads as the old message": Type 4 asks for the whole file as it was). Never a mix.
    static func judge(_ result: Result<HostileOutcome, any Error>, held: [UInt8]?, why: String = "no message",
                      old: [UInt8], new: [UInt8], unchanged: () -> Bool) -> String? {
        guard let held else { return "the tag reads as \(why)" }
        let name = held == old ? "old" : held == new ? "new" : held.isEmpty ? "empty" : "a mix of \(held.count) bytes"
        guard held == old || held == new || held.isEmpty else { return "the tag holds \(name)" }
        switch result {
        case .success(let o) where o.verdict:
            return held == new ? nil : "reported written, the tag holds \(name)"
        case .success(let o):
            return allowed[o.vouched]?.contains(name) == true ? nil : "reported \(o.vouched), the tag holds \(name)"
        case .failure(let error):
            return unchanged() ? nil : "an error that claims nothing changed (\(error)), yet the tag holds \(name)"
        }
    }
}
