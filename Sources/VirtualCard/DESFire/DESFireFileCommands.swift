// Application-level file management: lists, settings, creation, deletion.

extension DESFireCard {
    /// What a command does to a file, for its access rights.
    enum FileOperation {
        /// ReadData, ReadRecords: Read or Read&Write.
        case read
        /// WriteData, WriteRecord: Write or Read&Write.
        case write
        /// Credit, ClearRecordFile: Read&Write only.
        case readWrite
        /// GetValue, Debit: any of Read, Write, Read&Write.
        case any
        /// LimitedCredit: Write or Read&Write.
        case limitedCredit
        /// ChangeFileSettings: Change.
        case change
    }

    /// The selected application (file commands at the PICC level are refused with 9D).
    func currentApplication(_ s: State) throws(DESFireStatus) -> (index: Int, app: Application) {
        guard let index = s.applicationIndex else { throw .permissionDenied }
        return (index, s.image.applications[index])
    }

    func file(_ number: UInt8, in app: Application, _ s: State) throws(DESFireStatus) -> File {
        guard let f = app.file(number) else { throw .fileNotFound }
        guard !s.damagedFiles.contains(FileReference(aid: app.aid, file: number)) else { throw .fileIntegrityError }
        return f
    }

    /// Whether the session may do `operation` on `file`, and in which mode the data travels: the
    /// file's mode when the key in use grants it; plain when free access (E) grants it ("data with
    /// free access should be read in PLAIN mode only", libfreefare test_mifare_desfire_free_read);
    /// 9D when every relevant right is "never" (F); AE when a key is needed and not in use.
    func grant(_ operation: FileOperation, _ file: File, _ s: State) throws(DESFireStatus) -> CommMode {
        let a = file.access
        let rights: [UInt8]
        switch operation {
        case .read: rights = [a.read, a.readWrite]
        case .write: rights = [a.write, a.readWrite]
        case .readWrite: rights = [a.readWrite]
        case .any: rights = [a.read, a.write, a.readWrite]
        case .limitedCredit: rights = [a.write, a.readWrite]
        case .change: rights = [a.change]
        }
        if let k = s.authenticatedKey, rights.contains(k) { return file.commMode }
        if rights.contains(AccessRights.free) { return .plain }
        if rights.allSatisfy({ $0 == AccessRights.never }) { throw .permissionDenied }
        throw .authenticationError
    }

    /// GetFileIDs (6F): file numbers. Free when the application's settings allow directory
    /// access (bit 1), else its master key.
    func getFileIDs(_ data: [UInt8], _ s: inout State) throws(DESFireStatus) -> Answer {
        let (_, app) = try currentApplication(s)
        try requireMasterKey(s, unlessFree: 0x02)
        let (_, payload) = try s.channel.open(0x6F, data, header: 0, as: .management)
        guard payload.isEmpty else { throw .lengthError }
        return Answer(bytes: try s.channel.seal(app.files.map(\.number).sorted(), as: .management))
    }

    /// GetISOFileIDs (61): the ISO file identifiers, two bytes each, least significant first.
    func getISOFileIDs(_ data: [UInt8], _ s: inout State) throws(DESFireStatus) -> Answer {
        let (_, app) = try currentApplication(s)
        try requireMasterKey(s, unlessFree: 0x02)
        let (_, payload) = try s.channel.open(0x61, data, header: 0, as: .management)
        guard payload.isEmpty else { throw .lengthError }
        let ids = app.files.sorted { $0.number < $1.number }.compactMap(\.isoFileID).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        return Answer(bytes: try s.channel.seal(ids, as: .management))
    }

    /// A file's settings as GetFileSettings answers them; `announced` gives the size a data file
    /// is announced with (its own, unless the card is hostile).
    static func settings(of file: File, announced: (Int) -> Int = { $0 }) -> [UInt8] {
        var out: [UInt8] = [file.content.typeCode, file.commMode.rawValue] + file.access.wire
        func le32(_ v: Int32) -> [UInt8] { withUnsafeBytes(of: v.littleEndian, Array.init) }
        switch file.content {
        case .standard(let d), .backup(let d):
            out += le24(announced(d.count))
        case .value(let v):
            out += le32(v.lowerLimit) + le32(v.upperLimit) + le32(v.limitedCreditValue)
            out.append((v.limitedCreditEnabled ? 0x01 : 0) | (v.freeGetValue ? 0x02 : 0))
        case .linearRecord(let r), .cyclicRecord(let r):
            out += le24(r.recordSize) + le24(r.maxRecords) + le24(r.records.count)
        }
        return out
    }

