// An NTAG 424 DNA delivered by a session: EV2 authentication, file settings, SUN provisioning
// and key changes as async calls.
import ISO7816
import NFCTags
import PCSC

extension ISO7816Tag {
    /// The card as an NTAG 424 DNA, when it is one: its NDEF application is selected and
    /// GetVersion names the chip. nil for any other ISO 7816 card. (Core NFC delivers these tags
    /// as ISO 7816 tags too; this is the desktop's typed access to what NXP's chip adds.)
    public func ntag424() async throws -> NTAG424Card? {
        let found = try await connection.perform { [connection] card in
            try card.withTransaction { try NTAG424Tag.detect(connection.transport(card)).map { SendableBox($0) } }
        }
        return found.map { NTAG424Card(self, $0.value) }
    }
}

/// Moves a value the connection's queue alone touches across the `perform` boundary.
struct SendableBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

/// An NTAG 424 DNA a session delivered: EV2 authentication, file settings, SUN provisioning and
/// key changes as async calls, each in a transaction of its own on the tag's queue. The EV2
/// session lives as long as the card is not selected again (by another program between two calls,
/// authenticate again).
public final class NTAG424Card: @unchecked Sendable {
    // `tag` is touched only on the connection's queue, through `perform`.
    private let tag: NTAG424Tag
    private let owner: ISO7816Tag
    public let version: NTAG424Version

    init(_ owner: ISO7816Tag, _ tag: NTAG424Tag) {
        self.owner = owner
        self.tag = tag
        version = tag.version
    }

    private func run<T: Sendable>(_ body: @escaping @Sendable (NTAG424Tag) throws -> T) async throws -> T {
        try await owner.connection.inTransaction(with: tag, body)
    }

    /// AuthenticateEV2First with `keyNumber` (0-4).
    public func authenticate(keyNumber: UInt8, key: [UInt8]) async throws {
        try await run { try $0.authenticate(keyNumber: keyNumber, key: key) }
    }

    /// GetFileSettings of `file` (1 CC, 2 NDEF, 3 proprietary).
    public func fileSettings(_ file: UInt8) async throws -> NTAG424FileSettings {
        try await run { try $0.fileSettings(file) }
    }

    /// Provisions Secure Unique NFC (`NTAG424Tag.provisionSDM`); the previous message goes to the
    /// session's backup store first. Returns the URL the tag served to the check and the chip's
    /// originality signature with its verdict; with `requireGenuine`, a chip whose signature
    /// does not verify is refused before anything is written.
    public func provisionSDM(_ plan: SUNURLTemplate, key: [UInt8], requireGenuine: Bool = false) async throws -> SDMProvisioningResult {
        let backups = owner.connection.session.backups, reader = owner.reader
        return try await run { tag in try tag.provisionSDM(plan, key: key, requireGenuine: requireGenuine) { _ = try backups.save($0, reader: reader) } }
    }

    /// The chip's originality signature (Read_Sig) checked with NXP's NTAG 424 DNA key: over
    /// GetCardUID's UID after `authenticate` (needed with random ID on), else GetVersion's.
    public func originality() async throws -> NTAG424Originality {
        try await run { try $0.originality() }
    }

    /// ChangeKey in a session of key 0 (authenticate first); proved by an authentication with
    /// the new key before it returns.
    public func changeKey(_ number: UInt8, to new: [UInt8], from old: [UInt8], version: UInt8) async throws {
        try await run { tag in
            try tag.changeKey(number, to: new, from: old, version: version)
            try tag.authenticate(keyNumber: number, key: new)
        }
    }
}
