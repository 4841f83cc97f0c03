// The elementary files of an eMRTD (ICAO 9303 Part 10 §3.10, §4): identifiers, short EF
// identifiers and where they live.

/// An elementary file of the document: its file identifier, short EF identifier and location.
public struct MRTDFile: Sendable, Hashable, CustomStringConvertible {
    /// `EF.COM`, `DG2`, `EF.CardAccess`.
    public let name: String
    /// The 2-byte file identifier (SELECT P1 02).
    public let fileIdentifier: UInt16
    /// The short EF identifier (READ BINARY P1 = 80 | SFI); nil when the file has none.
    public let shortIdentifier: UInt8?
    /// At MF level (EF.CardAccess, EF.CardSecurity, EF.DIR, EF.ATR/INFO), else inside the eMRTD application.
    public let inMasterFile: Bool
    /// Whether the file is one BER-TLV object, so its first bytes give its length. EF.DIR and
    /// EF.ATR/INFO are sequences of objects, read to their end.
    public let isSingleObject: Bool

    /// A file by its identifiers (proprietary files; the standard ones are below).
    public init(name: String, fileIdentifier: UInt16, shortIdentifier: UInt8?, inMasterFile: Bool = false, isSingleObject: Bool = true) {
        self.name = name
        self.fileIdentifier = fileIdentifier
        self.shortIdentifier = shortIdentifier
        self.inMasterFile = inMasterFile
        self.isSingleObject = isSingleObject
    }

    public var description: String { name }

    /// EF.COM (011E, SFI 1E): the LDS version and the data groups present.
    public static let com = MRTDFile(name: "EF.COM", fileIdentifier: 0x011E, shortIdentifier: 0x1E)
    /// EF.SOD (011D, SFI 1D): the Document Security Object.
    public static let sod = MRTDFile(name: "EF.SOD", fileIdentifier: 0x011D, shortIdentifier: 0x1D)
    /// EF.CardAccess (011C at MF): the PACE SecurityInfos, readable without access control.
    public static let cardAccess = MRTDFile(name: "EF.CardAccess", fileIdentifier: 0x011C, shortIdentifier: 0x1C, inMasterFile: true)
    /// EF.CardSecurity (011D at MF): signed SecurityInfos (PACE-CAM's chip authentication key).
    public static let cardSecurity = MRTDFile(name: "EF.CardSecurity", fileIdentifier: 0x011D, shortIdentifier: 0x1D, inMasterFile: true)
    /// EF.DIR (2F00 at MF): the applications on the chip.
    public static let dir = MRTDFile(name: "EF.DIR", fileIdentifier: 0x2F00, shortIdentifier: 0x1E, inMasterFile: true, isSingleObject: false)
    /// EF.ATR/INFO (2F01 at MF): card capabilities and extended-length information.
    public static let atrInfo = MRTDFile(name: "EF.ATR/INFO", fileIdentifier: 0x2F01, shortIdentifier: 0x01, inMasterFile: true, isSingleObject: false)

    /// DG1…DG16 (file 0101…0110, SFI 01…10); nil outside 1…16.
    public static func dataGroup(_ number: Int) -> MRTDFile? {
        guard (1...16).contains(number) else { return nil }
        return MRTDFile(name: "DG\(number)", fileIdentifier: 0x0100 + UInt16(number), shortIdentifier: UInt8(number))
    }

    /// The data group an EF.COM tag list names (61 DG1, 75 DG2, 63 DG3, 76 DG4, 65 DG5 … 70 DG16).
    public static func dataGroup(tag: UInt8) -> MRTDFile? {
        let table: [UInt8: Int] = [0x61: 1, 0x75: 2, 0x63: 3, 0x76: 4, 0x65: 5, 0x66: 6, 0x67: 7, 0x68: 8, 0x69: 9,
                                   0x6A: 10, 0x6B: 11, 0x6C: 12, 0x6D: 13, 0x6E: 14, 0x6F: 15, 0x70: 16]
        return table[tag].flatMap { dataGroup($0) }
    }
}
