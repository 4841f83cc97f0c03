// What an emulated DESFire keeps across power cycles: chip generation and storage, keys,
// access rights, files, applications, the whole card image.
import CardCrypto
import ISO7816

extension DESFireCard {
    /// Which chip the card is: GetVersion's hardware and software versions, and whether the EV2
    /// commands (AuthenticateEV2First/NonFirst and EV2 secure messaging) exist.
    public enum Generation: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        case ev1, ev2, ev3

        /// Hardware major version in GetVersion (proxmark3 `getCardType`: 01 EV1, 12 EV2, 33 EV3).
        var majorVersion: UInt8 {
            switch self {
            case .ev1: return 0x01
            case .ev2: return 0x12
            case .ev3: return 0x33
            }
        }

        /// Software version (major, minor), as real cards answer: EV1 1.4 (the RFDoorLock traces),
        /// EV2 2.1 and EV3 3.0 (proxmark3 `hf mfdes info` output in its issues #583 and #1029).
        var softwareVersion: (UInt8, UInt8) {
            switch self {
            case .ev1: return (0x01, 0x04)
            case .ev2: return (0x02, 0x01)
            case .ev3: return (0x03, 0x00)
            }
        }

        var hasEV2SecureMessaging: Bool { self != .ev1 }
        public var description: String { rawValue.uppercased() }
    }

    /// The EEPROM size, as GetVersion's storage byte gives it (2^(n/2) bytes).
    public enum Storage: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        case kb2 = 2048, kb4 = 4096, kb8 = 8192

        var versionByte: UInt8 {
            switch self {
            case .kb2: return 0x16
            case .kb4: return 0x18
            case .kb8: return 0x1A
            }
        }

        /// The bytes FreeMemory reports on a blank card. NXP does not publish the figure; these
        /// are chosen so that AN11004's NDEF files (2, 4 and 7.5 KB, which libfreefare's
        /// mifare-desfire-create-ndef creates on real cards) fit with their application.
        var userBytes: Int {
            switch self {
            case .kb2: return 0x0900
            case .kb4: return 0x1300
            case .kb8: return 0x1F00
            }
        }
        public var description: String { "\(rawValue / 1024) KB" }
    }

    /// The chip's identity: what GetVersion reports and how large its frames are.
    public struct Chip: Sendable, Hashable {
        public var generation: Generation
        public var storage: Storage
        /// The 7-byte UID (GetVersion, GetCardUID, and the anticollision UID unless random ID is on).
        public var uid: [UInt8]
        /// Production batch number (5 bytes).
        public var batch: [UInt8]
        /// Production week and year, BCD (week 49 of 2013 is 0x49, 0x13).
        public var productionWeek: UInt8
        public var productionYear: UInt8
        /// Largest ISO 14443-4 frame the chip takes (FSC): 64 for every DESFire. Native answers
        /// carry at most FSC − 5 = 59 data bytes a frame (more follow after `AF`), as on real cards.
        public var frameSize: Int

        public init(generation: Generation = .ev1, storage: Storage = .kb8, uid: [UInt8] = [0x04, 0x5A, 0x3C, 0x12, 0x7B, 0x2E, 0x80],
                    batch: [UInt8] = [0xBA, 0x45, 0x19, 0xE3, 0x20], productionWeek: UInt8 = 0x49, productionYear: UInt8 = 0x13, frameSize: Int = 64) {
            self.generation = generation
            self.storage = storage
            self.uid = uid
            self.batch = batch
            self.productionWeek = productionWeek
            self.productionYear = productionYear
            self.frameSize = frameSize
        }
    }

    /// The crypto of a key: the PICC master key has one, and every key of an application shares
    /// the application's.
    public enum KeyType: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// DES or two-key triple DES, 16 bytes (DES when both halves are equal). The key version
        /// is held in the parity bits of the first eight bytes.
        case tdes = "2K3DES"
        /// Three-key triple DES, 24 bytes.
        case tdes3 = "3K3DES"
        /// AES-128, 16 bytes and an explicit version byte.
        case aes = "AES"

        public var keyLength: Int { self == .tdes3 ? 24 : 16 }
        /// The type bits of CreateApplication's key byte, GetKeySettings' answer and a PICC-level
        /// ChangeKey's key number.
        var typeBits: UInt8 {
            switch self {
            case .tdes: return 0x00
            case .tdes3: return 0x40
            case .aes: return 0x80
            }
        }
        init?(typeBits: UInt8) {
            switch typeBits & 0xC0 {
            case 0x00: self = .tdes
            case 0x40: self = .tdes3
            case 0x80: self = .aes
            default: return nil
            }
        }
        /// Random numbers of the authentication: one cipher block (8 bytes for 2K3DES, 16 for
        /// 3K3DES and AES).
        var challengeLength: Int { self == .tdes ? 8 : 16 }
        var blockSize: Int { self == .aes ? 16 : 8 }
        public var description: String { self == .tdes ? "DES/2K3DES" : rawValue }
    }

    /// A key as the chip keeps it. Its bytes never appear in a description.
    public struct Key: Sendable, Hashable, CustomStringConvertible {
        public var type: KeyType
        public var bytes: [UInt8]
        public var version: UInt8

        /// - Parameters:
        ///   - type: the key's cipher.
        ///   - bytes: `type.keyLength` bytes; an 8-byte DES key is taken as K ‖ K.
        ///   - version: the key's version; nil for what the bytes carry (0 for AES; DES-family
        ///     keys keep it in their parity bits).
        public init(_ type: KeyType, bytes: [UInt8], version: UInt8? = nil) {
            self.type = type
            self.bytes = type == .tdes && bytes.count == 8 ? bytes + bytes : bytes
            self.version = version ?? (type == .aes ? 0 : Self.parityVersion(self.bytes))
        }

        /// The all-zero key of a type, version 0: every key of a new application, and the PICC
        /// master key as shipped (DES).
        public static func zero(_ type: KeyType) -> Key { Key(type, bytes: [UInt8](repeating: 0, count: type.keyLength), version: 0) }

        /// DES keys carry their version in bit 0 of the first eight bytes, most significant first
        /// (the RFDoorLock traces: key 00 10 20 31 … answers GetKeyVersion with 10).
        static func parityVersion(_ bytes: [UInt8]) -> UInt8 {
            var v: UInt8 = 0
            for i in 0..<min(8, bytes.count) { v = v << 1 | (bytes[i] & 1) }
            return v
        }

        /// Single DES: a 2K3DES key whose halves are the same bytes (parity bits included, which
        /// is why libfreefare writes the inverted version into K2 of a real 3DES key).
        var isSingleDES: Bool { type == .tdes && bytes.count == 16 && bytes[0..<8] == bytes[8..<16] }

        var cipherAlgorithm: CipherAlgorithm {
            switch type {
            case .tdes: return .tdes2
            case .tdes3: return .tdes3
            case .aes: return .aes128
            }
        }

        public var description: String { "\(isSingleDES ? "DES" : type.description) key, version \(Hex.encode([version]))" }
    }

    /// How a file's data travels when a key grants the access (free access is always plain).
    public enum CommMode: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        case plain = 0, mac = 1, full = 3
        public var description: String {
            switch self {
            case .plain: return "plain"
            case .mac: return "MAC"
            case .full: return "full"
            }
        }
    }

    /// A file's four access conditions: a key number 0–13, 0xE for free access, 0xF for never.
    public struct AccessRights: Sendable, Hashable, CustomStringConvertible {
        public var read: UInt8, write: UInt8, readWrite: UInt8, change: UInt8
        public static let free: UInt8 = 0xE, never: UInt8 = 0xF

        public init(read: UInt8, write: UInt8, readWrite: UInt8, change: UInt8) {
            self.read = read & 0x0F
            self.write = write & 0x0F
            self.readWrite = readWrite & 0x0F
            self.change = change & 0x0F
        }

        /// From the 16-bit value libfreefare's MDAR() builds: read ‖ write ‖ read&write ‖ change.
        public init(_ value: UInt16) {
            self.init(read: UInt8(value >> 12 & 0xF), write: UInt8(value >> 8 & 0xF), readWrite: UInt8(value >> 4 & 0xF), change: UInt8(value & 0xF))
        }

        /// As sent in CreateFile and answered by GetFileSettings: least significant byte first.
        init(low lo: UInt8, high hi: UInt8) {
            self.init(read: hi >> 4, write: hi & 0xF, readWrite: lo >> 4, change: lo & 0xF)
        }
        var wire: [UInt8] { [readWrite << 4 | change, read << 4 | write] }
        public var value: UInt16 { UInt16(read) << 12 | UInt16(write) << 8 | UInt16(readWrite) << 4 | UInt16(change) }
        public var description: String { Hex.encode([UInt8(value >> 8), UInt8(value & 0xFF)]) }
    }

    /// A value file's settings and value.
    public struct ValueFile: Sendable, Hashable {
        public var value: Int32
        public var lowerLimit: Int32
        public var upperLimit: Int32
        /// The most LimitedCredit may add: the debits of the last committed transaction that had any.
        public var limitedCreditValue: Int32
        public var limitedCreditEnabled: Bool
        /// GetValue without any key (EV1 option bit 1).
        public var freeGetValue: Bool

        public init(value: Int32, lowerLimit: Int32, upperLimit: Int32, limitedCreditValue: Int32 = 0, limitedCreditEnabled: Bool = false, freeGetValue: Bool = false) {
            self.value = value
            self.lowerLimit = lowerLimit
            self.upperLimit = upperLimit
            self.limitedCreditValue = limitedCreditValue
            self.limitedCreditEnabled = limitedCreditEnabled
            self.freeGetValue = freeGetValue
        }
    }

    /// A linear or cyclic record file: its records, oldest first.
    public struct RecordFile: Sendable, Hashable {
        public var recordSize: Int
        public var maxRecords: Int
        public var records: [[UInt8]]
        public init(recordSize: Int, maxRecords: Int, records: [[UInt8]] = []) {
            self.recordSize = recordSize
            self.maxRecords = maxRecords
            self.records = records
        }
    }

    /// What a file holds, by its type.
    public enum FileContent: Sendable, Hashable {
        case standard([UInt8])
        case backup([UInt8])
        case value(ValueFile)
        case linearRecord(RecordFile)
        case cyclicRecord(RecordFile)

        /// GetFileSettings' file type byte.
        var typeCode: UInt8 {
            switch self {
            case .standard: return 0
            case .backup: return 1
            case .value: return 2
            case .linearRecord: return 3
            case .cyclicRecord: return 4
            }
        }

        /// EEPROM the file takes, in the chip's 32-byte blocks; a backup file keeps two copies.
        var allocation: Int {
            func blocks(_ n: Int) -> Int { (n + 31) / 32 * 32 }
            switch self {
            case .standard(let d): return blocks(d.count)
            case .backup(let d): return 2 * blocks(d.count)
            case .value: return 32
            case .linearRecord(let r), .cyclicRecord(let r): return blocks(r.recordSize * r.maxRecords)
            }
        }
    }

    public struct File: Sendable, Hashable {
        public var number: UInt8
        /// The ISO/IEC 7816-4 file identifier, for files of applications created with them.
        public var isoFileID: UInt16?
        public var commMode: CommMode
        public var access: AccessRights
        public var content: FileContent

        public init(number: UInt8, isoFileID: UInt16? = nil, commMode: CommMode = .plain, access: AccessRights, content: FileContent) {
            self.number = number
            self.isoFileID = isoFileID
            self.commMode = commMode
            self.access = access
            self.content = content
        }
    }

    public struct Application: Sendable, Hashable {
        /// The 3-byte application identifier as a number (AID 00DE16 is 0x00DE16; on the wire
        /// least significant byte first: 16 DE 00).
        public var aid: UInt32
        /// Key settings: ChangeKey access (bits 7–4), configuration changeable, free create/delete,
        /// free directory list, master key changeable (bits 3–0).
        public var keySettings: UInt8
        public var keyType: KeyType
        public var keys: [Key]
        /// Whether files get ISO file identifiers (bit 5 of CreateApplication's key byte).
        public var isoFileIDs: Bool
        public var isoFileID: UInt16?
        public var dfName: [UInt8]?
        /// Files by number, in creation order.
        public var files: [File]

        public init(aid: UInt32, keySettings: UInt8 = 0x0F, keyType: KeyType = .tdes, keyCount: Int = 1, isoFileIDs: Bool = false,
                    isoFileID: UInt16? = nil, dfName: [UInt8]? = nil, files: [File] = []) {
            self.aid = aid & 0xFF_FFFF
            self.keySettings = keySettings
            self.keyType = keyType
            self.keys = [Key](repeating: .zero(keyType), count: max(1, min(14, keyCount)))
            self.isoFileIDs = isoFileIDs || isoFileID != nil
            self.isoFileID = isoFileID
            self.dfName = dfName
            self.files = files
        }

        public func file(_ number: UInt8) -> File? { files.first { $0.number == number } }

        var aidBytes: [UInt8] { [UInt8(aid & 0xFF), UInt8(aid >> 8 & 0xFF), UInt8(aid >> 16 & 0xFF)] }
        /// EEPROM the application takes besides its files (this emulator's accounting).
        var allocation: Int { 64 + (keys.count * 16 + 31) / 32 * 32 }
    }

    /// Everything the chip keeps across power cycles: the card image the CLI saves and loads.
    public struct Image: Sendable, Hashable {
        public var chip: Chip
        public var masterKey: Key
        /// PICC master key settings: bit 3 configuration changeable, bit 2 free create/delete,
        /// bit 1 free directory list, bit 0 master key changeable. 0x0F as shipped.
        public var masterKeySettings: UInt8
        /// Applications in creation order (GetApplicationIDs lists them so).
        public var applications: [Application]
        /// SetConfiguration option 0, bit 0: FormatPICC refused.
        public var formatDisabled: Bool
        /// SetConfiguration option 0, bit 1: a fresh random 4-byte UID (08 xx xx xx) at every
        /// activation; the real UID only through GetCardUID after authentication. Irreversible.
        public var randomUID: Bool

        public init(chip: Chip = Chip(), masterKey: Key = .zero(.tdes), masterKeySettings: UInt8 = 0x0F, applications: [Application] = [],
                    formatDisabled: Bool = false, randomUID: Bool = false) {
            self.chip = chip
            self.masterKey = masterKey
            self.masterKeySettings = masterKeySettings
            self.applications = applications
            self.formatDisabled = formatDisabled
            self.randomUID = randomUID
        }

        public func application(_ aid: UInt32) -> Application? { applications.first { $0.aid == aid } }

        /// Bytes FreeMemory reports.
        public var freeMemory: Int {
            let used = applications.reduce(0) { $0 + $1.allocation + $1.files.reduce(0) { $0 + $1.content.allocation } }
            return max(0, chip.storage.userBytes - used)
        }
    }
}
