// The Type 4 capability container file E103 (T4T 2.0 §5.1, 3.0 §4.7) and its access condition
// bytes.
import ISO7816

/// A read or write access condition byte (T4T §5.1.2.2 / §5.1.3).
public enum AccessCondition: Hashable, Sendable, CustomStringConvertible {
    case granted
    case none
    case proprietary(UInt8)
    case reserved(UInt8)

    public init(_ byte: UInt8) {
        switch byte {
        case 0x00: self = .granted
        case 0xFF: self = .none
        case 0x80...0xFE: self = .proprietary(byte)
        default: self = .reserved(byte)
        }
    }

    public var byte: UInt8 {
        switch self {
        case .granted: return 0
        case .none: return 0xFF
        case let .proprietary(b), let .reserved(b): return b
        }
    }

    public var description: String {
        switch self {
        case .granted: return "granted"
        case .none: return "none"
        case let .proprietary(b): return "proprietary (0x\(Hex.encode([b])))"
        case let .reserved(b): return "reserved (0x\(Hex.encode([b])))"
        }
    }
}

/// The capability container file E103 (NFC Forum T4T 2.0 §5.1, 3.0 §4.7).
public struct Type4CapabilityContainer: Hashable, Sendable {
    public var bytes: [UInt8]
    public var length: Int
    /// Mapping version, e.g. 0x20 for 2.0.
    public var version: UInt8
    public var mle: Int
    public var mlc: Int
    public var fileID: [UInt8]
    /// The NDEF file's maximum size, NLEN/ENLEN included.
    public var maxFileSize: Int
    public var readAccess: AccessCondition
    public var writeAccess: AccessCondition
    /// Extended NDEF File Control TLV (06): 4-byte ENLEN, offsets via B1/D7.
    public var isExtended: Bool
    /// Offset of the write-access byte within the CC (what a lock changes).
    public var writeAccessOffset: Int

    public var majorVersion: Int { Int(version >> 4) }
    public var versionString: String { "\(version >> 4).\(version & 0x0F)" }
    /// Bytes of NLEN (2) or ENLEN (4).
    public var lengthFieldSize: Int { isExtended ? 4 : 2 }
    /// The largest message the tag holds: the file minus NLEN/ENLEN (as nfcpy and Core NFC count).
    public var capacity: Int { max(0, maxFileSize - lengthFieldSize) }

    public init(bytes: [UInt8]) throws(TagError) {
        func bad(_ why: String) -> TagError { TagError(.badCapabilityContainer, "the tag's capability container is invalid: \(why) (CC \(bytes.hexString))") }
        guard bytes.count >= 15 else { throw bad("\(bytes.count) bytes, at least 15 needed") }
        self.bytes = bytes
        length = Int(bytes[0]) << 8 | Int(bytes[1])
        guard length >= 15 else { throw bad("CCLEN \(length) is below 15") }
        version = bytes[2]
        guard (1...3).contains(Int(version >> 4)) else {
            throw TagError(.unsupportedVersion, "unsupported Type 4 mapping version \(version >> 4).\(version & 0x0F) (this tool reads 1.x, 2.x and 3.x)",
                           mappingVersion: "\(version >> 4).\(version & 0x0F)")
        }
        mle = Int(bytes[3]) << 8 | Int(bytes[4])
        mlc = Int(bytes[5]) << 8 | Int(bytes[6])
        // The T4T minimum is 15; a tag announcing less is read in pieces it says it can send
        // (reading never harms a tag), rather than refused.
        guard mle >= 0x01 else { throw bad("MLe is 0") }
        guard mlc >= 0x01 else { throw bad("MLc is 0") }
        let t = bytes[7], l = Int(bytes[8])
        switch t {
        case 0x04:
            guard l == 6, bytes.count >= 15 else { throw bad("NDEF File Control TLV of length \(l), 6 expected") }
            fileID = [bytes[9], bytes[10]]
            maxFileSize = Int(bytes[11]) << 8 | Int(bytes[12])
            readAccess = AccessCondition(bytes[13])
            writeAccess = AccessCondition(bytes[14])
            writeAccessOffset = 14
            isExtended = false
            guard (0x0005...0xFFFE).contains(maxFileSize) else { throw bad("NDEF file size \(maxFileSize) outside 5…65534") }
        case 0x06:
            guard version >> 4 >= 3 else { throw bad("Extended NDEF File Control TLV in a \(version >> 4).x mapping") }
            guard l == 8, bytes.count >= 17 else { throw bad("Extended NDEF File Control TLV of length \(l) (8 expected) or CC too short") }
            fileID = [bytes[9], bytes[10]]
            maxFileSize = Int(bytes[11]) << 24 | Int(bytes[12]) << 16 | Int(bytes[13]) << 8 | Int(bytes[14])
            readAccess = AccessCondition(bytes[15])
            writeAccess = AccessCondition(bytes[16])
            writeAccessOffset = 16
            isExtended = true
            guard (0x0000_FFFF...0xFFFF_FFFE).contains(maxFileSize) else { throw bad("extended NDEF file size \(maxFileSize) outside 65535…4294967294") }
        default:
            throw bad("first TLV has tag \(Hex.encode([t])), 04 or 06 expected")
        }
        let forbidden: [[UInt8]] = [[0x00, 0x00], [0xE1, 0x02], [0xE1, 0x03], [0x3F, 0x00], [0x3F, 0xFF], [0xFF, 0xFF]]
        guard !forbidden.contains(fileID) else { throw bad("NDEF file identifier \(fileID.hexString) is reserved") }
    }
}
