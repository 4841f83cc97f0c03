// The Application File Locator (EMV Book 3 §10.2): which records to read, and which of them
// offline data authentication signs.
import ISO7816

/// One AFL entry: a file (SFI), its records, and how many of them, from the first, are signed.
public struct AFLEntry: Sendable, Hashable {
    public var sfi: Int
    public var firstRecord: Int
    public var lastRecord: Int
    public var signedRecords: Int

    public var records: ClosedRange<Int> { firstRecord...lastRecord }
}

/// The AFL (94): 4 bytes an entry.
public struct ApplicationFileLocator: Sendable, Hashable {
    public var entries: [AFLEntry]

    /// Parses and checks the AFL as Book 3 §10.2 requires: a whole number of 4-byte entries, an
    /// SFI of 1-30 in the high five bits (low three 0), a first record of at least 1, a last not
    /// before it, and no more signed records than the range holds.
    public init(parsing bytes: [UInt8]) throws(EMVFormatError) {
        guard !bytes.isEmpty, bytes.count % 4 == 0 else {
            throw EMVFormatError("the AFL is \(bytes.count) bytes (\(bytes.hexString)); it must be a non-empty multiple of 4")
        }
        var entries: [AFLEntry] = []
        for i in stride(from: 0, to: bytes.count, by: 4) {
            let sfi = Int(bytes[i] >> 3), first = Int(bytes[i + 1]), last = Int(bytes[i + 2]), signed = Int(bytes[i + 3])
            guard bytes[i] & 0x07 == 0, (1...30).contains(sfi) else {
                throw EMVFormatError("AFL entry \(i / 4 + 1) (\(Array(bytes[i..<(i + 4)]).hexString)) names SFI byte \(Hex.encode([bytes[i]])): the SFI must be 1-30 in bits 8-4")
            }
            guard first >= 1, last >= first, signed <= last - first + 1 else {
                throw EMVFormatError("AFL entry \(i / 4 + 1) (\(Array(bytes[i..<(i + 4)]).hexString)): records \(first)-\(last) with \(signed) signed is not a valid range")
            }
            entries.append(AFLEntry(sfi: sfi, firstRecord: first, lastRecord: last, signedRecords: signed))
        }
        self.entries = entries
    }

    /// Every record to read, in the AFL's order, and whether ODA signs it.
    public var records: [(sfi: Int, record: Int, signed: Bool)] {
        entries.flatMap { e in e.records.map { (e.sfi, $0, $0 < e.firstRecord + e.signedRecords) } }
    }
}
