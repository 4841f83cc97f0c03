import ISO7816
import NFCTags
import TestSupport
import VirtualCard

/// Hostile MIFARE Plus cards (`MifarePlusModel.Hostile`): each answers a write or a
/// personalisation as the data sheet says a card that did it answers, and does otherwise. The
/// clean run must not reach the verdict, and every mutated run is judged against the card as the
/// honest card's runs are: "written" only when the block holds the new bytes, "in SL3" only when
/// the card is there holding every key SL3 uses.
extension MifarePlusMatrixTests {
    static let hostile: [String: HostileOperation] = {
        let ops = [
            write(.writeDropped),
            writeKey(.keyWriteDropped),
            // A card that drops the key, and a middle who names sector 0's key A, holding the new
            // value, in the proof: the read in sector 1 gives it away.
            writeKey(.keyWriteDropped, blocks: [0x4000: new], renaming: 0x4000, label: "renamed to sector 0"),
            personalize(.sl3, hostile: .persoDropsKey),
            personalize(.sl3, hostile: .commitStaysSL0),
            personalize(.sl3, hostile: .commitToSL1),
            personalize(.sl1, hostile: .commitStaysSL0),
        ]
        return Dictionary(uniqueKeysWithValues: ops.map { ($0.name, $0) })
    }()
}
