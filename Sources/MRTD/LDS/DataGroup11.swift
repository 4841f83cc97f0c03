// DG11, additional personal details (ICAO 9303 Part 10 §4.7.11): optional fields an issuer
// chooses, each in its own tag; lists inside a field are separated by `<`.
import ISO7816

/// Additional personal details of the holder. Every field is optional.
public struct DataGroup11: Sendable, Hashable {
    /// `5F0E`: the full name in national characters.
    public var fullName: PersonName?
    /// `5F0F` (in `A0`): other names.
    public var otherNames: [PersonName] = []
    /// `5F10`: the personal number.
    public var personalNumber: String?
    /// `5F2B`: the full date of birth, YYYYMMDD.
    public var fullDateOfBirth: DocumentDate?
    /// `5F11`: place of birth, its parts in order (town, region, country).
    public var placeOfBirth: [String] = []
    /// `5F42`: permanent address, its lines in order.
    public var address: [String] = []
    /// `5F12`: telephone.
    public var telephone: String?
    /// `5F13`: profession.
    public var profession: String?
    /// `5F14`: title.
    public var title: String?
    /// `5F15`: personal summary.
    public var personalSummary: String?
    /// `5F16`: proof of citizenship, an image.
    public var proofOfCitizenship: DocumentImage?
    /// `5F17`: other valid travel document numbers.
    public var otherTravelDocumentNumbers: [String] = []
    /// `5F18`: custody information.
    public var custodyInformation: String?
    /// Tags this library does not know, as hex, in order.
    public var unknownTags: [String] = []

    /// A DG11 with no field set; fill the fields to build one.
    public init() {}

    /// Decodes DG11 (template `6B`).
    public init(decoding bytes: [UInt8]) throws(LDSError) {
        let elements = try LDSTemplate.open(bytes, tag: 0x6B, file: "DG11")
        for element in elements {
            let text = LDSTemplate.text(element.value)
            switch element.tagNumber {
            case 0x5C: break
            case 0x5F0E: fullName = PersonName(text: text)
            case 0x5F0F: otherNames.append(PersonName(text: text))
            case 0xA0:
                for name in try LDSTemplate.elements(of: element, file: "DG11") where name.tagNumber == 0x5F0F {
                    otherNames.append(PersonName(text: LDSTemplate.text(name.value)))
                }
            case 0x5F10: personalNumber = text
            case 0x5F2B: fullDateOfBirth = DocumentDate.full(element.value)
            case 0x5F11: placeOfBirth = DataGroup11.parts(text)
            case 0x5F42: address = DataGroup11.parts(text)
            case 0x5F12: telephone = text
            case 0x5F13: profession = DataGroup11.parts(text).joined(separator: " ")
            case 0x5F14: title = DataGroup11.parts(text).joined(separator: " ")
            case 0x5F15: personalSummary = text
            case 0x5F16: proofOfCitizenship = DocumentImage(bytes: element.value)
            case 0x5F17: otherTravelDocumentNumbers = DataGroup11.parts(text)
            case 0x5F18: custodyInformation = text
            default: unknownTags.append(element.tagHex)
            }
        }
    }

    /// `123 MAPLE RD<ANYTOWN<MN` → the parts between fillers, trimmed.
    static func parts(_ text: String) -> [String] {
        text.split(separator: "<", omittingEmptySubsequences: true).map { $0.trimmingSpaces() }.filter { !$0.isEmpty }
    }

    /// For libFuzzer: decodes and ignores the result.
    public static func fuzz(_ data: [UInt8]) {
        _ = try? DataGroup11(decoding: data)
    }
}
