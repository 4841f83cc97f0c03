import ISO7816
import Testing
import VirtualCard

/// Transactions: backup, value and record files change at CommitTransaction and not before;
/// a pulled card, an error, SelectApplication or AbortTransaction loses what was not committed;
/// standard files and completed commits stay.
@Suite("DESFire emulator: transactions, committed or lost")
struct DESFireTransactionTests {
    static let aid: UInt32 = 0xAAAAAA

    /// libfreefare test_mifare_desfire's application A: free access everywhere (EEEE), a standard
    /// file 15 (100 bytes), a backup file 5 (64 bytes), a value file 4 (0…1000), a cyclic record
    /// file 0 (4-byte records, 10 at most).
    static func card() throws -> (DESFireCard, DESFireTestReader) {
        let card = DESFireCard.factory()
        let reader = DESFireTestReader(card)
        try reader.select(0)
        try reader.authenticate(0, .zero(.tdes), .legacy)
        try reader.createApplication(aid, settings: 0xFF, keys: 1, type: .tdes)
        try reader.select(aid)
        try reader.createStdFile(15, mode: .plain, access: 0xEEEE, size: 100)
        try reader.createStdFile(5, mode: .plain, access: 0xEEEE, size: 64, backup: true)
        try reader.createValueFile(4, mode: .plain, access: 0xEEEE, lower: 0, upper: 1000, value: 0)
        try reader.createRecordFile(0, cyclic: true, mode: .plain, access: 0xEEEE, recordSize: 4, max: 10)
        return (card, reader)
    }

