// Names in DG11 and DG12 (ICAO 9303 Part 10 §4.7.11, §4.7.12): the primary and secondary
// identifiers separated by `<<`, as in the MRZ but in national characters and not truncated.

/// A name as DG11/DG12 store it, split into surname and given names.
public struct PersonName: Sendable, Hashable {
    /// The text as stored (`SMITH<<JOHN<J`).
    public var text: String
    /// The primary identifier, fillers turned into spaces.
    public var surname: String
    /// The secondary identifier, fillers turned into spaces; empty when none.
    public var givenNames: String

    /// Splits `text` at its first `<<` into surname and given names.
    public init(text: String) {
        self.text = text
        func spaced(_ s: Substring) -> String {
            s.split(separator: "<", omittingEmptySubsequences: true).map { $0.trimmingSpaces() }.filter { !$0.isEmpty }.joined(separator: " ")
        }
        if let split = text.firstRange(of: "<<") {
            surname = spaced(text[..<split.lowerBound])
            givenNames = spaced(text[split.upperBound...])
        } else {
            surname = spaced(Substring(text))
            givenNames = ""
        }
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces (no Foundation here).
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return String(s)
    }
}
