// The Type 5 capability container: 4 or 8 bytes, magic number, version, access, MLEN, features.
import ISO7816

/// The Type 5 capability container (NFC Forum T5T 1.0 §4.3): 4 bytes, or 8 when byte 2 (MLEN)
/// is 0 and bytes 6-7 carry it.
///
/// Byte 0 is the magic number: E1, or E2 for tags whose memory needs 2-byte block numbers (the
/// extended commands). Byte 1: major version (bits 7-6), minor (5-4), read access (3-2) and
/// write access (1-0; 00 granted, 11 never). MLEN is the T5T area's size after the CC in
/// 8-byte units. Byte 3's features: bit 0 READ MULTIPLE BLOCKS, bit 3 LOCK BLOCK, bit 4 special
/// frame (Android's rw_i93 and neard read them the same way).
public struct Type5CapabilityContainer: Hashable, Sendable {
    public var bytes: [UInt8]
    public var magic: UInt8 { bytes[0] }
    public var majorVersion: Int { Int(bytes[1] >> 6) }
    public var minorVersion: Int { Int(bytes[1] >> 4 & 0x03) }
    public var readAccess: UInt8 { bytes[1] >> 2 & 0x03 }
    public var writeAccess: UInt8 { bytes[1] & 0x03 }
    /// The T5T area after the CC, in bytes (MLEN × 8).
    public var dataAreaSize: Int
    public var features: UInt8 { bytes[3] }
    public var supportsReadMultiple: Bool { features & 0x01 != 0 }
    public var needsExtendedCommands: Bool { magic == 0xE2 }
    public var versionString: String { "\(majorVersion).\(minorVersion)" }
    public var size: Int { bytes.count }

    /// Parses the CC from the first bytes of the tag (at least 4; 8 for the 8-byte form).
    public init(prefix: [UInt8]) throws(TagError) {
        guard prefix.count >= 4 else { throw TagError(.badCapabilityContainer, "the capability container needs 4 bytes, \(prefix.count) were read") }
        guard prefix[0] == 0xE1 || prefix[0] == 0xE2 else {
            throw TagError(.notNDEF, "not NDEF-formatted: block 0 starts \(Hex.encode([prefix[0]])), not E1 or E2 (\(Array(prefix.prefix(4)).hexString))")
        }
        guard prefix[1] >> 6 == 1 else {
            throw TagError(.unsupportedVersion, "unsupported Type 5 mapping version \(prefix[1] >> 6).\(prefix[1] >> 4 & 3) (this tool reads 1.x)",
                           mappingVersion: "\(prefix[1] >> 6).\(prefix[1] >> 4 & 3)")
        }
        if prefix[2] != 0 {
            bytes = Array(prefix.prefix(4))
            dataAreaSize = Int(prefix[2]) * 8
        } else {
            guard prefix.count >= 8 else { throw TagError(.badCapabilityContainer, "an 8-byte capability container (MLEN 00) needs 8 bytes, \(prefix.count) were read") }
            bytes = Array(prefix.prefix(8))
            dataAreaSize = (Int(prefix[6]) << 8 | Int(prefix[7])) * 8
        }
        guard dataAreaSize >= 8 else { throw TagError(.badCapabilityContainer, "the capability container announces no data area (CC \(bytes.hexString))") }
    }
}