    @Test("libfreefare's transaction loop: 15 commits of a backup write, credit 100 and debit 97, a record written twice; nothing visible before each commit")
    func libfreefareLoop() throws {
        let (card, reader) = try Self.card()
        var expected: Int32 = 0
        var backup = [UInt8](repeating: 0, count: 64)
        for t in 0..<15 {
            let text = Array(String(format2: t).utf8)
            try reader.writeData(5, offset: 3 * t, text, mode: .plain)
            try reader.value(0x0C, 4, 100, mode: .plain)
            try reader.value(0xDC, 4, 97, mode: .plain)
            try reader.writeRecord(0, offset: 2, text, mode: .plain)
            try reader.writeRecord(0, Array("r.".utf8), mode: .plain)
            #expect(try reader.readData(5, length: 64, mode: .plain) == backup, "transaction \(t): the backup file unchanged before the commit")
            #expect(try reader.getValue(4, mode: .plain) == expected)
            if t > 0 { #expect(try reader.readRecords(0, count: 1, recordSize: 4, mode: .plain) != Array("r.".utf8) + text) }
            #expect(try reader.commit() == 0x00)
            backup.replaceSubrange((3 * t)..<(3 * t + 2), with: text)
            expected += 3
            #expect(try reader.readData(5, offset: 3 * t, length: 2, mode: .plain) == text)
            #expect(try reader.getValue(4, mode: .plain) == expected)
            #expect(try reader.readRecords(0, count: 1, recordSize: 4, mode: .plain) == Array("r.".utf8) + text)
        }
        // LimitedCredit is off for this file; the last transaction's debit is kept (97) all the same.
        #expect(throws: DESFireTestReader.Failure.status(0x9D)) { try reader.value(0x1C, 4, 20, mode: .plain) }
        let settings = try reader.getFileSettings(4)
        #expect(Array(settings.suffix(5)) == [97, 0, 0, 0, 0])
        let cyclic = try reader.getFileSettings(0)
        #expect(Array(cyclic.suffix(3)) == [9, 0, 0], "a cyclic file of 10 keeps 9 records")
        _ = card
    }

    @Test("pulled before the commit: backup, value and record changes are lost; the standard file keeps its write; a later commit has nothing to do (0C)")
    func resetLosesUncommitted() throws {
        let (card, reader) = try Self.card()
        try reader.writeData(15, Array("standard".utf8), mode: .plain)
        try reader.writeData(5, Array("backup".utf8), mode: .plain)
        try reader.value(0x0C, 4, 500, mode: .plain)
        try reader.writeRecord(0, Array("rec1".utf8), mode: .plain)
        #expect(card.hasPendingTransaction)
        card.reset()
        #expect(!card.hasPendingTransaction)
        #expect(!card.isAuthenticated)
        let again = DESFireTestReader(card)
        try again.select(Self.aid)
        #expect(try again.commit() == 0x0C)
        #expect(try again.readData(15, length: 8, mode: .plain) == Array("standard".utf8))
        #expect(try again.readData(5, length: 6, mode: .plain) == [UInt8](repeating: 0, count: 6))
        #expect(try again.getValue(4, mode: .plain) == 0)
        #expect(throws: DESFireTestReader.Failure.status(0xBE), "no record was committed") { _ = try again.readRecords(0, count: 1, recordSize: 4, mode: .plain) }
        // Committed, then pulled: kept.
        try again.writeData(5, Array("kept".utf8), mode: .plain)
        #expect(try again.commit() == 0x00)
        card.reset()
        let third = DESFireTestReader(card)
        try third.select(Self.aid)
        #expect(try third.readData(5, length: 4, mode: .plain) == Array("kept".utf8))
    }

    @Test("AbortTransaction, SelectApplication and any error drop the pending changes; Commit and Abort with none answer 0C and keep the session")
    func abortPaths() throws {
        let (card, reader) = try Self.card()
        try reader.select(Self.aid)
        try reader.authenticate(0, .zero(.tdes), .iso)
        try reader.value(0x0C, 4, 10, mode: .plain)
        #expect(try reader.abort() == 0x00)
        #expect(try reader.abort() == 0x0C)
        #expect(try reader.commit() == 0x0C)
        #expect(card.isAuthenticated, "0C is no error: the session (and its CMAC chain) goes on")
        #expect(try reader.getValue(4, mode: .plain) == 0)
        try reader.value(0x0C, 4, 10, mode: .plain)
        try reader.select(Self.aid)
        #expect(try reader.commit() == 0x0C)
        try reader.value(0x0C, 4, 10, mode: .plain)
        #expect(throws: DESFireTestReader.Failure.status(0xF0)) { _ = try reader.readData(9, length: 1, mode: .plain) }
        #expect(try reader.commit() == 0x0C, "the error aborted the transaction")
        #expect(try reader.getValue(4, mode: .plain) == 0)
    }

    @Test("record files: ClearRecordFile then WriteRecord in one transaction is refused (9D) and aborts it; a full linear file refuses (BE); reading an empty file is a boundary error")
    func records() throws {
        let (_, reader) = try Self.card()
        try reader.createRecordFile(1, cyclic: false, mode: .plain, access: 0xEEEE, recordSize: 3, max: 2)
        for r in ["one", "two"] {
            try reader.writeRecord(1, Array(r.utf8), mode: .plain)
            #expect(try reader.commit() == 0x00)
        }
        #expect(throws: DESFireTestReader.Failure.status(0xBE)) { try reader.writeRecord(1, Array("3rd".utf8), mode: .plain) }
        try reader.clearRecordFile(1)
        #expect(throws: DESFireTestReader.Failure.status(0x9D)) { try reader.writeRecord(1, Array("new".utf8), mode: .plain) }
        #expect(try reader.commit() == 0x0C, "the refusal aborted the clearing too")
        #expect(try reader.readRecords(1, count: 2, recordSize: 3, mode: .plain) == Array("onetwo".utf8), "the records are still there")
        try reader.clearRecordFile(1)
        #expect(try reader.commit() == 0x00)
        #expect(throws: DESFireTestReader.Failure.status(0xBE)) { _ = try reader.readRecords(1, count: 1, recordSize: 3, mode: .plain) }
    }

    @Test("value limits: above the upper limit or below the lower one is BE; LimitedCredit up to the debits of the last transaction, then no more")
    func valueLimits() throws {
        let (_, reader) = try Self.card()
        try reader.createValueFile(2, mode: .plain, access: 0xEEEE, lower: -10, upper: 100, value: 50, options: 0x01)
        #expect(throws: DESFireTestReader.Failure.status(0xBE)) { try reader.value(0x0C, 2, 51, mode: .plain) }
        #expect(throws: DESFireTestReader.Failure.status(0xBE)) { try reader.value(0xDC, 2, 61, mode: .plain) }
        #expect(throws: DESFireTestReader.Failure.status(0x9E)) { try reader.value(0x0C, 2, -1, mode: .plain) }
        try reader.value(0xDC, 2, 30, mode: .plain)
        try reader.value(0xDC, 2, 5, mode: .plain)
        #expect(try reader.commit() == 0x00)
        #expect(throws: DESFireTestReader.Failure.status(0xBE)) { try reader.value(0x1C, 2, 36, mode: .plain) }
        try reader.value(0x1C, 2, 35, mode: .plain)
        #expect(try reader.commit() == 0x00)
        #expect(try reader.getValue(2, mode: .plain) == 50)
        #expect(throws: DESFireTestReader.Failure.status(0xBE), "used up") { try reader.value(0x1C, 2, 1, mode: .plain) }
    }
}

extension String {
    /// Two decimal digits, as libfreefare's sprintf("%02d").
    init(format2 n: Int) { self = n < 10 ? "0\(n)" : "\(n)" }
}
