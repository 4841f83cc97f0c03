// The DESFire a session delivered, as async calls in PC/SC transactions on the tag's queue.
import ISO7816
import NFCTags
import PCSC

extension ISO7816Tag {
    /// The card as a MIFARE DESFire, when GetVersion proves it one (NXP, DESFire hardware type);
    /// nil for any other ISO 7816 card. Core NFC delivers these as `NFCMiFareTag` with
    /// `mifareFamily == .desfire`; on the desktop the ATR alone cannot tell, so the evidence is
    /// asked for here (three frames of GetVersion).
    public func desfire() async throws -> DESFireTag? {
        let found = try await connection.perform { [connection] card in
            try card.withTransaction { try DESFireCard.detect(connection.transport(card)).map { SendableBox($0) } }
        }
        return found.flatMap { box in box.value.version.map { DESFireTag(self, box.value, version: $0) } }
    }
}

/// A MIFARE DESFire a session delivered: its applications, files, keys and transactions as async
/// calls, each in a PC/SC transaction of its own on the tag's queue, with typed file settings and
/// typed errors (`DESFireError` for every status code; `DESFireInterrupted` naming what the card
/// holds after a change cut short).
///
/// The card's selected application and authentication live as long as the card is not selected
/// again by another program between two calls; each call that needs them says which application
/// and key, and selects or authenticates only when the card's state is not already that.
/// Its NDEF side (`readNDEF`, `writeNDEF`) is the Type 4 procedure, for cards formatted by
/// `formatForNDEF()` (NXP AN11004).
public final class DESFireTag: ConnectedTag, NFCMiFareTag, @unchecked Sendable {
    // `card` is touched only on the connection's queue, through `run`.
    private let card: DESFireCard
    public let version: DESFireVersion
    public let mifareFamily = MiFareFamily.desfire

    init(_ owner: ISO7816Tag, _ card: DESFireCard, version: DESFireVersion) {
        self.card = card
        self.version = version
        super.init(owner.connection)
    }

    private func run<T: Sendable>(_ body: @escaping @Sendable (DESFireCard) throws -> T) async throws -> T {
        try await connection.inTransaction(with: card, body)
    }

    /// The UID: GetVersion's, or (random ID on) the one the reader reports for this activation.
    public func identifier() async throws -> [UInt8] {
        if !version.uidHidden { return version.uid }
        return try await readerUID()
    }

    /// Selects `application` (when it is not already) and, with a key, authenticates.
    private static func enter(_ card: DESFireCard, _ application: DESFireApplicationID, _ key: (number: UInt8, key: DESFireKey)?) throws {
        if card.application != application || (key == nil && card.session != nil) { try card.selectApplication(application) }
        if let key, card.session?.keyNumber != key.number { try card.authenticate(keyNumber: key.number, key: key.key) }
    }

    /// Authenticates with a key of `application` (`.picc` for the card master key).
    public func authenticate(application: DESFireApplicationID, keyNumber: UInt8, key: DESFireKey, scheme: DESFireAuthenticationScheme? = nil) async throws {
        try await run { card in
            if card.application != application || card.session != nil { try card.selectApplication(application) }
            try card.authenticate(keyNumber: keyNumber, key: key, scheme: scheme)
        }
    }

    /// The card's key settings, applications, their files and settings (and with `readContents`
    /// every readable file's contents), each refusal noted: see `DESFireCard.survey`.
    public func survey(readContents: Bool = false, cardKey: DESFireKey? = nil,
                       keys: [DESFireApplicationID: (number: UInt8, key: DESFireKey)] = [:]) async throws -> DESFireSurvey {
        try await run { try $0.survey(readContents: readContents, cardKey: cardKey, keys: keys) }
    }

    /// FreeMemory.
    public func freeMemory() async throws -> Int { try await run { try $0.freeMemory() } }

    /// GetApplicationIDs at the card level.
    public func applicationIDs(cardKey: DESFireKey? = nil) async throws -> [DESFireApplicationID] {
        try await run { card in
            try Self.enter(card, .picc, cardKey.map { (0, $0) })
            return try card.applicationIDs()
        }
    }

