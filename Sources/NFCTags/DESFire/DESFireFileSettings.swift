// A DESFire file's access rights and settings (GetFileSettings), and the specifications CreateFile
// and CreateApplication take.
import ISO7816

/// A file's four access rights: Read, Write, ReadWrite (either), Change (its settings). On the
/// wire two bytes, least significant first: (RW << 4 | Change), (Read << 4 | Write).
public struct DESFireAccessRights: Sendable, Hashable, CustomStringConvertible {
    public var read: DESFireAccess
    public var write: DESFireAccess
    public var readWrite: DESFireAccess
    public var change: DESFireAccess

    public init(read: DESFireAccess, write: DESFireAccess, readWrite: DESFireAccess, change: DESFireAccess) {
        self.read = read
        self.write = write
        self.readWrite = readWrite
        self.change = change
    }

    /// From the 16-bit value as libfreefare and NXP's notes write it (`0xE000`: read free, the
    /// rest key 0).
    public init(_ value: UInt16) {
        read = DESFireAccess(nibble: UInt8(value >> 12))
        write = DESFireAccess(nibble: UInt8(value >> 8 & 0x0F))
        readWrite = DESFireAccess(nibble: UInt8(value >> 4 & 0x0F))
        change = DESFireAccess(nibble: UInt8(value & 0x0F))
    }

    public init(wire bytes: ArraySlice<UInt8>) {
        let b = Array(bytes.prefix(2)) + [0, 0]
        self.init(UInt16(b[1]) << 8 | UInt16(b[0]))
    }

    public var value: UInt16 { UInt16(read.nibble) << 12 | UInt16(write.nibble) << 8 | UInt16(readWrite.nibble) << 4 | UInt16(change.nibble) }
    public var wire: [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }

    /// Whether reading needs no key: Read or ReadWrite free.
    public var freeRead: Bool { read == .free || readWrite == .free }
    /// Whether writing needs no key: Write or ReadWrite free.
    public var freeWrite: Bool { write == .free || readWrite == .free }

    /// Whether an authentication with `key` (nil: none) allows reading.
    public func allowsRead(with key: UInt8?) -> Bool { freeRead || (key.map { read == .key($0) || readWrite == .key($0) } ?? false) }
    /// Whether an authentication with `key` (nil: none) allows writing.
    public func allowsWrite(with key: UInt8?) -> Bool { freeWrite || (key.map { write == .key($0) || readWrite == .key($0) } ?? false) }

    /// "read free, write key 1, read-write key 1, change key 0".
    public var description: String { "read \(read), write \(write), read-write \(readWrite), change \(change)" }
}

/// What GetFileSettings (`90 F5`) says of a file: its type, communication mode, access rights and
/// the type's own numbers (size; value limits; record size and counts).
public struct DESFireFileSettings: Sendable, Hashable {
    public enum FileType: UInt8, Sendable, Hashable, CustomStringConvertible {
        case standardData = 0, backupData = 1, value = 2, linearRecord = 3, cyclicRecord = 4, transactionMAC = 5

        /// Whether writes to the file wait for CommitTransaction (backup, value and record files).
        public var isTransactional: Bool { self == .backupData || self == .value || self == .linearRecord || self == .cyclicRecord }

        public var description: String {
            switch self {
            case .standardData: return "standard data"
            case .backupData: return "backup data"
            case .value: return "value"
            case .linearRecord: return "linear record"
            case .cyclicRecord: return "cyclic record"
            case .transactionMAC: return "transaction MAC"
            }
        }
    }

    /// A value file's limits.
    public struct ValueLimits: Sendable, Hashable {
        public var lower: Int32
        public var upper: Int32
        /// The amount LimitedCredit may give back (what the last debits took).
        public var limitedCreditValue: Int32
        public var limitedCreditEnabled: Bool
        /// GetValue without a key (EV1 and later; bit 1 of the flags).
        public var freeGetValue: Bool
    }

    /// A record file's shape.
    public struct Records: Sendable, Hashable {
        public var recordSize: Int
        public var maxRecords: Int
        public var currentRecords: Int
    }

    public var type: FileType
    public var commMode: CommMode
    public var access: DESFireAccessRights
    /// Data files: the size in bytes.
    public var size: Int?
    public var limits: ValueLimits?
    public var records: Records?
    /// EV2 additional access rights (bit 7 of the communication byte), as sent.
    public var additionalAccessRights: [UInt8] = []

