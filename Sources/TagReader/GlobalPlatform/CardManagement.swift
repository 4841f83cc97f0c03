// A GlobalPlatform card a session delivered, as async calls in PC/SC transactions on the tag's queue.
import GlobalPlatform
import ISO7816
import PCSC

extension ISO7816Tag {
    /// The card's Issuer Security Domain (GlobalPlatform): card information without keys, the
    /// registry and changes with them, the card's cryptogram checked before anything counted.
    ///
    /// ```swift
    /// let gp = tag.cardManagement()
    /// let info = try await gp.information()
    /// let registry = try await gp.registry(keys: StaticKeys(master: key))
    /// ```
    public func cardManagement() -> CardManagement { CardManagement(self) }
}

/// A GlobalPlatform card on a tag a session delivered: `GlobalPlatform`'s `CardManager` behind
/// async calls, each on the tag's queue in one PC/SC transaction (a secure channel lives for
/// one call).
public final class CardManagement: Sendable {
    private let owner: ISO7816Tag

    init(_ owner: ISO7816Tag) { self.owner = owner }

    private func run<T: Sendable>(_ body: @escaping @Sendable (CardManager) throws -> T) async throws -> T {
        let observer = owner.connection.session.observer
        return try await owner.connection.perform { card in
            try card.withTransaction {
                try body(CardManager(transport: APDUTransport(channel: PCSCChannel(card: card), observer: observer)))
            }
        }
    }

    /// CPLC, card recognition data, key information, IIN, CIN: no authentication.
    public func information() async throws -> CardInformation { try await run { try $0.information() } }

    /// The registry, after authenticating with `keys` at `level` (default: the highest offered).
    public func registry(keys: StaticKeys, level: SecurityLevel? = nil) async throws -> [RegistryEntry] {
        try await run { manager in
            try manager.authenticate(keys: keys, level: level)
            return try manager.registry()
        }
    }

    /// Deletes `aid` (never the ISD; a package with instances only with `related`).
    public func delete(aid: [UInt8], related: Bool = false, keys: StaticKeys) async throws {
        try await run { manager in
            try manager.authenticate(keys: keys)
            try manager.delete(aid: aid, related: related)
        }
    }
}
