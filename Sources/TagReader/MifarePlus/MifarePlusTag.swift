// The MIFARE Plus a session delivered, as async calls in PC/SC transactions on the tag's queue.
import ISO7816
import NFCTags
import PCSC

extension MiFareTag {
    /// The card as a MIFARE Plus (`mifareFamily == .plus`, as Core NFC delivers it), identified
    /// with evidence (`MifarePlusIdentity`); nil for a tag of another family. Identification
    /// needs no key and writes nothing.
    public func plus() async throws -> MifarePlusTag? {
        guard mifareFamily == .plus else { return nil }
        let atr = self.atr
        let found = try await connection.perform { [connection] card in
            try card.withTransaction {
                let (plus, identity) = try MifarePlusCard.identify(connection.transport(card), atr: atr)
                return (SendableBox(plus), identity)
            }
        }
        return MifarePlusTag(self, found.0.value, identity: found.1)
    }
}

/// A MIFARE Plus a session delivered: its SL3 blocks under AES secure messaging, personalisation of
/// an SL0 card and the switch of an SL1 card to SL3, as async calls, each in a PC/SC transaction
/// of its own on the tag's queue. Errors are typed: `MifarePlusError` (with
/// `MifarePlusStatus` for every status byte `06`-`0F`), `MifarePlusInterrupted` naming what the
/// card holds after a change cut short. The SL3 session lives between calls while no other program
/// talks to the card.
public final class MifarePlusTag: ConnectedTag, NFCMiFareTag, @unchecked Sendable {
    // `card` is touched only on the connection's queue, through `run`.
    private let card: MifarePlusCard
    public let identity: MifarePlusIdentity
    public let mifareFamily = MiFareFamily.plus

    init(_ owner: MiFareTag, _ card: MifarePlusCard, identity: MifarePlusIdentity) {
        self.card = card
        self.identity = identity
        super.init(owner.connection)
    }

    private func run<T: Sendable>(_ body: @escaping @Sendable (MifarePlusCard) throws -> T) async throws -> T {
        try await connection.inTransaction(with: card, body)
    }

    /// The UID: GetVersion's (EV1, EV2), else the one the reader reports.
    public func identifier() async throws -> [UInt8] {
        if let uid = identity.uid { return uid }
        return try await readerUID()
    }

    /// Reads `blocks` in SL3, each sector authenticated once with `key` as its key `type`.
    public func read(blocks: Range<Int>, key: MifarePlusKey, type: MifarePlusKeyType, mode: MifarePlusCard.ReadMode = .plain) async throws -> [UInt8] {
        try await run { try $0.read(blocks: blocks, key: key, type: type, mode: mode) }
    }

    /// Writes one block in SL3 (old contents read first, the answer's MAC checked, read back).
    /// Trailers, keys and configuration blocks need `confirmed`.
    @discardableResult
    public func write(block: UInt16, data: [UInt8], key: MifarePlusKey, type: MifarePlusKeyType, confirmed: Bool = false) async throws -> [UInt8]? {
        try await run { card in
            try card.writeBlock(block, data: data, key: key, type: type, confirmed: confirmed) { "write block \(block) with \($0.hexString)" }.old
        }
    }

    /// SL0: WritePerso of `keys`, then CommitPerso to `commit` when given (needs `confirmed`, as
    /// configuration blocks B000-B003 among the keys do). A commit to SL3 that leaves sector keys
    /// at the factory value needs `keepingFactoryKeys`. On an S or X whose size nothing told, keys
    /// of sectors 32-39 the card answers `09` to are an error naming them (before CommitPerso),
    /// unless `allowingAbsentSectors` (a 2K card). After CommitPerso the card is reset in the same
    /// transaction and its new level checked (CommitPerso's `90` carries no MAC in SL0): the
    /// result says how; a card that does not show the level throws.
    @discardableResult
    public func personalize(_ keys: MifarePlusKeyFile, commit: MifarePlusSecurityLevel? = nil, confirmed: Bool = false,
                            keepingFactoryKeys: Bool = false, allowingAbsentSectors: Bool = false) async throws -> MifarePlusPersonalization {
        let identity = self.identity
        let box = SendableBox(card)
        return try await connection.perform { [connection] pcsc in
            try pcsc.withTransaction {
                try box.value.personalize(keys, commit: commit, generation: identity.generation, sectors: identity.sectors ?? 40,
                                          storageKnown: identity.sectors != nil, confirmed: confirmed, keepingFactoryKeys: keepingFactoryKeys,
                                          allowingAbsentSectors: allowingAbsentSectors, again: "personalize again with the same keys") {
                    try pcsc.reconnect(initialization: .reset)
                    return (connection.transport(pcsc), try pcsc.atr())
                }
            }
        }
    }

    /// SL1 → SL3 with the switch key 9003; cannot be undone (needs `confirmed`).
    public func switchToLevel3(key: MifarePlusKey, confirmed: Bool) async throws {
        try await run { try $0.switchToLevel3(key: key, confirmed: confirmed) }
    }
}
