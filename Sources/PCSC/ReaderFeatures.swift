// PC/SC Part 10 reader features and TLV properties: control codes and the parsing of their
// answers.

/// PC/SC Part 10 reader features, learned from `CM_IOCTL_GET_FEATURE_REQUEST`.
public struct Feature: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// `FEATURE_VERIFY_PIN_DIRECT`
    public static let verifyPINDirect = Feature(rawValue: 0x06)
    /// `FEATURE_MODIFY_PIN_DIRECT`
    public static let modifyPINDirect = Feature(rawValue: 0x07)
    /// `FEATURE_IFD_PIN_PROPERTIES`
    public static let ifdPINProperties = Feature(rawValue: 0x0A)
    /// `FEATURE_GET_TLV_PROPERTIES`: the reader's properties as TLV, see `ReaderProperties`.
    public static let getTLVProperties = Feature(rawValue: 0x12)
    /// `FEATURE_CCID_ESC_COMMAND`: the reader's transparent/escape channel.
    public static let ccidEscapeCommand = Feature(rawValue: 0x13)
    /// `FEATURE_EXECUTE_PACE`
    public static let executePACE = Feature(rawValue: 0x20)

    public var description: String {
        let names: [UInt8: String] = [
            0x01: "VERIFY_PIN_START", 0x02: "VERIFY_PIN_FINISH", 0x03: "MODIFY_PIN_START",
            0x04: "MODIFY_PIN_FINISH", 0x05: "GET_KEY_PRESSED", 0x06: "VERIFY_PIN_DIRECT",
            0x07: "MODIFY_PIN_DIRECT", 0x08: "MCT_READER_DIRECT", 0x09: "MCT_UNIVERSAL",
            0x0A: "IFD_PIN_PROPERTIES", 0x0B: "ABORT", 0x0C: "SET_SPE_MESSAGE",
            0x0D: "VERIFY_PIN_DIRECT_APP_ID", 0x0E: "MODIFY_PIN_DIRECT_APP_ID",
            0x0F: "WRITE_DISPLAY", 0x10: "GET_KEY", 0x11: "IFD_DISPLAY_PROPERTIES",
            0x12: "GET_TLV_PROPERTIES", 0x13: "CCID_ESC_COMMAND", 0x20: "EXECUTE_PACE",
        ]
        return names[rawValue].map { "FEATURE_\($0)" } ?? "FEATURE_0x" + String(rawValue, radix: 16, uppercase: true)
    }
}

/// Reader properties from `FEATURE_GET_TLV_PROPERTIES` (PC/SC Part 10 v2.02.07, section 2.6.14).
public struct ReaderProperties: Hashable, Sendable {
    /// Raw values by tag (`PCSCv2_PART10_PROPERTY_*`), integers little-endian as the reader sent them.
    public var raw: [UInt8: [UInt8]]

    /// `dwMaxAPDUDataSize`: the largest APDU data field the reader passes; 0 means short APDUs only.
    public var maxAPDUDataSize: Int? { integer(10) }
    /// `wIdVendor`
    public var vendorID: Int? { integer(11) }
    /// `wIdProduct`
    public var productID: Int? { integer(12) }
    /// `sFirmwareID`
    public var firmwareID: String? { raw[8].map { String(decoding: $0, as: UTF8.self) } }

    func integer(_ tag: UInt8) -> Int? {
        guard let bytes = raw[tag], !bytes.isEmpty, bytes.count <= 8 else { return nil }
        return bytes.reversed().reduce(0) { $0 << 8 | Int($1) }
    }

    /// Parses the TLV list (1-byte tag, 1-byte length). Stops at a truncated entry.
    public init(tlv: [UInt8]) {
        var raw: [UInt8: [UInt8]] = [:]
        var i = 0
        while i + 2 <= tlv.count {
            let tag = tlv[i], length = Int(tlv[i + 1])
            guard i + 2 + length <= tlv.count else { break }
            raw[tag] = Array(tlv[(i + 2)..<(i + 2 + length)])
            i += 2 + length
        }
        self.raw = raw
    }
}

/// `SCARD_CTL_CODE(code)` as pcsclite defines it on Unix.
public func controlCode(_ code: UInt32) -> UInt32 { 0x4200_0000 + code }

/// `CM_IOCTL_GET_FEATURE_REQUEST`
public let getFeatureRequest: UInt32 = controlCode(3400)

/// Parses the answer to `CM_IOCTL_GET_FEATURE_REQUEST`: entries of tag, length 4, and a
/// big-endian control code. Entries of another length are skipped; a truncated tail is ignored.
public func parseFeatureList(_ bytes: [UInt8]) -> [Feature: UInt32] {
    var features: [Feature: UInt32] = [:]
    var i = 0
    while i + 2 <= bytes.count {
        let tag = bytes[i], length = Int(bytes[i + 1])
        guard i + 2 + length <= bytes.count else { break }
        if length == 4 {
            let v = bytes[(i + 2)..<(i + 6)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            features[Feature(rawValue: tag)] = v
        }
        i += 2 + length
    }
    return features
}

extension Card {
    /// The PC/SC Part 10 features the reader offers, with their control codes. Empty when the
    /// driver does not answer the feature request (many contactless and virtual readers).
    public func features() -> [Feature: UInt32] {
        guard let answer = try? control(getFeatureRequest) else { return [:] }
        return parseFeatureList(answer)
    }

    /// The reader's TLV properties, or `nil` when it does not offer `FEATURE_GET_TLV_PROPERTIES`.
    public func readerProperties() throws(PCSCError) -> ReaderProperties? {
        guard let code = features()[.getTLVProperties] else { return nil }
        return ReaderProperties(tlv: try control(code))
    }
}
