// A MIFARE Classic card reached through whichever reader holds it, inside one transaction.
import ISO7816
import NFCTags
import PCSC

/// A MIFARE Classic card through whatever reader holds it: its keys, blocks and trailers by the
/// reader's PC/SC Part 3 pseudo-APDUs (LOAD KEYS, GENERAL AUTHENTICATE, READ / UPDATE BINARY).
public enum MifareClassicSession {
    /// Chooses the reader, connects, begins a transaction, checks that the card is a MIFARE
    /// Classic (Mini, 1K, 4K, Plus in SL1) by its ATR, reads its UID and runs `body`. The
    /// transaction and the connection end on every path.
    /// - Parameters:
    ///   - requested: a reader name, index or unique part of a name; nil for the only reader with a card.
    ///   - wait: how long to wait for a card; nil: not at all.
    ///   - observer: sees every APDU exchanged (keys marked as secrets).
    ///   - keySlot: the reader key slot LOAD KEYS fills (00 on most readers).
    ///   - body: the work, inside the transaction: the reader's name, the card and its UID.
    /// - Throws: `ReaderError`, `PCSCError`, `TagError` `.notNDEF` for another card, and what
    ///   `body` throws.
    public static func run<T>(reader requested: String?, wait: Duration?, observer: ((Exchange) -> Void)? = nil, keySlot: UInt8 = 0,
                              _ body: (_ reader: String, _ card: MifareClassicCard, _ uid: [UInt8]?) throws -> T) throws -> T {
        let selection = try ReaderSelection()
        let (reader, atr) = try selection.chooseCard(requested, wait: wait)
        let card = try selection.connect(reader, until: .now + max(wait ?? .zero, ReaderSelection.defaultPatience), transaction: true)
        defer { try? card.disconnect() }
        return try card.endingTransaction {
            guard let layout = MifareClassicLayout(atr: atr) else {
                let name = (try? ATR(bytes: atr))?.storageCard.flatMap(\.name) ?? "the card"
                throw TagError(.notNDEF, "not a MIFARE Classic card: \(name) (ATR \(atr.hexString)) is not a Classic Mini, 1K, 4K or Plus in SL1")
            }
            let transport = APDUTransport(channel: PCSCChannel(card: card), observer: observer)
            let r = try transport.send(.getUID)
            let uid = r.statusWord == .success && (4...10).contains(r.data.count) ? r.data : nil
            return try body(reader, MifareClassicCard(transport: transport, layout: layout, keySlot: keySlot), uid)
        }
    }
}
