import NFCTags
import TestSupport
import VirtualCard

/// DESFire cards that break a rule of their own data sheet (`VirtualCard.DESFireCard.Hostile`),
/// run through the same reads and writes and judged by the same invariants: the read's data is
/// the card's own, a write's report holds against the file afterwards (`DESFireJudge`). Each
/// clean run may end in an error (`expectVerdict: nil`): a card that contradicts itself cannot
/// prove what it holds, and the library must not claim it did.
extension DESFireMatrixTests {
    /// The transactional writes: the changes CommitTransaction makes valid.
    static let committedWrites = writes.filter { [3, 4, 5].contains($0.file) }

    static let hostileOperations: [HostileOperation] = generations.flatMap { family, generation in
        [Model.Hostile.fileSizeLarger, .fileSizeSmaller].flatMap { hostile in
            [read(family, generation, file: 1, name: "standard full", hostile: hostile),
             read(family, generation, file: 2, name: "standard MAC", hostile: hostile)]
        } + committedWrites.map { write(family, generation, $0, hostile: .commitIgnored) }
    } + [
        // GetVersion says EV2, EV2First is refused: only an EV2 can say so.
        read("DESFire EV2", .ev2, file: 1, name: "standard full", hostile: .ev2WithoutEV2First),
        write("DESFire EV2", .ev2, writes[3], hostile: .ev2WithoutEV2First),
    ].map(mayLoseItsClaim)

    /// The card's fault is a claim GetVersion makes without a MAC (EV2): a man in the middle who
    /// changes it (an EV1's version) leads the library to AuthenticateAES (AA), which this card
    /// takes, so a mutated run may earn the verdict the clean run cannot. Such a verdict rests on
    /// the AES session's MACs and is judged by the claims alone: the data read is the card's,
    /// the value written is the card's.
    static func mayLoseItsClaim(_ op: HostileOperation) -> HostileOperation {
        var op = op
        op.mutationMayEarnVerdict = true
        return op
    }
}
