// GetVersion decoded: which DESFire a card is, its storage, vendor, production batch and week.
import ISO7816

/// Which DESFire a card is, from its GetVersion hardware bytes (type and major version, as NXP's
/// data sheets and proxmark3's `mifare_prime_get_version_str` list them).
public enum DESFireGeneration: String, Sendable, Hashable, CustomStringConvertible {
    /// MF3ICD40, the first DESFire (hardware 0.x): DES and 2K3DES only, legacy authentication.
    case d40
    /// MF3ICx1 (hardware 1.x): adds 3K3DES, AES, ISO authentication, CMAC, ISO file identifiers.
    case ev1
    /// MF3DHx2 (hardware 0x12, 0x22 XL, 0x42): adds EV2 secure messaging (AuthenticateEV2First).
    case ev2
    /// MF3DHx3 (hardware 0x33).
    case ev3
    /// DESFire Light (hardware type 08): one application, fixed files, AES and EV2 only.
    case light
    /// A DESFire whose version this tool does not know (shown with its numbers).
    case unknown

    public var description: String {
        switch self {
        case .d40: return "MIFARE DESFire (MF3ICD40)"
        case .ev1: return "MIFARE DESFire EV1"
        case .ev2: return "MIFARE DESFire EV2"
        case .ev3: return "MIFARE DESFire EV3"
        case .light: return "MIFARE DESFire Light"
        case .unknown: return "MIFARE DESFire (unknown version)"
        }
    }

    /// Whether the card speaks AuthenticateEV2First.
    public var hasEV2SecureMessaging: Bool { self == .ev2 || self == .ev3 || self == .light }
    /// Whether the card speaks the EV1 authentications (1A, AA) and CMAC.
    public var hasEV1Authentication: Bool { self != .d40 }
}

/// The answer to GetVersion (`90 60`, three frames): hardware and software vendor, type, version
/// and storage size, then the UID, the production batch and the week and year of production.
public struct DESFireVersion: Sendable, Hashable {
    /// All bytes, as the card sent them (28 on most cards; newer ones add more).
    public let bytes: [UInt8]

    /// - Throws: `DESFireError(.malformed)` when fewer than 28 bytes came.
    public init(bytes: [UInt8]) throws(DESFireError) {
        guard bytes.count >= 28 else { throw DESFireError(.malformed, "GetVersion brought \(bytes.count) bytes; 28 expected") }
        self.bytes = bytes
    }

    public var hardwareVendor: UInt8 { bytes[0] }
    public var hardwareType: UInt8 { bytes[1] }
    public var hardwareSubtype: UInt8 { bytes[2] }
    public var hardwareMajor: UInt8 { bytes[3] }
    public var hardwareMinor: UInt8 { bytes[4] }
    public var hardwareStorage: UInt8 { bytes[5] }
    public var hardwareProtocol: UInt8 { bytes[6] }
    public var softwareVendor: UInt8 { bytes[7] }
    public var softwareType: UInt8 { bytes[8] }
    public var softwareMajor: UInt8 { bytes[10] }
    public var softwareMinor: UInt8 { bytes[11] }
    public var softwareStorage: UInt8 { bytes[12] }

    /// "1.0" (major.minor in hex, as NXP writes 0x12 as 12.0).
    public var hardwareVersion: String { "\(String(hardwareMajor, radix: 16)).\(String(hardwareMinor, radix: 16))" }
    public var softwareVersion: String { "\(String(softwareMajor, radix: 16)).\(String(softwareMinor, radix: 16))" }

    /// The 7-byte UID; zeros on a card with random ID on (GetCardUID gives it after authentication).
    public var uid: [UInt8] { Array(bytes[14..<21]) }
    /// Whether the UID bytes are withheld (random ID).
    public var uidHidden: Bool { uid.allSatisfy { $0 == 0 } }
    /// The production batch number (5 bytes).
    public var batch: [UInt8] { Array(bytes[21..<26]) }
    /// Calendar week and year of production, from their BCD bytes; nil when not BCD.
    public var productionWeek: Int? { Self.bcd(bytes[26]) }
    public var productionYear: Int? { Self.bcd(bytes[27]).map { 2000 + $0 } }

    /// Whether the vendor (NXP, 04) and hardware type (01 DESFire, 08 DESFire Light, 81/91/A1 a
    /// DESFire on a microcontroller, applet or HCE) name a DESFire. NTAG 424 DNA (type 04) and
    /// MIFARE Plus (02) answer GetVersion too and are not.
    public var isDESFire: Bool {
        hardwareVendor == 0x04 && [0x01, 0x08, 0x81, 0x83, 0x91, 0xA1].contains(hardwareType)
    }

    public var generation: DESFireGeneration {
        if hardwareType == 0x08 { return .light }
        switch hardwareMajor {
        case 0x00: return .d40
        case 0x01: return .ev1
        case 0x12, 0x22, 0x42: return .ev2
        case 0x33: return .ev3
        case 0x30: return .light
        default: return .unknown
        }
    }

    /// The storage size in bytes, from the storage byte: 2^(n>>1), "or more" when its low bit is
    /// set (between 2^n and 2^(n+1)).
    public var storageSize: (bytes: Int, orMore: Bool) {
        let n = Int(hardwareStorage >> 1)
        return (n < 31 ? 1 << n : Int.max, hardwareStorage & 1 == 1)
    }

    /// "MIFARE DESFire EV1, 8192 bytes".
    public var productName: String {
        let size = storageSize
        return "\(generation), \(size.bytes)\(size.orMore ? "+" : "") bytes"
    }

    static func bcd(_ b: UInt8) -> Int? {
        guard b >> 4 < 10, b & 0x0F < 10 else { return nil }
        return Int(b >> 4) * 10 + Int(b & 0x0F)
    }
}
