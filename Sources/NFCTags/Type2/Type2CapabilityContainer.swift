// The Type 2 capability container (page 3): version, data-area size and access bits.
import ISO7816

/// The Type 2 capability container, page 3 (T2T 1.0 §6.1).
public struct Type2CapabilityContainer: Hashable, Sendable {
    public var bytes: [UInt8]
    public var version: UInt8
    /// The data area's size in bytes (CC byte 2 × 8).
    public var dataAreaSize: Int
    /// Read access nibble (0: granted) and write access nibble (0: granted, F: none).
    public var readAccess: UInt8
    public var writeAccess: UInt8

    public var versionString: String { "\(version >> 4).\(version & 0x0F)" }

    public init(bytes: [UInt8]) throws(TagError) {
        guard bytes.count == 4 else { throw TagError(.badCapabilityContainer, "the capability container must be 4 bytes") }
        guard bytes[0] == 0xE1 else {
            throw TagError(.notNDEF, "not NDEF-formatted: the capability container starts \(Hex.encode([bytes[0]])), not E1 (CC \(bytes.hexString))")
        }
        self.bytes = bytes
        version = bytes[1]
        guard version >> 4 == 1 else {
            throw TagError(.unsupportedVersion, "unsupported Type 2 mapping version \(version >> 4).\(version & 0x0F) (this tool reads 1.x)",
                           mappingVersion: "\(version >> 4).\(version & 0x0F)")
        }
        dataAreaSize = Int(bytes[2]) * 8
        guard dataAreaSize >= 8 else { throw TagError(.badCapabilityContainer, "the capability container announces no data area (CC \(bytes.hexString))") }
        readAccess = bytes[3] >> 4
        writeAccess = bytes[3] & 0x0F
    }
}
