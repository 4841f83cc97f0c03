// NTAG 424 DNA file settings and their SDM part, and the answer to GetVersion.
import ISO7816

/// Who may do something with an NTAG 424 DNA file: a key (0-4), everyone (E), or no one (F);
/// the DESFire family's access nibble.
public typealias NTAG424Access = DESFireAccess

/// Secure Dynamic Messaging of a file (NT4H2421Gx §10.7.1, ChangeFileSettings): what is
/// mirrored where into the file's text on every read.
public struct SDMSettings: Hashable, Sendable {
    /// Mirror the UID; mirror SDMReadCtr; enforce SDMReadCtrLimit; encrypt a part of the file;
    /// and (always, for URLs) as ASCII hex.
    public var mirrorsUID = true
    public var mirrorsCounter = true
    public var counterLimit: Int?
    public var encryptsFileData = false
    public var asciiEncoding = true
    /// Who may retrieve the counter with GetFileCounters.
    public var counterRetrieval: NTAG424Access = .never
    /// The key that encrypts the PICC data (`.free`: UID and counter mirrored in the clear;
    /// `.never`: none mirrored).
    public var metaRead: NTAG424Access = .key(2)
    /// The key of the MAC and the encrypted file data (`.never`: no MAC).
    public var fileRead: NTAG424Access = .key(2)
    /// Offsets in the file (bytes), for the parts the options above need.
    public var uidOffset: Int?
    public var counterOffset: Int?
    public var piccDataOffset: Int?
    public var macInputOffset: Int?
    public var encOffset: Int?
    public var encLength: Int?
    public var macOffset: Int?
    /// TTStatusOffset: where an NTAG 424 DNA TagTamper mirrors its two status letters
    /// (NT4H2421Tx, SDMOptions bit 3); nil: not mirrored.
    public var tamperOffset: Int?

    public init() {}

    /// SDMOptions: bit 7 UID, 6 SDMReadCtr, 5 SDMReadCtrLimit, 4 SDMENCFileData, 3 TTStatus
    /// (TagTamper only), 0 ASCII.
    var optionsByte: UInt8 {
        (mirrorsUID ? 0x80 : 0) | (mirrorsCounter ? 0x40 : 0) | (counterLimit != nil ? 0x20 : 0) | (encryptsFileData ? 0x10 : 0)
            | (tamperOffset != nil ? 0x08 : 0) | (asciiEncoding ? 0x01 : 0)
    }

    /// The bytes after FileOption and AccessRights in ChangeFileSettings / GetFileSettings.
    public var encoded: [UInt8] {
        func le(_ v: Int?) -> [UInt8] { let v = v ?? 0; return [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF)] }
        var out: [UInt8] = [optionsByte, 0xF0 | counterRetrieval.nibble, metaRead.nibble << 4 | fileRead.nibble]
        if metaRead == .free {
            if mirrorsUID { out += le(uidOffset) }
            if mirrorsCounter { out += le(counterOffset) }
        } else if case .key = metaRead {
            out += le(piccDataOffset)
        }
        // NT4H2421Tx ChangeFileSettings: TTStatusOffset follows the PICC data's offsets.
        if tamperOffset != nil { out += le(tamperOffset) }
        if fileRead != .never {
            out += le(macInputOffset)
            if encryptsFileData { out += le(encOffset) + le(encLength) }
            out += le(macOffset)
        }
        if let counterLimit { out += le(counterLimit) }
        return out
    }

    /// Parses the SDM part of file settings; `bytes` starts at SDMOptions.
    init(parsing bytes: ArraySlice<UInt8>) throws(NTAG424Error) {
        var p = bytes.startIndex
        func byte() throws(NTAG424Error) -> UInt8 {
            guard p < bytes.endIndex else { throw NTAG424Error(.malformed, "the SDM settings end early") }
            defer { p += 1 }
            return bytes[p]
        }
        func le() throws(NTAG424Error) -> Int { Int(try byte()) | Int(try byte()) << 8 | Int(try byte()) << 16 }
        let options = try byte()
        let rights0 = try byte(), rights1 = try byte()
        mirrorsUID = options & 0x80 != 0
        mirrorsCounter = options & 0x40 != 0
        encryptsFileData = options & 0x10 != 0
        asciiEncoding = options & 0x01 != 0
        counterRetrieval = NTAG424Access(nibble: rights0)
        metaRead = NTAG424Access(nibble: rights1 >> 4)
        fileRead = NTAG424Access(nibble: rights1)
        if metaRead == .free {
            if mirrorsUID { uidOffset = try le() }
            if mirrorsCounter { counterOffset = try le() }
        } else if case .key = metaRead {
            piccDataOffset = try le()
        }
        if options & 0x08 != 0 { tamperOffset = try le() }
        if fileRead != .never {
            macInputOffset = try le()
            if encryptsFileData { encOffset = try le(); encLength = try le() }
            macOffset = try le()
        }
        if options & 0x20 != 0 { counterLimit = try le() }
    }
}

