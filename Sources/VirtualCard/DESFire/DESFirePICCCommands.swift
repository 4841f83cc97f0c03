// PICC-level commands: version, UID, memory, applications, format, configuration.

extension DESFireCard {
    /// Little-endian unsigned integer of up to four bytes.
    static func le(_ bytes: ArraySlice<UInt8>) -> Int {
        bytes.reversed().reduce(0) { $0 << 8 | Int($1) }
    }

    static func le24(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF)] }

    /// Commands that need the master key of the current level (PICC or application) unless a
    /// key-settings bit makes them free.
    func requireMasterKey(_ s: State, unlessFree bit: UInt8? = nil) throws(DESFireStatus) {
        let settings = s.application?.keySettings ?? s.image.masterKeySettings
        if let bit, settings & bit != 0 { return }
        guard s.authenticatedKey == 0 else { throw .authenticationError }
    }

    /// GetVersion (60): hardware, software, then UID ‖ batch ‖ week ‖ year, in three frames
    /// (RFDoorLock: 04 01 01 01 00 1A 05 / 04 01 01 01 04 1A 05 / UID …). With random ID on, the
    /// UID field is zeros: the real one only comes through GetCardUID.
    func getVersion(_ data: [UInt8], _ s: inout State) throws(DESFireStatus) -> Answer {
        let (_, payload) = try s.channel.open(0x60, data, header: 0, as: .management)
        guard payload.isEmpty else { throw .lengthError }
        let chip = s.image.chip
        let software = chip.generation.softwareVersion
        let hardware: [UInt8] = [0x04, 0x01, 0x01, chip.generation.majorVersion, 0x00, chip.storage.versionByte, 0x05]
        let softwareFrame: [UInt8] = [0x04, 0x01, 0x01, software.0, software.1, chip.storage.versionByte, 0x05]
        let uid = s.image.randomUID ? [UInt8](repeating: 0, count: 7) : chip.uid
        let production = uid + chip.batch + [chip.productionWeek, chip.productionYear]
        return Answer(bytes: try s.channel.seal(hardware + softwareFrame + production, as: .management), boundaries: [7, 7])
    }

    /// GetCardUID (51): the 7-byte UID, enciphered, to an authenticated reader only.
    func getCardUID(_ data: [UInt8], _ s: inout State) throws(DESFireStatus) -> Answer {
        guard s.authenticatedKey != nil else { throw .authenticationError }
        let (_, payload) = try s.channel.open(0x51, data, header: 0, as: .management)
        guard payload.isEmpty else { throw .lengthError }
        return Answer(bytes: try s.channel.seal(s.image.chip.uid, as: .enciphered))
    }

    /// FreeMemory (6E): free EEPROM bytes, 3 bytes least significant first.
    func freeMemory(_ data: [UInt8], _ s: inout State) throws(DESFireStatus) -> Answer {
        let (_, payload) = try s.channel.open(0x6E, data, header: 0, as: .management)
        guard payload.isEmpty else { throw .lengthError }
        return Answer(bytes: try s.channel.seal(Self.le24(s.image.freeMemory), as: .management))
    }

    /// SelectApplication (5A): 000000 is the PICC level. It ends any authentication and aborts
    /// the transaction; its answer carries no MAC.
    func selectApplication(_ data: [UInt8], _ s: inout State) throws(DESFireStatus) -> Answer {
        guard data.count == 3 else { throw .lengthError }
        let aid = UInt32(Self.le(data[0..<3]))
        if aid != 0, s.image.application(aid) == nil { throw .applicationNotFound }
        s.selected = aid == 0 ? nil : aid
        s.dropSession()
        s.transaction = nil
        s.isoFile = nil
        return Answer()
    }

    /// CreateApplication (CA): AID ‖ key settings ‖ key count and type ‖ [ISO FID ‖ [DF name]].
    /// PICC master key needed unless the PICC settings allow free creation (bit 2).
    func createApplication(_ data: [UInt8], _ s: inout State) throws(DESFireStatus) -> Answer {
        guard s.selected == nil else { throw .permissionDenied }
        try requireMasterKey(s, unlessFree: 0x04)
        let (_, p) = try s.channel.open(0xCA, data, header: 0, as: .management)
        guard p.count == 5 || (7...23).contains(p.count) else { throw .lengthError }
        let aid = UInt32(Self.le(p[0..<3]))
        let keyByte = p[4]
        let keyCount = Int(keyByte & 0x0F)
        guard aid != 0, (1...14).contains(keyCount), let type = KeyType(typeBits: keyByte) else { throw .parameterError }
        let fileID = p.count >= 7 ? UInt16(Self.le(p[5..<7])) : nil
        let name = p.count > 7 ? Array(p[7...]) : nil
        if let fileID, [0x0000, 0x3F00, 0x3FFF, 0xFFFF].contains(fileID) { throw .parameterError }
        let apps = s.image.applications
        guard apps.count < 28 else { throw .countError }
        guard !apps.contains(where: { $0.aid == aid }) else { throw .duplicateError }
        if let fileID, apps.contains(where: { $0.isoFileID == fileID }) { throw .duplicateError }
        if let name, apps.contains(where: { $0.dfName == name }) { throw .duplicateError }
        let app = Application(aid: aid, keySettings: p[3], keyType: type, keyCount: keyCount, isoFileIDs: keyByte & 0x20 != 0,
                              isoFileID: fileID, dfName: name)
        guard s.image.freeMemory >= app.allocation else { throw .outOfMemory }
        try s.persist { $0.applications.append(app) }
        return Answer(bytes: try s.channel.seal([], as: .management))
    }

    /// DeleteApplication (DA): with the PICC master key, the application's own master key, or
    /// freely when the PICC settings allow it. Deleting the selected application returns to
    /// the PICC level and ends the session.
    func deleteApplication(_ data: [UInt8], _ s: inout State) throws(DESFireStatus) -> Answer {
        let (_, p) = try s.channel.open(0xDA, data, header: 0, as: .management)
        guard p.count == 3 else { throw .lengthError }
        let aid = UInt32(Self.le(p[0..<3]))
        guard aid != 0 else { throw .parameterError }
        guard s.image.application(aid) != nil else { throw .applicationNotFound }
        let byPICCKey = s.selected == nil && s.authenticatedKey == 0
        let byOwnKey = s.selected == aid && s.authenticatedKey == 0
        guard byPICCKey || byOwnKey || s.image.masterKeySettings & 0x04 != 0 else { throw .authenticationError }
        try s.persist { $0.applications.removeAll { $0.aid == aid } }
        let answer = try s.channel.seal([], as: .management)
        if s.transaction?.aid == aid { s.transaction = nil }
        if s.selected == aid {
            s.selected = nil
            s.isoFile = nil
            s.dropSession()
        }
        return Answer(bytes: answer)
    }

    /// Directory commands at the PICC level: free when the PICC settings allow (bit 1).
    func requireDirectoryAccess(_ s: State) throws(DESFireStatus) {
        guard s.selected == nil else { throw .permissionDenied }
        try requireMasterKey(s, unlessFree: 0x02)
    }

    /// GetApplicationIDs (6A): 19 AIDs a frame (57 bytes), the rest after `AF`.
    func getApplicationIDs(_ data: [UInt8], _ s: inout State) throws(DESFireStatus) -> Answer {
        try requireDirectoryAccess(s)
        let (_, payload) = try s.channel.open(0x6A, data, header: 0, as: .management)
        guard payload.isEmpty else { throw .lengthError }
        let ids = s.image.applications.flatMap(\.aidBytes)
        return Answer(bytes: try s.channel.seal(ids, as: .management), boundaries: [57])
    }

    /// GetDFNames (6D): one application a frame, AID ‖ ISO FID ‖ DF name, for those with a name.
    func getDFNames(_ data: [UInt8], _ s: inout State) throws(DESFireStatus) -> Answer {
        try requireDirectoryAccess(s)
        let (_, payload) = try s.channel.open(0x6D, data, header: 0, as: .management)
        guard payload.isEmpty else { throw .lengthError }
        let entries = s.image.applications.compactMap { app -> [UInt8]? in
            guard let name = app.dfName else { return nil }
            let fid = app.isoFileID ?? 0
            return app.aidBytes + [UInt8(fid & 0xFF), UInt8(fid >> 8)] + name
        }
        return Answer(bytes: try s.channel.seal(entries.flatMap { $0 }, as: .management), boundaries: entries.dropLast().map(\.count))
    }

    /// FormatPICC (FC): every application and file gone; the PICC master key and its settings
    /// stay, and so does the session (RFDoorLock: the next command is still CMACed).
    func formatPICC(_ data: [UInt8], _ s: inout State) throws(DESFireStatus) -> Answer {
        guard s.selected == nil else { throw .permissionDenied }
        guard s.authenticatedKey == 0 else { throw .authenticationError }
        let (_, payload) = try s.channel.open(0xFC, data, header: 0, as: .management)
        guard payload.isEmpty else { throw .lengthError }
        guard !s.image.formatDisabled else { throw .permissionDenied }
        try s.persist { $0.applications = [] }
        s.transaction = nil
        return Answer(bytes: try s.channel.seal([], as: .management))
    }

    /// SetConfiguration (5C) option 00: bit 0 disables FormatPICC, bit 1 turns random ID on for
    /// good (libfreefare mifare_desfire_set_configuration). Always enciphered, PICC master key.
    func setConfiguration(_ data: [UInt8], _ s: inout State) throws(DESFireStatus) -> Answer {
        guard s.selected == nil else { throw .permissionDenied }
        guard s.authenticatedKey == 0 else { throw .authenticationError }
        guard let option = data.first else { throw .lengthError }
        guard option == 0x00 else { throw .parameterError }
        let (_, p) = try s.channel.open(0x5C, data, header: 1, as: .enciphered, plainLength: 1)
        guard p.count == 1 else { throw .lengthError }
        let flags = p[0]
        guard flags & 0xFC == 0 else { throw .parameterError }
        try s.persist { image in
            image.formatDisabled = flags & 0x01 != 0
            image.randomUID = image.randomUID || flags & 0x02 != 0
        }
        return Answer(bytes: try s.channel.seal([], as: .management))
    }
}
