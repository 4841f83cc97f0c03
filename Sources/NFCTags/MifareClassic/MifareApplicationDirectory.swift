// The MIFARE Application Directory (NXP AN10787) with its CRC-8, the NFC Forum sector access
// byte, and the sector trailer.
import ISO7816

/// The MIFARE Application Directory (NXP AN10787): which application owns each sector.
///
/// - MAD1: sector 0, blocks 1-2: a CRC-8, an info byte (the card publisher sector), then one
///   application ID per sector 1-15, two bytes each (function-cluster code second: the NFC
///   Forum's 03E1 is stored `03 E1`).
/// - MAD2 (cards of more than 16 sectors): sector 16, blocks 64-66: CRC, info, sectors 17-39.
/// - Sector 0's general-purpose byte (trailer byte 9) says whether a MAD is there: bit 7 DA,
///   bit 6 multi-application, bits 1-0 the version (01 MAD1, 02 MAD2): C1 or C2.
///
/// The CRC-8 is polynomial 0x1D with preset 0xC7 over every byte after the CRC (libfreefare
/// mad.c; the fully NDEF-formatted 1K's MAD1 `14 01 03 E1 …` checks out with it).
public struct MifareApplicationDirectory: Hashable, Sendable {
    /// 1 or 2.
    public var version: Int
    public var info: UInt8
    public var info2: UInt8
    /// The application ID of each sector (1-15, and 17-39 with MAD2), as stored: 0x03E1 is NDEF.
    public var aids: [Int: UInt16]

    public static let ndefAID: UInt16 = 0x03E1
    /// "Not applicable" (the sector does not exist on this card).
    public static let notApplicableAID: UInt16 = 0x0500

    public init(version: Int, info: UInt8 = 0x01, info2: UInt8 = 0x00, aids: [Int: UInt16]) {
        self.version = version
        self.info = info
        self.info2 = info2
        self.aids = aids
    }

    /// A MAD for a card formatted for NDEF: every sector but the MAD sectors holds NDEF, and
    /// the sectors the card does not have are "not applicable".
    public static func ndef(for layout: MifareClassicLayout) -> MifareApplicationDirectory {
        let version = layout.sectorCount > 16 ? 2 : 1
        var aids: [Int: UInt16] = [:]
        for s in 1..<(version == 2 ? 40 : 16) where s != 16 {
            aids[s] = s < layout.sectorCount ? ndefAID : notApplicableAID
        }
        return MifareApplicationDirectory(version: version, aids: aids)
    }

    public static func crc(_ bytes: some Sequence<UInt8>) -> UInt8 {
        var crc: UInt8 = 0xC7
        for b in bytes {
            crc ^= b
            for _ in 0..<8 { crc = crc & 0x80 != 0 ? (crc << 1) ^ 0x1D : crc << 1 }
        }
        return crc
    }

    /// MAD1's 32 bytes (blocks 1 and 2), the CRC first.
    public var mad1: [UInt8] {
        var body: [UInt8] = [info]
        for s in 1...15 { let a = aids[s] ?? 0; body += [UInt8(a >> 8), UInt8(a & 0xFF)] }
        return [Self.crc(body)] + body
    }

    /// MAD2's 48 bytes (blocks 64-66), the CRC first.
    public var mad2: [UInt8] {
        var body: [UInt8] = [info2]
        for s in 17...39 { let a = aids[s] ?? 0; body += [UInt8(a >> 8), UInt8(a & 0xFF)] }
        return [Self.crc(body)] + body
    }

    /// Sector 0's general-purpose byte: DA, multi-application, version.
    public var generalPurposeByte: UInt8 { 0xC0 | UInt8(version) }

    /// Parses MAD1 (and MAD2 for version 2), checking each CRC.
    /// - Throws: `TagError` `.badCapabilityContainer` naming the CRC found and the one computed.
    public init(gpb: UInt8, mad1: [UInt8], mad2: [UInt8]?) throws(TagError) {
        guard gpb & 0x80 != 0 else { throw TagError(.notNDEF, "no MIFARE Application Directory (sector 0's general-purpose byte is \(Hex.encode([gpb])), DA bit clear)") }
        version = Int(gpb & 0x03)
        guard version == 1 || version == 2 else { throw TagError(.unsupportedVersion, "MAD version \(version) (general-purpose byte \(Hex.encode([gpb]))); 1 and 2 are defined") }
        guard mad1.count == 32 else { throw TagError(.badCapabilityContainer, "MAD1 must be 32 bytes") }
        let crc1 = Self.crc(mad1[1...])
        guard crc1 == mad1[0] else {
            throw TagError(.badCapabilityContainer, "MAD1's CRC is \(Hex.encode([mad1[0]])), its bytes give \(Hex.encode([crc1])): the directory is damaged")
        }
        info = mad1[1]
        aids = [:]
        for s in 1...15 { aids[s] = UInt16(mad1[2 * s]) << 8 | UInt16(mad1[2 * s + 1]) }
        info2 = 0
        if version == 2, let mad2 {
            guard mad2.count == 48 else { throw TagError(.badCapabilityContainer, "MAD2 must be 48 bytes") }
            let crc2 = Self.crc(mad2[1...])
            guard crc2 == mad2[0] else {
                throw TagError(.badCapabilityContainer, "MAD2's CRC is \(Hex.encode([mad2[0]])), its bytes give \(Hex.encode([crc2])): the directory is damaged")
            }
            info2 = mad2[1]
            for s in 17...39 { aids[s] = UInt16(mad2[2 * (s - 16)]) << 8 | UInt16(mad2[2 * (s - 16) + 1]) }
        }
    }

    /// The NDEF sectors: the first run of sectors with the NFC Forum AID, in order (the MAD2
    /// sector 16 in between does not break the run), limited to sectors the card has.
    public func ndefSectors(of layout: MifareClassicLayout) -> [Int] {
        var out: [Int] = []
        for s in 1..<layout.sectorCount where s != 16 {
            if aids[s] == Self.ndefAID { out.append(s) } else if !out.isEmpty { break }
        }
        return out
    }
}

/// An NFC Forum sector's general-purpose byte (NXP AN1304): bits 7-6 major and 5-4 minor
/// mapping version, bits 3-2 read access, bits 1-0 write access (00 granted, 11 none).
public struct MifareClassicNDEFAccess: Hashable, Sendable {
    public var gpb: UInt8
    public init(gpb: UInt8) { self.gpb = gpb }
    public var version: String { "\(gpb >> 6).\(gpb >> 4 & 0x03)" }
    public var readable: Bool { gpb >> 2 & 0x03 == 0 }
    public var writable: Bool { gpb & 0x03 == 0 }
    /// 40: version 1.0, read and write granted.
    public static let readWrite: UInt8 = 0x40
    /// 43: version 1.0, read granted, write never.
    public static let readOnly: UInt8 = 0x43
}

/// A sector trailer: key A, access bits, general-purpose byte, key B.
public struct MifareClassicTrailer: Hashable, Sendable {
    public var keyA: MifareClassicKey
    public var access: MifareClassicAccessBits
    public var gpb: UInt8
    public var keyB: MifareClassicKey

    public init(keyA: MifareClassicKey, access: MifareClassicAccessBits, gpb: UInt8, keyB: MifareClassicKey) {
        self.keyA = keyA
        self.access = access
        self.gpb = gpb
        self.keyB = keyB
    }

    public var bytes: [UInt8] { keyA.bytes + access.bytes + [gpb] + keyB.bytes }
}