    /// GetFileSettings (F5): type, comm mode, access rights and the type's sizes or limits.
    func getFileSettings(_ data: [UInt8], _ s: inout State) throws(DESFireStatus) -> Answer {
        let (_, app) = try currentApplication(s)
        try requireMasterKey(s, unlessFree: 0x02)
        let (header, payload) = try s.channel.open(0xF5, data, header: 1, as: .management)
        guard payload.isEmpty else { throw .lengthError }
        let f = try file(header[0], in: app, s)
        return Answer(bytes: try s.channel.seal(Self.settings(of: f, announced: announcedSize), as: .management))
    }

    /// ChangeFileSettings (5F): FileNo ‖ comm mode ‖ access rights; plain when the Change right
    /// is free, enciphered with the Change key otherwise (libfreefare change_file_settings).
    func changeFileSettings(_ data: [UInt8], _ s: inout State) throws(DESFireStatus) -> Answer {
        let (index, app) = try currentApplication(s)
        guard let number = data.first else { throw .lengthError }
        let f = try file(number, in: app, s)
        _ = try grant(.change, f, s)
        let keyGranted = s.authenticatedKey == f.access.change
        let (_, p) = keyGranted ? try s.channel.open(0x5F, data, header: 1, as: .enciphered, plainLength: 3)
            : try s.channel.open(0x5F, data, header: 1, as: .management)
        guard p.count == 3 else { throw .lengthError }
        guard let mode = CommMode(rawValue: p[0]) else { throw .parameterError }
        let access = AccessRights(low: p[1], high: p[2])
        try s.persist { image in
            guard let i = image.applications[index].files.firstIndex(where: { $0.number == number }) else { return }
            image.applications[index].files[i].commMode = mode
            image.applications[index].files[i].access = access
        }
        return Answer(bytes: try s.channel.seal([], as: .management))
    }

    /// Checks shared by every CreateFile: the application's master key unless creation is free
    /// (bit 2), a new number 0–31, a new ISO identifier, a known comm mode.
    func checkNewFile(_ number: UInt8, isoFileID: UInt16?, commMode: UInt8, in app: Application) throws(DESFireStatus) -> CommMode {
        guard number <= 0x1F, let mode = CommMode(rawValue: commMode) else { throw .parameterError }
        if let isoFileID, [0x0000, 0x3F00, 0x3FFF, 0xFFFF].contains(isoFileID) { throw .parameterError }
        guard app.file(number) == nil else { throw .duplicateError }
        if let isoFileID, app.files.contains(where: { $0.isoFileID == isoFileID }) { throw .duplicateError }
        return mode
    }

    func create(_ f: File, at index: Int, _ s: inout State) throws(DESFireStatus) -> Answer {
        guard s.image.freeMemory >= f.content.allocation else { throw .outOfMemory }
        try s.persist { $0.applications[index].files.append(f) }
        return Answer(bytes: try s.channel.seal([], as: .management))
    }

    /// CreateStdDataFile (CD) and CreateBackupDataFile (CB): FileNo ‖ [ISO FID] ‖ comm ‖
    /// access ‖ size (3 bytes). The file starts as zeros.
    func createDataFile(backup: Bool, _ data: [UInt8], _ s: inout State) throws(DESFireStatus) -> Answer {
        let (index, app) = try currentApplication(s)
        try requireMasterKey(s, unlessFree: 0x04)
        let (_, p) = try s.channel.open(backup ? 0xCB : 0xCD, data, header: 0, as: .management)
        let hasFileID = p.count == 9
        guard p.count == 7 || (hasFileID && app.isoFileIDs) else { throw .lengthError }
        let fileID = hasFileID ? UInt16(Self.le(p[1..<3])) : nil
        let i = hasFileID ? 3 : 1
        let mode = try checkNewFile(p[0], isoFileID: fileID, commMode: p[i], in: app)
        let size = Self.le(p[(i + 3)..<(i + 6)])
        guard size > 0 else { throw .parameterError }
        let zeros = [UInt8](repeating: 0, count: size)
        return try create(File(number: p[0], isoFileID: fileID, commMode: mode, access: AccessRights(low: p[i + 1], high: p[i + 2]),
                               content: backup ? .backup(zeros) : .standard(zeros)), at: index, &s)
    }

