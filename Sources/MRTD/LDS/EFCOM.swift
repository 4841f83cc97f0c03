// EF.COM (ICAO 9303 Part 10 §4.6.1): the LDS version, the Unicode version and which data groups
// the document holds. Not covered by EF.SOD, so what it lists is a hint, never evidence.

/// The common data file: versions and the list of data groups present.
public struct EFCOM: Sendable, Hashable {
    /// The LDS version as `major.minor` (`5F01` "0107" → "1.7"); nil when absent.
    public var ldsVersion: String?
    /// The Unicode version as `major.minor.release` (`5F36` "040000" → "4.0.0"); nil when absent.
    public var unicodeVersion: String?
    /// The data groups the tag list (`5C`) names, by number (1–16), in the order listed.
    public var dataGroups: [Int]
    /// Tags of the tag list that name no data group, as hex.
    public var unknownTags: [String]

    /// An EF.COM with the given contents (for tests and emulators).
    public init(ldsVersion: String?, unicodeVersion: String?, dataGroups: [Int], unknownTags: [String] = []) {
        self.ldsVersion = ldsVersion
        self.unicodeVersion = unicodeVersion
        self.dataGroups = dataGroups
        self.unknownTags = unknownTags
    }

    /// Decodes EF.COM (template `60`).
    public init(decoding bytes: [UInt8]) throws(LDSError) {
        let elements = try LDSTemplate.open(bytes, tag: 0x60, file: "EF.COM")
        var lds: String?, unicode: String?
        var groups: [Int] = []
        var unknown: [String] = []
        var sawTagList = false
        for element in elements {
            switch element.tagNumber {
            case 0x5F01: lds = EFCOM.version(element.value, parts: 2)
            case 0x5F36: unicode = EFCOM.version(element.value, parts: 3)
            case 0x5C:
                sawTagList = true
                for tag in LDSTemplate.tagList(element.value) {
                    if tag <= 0xFF, let number = LDSDataGroup.number(forTag: UInt8(tag)) {
                        groups.append(number)
                    } else {
                        unknown.append(LDSTemplate.hex(tag))
                    }
                }
            default: break
            }
        }
        guard sawTagList else { throw LDSError(.structure, file: "EF.COM", "the tag list (5C) is missing") }
        self.init(ldsVersion: lds, unicodeVersion: unicode, dataGroups: groups, unknownTags: unknown)
    }

    /// "0107" → "1.7", "040000" → "4.0.0": pairs of digits without their leading zeros; the
    /// text as stored when it is not pairs of digits.
    static func version(_ value: [UInt8], parts: Int) -> String {
        guard value.count == parts * 2, value.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            return LDSTemplate.text(value)
        }
        var numbers: [String] = []
        for i in 0..<parts {
            let high = Int(value[2 * i] - 0x30), low = Int(value[2 * i + 1] - 0x30)
            numbers.append(String(high * 10 + low))
        }
        return numbers.joined(separator: ".")
    }

    /// For libFuzzer: decodes and ignores the result.
    public static func fuzz(_ data: [UInt8]) {
        _ = try? EFCOM(decoding: data)
    }
}
