// Data commands: data, value and record files, and the transaction that holds their changes.

extension DESFireCard {
    /// Bytes `n` data bytes take on the wire in `mode` under the open channel: EV1 legacy adds
    /// a 4-byte MAC or CRC16 and zero padding to 8; EV1 ISO/AES an 8-byte CMAC or CRC32 and zero
    /// padding to the block; EV2 an 8-byte MAC, or padding method 2 to 16 and the MAC.
    static func wireLength(_ n: Int, _ mode: CommMode, _ channel: DESFireChannel) -> Int {
        switch (channel, mode) {
        case (_, .plain), (.none, _): return n
        case (.ev1(let s), .mac): return n + (s.scheme == .legacy ? 4 : 8)
        case (.ev1(let s), .full): return s.scheme == .legacy ? DESFireChannel.padded(n + 2, 8) : DESFireChannel.padded(n + 4, s.blockSize)
        case (.ev2, .mac): return n + 8
        case (.ev2, .full): return (n + 1 + 15) / 16 * 16 + 8
        }
    }

    /// The file of a data command: it exists, is whole, and is of one of `kinds`' types (9E
    /// otherwise, as for ReadData on a value file).
    func dataFile(_ number: UInt8, _ s: State, _ accepts: (FileContent) -> Bool) throws(DESFireStatus) -> (index: Int, file: File) {
        let (index, app) = try currentApplication(s)
        let f = try file(number, in: app, s)
        guard accepts(f.content) else { throw .parameterError }
        return (index, f)
    }

    static func isData(_ c: FileContent) -> Bool {
        switch c {
        case .standard, .backup: return true
        default: return false
        }
    }

    static func isRecord(_ c: FileContent) -> Bool {
        switch c {
        case .linearRecord, .cyclicRecord: return true
        default: return false
        }
    }

    /// A multi-frame command: the header says how much data follows; until it has all come the
    /// chip answers `AF` (libfreefare write_data, proxmark3 DesfireExchangeEx).
    func needsMoreFrames(_ command: UInt8, _ data: [UInt8], expected: Int, _ s: inout State) throws(DESFireStatus) -> Bool {
        guard data.count <= expected else { throw .lengthError }
        guard data.count < expected else { return false }
        s.pending = .command(command, data, expected: expected)
        return true
    }

    /// ReadData (BD; AD on EV2): FileNo ‖ offset ‖ length (3 bytes each; length 0 reads to the
    /// end). Backup files answer their committed contents.
    func readData(_ command: UInt8, _ data: [UInt8], _ s: inout State) throws(DESFireStatus) -> Answer {
        guard data.count >= 7 else { throw .lengthError }
        let (_, f) = try dataFile(data[0], s, Self.isData)
        let mode = try grant(.read, f, s)
        let (header, payload) = try s.channel.open(command, data, header: 7, as: .read(mode))
        guard payload.isEmpty else { throw .lengthError }
        let content: [UInt8]
        switch f.content {
        case .standard(let d), .backup(let d): content = d
        default: throw .parameterError
        }
        let offset = Self.le(header[1..<4]), length = Self.le(header[4..<7])
        guard offset < content.count else { throw .boundaryError }
        let n = length == 0 ? content.count - offset : length
        guard offset + n <= content.count else { throw .boundaryError }
        return Answer(bytes: try s.channel.seal(Array(content[offset..<(offset + n)]), as: .data(mode)))
    }

    /// WriteData (3D; 8D on EV2): FileNo ‖ offset ‖ length ‖ data, in the file's mode. A standard
    /// file changes at once; a backup file at CommitTransaction.
    func writeData(_ command: UInt8, _ data: [UInt8], _ s: inout State) throws(DESFireStatus) -> Answer {
        guard data.count >= 7 else { throw .lengthError }
        let (index, f) = try dataFile(data[0], s, Self.isData)
        let mode = try grant(.write, f, s)
        let offset = Self.le(data[1..<4]), length = Self.le(data[4..<7])
        guard length > 0 else { throw .lengthError }
        let size: Int
        switch f.content {
        case .standard(let d), .backup(let d): size = d.count
        default: throw .parameterError
        }
        guard offset + length <= size else { throw .boundaryError }
        if try needsMoreFrames(command, data, expected: 7 + Self.wireLength(length, mode, s.channel), &s) { return .more }
        let (_, written) = try s.channel.open(command, data, header: 7, as: .write(mode), plainLength: length)
        switch s.staged(f) {
        case .standard(var d):
            d.replaceSubrange(offset..<(offset + length), with: written)
            try s.persist { image in
                guard let i = image.applications[index].files.firstIndex(where: { $0.number == f.number }) else { return }
                image.applications[index].files[i].content = .standard(d)
            }
        case .backup(var d):
            d.replaceSubrange(offset..<(offset + length), with: written)
            s.stage(f.number, .backup(d))
        default:
            throw .parameterError
        }
        return Answer(bytes: try s.channel.seal([], as: .acknowledgement(mode)))
    }

