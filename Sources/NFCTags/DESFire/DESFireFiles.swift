// Reading and changing DESFire files: data, value and record files, and
// CommitTransaction/AbortTransaction.
import ISO7816

/// Little-endian bytes of a DESFire length, offset or value.
func desfireLE(_ v: Int, _ n: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }

extension DESFireCard {
    /// The communication mode reads of a file travel in with the current authentication: free
    /// access is plain, whatever the file says.
    public func readMode(_ settings: DESFireFileSettings) -> CommMode { settings.readMode(authenticatedWith: session?.keyNumber) }
    /// The communication mode writes travel in.
    public func writeMode(_ settings: DESFireFileSettings) -> CommMode { settings.writeMode(authenticatedWith: session?.keyNumber) }

    // MARK: - Data files

    /// ReadData (`90 BD`) of a standard or backup data file: `length` bytes from `offset`, in
    /// `mode` (the file's, or plain for free access; see `readMode`). The card streams the
    /// answer in frames of up to 59 bytes.
    public func readData(_ file: UInt8, offset: Int = 0, length: Int, mode: CommMode) throws -> [UInt8] {
        guard length > 0, offset >= 0, offset + length <= 0xFF_FFFF else {
            throw DESFireError(.boundaryError, "ReadData of \(length) bytes at \(offset): give a length of 1 or more within the file")
        }
        let data = try command(0xBD, header: [file] + desfireLE(offset, 3) + desfireLE(length, 3), security: .read(mode), length: length,
                               what: "ReadData of file \(file)")
        guard data.count == length else { throw DESFireError(.malformed, "ReadData of file \(file) brought \(data.count) bytes, not \(length)") }
        return data
    }

    /// ReadData (`90 BD`) of a whole standard or backup data file (offset 0, length 0: "the
    /// entire file", MF3ICD81 §ReadData), held against the `size` its settings announce.
    /// - Throws: `DESFireError(.boundaryError)` without a status word when the card sends another
    ///   number of bytes than its settings announce: the file's contents and its limits disagree,
    ///   and neither is shown as the file's contents (the session stays open: the answer verified).
    func readWholeData(_ file: UInt8, size: Int, mode: CommMode) throws -> [UInt8] {
        let data = try command(0xBD, header: [file] + desfireLE(0, 3) + desfireLE(0, 3), security: .read(mode), length: size,
                               lengthIsExpected: true, what: "ReadData of file \(file)")
        guard data.count == size else {
            throw DESFireError(.boundaryError, "file \(file): GetFileSettings announces \(size) bytes, ReadData of the whole file brought \(data.count): "
                + "the card contradicts itself; nothing is shown as the file's contents")
        }
        return data
    }

    /// WriteData (`90 3D`): `data` at `offset`, in frames, in `mode`. A backup data file keeps
    /// the old bytes until `commitTransaction()`.
    public func writeData(_ file: UInt8, offset: Int = 0, data: [UInt8], mode: CommMode) throws {
        guard !data.isEmpty, offset >= 0, offset + data.count <= 0xFF_FFFF else { throw DESFireError(.boundaryError, "WriteData of \(data.count) bytes at \(offset)") }
        _ = try command(0x3D, header: [file] + desfireLE(offset, 3) + desfireLE(data.count, 3), data: data, security: .write(mode, header: 7),
                        what: "WriteData to file \(file)")
    }

    // MARK: - Value files

    /// GetValue (`90 6C`): the value file's current value (committed).
    public func getValue(_ file: UInt8, mode: CommMode) throws -> Int32 {
        let a = try command(0x6C, header: [file], security: .read(mode), length: 4, what: "GetValue of file \(file)")
        guard a.count == 4 else { throw DESFireError(.malformed, "GetValue answered \(a.count) bytes, not 4") }
        return Int32(bitPattern: UInt32(a[0]) | UInt32(a[1]) << 8 | UInt32(a[2]) << 16 | UInt32(a[3]) << 24)
    }

    /// Credit (`90 0C`): adds `amount` (0 or more) on commit.
    public func credit(_ file: UInt8, amount: Int32, mode: CommMode) throws {
        try valueOperation(0x0C, "Credit", file, amount, mode)
    }

    /// Debit (`90 DC`): takes `amount` (0 or more) on commit.
    public func debit(_ file: UInt8, amount: Int32, mode: CommMode) throws {
        try valueOperation(0xDC, "Debit", file, amount, mode)
    }

    /// LimitedCredit (`90 1C`): gives back up to what the last debits took, when the file allows it.
    public func limitedCredit(_ file: UInt8, amount: Int32, mode: CommMode) throws {
        try valueOperation(0x1C, "LimitedCredit", file, amount, mode)
    }

    private func valueOperation(_ ins: UInt8, _ name: String, _ file: UInt8, _ amount: Int32, _ mode: CommMode) throws {
        guard amount >= 0 else { throw DESFireError(.parameterError, "\(name) takes an amount of 0 or more, not \(amount)") }
        _ = try command(ins, header: [file], data: desfireLE(Int(amount), 4), security: .write(mode, header: 1), what: "\(name) of file \(file)")
    }

    // MARK: - Record files

    /// ReadRecords (`90 BB`): `count` records (0: all) going back from the `from`-th newest (0:
    /// the newest), each `recordSize` bytes, in the order the card sends them (chronological,
    /// the oldest of those asked first).
    public func readRecords(_ file: UInt8, from: Int = 0, count: Int, recordSize: Int, mode: CommMode) throws -> [[UInt8]] {
        guard recordSize > 0, from >= 0, count >= 0 else { throw DESFireError(.parameterError, "ReadRecords needs a record size of 1 or more") }
        let data = try command(0xBB, header: [file] + desfireLE(from, 3) + desfireLE(count, 3), security: .read(mode),
                               length: count > 0 ? count * recordSize : nil, what: "ReadRecords of file \(file)")
        guard data.count % recordSize == 0 else { throw DESFireError(.malformed, "ReadRecords brought \(data.count) bytes, not whole \(recordSize)-byte records") }
        return stride(from: 0, to: data.count, by: recordSize).map { Array(data[$0..<($0 + recordSize)]) }
    }

    /// WriteRecord (`90 3B`): `data` at `offset` within the record being written (a new one,
    /// or the one not yet committed).
    public func writeRecord(_ file: UInt8, offset: Int = 0, data: [UInt8], mode: CommMode) throws {
        guard !data.isEmpty else { throw DESFireError(.lengthError, "WriteRecord of no bytes") }
        _ = try command(0x3B, header: [file] + desfireLE(offset, 3) + desfireLE(data.count, 3), data: data, security: .write(mode, header: 7),
                        what: "WriteRecord to file \(file)")
    }

    /// ClearRecordFile (`90 EB`): empties the record file on commit.
    public func clearRecordFile(_ file: UInt8) throws {
        _ = try command(0xEB, header: [file], what: "ClearRecordFile of file \(file)")
    }

    // MARK: - Transactions

    /// CommitTransaction (`90 C7`): every change to backup, value and record files of the
    /// selected application takes effect at once, or none does.
    public func commitTransaction() throws {
        _ = try command(0xC7, what: "CommitTransaction")
    }

    /// AbortTransaction (`90 A7`): drops the uncommitted changes.
    public func abortTransaction() throws {
        _ = try command(0xA7, what: "AbortTransaction")
    }
}