    /// The file's bytes of data at most: a data file's size, a value's 4, all records.
    public var capacity: Int {
        switch type {
        case .standardData, .backupData: return size ?? 0
        case .value: return 4
        case .linearRecord, .cyclicRecord: return (records?.recordSize ?? 0) * (records?.maxRecords ?? 0)
        case .transactionMAC: return 0
        }
    }

    /// Parses GetFileSettings' answer.
    /// - Throws: `DESFireError(.malformed)` for a short answer or an unknown file type.
    public init(parsing bytes: [UInt8]) throws(DESFireError) {
        guard bytes.count >= 4 else { throw DESFireError(.malformed, "file settings of \(bytes.count) bytes; at least 4 expected") }
        guard let type = FileType(rawValue: bytes[0]) else { throw DESFireError(.malformed, "file type \(Hex.encode([bytes[0]])) is not one DESFire has") }
        self.type = type
        commMode = Self.commMode(bytes[1])
        access = DESFireAccessRights(wire: bytes[2..<4])
        var p = 4
        func int(_ n: Int) throws(DESFireError) -> Int {
            guard p + n <= bytes.count else { throw DESFireError(.malformed, "the \(type) file's settings end after \(bytes.count) bytes") }
            defer { p += n }
            return (0..<n).reduce(0) { $0 | Int(bytes[p + $1]) << (8 * $1) }
        }
        switch type {
        case .standardData, .backupData:
            size = try int(3)
        case .value:
            let lower = Int32(truncatingIfNeeded: try int(4)), upper = Int32(truncatingIfNeeded: try int(4))
            let limited = Int32(truncatingIfNeeded: try int(4)), flags = try int(1)
            limits = ValueLimits(lower: lower, upper: upper, limitedCreditValue: limited, limitedCreditEnabled: flags & 1 != 0, freeGetValue: flags & 2 != 0)
        case .linearRecord, .cyclicRecord:
            records = Records(recordSize: try int(3), maxRecords: try int(3), currentRecords: try int(3))
        case .transactionMAC:
            break
        }
        if bytes[1] & 0x80 != 0, p < bytes.count { additionalAccessRights = Array(bytes[p...]) }
    }

    /// Bits 0-1 of the communication byte: 00 and 10 plain, 01 MAC, 11 full.
    static func commMode(_ byte: UInt8) -> CommMode {
        switch byte & 0x03 {
        case 0x01: return .mac
        case 0x03: return .full
        default: return .plain
        }
    }

    static func commByte(_ mode: CommMode) -> UInt8 {
        switch mode {
        case .plain: return 0x00
        case .mac: return 0x01
        case .full: return 0x03
        }
    }

    /// The mode reads travel in when the caller is authenticated with `key` (nil: not at all):
    /// free access means plain, whatever the file says.
    public func readMode(authenticatedWith key: UInt8?) -> CommMode {
        if access.freeRead, !(key.map { access.read == .key($0) || access.readWrite == .key($0) } ?? false) { return .plain }
        return commMode
    }

    /// The mode writes travel in (free access means plain).
    public func writeMode(authenticatedWith key: UInt8?) -> CommMode {
        if access.freeWrite, !(key.map { access.write == .key($0) || access.readWrite == .key($0) } ?? false) { return .plain }
        return commMode
    }
}

