// The MRZ fields BAC and PACE derive their password from, read from DG1, and the MRZ check
// digit.

/// The MRZ fields BAC and PACE derive their password from (ICAO 9303 Part 11 §4.3.2 and
/// §4.4.1): the document number, the date of birth and the date of expiry, each with its check
/// digit. Its description never shows them.
public struct MRZAccessKey: Sendable, Hashable, CustomStringConvertible {
    /// As printed in the MRZ, fillers (`<`) included; 9 characters or more.
    public var documentNumber: String
    /// YYMMDD.
    public var dateOfBirth: String
    /// YYMMDD.
    public var dateOfExpiry: String

    public init(documentNumber: String, dateOfBirth: String, dateOfExpiry: String) {
        self.documentNumber = documentNumber
        self.dateOfBirth = dateOfBirth
        self.dateOfExpiry = dateOfExpiry
    }

    public var description: String { "MRZ access key" }

    /// Document number, date of birth and date of expiry, each followed by its check digit
    /// (Part 11 §9.7.1): the input of BAC's K_seed and PACE's MRZ password. A document number
    /// shorter than 9 characters is padded with `<`.
    var information: String {
        var number = documentNumber
        while number.count < 9 { number += "<" }
        return number + String(MRZCheckDigit.of(number)) + dateOfBirth + String(MRZCheckDigit.of(dateOfBirth))
            + dateOfExpiry + String(MRZCheckDigit.of(dateOfExpiry))
    }

    /// The key the data group 1 of a document gives (TD1, TD2 or TD3 MRZ in DO 5F1F); nil when
    /// DG1 holds none of them.
    init?(dataGroup1 bytes: [UInt8]) {
        guard let outer = try? DERElement.read(bytes, at: 0).0, outer.tag == [0x61],
              let mrzObject = try? outer.children().first(where: { $0.tag == [0x5F, 0x1F] }),
              let text = String(validating: mrzObject.value, as: UTF8.self) else { return nil }
        let c = Array(text)
        func field(_ range: Range<Int>) -> String { String(c[range]) }
        switch c.count {
        case 90:
            // TD1: line 1 holds the document number at 5–13 and, when it is longer than nine
            // characters, `<` at 14 and the rest in the optional data up to its check digit.
            var number = field(5..<14)
            if c[14] == "<" {
                let rest = field(15..<30).prefix { $0 != "<" }
                if rest.count > 1 { number += String(rest.dropLast()) }
            }
            self.init(documentNumber: number, dateOfBirth: field(30..<36), dateOfExpiry: field(38..<44))
        case 72, 88:
            // TD2 and TD3: line 2 starts with the document number; birth at 13, expiry at 21.
            let line2 = c.count / 2
            self.init(documentNumber: field(line2..<(line2 + 9)), dateOfBirth: field((line2 + 13)..<(line2 + 19)),
                      dateOfExpiry: field((line2 + 21)..<(line2 + 27)))
        default:
            return nil
        }
    }
}

/// The MRZ check digit (ICAO 9303 Part 3 §4.9): weights 7, 3, 1 over digits (their value),
/// letters (A = 10 … Z = 35) and the filler `<` (0), summed modulo 10.
enum MRZCheckDigit {
    static func of(_ text: String) -> Int {
        let weights = [7, 3, 1]
        var sum = 0
        for (i, ch) in text.unicodeScalars.enumerated() {
            let v = ch.value
            let value: Int
            switch v {
            case 0x30...0x39: value = Int(v - 0x30)
            case 0x41...0x5A: value = Int(v - 0x41) + 10
            case 0x61...0x7A: value = Int(v - 0x61) + 10
            default: value = 0
            }
            sum += value * weights[i % 3]
        }
        return sum % 10
    }
}