/// An NTAG 424 DNA file's settings (GetFileSettings, NT4H2421Gx §10.7.2).
public struct NTAG424FileSettings: Hashable, Sendable {
    public var fileType: UInt8
    public var commMode: CommMode
    public var read: NTAG424Access
    public var write: NTAG424Access
    public var readWrite: NTAG424Access
    public var change: NTAG424Access
    public var size: Int
    public var sdm: SDMSettings?

    public init(commMode: CommMode, read: NTAG424Access, write: NTAG424Access, readWrite: NTAG424Access, change: NTAG424Access, size: Int, sdm: SDMSettings? = nil, fileType: UInt8 = 0) {
        (self.commMode, self.read, self.write, self.readWrite, self.change, self.size, self.sdm, self.fileType) = (commMode, read, write, readWrite, change, size, sdm, fileType)
    }

    /// FileOption: bit 6 SDM enabled, bits 1-0 the communication mode (00 plain, 01 MAC, 11 full).
    var fileOption: UInt8 { (sdm != nil ? 0x40 : 0) | (commMode == .plain ? 0 : commMode == .mac ? 1 : 3) }
    /// AccessRights: RW ‖ Change, then Read ‖ Write.
    var accessRights: [UInt8] { [readWrite.nibble << 4 | change.nibble, read.nibble << 4 | write.nibble] }

    /// The data of ChangeFileSettings after the file number.
    public var changeData: [UInt8] { [fileOption] + accessRights + (sdm?.encoded ?? []) }

    public init(parsing bytes: [UInt8]) throws(NTAG424Error) {
        guard bytes.count >= 7 else { throw NTAG424Error(.malformed, "file settings of \(bytes.count) bytes; at least 7 expected") }
        fileType = bytes[0]
        switch bytes[1] & 0x03 {
        case 0x01: commMode = .mac
        case 0x03: commMode = .full
        default: commMode = .plain
        }
        readWrite = NTAG424Access(nibble: bytes[2] >> 4)
        change = NTAG424Access(nibble: bytes[2])
        read = NTAG424Access(nibble: bytes[3] >> 4)
        write = NTAG424Access(nibble: bytes[3])
        size = Int(bytes[4]) | Int(bytes[5]) << 8 | Int(bytes[6]) << 16
        sdm = bytes[1] & 0x40 != 0 ? try SDMSettings(parsing: bytes[7...]) : nil
    }

    /// Whether `access` lets a reader without any key do it (background reading on a phone).
    public static func isFree(_ access: NTAG424Access) -> Bool { access == .free }
}

/// GetVersion's three frames (NT4H2421Gx §10.5.2): hardware and software vendor, type,
/// version, storage and protocol, then the UID, batch and production week and year.
public struct NTAG424Version: Hashable, Sendable {
    public var bytes: [UInt8]
    public init(bytes: [UInt8]) throws(NTAG424Error) {
        guard bytes.count >= 28 else { throw NTAG424Error(.malformed, "GetVersion brought \(bytes.count) bytes; 28 expected") }
        self.bytes = bytes
    }
    public var hardwareVendor: UInt8 { bytes[0] }
    public var hardwareType: UInt8 { bytes[1] }
    public var hardwareVersion: String { "\(bytes[3]).\(bytes[4])" }
    /// Storage size byte: 2^(n/2) bytes, between 2^(n>>1) and 2^((n>>1)+1) when bit 0 is set.
    public var storageByte: UInt8 { bytes[5] }
    public var softwareVersion: String { "\(bytes[10]).\(bytes[11])" }
    public var uid: [UInt8] { Array(bytes[14..<21]) }
    public var productionWeek: UInt8 { bytes[26] }
    public var productionYear: UInt8 { bytes[27] }
    /// "NTAG 424 DNA" (04 04 02 …), "NTAG 424 DNA TagTamper" (subtype 08), else the bytes.
    public var productName: String {
        guard hardwareVendor == 0x04, hardwareType == 0x04 else { return "vendor \(Hex.encode([hardwareVendor])) type \(Hex.encode([hardwareType]))" }
        return bytes[2] == 0x08 ? "NTAG 424 DNA TagTamper" : "NTAG 424 DNA"
    }
}