/// What CreateStdDataFile, CreateBackupDataFile, CreateValueFile and the record files create.
public struct DESFireFileSpec: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        case standardData(size: Int)
        case backupData(size: Int)
        case value(lower: Int32, upper: Int32, initial: Int32, limitedCredit: Bool)
        case linearRecord(recordSize: Int, maxRecords: Int)
        case cyclicRecord(recordSize: Int, maxRecords: Int)

        var instruction: UInt8 {
            switch self {
            case .standardData: return 0xCD
            case .backupData: return 0xCB
            case .value: return 0xCC
            case .linearRecord: return 0xC1
            case .cyclicRecord: return 0xC0
            }
        }

        /// The command that creates it: "CreateStdDataFile", ….
        public var commandName: String {
            switch self {
            case .standardData: return "CreateStdDataFile"
            case .backupData: return "CreateBackupDataFile"
            case .value: return "CreateValueFile"
            case .linearRecord: return "CreateLinearRecordFile"
            case .cyclicRecord: return "CreateCyclicRecordFile"
            }
        }
    }

    public var number: UInt8
    public var kind: Kind
    public var commMode: CommMode
    public var access: DESFireAccessRights
    /// The ISO file identifier, for applications created with ISO file identifiers (data and
    /// record files only).
    public var isoFileID: UInt16?

    public init(number: UInt8, kind: Kind, commMode: CommMode = .plain, access: DESFireAccessRights, isoFileID: UInt16? = nil) {
        self.number = number
        self.kind = kind
        self.commMode = commMode
        self.access = access
        self.isoFileID = isoFileID
    }

    /// The command's data field.
    var commandData: [UInt8] {
        func le(_ v: Int, _ n: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
        var out: [UInt8] = [number]
        if let iso = isoFileID, !isValue { out += [UInt8(iso & 0xFF), UInt8(iso >> 8)] }
        out.append(DESFireFileSettings.commByte(commMode))
        out += access.wire
        switch kind {
        case let .standardData(size), let .backupData(size): out += le(size, 3)
        case let .value(lower, upper, initial, limited):
            out += le(Int(lower), 4) + le(Int(upper), 4) + le(Int(initial), 4) + [limited ? 1 : 0]
        case let .linearRecord(size, count), let .cyclicRecord(size, count): out += le(size, 3) + le(count, 3)
        }
        return out
    }

    private var isValue: Bool { if case .value = kind { return true } else { return false } }

    /// Checks the numbers before anything is sent.
    public func validate() throws(DESFireError) {
        guard number <= 0x1F else { throw DESFireError(.parameterError, "file numbers are 0-31, not \(number)") }
        switch kind {
        case let .standardData(size), let .backupData(size):
            guard (1...0xFF_FFFF).contains(size) else { throw DESFireError(.parameterError, "a data file holds 1 to 16777215 bytes, not \(size)") }
        case let .value(lower, upper, initial, _):
            guard lower <= upper, (lower...upper).contains(initial) else {
                throw DESFireError(.parameterError, "a value file needs lower ≤ initial ≤ upper (\(lower) ≤ \(initial) ≤ \(upper))")
            }
        case let .linearRecord(size, count), let .cyclicRecord(size, count):
            guard (1...0xFF_FFFF).contains(size), (1...0xFF_FFFF).contains(count) else {
                throw DESFireError(.parameterError, "records of \(size) bytes, \(count) at most: both must be 1 or more")
            }
            if case .cyclicRecord = kind, count < 2 { throw DESFireError(.parameterError, "a cyclic record file needs at least 2 records (one is kept free)") }
        }
    }
}

/// What CreateApplication (`90 CA`) creates.
public struct DESFireApplicationSpec: Sendable, Hashable {
    public var aid: DESFireApplicationID
    public var settings: DESFireKeySettings
    public var keyCount: Int
    public var family: DESFireKeyFamily
    /// With ISO file identifiers: the application's own (DF) identifier and its DF name (1-16
    /// bytes), by which ISO SELECT finds it (NFC Forum Type 4 needs both).
    public var isoFileID: UInt16?
    public var dfName: [UInt8]?

    public init(aid: DESFireApplicationID, settings: DESFireKeySettings = .factory, keyCount: Int, family: DESFireKeyFamily,
                isoFileID: UInt16? = nil, dfName: [UInt8]? = nil) {
        self.aid = aid
        self.settings = settings
        self.keyCount = keyCount
        self.family = family
        self.isoFileID = isoFileID
        self.dfName = dfName
    }

    var commandData: [UInt8] {
        var out = aid.wire + [settings.rawValue, UInt8(keyCount & 0x0F) | (isoFileID != nil ? 0x20 : 0) | family.rawValue << 6]
        if let iso = isoFileID { out += [UInt8(iso & 0xFF), UInt8(iso >> 8)] + (dfName ?? []) }
        return out
    }

    public func validate() throws(DESFireError) {
        guard aid != .picc else { throw DESFireError(.parameterError, "000000 is the card level, not an application") }
        guard (1...14).contains(keyCount) else { throw DESFireError(.parameterError, "an application has 1 to 14 keys, not \(keyCount)") }
        if let name = dfName, !(1...16).contains(name.count) { throw DESFireError(.parameterError, "a DF name is 1 to 16 bytes, not \(name.count)") }
        if dfName != nil && isoFileID == nil { throw DESFireError(.parameterError, "a DF name needs an ISO file identifier for the application") }
    }
}
