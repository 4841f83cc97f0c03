// Every value a card gives for a tag, where it gave it and whether offline data authentication
// covers it (issue 48): the value shown is the signed one, and a tag given with two different
// values is a conflict, named and never shown beside a verdict.
import ISO7816

struct EMVDataSightings {
    /// Which value of a tag is shown: a signed record's, else the GPO answer's (the AIP and the
    /// AFL that count are its, Book 3 §10.1), else the first.
    enum Rank: Int, Comparable {
        case signed, gpo, unsigned
        static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    }

    struct Sighting {
        var value: [UInt8]
        var source: String
        var rank: Rank
    }

    private(set) var byTag: [[UInt8]: [Sighting]] = [:]
    /// The value shown for each tag.
    private(set) var values: [[UInt8]: [UInt8]] = [:]
    private var order: [[UInt8]] = []

    mutating func add(_ tag: [UInt8], _ value: [UInt8], from source: String, rank: Rank) {
        if byTag[tag] == nil { order.append(tag) }
        byTag[tag, default: []].append(Sighting(value: value, source: source, rank: rank))
        if let shown = byTag[tag]!.min(by: { $0.rank < $1.rank }) { values[tag] = shown.value }
    }

    /// Tags a signed record gives.
    var signedTags: Set<[UInt8]> { Set(byTag.filter { $0.value.contains { $0.rank == .signed } }.keys) }

    /// Tags given with more than one value, in the order first seen, with every place each was
    /// given (values are not named: they may be a PAN).
    var conflicts: [(tag: [UInt8], sources: [String])] {
        order.compactMap { tag in
            let seen = byTag[tag]!
            guard Set(seen.map(\.value)).count > 1 else { return nil }
            var sources: [String] = []
            for s in seen where !sources.contains(s.source) { sources.append(s.source) }
            return (tag, sources)
        }
    }
}