    /// CreateValueFile (CC): FileNo ‖ comm ‖ access ‖ lower ‖ upper ‖ value (signed, 4 bytes
    /// each) ‖ options (bit 0 limited credit, bit 1 free GetValue).
    func createValueFile(_ data: [UInt8], _ s: inout State) throws(DESFireStatus) -> Answer {
        let (index, app) = try currentApplication(s)
        try requireMasterKey(s, unlessFree: 0x04)
        let (_, p) = try s.channel.open(0xCC, data, header: 0, as: .management)
        guard p.count == 17 else { throw .lengthError }
        let mode = try checkNewFile(p[0], isoFileID: nil, commMode: p[1], in: app)
        func int32(_ at: Int) -> Int32 { Int32(bitPattern: UInt32(Self.le(p[at..<(at + 4)]))) }
        let lower = int32(4), upper = int32(8), value = int32(12)
        guard lower <= upper, value >= lower, value <= upper, p[16] & 0xFC == 0 else { throw .parameterError }
        let v = ValueFile(value: value, lowerLimit: lower, upperLimit: upper, limitedCreditEnabled: p[16] & 0x01 != 0, freeGetValue: p[16] & 0x02 != 0)
        return try create(File(number: p[0], commMode: mode, access: AccessRights(low: p[2], high: p[3]), content: .value(v)), at: index, &s)
    }

    /// CreateLinearRecordFile (C1) and CreateCyclicRecordFile (C0): FileNo ‖ [ISO FID] ‖ comm ‖
    /// access ‖ record size ‖ max records (3 bytes each). A cyclic file keeps max − 1 records.
    func createRecordFile(cyclic: Bool, _ data: [UInt8], _ s: inout State) throws(DESFireStatus) -> Answer {
        let (index, app) = try currentApplication(s)
        try requireMasterKey(s, unlessFree: 0x04)
        let (_, p) = try s.channel.open(cyclic ? 0xC0 : 0xC1, data, header: 0, as: .management)
        let hasFileID = p.count == 12
        guard p.count == 10 || (hasFileID && app.isoFileIDs) else { throw .lengthError }
        let fileID = hasFileID ? UInt16(Self.le(p[1..<3])) : nil
        let i = hasFileID ? 3 : 1
        let mode = try checkNewFile(p[0], isoFileID: fileID, commMode: p[i], in: app)
        let size = Self.le(p[(i + 3)..<(i + 6)]), count = Self.le(p[(i + 6)..<(i + 9)])
        guard size > 0, count >= (cyclic ? 2 : 1) else { throw .parameterError }
        let r = RecordFile(recordSize: size, maxRecords: count)
        return try create(File(number: p[0], isoFileID: fileID, commMode: mode, access: AccessRights(low: p[i + 1], high: p[i + 2]),
                               content: cyclic ? .cyclicRecord(r) : .linearRecord(r)), at: index, &s)
    }

    /// DeleteFile (DF): the application's master key unless deletion is free (bit 2).
    func deleteFile(_ data: [UInt8], _ s: inout State) throws(DESFireStatus) -> Answer {
        let (index, app) = try currentApplication(s)
        try requireMasterKey(s, unlessFree: 0x04)
        let (header, payload) = try s.channel.open(0xDF, data, header: 1, as: .management)
        guard payload.isEmpty else { throw .lengthError }
        let number = header[0]
        guard app.file(number) != nil else { throw .fileNotFound }
        try s.persist { $0.applications[index].files.removeAll { $0.number == number } }
        if s.transaction?.aid == app.aid {
            s.transaction?.contents[number] = nil
            s.transaction?.newRecord.remove(number)
            s.transaction?.cleared.remove(number)
        }
        if s.isoFile == number { s.isoFile = nil }
        return Answer(bytes: try s.channel.seal([], as: .management))
    }
}
