// DG12, additional document details (ICAO 9303 Part 10 §4.7.12).
import ISO7816

/// Additional details of the document. Every field is optional.
public struct DataGroup12: Sendable, Hashable {
    /// `5F19`: the issuing authority.
    public var issuingAuthority: String?
    /// `5F26`: date of issue, YYYYMMDD.
    public var dateOfIssue: DocumentDate?
    /// `5F1A` (in `A0`): other persons named in the document.
    public var otherPersons: [PersonName] = []
    /// `5F1B`: endorsements and observations.
    public var endorsementsAndObservations: String?
    /// `5F1C`: tax or exit requirements.
    public var taxOrExitRequirements: String?
    /// `5F1D`: an image of the front of the document.
    public var frontImage: DocumentImage?
    /// `5F1E`: an image of the rear of the document.
    public var rearImage: DocumentImage?
    /// `5F55`: date and time of personalization, YYYYMMDDhhmmss (BCD decoded when stored so).
    public var personalizationTime: String?
    /// `5F56`: serial number of the personalization system.
    public var personalizationSystemSerialNumber: String?
    /// Tags this library does not know, as hex, in order.
    public var unknownTags: [String] = []

    /// A DG12 with no field set; fill the fields to build one.
    public init() {}

    /// Decodes DG12 (template `6C`).
    public init(decoding bytes: [UInt8]) throws(LDSError) {
        let elements = try LDSTemplate.open(bytes, tag: 0x6C, file: "DG12")
        for element in elements {
            let text = LDSTemplate.text(element.value)
            switch element.tagNumber {
            case 0x5C: break
            case 0x5F19: issuingAuthority = text
            case 0x5F26: dateOfIssue = DocumentDate.full(element.value)
            case 0x5F1A: otherPersons.append(PersonName(text: text))
            case 0xA0:
                for name in try LDSTemplate.elements(of: element, file: "DG12") where name.tagNumber == 0x5F1A {
                    otherPersons.append(PersonName(text: LDSTemplate.text(name.value)))
                }
            case 0x5F1B: endorsementsAndObservations = text
            case 0x5F1C: taxOrExitRequirements = text
            case 0x5F1D: frontImage = DocumentImage(bytes: element.value)
            case 0x5F1E: rearImage = DocumentImage(bytes: element.value)
            case 0x5F55:
                // 14 ASCII digits, or the same digits in 7 BCD bytes.
                personalizationTime = element.value.count == 7 ? BiometricTemplates.bcdDigits(element.value) : text
            case 0x5F56: personalizationSystemSerialNumber = text
            default: unknownTags.append(element.tagHex)
            }
        }
    }

    /// For libFuzzer: decodes and ignores the result.
    public static func fuzz(_ data: [UInt8]) {
        _ = try? DataGroup12(decoding: data)
    }
}