    /// GetValue (6C): the committed value, 4 bytes signed, least significant first.
    func getValue(_ data: [UInt8], _ s: inout State) throws(DESFireStatus) -> Answer {
        guard data.count >= 1 else { throw .lengthError }
        let (_, f) = try dataFile(data[0], s) { if case .value = $0 { return true }; return false }
        guard case .value(let v) = f.content else { throw .parameterError }
        let mode: CommMode
        do { mode = try grant(.any, f, s) } catch {
            guard v.freeGetValue else { throw error }
            mode = .plain
        }
        let (_, payload) = try s.channel.open(0x6C, data, header: 1, as: .read(mode))
        guard payload.isEmpty else { throw .lengthError }
        return Answer(bytes: try s.channel.seal(withUnsafeBytes(of: v.value.littleEndian, Array.init), as: .data(mode)))
    }

    /// Credit (0C, Read&Write), Debit (DC, any access) and LimitedCredit (1C, Write or
    /// Read&Write, up to the debits of the last committed transaction that had any): FileNo ‖
    /// amount (4 bytes, in the file's mode). The value changes at CommitTransaction; the limits
    /// are checked against the value the transaction has reached.
    func changeValue(_ command: UInt8, _ data: [UInt8], _ s: inout State) throws(DESFireStatus) -> Answer {
        guard data.count >= 1 else { throw .lengthError }
        let (_, f) = try dataFile(data[0], s) { if case .value = $0 { return true }; return false }
        let operation: FileOperation = command == 0x0C ? .readWrite : command == 0xDC ? .any : .limitedCredit
        let mode = try grant(operation, f, s)
        let (_, p) = try s.channel.open(command, data, header: 1, as: .write(mode), plainLength: 4)
        guard p.count == 4 else { throw .lengthError }
        let amount = Int64(Int32(bitPattern: UInt32(Self.le(p[0..<4]))))
        guard amount >= 0 else { throw .parameterError }
        guard case .value(let committed) = f.content, case .value(var v) = s.staged(f) else { throw .parameterError }
        var value = Int64(v.value)
        switch command {
        case 0x0C:
            value += amount
        case 0xDC:
            value -= amount
        default:
            guard committed.limitedCreditEnabled else { throw .permissionDenied }
            guard amount <= Int64(committed.limitedCreditValue) else { throw .boundaryError }
            value += amount
        }
        guard value >= Int64(v.lowerLimit), value <= Int64(v.upperLimit) else { throw .boundaryError }
        v.value = Int32(value)
        s.stage(f.number, .value(v)) { t in
            if command == 0xDC { t.debits[f.number, default: 0] += amount }
            if command == 0x1C { t.limitedCredits.insert(f.number) }
        }
        return Answer(bytes: try s.channel.seal([], as: .acknowledgement(mode)))
    }

    /// WriteRecord (3B; 8B on EV2): FileNo ‖ offset in the record ‖ length ‖ data. The first
    /// WriteRecord of a transaction starts a new record (zeros); later ones in the same
    /// transaction write into it (libfreefare's test writes "r." over it). A full linear file
    /// refuses (BE); a full cyclic file drops its oldest record at the commit.
    func writeRecord(_ command: UInt8, _ data: [UInt8], _ s: inout State) throws(DESFireStatus) -> Answer {
        guard data.count >= 7 else { throw .lengthError }
        let (_, f) = try dataFile(data[0], s, Self.isRecord)
        let mode = try grant(.write, f, s)
        let offset = Self.le(data[1..<4]), length = Self.le(data[4..<7])
        guard length > 0 else { throw .lengthError }
        var cyclic = false
        var r: RecordFile
        switch s.staged(f) {
        case .linearRecord(let x): r = x
        case .cyclicRecord(let x): r = x; cyclic = true
        default: throw .parameterError
        }
        guard offset + length <= r.recordSize else { throw .boundaryError }
        if try needsMoreFrames(command, data, expected: 7 + Self.wireLength(length, mode, s.channel), &s) { return .more }
        let (_, written) = try s.channel.open(command, data, header: 7, as: .write(mode), plainLength: length)
        let t = s.currentTransaction
        guard !t.cleared.contains(f.number) else { throw .permissionDenied }
        if !t.newRecord.contains(f.number) {
            if cyclic {
                while r.records.count >= r.maxRecords - 1, !r.records.isEmpty { r.records.removeFirst() }
            } else {
                guard r.records.count < r.maxRecords else { throw .boundaryError }
            }
            r.records.append([UInt8](repeating: 0, count: r.recordSize))
        }
        guard var last = r.records.popLast() else { throw .boundaryError }
        last.replaceSubrange(offset..<(offset + length), with: written)
        r.records.append(last)
        s.stage(f.number, cyclic ? .cyclicRecord(r) : .linearRecord(r)) { $0.newRecord.insert(f.number) }
        return Answer(bytes: try s.channel.seal([], as: .acknowledgement(mode)))
    }