    /// GetKeySettings of `application`.
    public func keySettings(of application: DESFireApplicationID, key: (number: UInt8, key: DESFireKey)? = nil) async throws -> DESFireKeyInfo {
        return try await run { card in
            try Self.enter(card, application, key)
            return try card.keySettings()
        }
    }

    /// GetFileSettings of `file` in `application`.
    public func fileSettings(_ file: UInt8, in application: DESFireApplicationID, key: (number: UInt8, key: DESFireKey)? = nil) async throws -> DESFireFileSettings {
        return try await run { card in
            try Self.enter(card, application, key)
            return try card.fileSettings(file)
        }
    }

    /// A file's whole contents, in the mode its settings ask for.
    public func read(_ file: UInt8, in application: DESFireApplicationID, key: (number: UInt8, key: DESFireKey)? = nil) async throws -> DESFireFileContents {
        return try await run { card in
            try Self.enter(card, application, key)
            return try card.contents(file, settings: card.fileSettings(file))
        }
    }

    /// Changes a file and commits it where the file is transactional (`DESFireCard.change`).
    @discardableResult
    public func change(_ file: UInt8, in application: DESFireApplicationID, key: (number: UInt8, key: DESFireKey)? = nil,
                       _ change: DESFireFileChange) async throws -> DESFireWriteReceipt {
        return try await run { card in
            try Self.enter(card, application, key)
            return try card.change(file, settings: card.fileSettings(file), change)
        }
    }

    /// ChangeKey in a session of `authorizing` (the key that changes keys), proved by an
    /// authentication with the new key. See `DESFireCard.changeKey` for what needs `confirmed`.
    @discardableResult
    public func changeKey(_ number: UInt8, in application: DESFireApplicationID, authorizing: (number: UInt8, key: DESFireKey),
                          to new: DESFireKey, from old: DESFireKey?, confirmed: Bool = false) async throws -> DESFireKeyChange {
        return try await run { card in
            try Self.enter(card, application, authorizing)
            let settings = application == .picc ? nil : try? card.keySettings()
            return try card.changeKey(number, to: new, from: old, confirmed: confirmed, settings: settings)
        }
    }

    /// CreateApplication (with the card master key when given).
    public func createApplication(_ spec: DESFireApplicationSpec, cardKey: DESFireKey? = nil) async throws {
        try await run { card in
            try Self.enter(card, .picc, cardKey.map { (0, $0) })
            try card.atomically("CreateApplication \(spec.aid)") { try card.createApplication(spec) }
        }
    }

    /// Creates a file in `application`.
    public func createFile(_ spec: DESFireFileSpec, in application: DESFireApplicationID, key: (number: UInt8, key: DESFireKey)? = nil) async throws {
        try await run { card in
            try Self.enter(card, application, key)
            try card.atomically("\(spec.kind.commandName) \(spec.number)") { try card.createFile(spec) }
        }
    }

    /// DeleteApplication: for good; `confirmed` must be true.
    public func deleteApplication(_ aid: DESFireApplicationID, cardKey: DESFireKey? = nil, confirmed: Bool) async throws {
        try await run { card in
            try Self.enter(card, .picc, cardKey.map { (0, $0) })
            try card.atomically("DeleteApplication \(aid)") { try card.deleteApplication(aid, confirmed: confirmed) }
        }
    }

    /// FormatPICC with the card master key: every application, for good; `confirmed` must be true.
    public func format(cardKey: DESFireKey, confirmed: Bool) async throws {
        try await run { card in
            guard confirmed else { throw DESFireError(.needsConfirmation, "formatting erases every application and file on the card; confirm it; nothing was sent") }
            try Self.enter(card, .picc, (0, cardKey))
            try card.atomically("FormatPICC") { try card.formatPICC(confirmed: confirmed) }
        }
    }

    /// Makes the card an NFC Forum Type 4 tag (NXP AN11004); see `DESFireCard.formatForNDEF`.
    public func formatForNDEF(cardKey: DESFireKey? = nil) async throws -> DESFireNDEFFormat {
        try await run { try $0.formatForNDEF(piccKey: cardKey) }
    }
}
