// The NTAG21x and Ultralight native commands (GET_VERSION, READ_SIG, READ_CNT, PWD_AUTH, READ,
// FAST_READ, WRITE, SECTOR_SELECT), GET_VERSION's answer and the tag password.
import ISO7816

/// The answer to GET_VERSION (`60`) of an NTAG21x, NTAG I2C or Ultralight EV1: eight bytes
/// naming vendor, product and memory size (NXP datasheets, "GET_VERSION").
public struct Type2Version: Sendable, Hashable {
    public var bytes: [UInt8]

    public init?(bytes: [UInt8]) {
        guard bytes.count == 8 else { return nil }
        self.bytes = bytes
    }

    public var vendorID: UInt8 { bytes[1] }
    public var productType: UInt8 { bytes[2] }
    public var productSubtype: UInt8 { bytes[3] }
    public var majorVersion: UInt8 { bytes[4] }
    public var minorVersion: UInt8 { bytes[5] }
    public var storageSizeByte: UInt8 { bytes[6] }
    public var protocolType: UInt8 { bytes[7] }

    public var vendor: String { vendorID == 0x04 ? "NXP Semiconductors" : "vendor \(Hex.encode([vendorID]))" }

    /// The user memory as the size byte states it: 2^n bytes, or between 2^n and 2^(n+1) when
    /// its lowest bit is set.
    public var storageSize: ClosedRange<Int> {
        let n = Int(storageSizeByte >> 1)
        guard n < 24 else { return 0...0 }
        return storageSizeByte & 1 == 0 ? (1 << n)...(1 << n) : (1 << n)...(1 << (n + 1))
    }

    public var storageDescription: String {
        let s = storageSize
        return s.lowerBound == s.upperBound ? "\(s.lowerBound) bytes" : "between \(s.lowerBound) and \(s.upperBound) bytes"
    }

    /// The product as NXP names it, where the bytes are known.
    public var productName: String {
        guard vendorID == 0x04 else { return "unknown product (type \(Hex.encode([productType])))" }
        switch (productType, productSubtype, storageSizeByte) {
        case (0x04, 0x01, 0x0B): return "NTAG210"
        case (0x04, 0x01, 0x0E): return "NTAG212"
        case (0x04, 0x02, 0x0F): return "NTAG213"
        case (0x04, 0x02, 0x11): return "NTAG215"
        case (0x04, 0x02, 0x13): return "NTAG216"
        case (0x04, 0x05, 0x13): return minorVersion == 0x02 ? "NTAG I2C plus 1k" : "NTAG I2C 1k"
        case (0x04, 0x05, 0x15): return minorVersion == 0x02 ? "NTAG I2C plus 2k" : "NTAG I2C 2k"
        case (0x03, _, 0x0B): return "MIFARE Ultralight EV1 (MF0UL11)"
        case (0x03, _, 0x0E): return "MIFARE Ultralight EV1 (MF0UL21)"
        case (0x04, _, _): return "NTAG (subtype \(Hex.encode([productSubtype])))"
        case (0x03, _, _): return "MIFARE Ultralight family"
        default: return "NXP product type \(Hex.encode([productType]))"
        }
    }

    /// The chip of `Type2Chip.known` these bytes name, for lock and configuration positions.
    public var chip: Type2Chip? {
        let name = productName
        return Type2Chip.known.first { $0.name == name }
    }
}

/// NTAG21x / Ultralight native commands over a `TagCommandChannel` (NXP datasheets; the
/// reader adds the CRC).
extension TagCommandChannel {
    /// GET_VERSION; nil when the tag does not know it (MIFARE Ultralight, Ultralight C, generic
    /// Type 2 tags NAK or stay silent).
    public func getVersion() throws -> Type2Version? {
        guard case let .data(bytes) = try transceive([0x60]) else { return nil }
        return Type2Version(bytes: bytes)
    }

    /// READ_SIG: the 32-byte originality signature; nil when the tag has none.
    public func readSignature() throws -> [UInt8]? {
        guard case let .data(bytes) = try transceive([0x3C, 0x00]), bytes.count == 32 else { return nil }
        return bytes
    }

    /// READ_CNT of the NFC counter (counter 2); nil when it is disabled or absent (the tag NAKs).
    public func readCounter() throws -> Int? {
        guard case let .data(b) = try transceive([0x39, 0x02]), b.count == 3 else { return nil }
        return Int(b[0]) | Int(b[1]) << 8 | Int(b[2]) << 16
    }

    /// PWD_AUTH; returns PACK. Every failed attempt counts against AUTHLIM on the tag.
    public func authenticate(password: [UInt8]) throws -> [UInt8] {
        precondition(password.count == 4)
        switch try transceive([0x1B] + password, secretFrom: 1) {
        case let .data(pack) where pack.count == 2: return pack
        case let answer:
            throw TagError(.authenticationFailed, "the tag refused the password (\(answer)); each wrong attempt counts against its AUTHLIM limit, so no retry was made")
        }
    }

    /// READ: 16 bytes from `page` of the selected sector; nil when the tag refuses.
    public func readPages(at page: UInt8) throws -> [UInt8]? {
        guard case let .data(bytes) = try transceive([0x30, page]), bytes.count == 16 else { return nil }
        return bytes
    }

    /// FAST_READ of pages `first...last` of the selected sector; nil when the tag refuses
    /// (no FAST_READ, an address out of range, or a read-protected page inside).
    public func fastRead(_ pages: ClosedRange<UInt8>) throws -> [UInt8]? {
        guard case let .data(bytes) = try transceive([0x3A, pages.lowerBound, pages.upperBound]), bytes.count == pages.count * 4 else { return nil }
        return bytes
    }

    /// WRITE of one page; the tag's answer (ACK, NAK, nothing). `secret`: the data is a
    /// password or PACK, marked for traces.
    public func writePage(_ page: UInt8, _ data: [UInt8], secret: Bool = false) throws -> TagAnswer {
        precondition(data.count == 4)
        return try transceive([0xA2, page] + data, secretFrom: secret ? 2 : nil)
    }

    /// SECTOR_SELECT: `C2 FF` (ACK), then `sector 00 00 00`, which the tag acknowledges by
    /// staying silent ("passive ACK"): there, no answer is success and a NAK is failure.
    public func selectSector(_ sector: UInt8) throws {
        let first = try transceive([0xC2, 0xFF])
        guard first == .ack else {
            throw TagError(.beyondReach, "the tag does not support SECTOR_SELECT (it answered \(first)); pages past 255 are out of reach")
        }
        switch try transceive([sector, 0x00, 0x00, 0x00]) {
        case .noAnswer, .ack: return
        case let answer: throw TagError(.beyondReach, "the tag refused sector \(sector) (it answered \(answer))")
        }
    }
}

/// An NTAG21x / Ultralight EV1 password (PWD, 4 bytes) and the PACK the tag should answer.
/// Its description never shows the bytes.
public struct Type2Password: Sendable, Hashable, CustomStringConvertible {
    public var password: [UInt8]
    /// The expected PACK (2 bytes); nil: accept whatever the tag answers.
    public var pack: [UInt8]?

    /// nil unless the password is 4 bytes and the PACK 2.
    public init?(password: [UInt8], pack: [UInt8]? = nil) {
        guard password.count == 4, pack == nil || pack?.count == 2 else { return nil }
        self.password = password
        self.pack = pack
    }

    public var description: String { "password ••••••••" + (pack == nil ? "" : " with PACK ••••") }
}