    /// ReadRecords (BB; AB on EV2): FileNo ‖ offset ‖ count. The offset counts back from the
    /// newest record (0 is the newest), count 0 means all from there; the records come oldest
    /// first. Committed records only; an empty file is a boundary error.
    func readRecords(_ command: UInt8, _ data: [UInt8], _ s: inout State) throws(DESFireStatus) -> Answer {
        guard data.count >= 7 else { throw .lengthError }
        let (_, f) = try dataFile(data[0], s, Self.isRecord)
        let mode = try grant(.read, f, s)
        let (header, payload) = try s.channel.open(command, data, header: 7, as: .read(mode))
        guard payload.isEmpty else { throw .lengthError }
        let records: [[UInt8]]
        switch f.content {
        case .linearRecord(let r), .cyclicRecord(let r): records = r.records
        default: throw .parameterError
        }
        let offset = Self.le(header[1..<4]), count = Self.le(header[4..<7])
        guard offset < records.count else { throw .boundaryError }
        let available = records.count - offset
        let n = count == 0 ? available : count
        guard n <= available else { throw .boundaryError }
        let chosen = records[(available - n)..<available].flatMap { $0 }
        return Answer(bytes: try s.channel.seal(chosen, as: .data(mode)))
    }

    /// ClearRecordFile (EB): Read&Write access; the records go at CommitTransaction.
    func clearRecordFile(_ data: [UInt8], _ s: inout State) throws(DESFireStatus) -> Answer {
        guard data.count >= 1 else { throw .lengthError }
        let (_, f) = try dataFile(data[0], s, Self.isRecord)
        _ = try grant(.readWrite, f, s)
        let (_, payload) = try s.channel.open(0xEB, data, header: 1, as: .management)
        guard payload.isEmpty else { throw .lengthError }
        switch s.staged(f) {
        case .linearRecord(var r):
            r.records = []
            s.stage(f.number, .linearRecord(r)) { $0.cleared.insert(f.number); $0.newRecord.remove(f.number) }
        case .cyclicRecord(var r):
            r.records = []
            s.stage(f.number, .cyclicRecord(r)) { $0.cleared.insert(f.number); $0.newRecord.remove(f.number) }
        default:
            throw .parameterError
        }
        return Answer(bytes: try s.channel.seal([], as: .management))
    }

    /// CommitTransaction (C7; EV2 may add an option byte): every pending change of the
    /// application at once. With nothing pending the chip answers 0C, "no changes", which is
    /// not an error.
    func commitTransaction(_ data: [UInt8], _ s: inout State) throws(DESFireStatus) -> Answer {
        let (_, payload) = try s.channel.open(0xC7, data, header: 0, as: .management)
        guard payload.count <= 1 else { throw .lengthError }
        guard let t = s.transaction, !t.isEmpty, let index = s.applicationIndex, s.selected == t.aid else {
            s.transaction = nil
            return Answer(bytes: try s.channel.seal([], as: .management, status: DESFireStatus.noChanges.code), status: .noChanges)
        }
        if hostile == .commitIgnored {
            // The hostile card's lie: the commit acknowledged, the changes dropped.
            s.transaction = nil
            return Answer(bytes: try s.channel.seal([], as: .management))
        }
        try s.persist { image in
            for (number, content) in t.contents {
                guard let i = image.applications[index].files.firstIndex(where: { $0.number == number }) else { continue }
                var new = content
                if case .value(var v) = new {
                    if let debited = t.debits[number], debited > 0 {
                        v.limitedCreditValue = Int32(clamping: debited)
                    } else if t.limitedCredits.contains(number) {
                        v.limitedCreditValue = 0
                    }
                    new = .value(v)
                }
                image.applications[index].files[i].content = new
            }
        }
        s.transaction = nil
        return Answer(bytes: try s.channel.seal([], as: .management))
    }

    /// AbortTransaction (A7): every pending change dropped; 0C when there was none.
    func abortTransaction(_ data: [UInt8], _ s: inout State) throws(DESFireStatus) -> Answer {
        let (_, payload) = try s.channel.open(0xA7, data, header: 0, as: .management)
        guard payload.isEmpty else { throw .lengthError }
        let had = s.transaction?.isEmpty == false
        s.transaction = nil
        let status: DESFireStatus = had ? .ok : .noChanges
        return Answer(bytes: try s.channel.seal([], as: .management, status: status.code), status: status)
    }
}
