// The elementary files of an eMRTD (ICAO 9303 Part 10): identifiers, directory, file names and
// data group tags.

/// The elementary files of an eMRTD (ICAO 9303 Part 10 §3 and §4): those of the master file,
/// readable before access control, and those of the eMRTD application (LDS1).
public enum MRTDFile: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// EF.CardAccess (MF, 011C): the PACEInfos of a chip that offers PACE.
    case cardAccess
    /// EF.CardSecurity (MF, 011D): SecurityInfos signed by the document signer; after PACE.
    case cardSecurity
    /// EF.DIR (MF, 2F00): the applications on the chip.
    case dir
    /// EF.ATR/INFO (MF, 2F01): extended length information and the like (ISO 7816-4 §8.2.1.1).
    case atrInfo
    /// EF.COM (application, 011E): the LDS version and the data groups present.
    case com
    /// EF.SOD (application, 011D): the document security object.
    case sod
    /// DG1…DG16 (application, 0101…0110).
    case dataGroup(Int)

    /// Every file an LDS1 document can hold, MF files first.
    public static let all: [MRTDFile] = [.cardAccess, .cardSecurity, .dir, .atrInfo, .com, .sod] + (1...16).map { .dataGroup($0) }

    public var fileIdentifier: UInt16 {
        switch self {
        case .cardAccess: return 0x011C
        case .cardSecurity: return 0x011D
        case .dir: return 0x2F00
        case .atrInfo: return 0x2F01
        case .com: return 0x011E
        case .sod: return 0x011D
        case .dataGroup(let n): return 0x0100 + UInt16(n & 0xFF)
        }
    }

    /// The short EF identifier: the file identifier's low five bits, but for EF.DIR, which ISO/IEC
    /// 7816-4 §8.2.1.1 gives SFI 30 (`1E`) at MF level; 2F00's low bits would be 0, which no SFI
    /// may be (the reader's READ BINARY 9E for EF.DIR found nothing).
    public var shortIdentifier: UInt8 { self == .dir ? 0x1E : UInt8(fileIdentifier & 0x1F) }

    /// Whether the file sits in the master file rather than in the eMRTD application.
    public var inMasterFile: Bool {
        switch self {
        case .cardAccess, .cardSecurity, .dir, .atrInfo: return true
        default: return false
        }
    }

    /// The name of the file in a document directory (`EF.COM.bin`, `DG1.bin`…).
    public var fileName: String {
        switch self {
        case .cardAccess: return "EF.CardAccess.bin"
        case .cardSecurity: return "EF.CardSecurity.bin"
        case .dir: return "EF.DIR.bin"
        case .atrInfo: return "EF.ATR.bin"
        case .com: return "EF.COM.bin"
        case .sod: return "EF.SOD.bin"
        case .dataGroup(let n): return "DG\(n).bin"
        }
    }

    /// The LDS tag of a data group's outer object (Part 10 §4.6.2, Table 34), nil for the
    /// other files.
    public var dataGroupTag: UInt8? {
        guard case .dataGroup(let n) = self, (1...16).contains(n) else { return nil }
        return [0x61, 0x75, 0x63, 0x76, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6A, 0x6B, 0x6C, 0x6D, 0x6E, 0x6F, 0x70][n - 1]
    }

    public var description: String {
        switch self {
        case .cardAccess: return "EF.CardAccess"
        case .cardSecurity: return "EF.CardSecurity"
        case .dir: return "EF.DIR"
        case .atrInfo: return "EF.ATR/INFO"
        case .com: return "EF.COM"
        case .sod: return "EF.SOD"
        case .dataGroup(let n): return "DG\(n)"
        }
    }

    private var order: Int { MRTDFile.all.firstIndex(of: self) ?? 99 }
    public static func < (a: MRTDFile, b: MRTDFile) -> Bool { a.order < b.order }
}
