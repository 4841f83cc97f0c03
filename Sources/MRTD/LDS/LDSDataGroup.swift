// The data groups of LDS 1.7/1.8 (ICAO 9303 Part 10 §4.6, §4.7): their tags and file
// identifiers, and decoding any of them into what it holds.
import ISO7816

/// A decoded data group. DG14 and DG15 (security infos, the Active Authentication key) are
/// decoded by their own types; here they, and every group without a decoder, are `.other`.
public enum LDSDataGroup: Sendable, Hashable {
    /// DG1: the MRZ.
    case dg1(DataGroup1)
    /// DG2: the faces.
    case dg2(DataGroup2)
    /// DG3 (fingerprints) or DG4 (irises): readable only after EAC terminal authentication.
    /// Present, not decoded.
    case protected(dataGroup: Int)
    /// DG5 (displayed portrait) or DG7 (displayed signature).
    case displayedImages(DisplayedImages)
    /// DG11: additional personal details.
    case dg11(DataGroup11)
    /// DG12: additional document details.
    case dg12(DataGroup12)
    /// Any other group: its tag and the tags it holds.
    case other(OtherDataGroup)

    /// Decodes data group `number` (1–16) from the file's bytes.
    public static func decode(dataGroup number: Int, bytes: [UInt8]) throws(LDSError) -> LDSDataGroup {
        switch number {
        case 1: return .dg1(try DataGroup1(decoding: bytes))
        case 2: return .dg2(try DataGroup2(decoding: bytes))
        case 3, 4: return .protected(dataGroup: number)
        case 5, 7: return .displayedImages(try DisplayedImages(decoding: bytes, dataGroup: number))
        case 11: return .dg11(try DataGroup11(decoding: bytes))
        case 12: return .dg12(try DataGroup12(decoding: bytes))
        default: return .other(try OtherDataGroup(decoding: bytes, dataGroup: number))
        }
    }

    /// The outer tag of each data group, DG1 `61` … DG16 `70` (Part 10 Table 35).
    static let tags: [UInt8] = [0x61, 0x75, 0x63, 0x76, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6A, 0x6B, 0x6C, 0x6D, 0x6E, 0x6F, 0x70]

    /// The data group whose template starts with `tag` (`61` → 1, `75` → 2 …); nil for others.
    public static func number(forTag tag: UInt8) -> Int? {
        tags.firstIndex(of: tag).map { $0 + 1 }
    }

    /// The outer tag of data group `number` (1–16).
    public static func tag(forDataGroup number: Int) -> UInt8? {
        (1...16).contains(number) ? tags[number - 1] : nil
    }

    /// The file identifier of data group `number`: `0101` … `0110`; its short EF identifier is
    /// the low byte.
    public static func fileIdentifier(forDataGroup number: Int) -> UInt16? {
        (1...16).contains(number) ? UInt16(0x0100 + number) : nil
    }

    /// For libFuzzer: the first byte picks the data group (modulo 16, plus 1), the rest is
    /// decoded and the result ignored.
    public static func fuzz(_ data: [UInt8]) {
        guard let selector = data.first else { return }
        _ = try? decode(dataGroup: Int(selector % 16) + 1, bytes: Array(data.dropFirst()))
    }
}

/// A data group this library does not decode field by field: its template tag and the tags
/// inside, so a caller sees what is there.
public struct OtherDataGroup: Sendable, Hashable {
    /// 1–16.
    public var dataGroup: Int
    /// The template's tag, as hex (`6D`).
    public var tag: String
    /// The top-level elements inside the template: tag (hex) and value length, in order.
    public var elements: [Element]

    /// One element inside the template.
    public struct Element: Sendable, Hashable {
        /// The element's tag, as hex (`5F1F`).
        public var tag: String
        /// The length of its value, in bytes.
        public var length: Int

        /// An element with this tag and value length.
        public init(tag: String, length: Int) {
            self.tag = tag
            self.length = length
        }
    }

    /// A listing with the given contents.
    public init(dataGroup: Int, tag: String, elements: [Element]) {
        self.dataGroup = dataGroup
        self.tag = tag
        self.elements = elements
    }

    /// Decodes the outer template of data group `dataGroup` and lists what it holds.
    public init(decoding bytes: [UInt8], dataGroup: Int) throws(LDSError) {
        let file = "DG\(dataGroup)"
        guard let tag = LDSDataGroup.tag(forDataGroup: dataGroup) else {
            throw LDSError(.unsupported, file: file, "data groups are numbered 1 to 16")
        }
        let objects: [TLV]
        do {
            objects = try BERTLV.decode(Array(bytes.prefix(LDSTemplate.firstObjectExtent(bytes) ?? bytes.count)))
        } catch {
            throw LDSError(.tlv, file: file, error.description)
        }
        guard let template = objects.first, template.tagNumber == UInt32(tag) else {
            throw LDSError(.structure, file: file, "the file does not start with tag \(LDSTemplate.hex(UInt32(tag)))")
        }
        // A template whose value is not TLV (DG14/DG15 in SwiftASN1's DER are TLV too) lists
        // as one element: itself.
        let inside = template.children ?? []
        self.init(dataGroup: dataGroup, tag: template.tagHex,
                  elements: inside.map { Element(tag: $0.tagHex, length: $0.value.count) })
    }
}
