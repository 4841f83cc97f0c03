// Managing a DESFire card: creating and deleting applications, FormatPICC, ChangeKeySettings.
import ISO7816

extension DESFireCard {
    /// CreateApplication (`90 CA`), at the card level (with the card master key when the card's
    /// settings ask for it). One command: the application exists afterwards, or nothing changed.
    public func createApplication(_ spec: DESFireApplicationSpec) throws {
        try spec.validate()
        try requireCardLevel("CreateApplication")
        _ = try command(0xCA, header: spec.commandData, what: "CreateApplication \(spec.aid)")
    }

    /// DeleteApplication (`90 DA`): the application and all its files and keys, for good. With
    /// the card master key, or the application's own master key.
    /// - Parameters:
    ///   - aid: the application to delete.
    ///   - confirmed: must be true (the data cannot be brought back).
    public func deleteApplication(_ aid: DESFireApplicationID, confirmed: Bool) throws {
        guard confirmed else { throw DESFireError(.needsConfirmation, "deleting application \(aid) destroys its files and keys for good; confirm it; nothing was sent") }
        guard aid != .picc else { throw DESFireError(.parameterError, "000000 is the card level; FormatPICC empties the card") }
        let wasSelected = application == aid
        _ = try command(0xDA, header: aid.wire, what: "DeleteApplication \(aid)")
        if wasSelected {
            // The card falls back to its own level; the application's session is gone with it.
            endSession()
            setApplication(.picc)
        }
    }

    /// Creates a file in the selected application (CreateStdDataFile, CreateBackupDataFile,
    /// CreateValueFile, CreateLinear/CyclicRecordFile). One command: the file exists afterwards,
    /// or nothing changed.
    public func createFile(_ spec: DESFireFileSpec) throws {
        try spec.validate()
        guard application != .picc else { throw DESFireError(.parameterError, "files live in applications; select one first") }
        _ = try command(spec.kind.instruction, header: spec.commandData, what: "\(spec.kind.commandName) \(spec.number)")
    }

    /// DeleteFile (`90 DF`): the file and its data, for good.
    public func deleteFile(_ file: UInt8, confirmed: Bool) throws {
        guard confirmed else { throw DESFireError(.needsConfirmation, "deleting file \(file) destroys its data; confirm it; nothing was sent") }
        _ = try command(0xDF, header: [file], what: "DeleteFile \(file)")
    }

    /// FormatPICC (`90 FC`): every application and file on the card, for good; the card master
    /// key and its settings stay. Needs the card level and an authentication with the card
    /// master key.
    public func formatPICC(confirmed: Bool) throws {
        guard confirmed else { throw DESFireError(.needsConfirmation, "formatting erases every application and file on the card; confirm it; nothing was sent") }
        try requireCardLevel("FormatPICC")
        guard session != nil else { throw DESFireError(.authenticationError, "FormatPICC needs an authentication with the card master key first") }
        _ = try command(0xFC, what: "FormatPICC")
    }

    /// ChangeKeySettings (`90 54`, enciphered), in a session of the master key. Settings that
    /// freeze something for good (the settings themselves, the master key, all keys) need
    /// `confirmed`.
    /// - Parameters:
    ///   - settings: the new key settings.
    ///   - current: the settings now, when known (else GetKeySettings asks).
    ///   - confirmed: required when the new settings freeze something for good.
    public func changeKeySettings(_ settings: DESFireKeySettings, current: DESFireKeySettings? = nil, confirmed: Bool) throws {
        guard session != nil else { throw DESFireError(.authenticationError, "ChangeKeySettings needs an authentication with the master key first") }
        let old = try current ?? keySettings().settings
        guard !old.configurationChangeable || !settings.freezes(from: old, cardLevel: application == .picc) || confirmed else {
            throw DESFireError(.needsConfirmation, "these key settings freeze something for good (\(settings.words(cardLevel: application == .picc).joined(separator: ", "))); confirm it; nothing was sent")
        }
        guard old.configurationChangeable else { throw DESFireError(.permissionDenied, "the key settings are frozen; they cannot change; nothing was sent") }
        _ = try command(0x54, data: [settings.rawValue], security: .write(.full, header: 0), what: "ChangeKeySettings")
    }

    func requireCardLevel(_ what: String) throws {
        // Selecting ends a session: only when there is none to lose.
        if application == nil && session == nil { try selectApplication(.picc) }
        guard application == .picc else { throw DESFireError(.parameterError, "\(what) runs at the card level; select 000000 first") }
    }
}
