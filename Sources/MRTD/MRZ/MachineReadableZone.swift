// The machine-readable zone of passports (TD3, ICAO 9303 Part 4), ID cards (TD1 Part 5, TD2
// Part 6) and visas (MRV-A and MRV-B, Part 7): parsed from text as people type it or as DG1
// holds it, every check digit verified (Part 3 §4.9).

/// A parsed machine-readable zone. Its description names the format only: the document number
/// and the dates open the chip, so they never reach a log by accident.
public struct MachineReadableZone: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The layout: how many lines of how many characters, and which fields where.
    public enum Format: String, Sendable, Hashable, CaseIterable {
        /// ID cards: 3 lines of 30 (Part 5).
        case td1
        /// Cards and older IDs: 2 lines of 36 (Part 6).
        case td2
        /// Passports: 2 lines of 44 (Part 4).
        case td3
        /// Visa format A: 2 lines of 44 (Part 7).
        case mrvA
        /// Visa format B: 2 lines of 36 (Part 7).
        case mrvB

        var lineCount: Int { self == .td1 ? 3 : 2 }
        var lineLength: Int {
            switch self {
            case .td1: return 30
            case .td2, .mrvB: return 36
            case .td3, .mrvA: return 44
            }
        }
    }

    /// The fields a check digit guards, named as error messages name them.
    public enum Field: String, Sendable, Hashable, CaseIterable {
        case documentNumber = "document-number"
        case dateOfBirth = "date-of-birth"
        case dateOfExpiry = "date-of-expiry"
        /// TD3's personal number (positions 29–42 of line 2) and its check digit.
        case personalNumber = "personal-number"
        /// The composite check digit over the number, the dates and the optional data.
        case composite
    }

    /// The holder's sex as printed (Part 3 §4.2.2: F, M, or `<`/X for unspecified).
    public enum Sex: String, Sendable, Hashable {
        case female = "F"
        case male = "M"
        case unspecified = "X"
    }

    /// Whether a wrong check digit throws (typed input) or is only recorded (DG1 from a chip:
    /// the rest of the data is still worth showing, next to the failure).
    public enum CheckDigitPolicy: Sendable, Hashable {
        case enforce
        case report
    }

    /// TD1, TD2, TD3, MRV-A or MRV-B, from the line lengths (and a `V` for visas).
    public var format: Format
    /// The lines as parsed, fillers included. Never in `description`.
    public var lines: [String]
    /// `P`, `PD`, `I`, `ID`, `AC`, `V` …: the document code with its filler removed.
    public var documentCode: String
    /// The issuing state or organisation (ICAO 9303 Part 3 §5), fillers removed: `D`, `UTO`.
    public var issuingState: String
    /// The whole document number, fillers removed; for TD1/TD2 numbers longer than 9 characters,
    /// the part that continues in the optional data is joined on (Part 5 §4.2.2, note j).
    public var documentNumber: String
    /// The primary identifier, `<` turned into spaces.
    public var surname: String
    /// The secondary identifier (every given name, separated by spaces); empty when none.
    public var givenNames: String
    /// The holder's nationality (3-letter code, fillers removed).
    public var nationality: String
    /// YYMMDD; the century is the latest one that puts the birth on or before both the year of
    /// expiry and the reference year (so a child's 2020 and an elder's 1940 both come out
    /// right, and a birth is never in the future).
    public var dateOfBirth: DocumentDate
    /// The holder's sex as printed.
    public var sex: Sex
    /// YYMMDD; ICAO 9303 prints no century, so the year is put within 20 years ahead and 80
    /// years back of the reference year (documents run 10 years, 15 at most).
    public var dateOfExpiry: DocumentDate
    /// TD3: the personal number; TD2, MRV: the optional data; TD1: line 1's optional data
    /// (after the document number's overflow, if any). Fillers trimmed.
    public var optionalData: String
    /// TD1 only: the optional data of line 2. Fillers trimmed.
    public var optionalData2: String?
    /// The check digits that did not match, under ``CheckDigitPolicy/report``; empty when every
    /// check digit holds.
    public var checkDigitFailures: [MRZError]

    public var description: String { "\(format.rawValue.uppercased()) machine-readable zone" }
    public var debugDescription: String { description }

    /// Parses an MRZ as people type or paste it: lines separated by line feeds, CRLF, spaces or
    /// nothing at all, with or without a byte-order mark. Lower case is refused (MRZ letters are
    /// capitals, and a lower-case MRZ is usually a mistyped one). Every check digit is verified;
    /// with `.enforce` the first failure throws, naming the field. `referenceYear` is the year
    /// the two-digit years are placed around (the current year when nil).
    public init(parsing text: String, checkDigits policy: CheckDigitPolicy = .enforce, referenceYear: Int? = nil) throws(MRZError) {
        let lines = try MachineReadableZone.lines(of: text)
        try self.init(lines: lines, checkDigits: policy, referenceYear: referenceYear)
    }

    /// Parses lines that are already split (DG1 holds the MRZ without separators: use
    /// ``init(parsing:checkDigits:referenceYear:)`` for it).
    public init(lines: [String], checkDigits policy: CheckDigitPolicy = .enforce, referenceYear: Int? = nil) throws(MRZError) {
        let bytes = lines.map { Array($0.utf8) }
        let format = try MachineReadableZone.format(of: bytes)
        for (n, line) in bytes.enumerated() {
            if let i = line.firstIndex(where: { !MachineReadableZone.isMRZCharacter($0) }) {
                throw MachineReadableZone.characterError(line[i], line: n + 1, position: i + 1)
            }
        }
        var parser = FieldParser(lines: bytes, policy: policy, referenceYear: referenceYear ?? Timestamp.now.components.year)
        self = try parser.parse(format: format, lines: lines)
    }

    /// For libFuzzer: parses the bytes as text, ignoring the result.
    public static func fuzz(_ data: [UInt8]) {
        _ = try? MachineReadableZone(parsing: String(decoding: data, as: UTF8.self), checkDigits: .report, referenceYear: 2026)
    }

    // MARK: - Text to lines

    /// Splits typed text into MRZ lines (see ``init(parsing:checkDigits:)``).
    static func lines(of text: String) throws(MRZError) -> [String] {
        var scalars = Array(text.unicodeScalars)
        while scalars.first == "\u{FEFF}" { scalars.removeFirst() }
        if scalars.contains(where: { ("a"..."z").contains($0) }) {
            throw MRZError(.character, "the MRZ is in lower case; MRZ letters are capitals (A-Z), with 0-9 and <")
        }
        var tokens: [[Unicode.Scalar]] = [[]]
        for s in scalars {
            if s == " " || s == "\n" || s == "\r" || s == "\t" || s == "\u{0B}" || s == "\u{0C}" || s == "\u{A0}" || s == "\u{2028}" {
                if !(tokens.last ?? []).isEmpty { tokens.append([]) }
            } else {
                tokens[tokens.count - 1].append(s)
            }
        }
        if tokens.last?.isEmpty == true { tokens.removeLast() }
        for (n, token) in tokens.enumerated() {
            if let i = token.firstIndex(where: { !($0.isASCII && isMRZCharacter(UInt8($0.value))) }) {
                throw MRZError(.character, "line \(n + 1), position \(i + 1) holds a character that is not A-Z, 0-9 or <")
            }
        }
        let lengths = tokens.map(\.count)
        for format in [Format.td1, .td3, .td2] where lengths.count == format.lineCount && lengths.allSatisfy({ $0 == format.lineLength }) {
            return tokens.map { String(String.UnicodeScalarView($0)) }
        }
        // Typed without separators (or split where the typist paused): cut by the total.
        let joined = tokens.flatMap { $0 }
        let width: Int
        switch joined.count {
        case 90: width = 30
        case 72: width = 36
        case 88: width = 44
        default:
            let shape = lengths.isEmpty ? "no characters" : "\(lengths.count) line\(lengths.count == 1 ? "" : "s") of \(lengths.map(String.init).joined(separator: ", ")) characters"
            throw MRZError(.shape, "an MRZ is 3 lines of 30 characters (TD1), 2 of 36 (TD2, MRV-B) or 2 of 44 (TD3, MRV-A); this text has \(shape)")
        }
        return stride(from: 0, to: joined.count, by: width).map { String(String.UnicodeScalarView(joined[$0..<($0 + width)])) }
    }

    static func format(of lines: [[UInt8]]) throws(MRZError) -> Format {
        let lengths = lines.map(\.count)
        let isVisa = lines.first?.first == UInt8(ascii: "V")
        switch (lengths.count, lengths.first ?? 0) {
        case (3, 30) where lengths.allSatisfy({ $0 == 30 }): return .td1
        case (2, 36) where lengths[1] == 36: return isVisa ? .mrvB : .td2
        case (2, 44) where lengths[1] == 44: return isVisa ? .mrvA : .td3
        default:
            throw MRZError(.shape, "an MRZ is 3 lines of 30 characters (TD1), 2 of 36 (TD2, MRV-B) or 2 of 44 (TD3, MRV-A); these lines have \(lengths.map(String.init).joined(separator: ", ")) characters")
        }
    }

    static func isMRZCharacter(_ c: UInt8) -> Bool {
        (c >= 0x41 && c <= 0x5A) || (c >= 0x30 && c <= 0x39) || c == 0x3C
    }

    static func characterError(_ c: UInt8, line: Int, position: Int) -> MRZError {
        if c >= 0x61 && c <= 0x7A {
            return MRZError(.character, "the MRZ is in lower case; MRZ letters are capitals (A-Z), with 0-9 and <")
        }
        return MRZError(.character, "line \(line), position \(position) holds a character that is not A-Z, 0-9 or <")
    }
}

/// Cuts the fields out of validated lines and checks their digits.
private struct FieldParser {
    let lines: [[UInt8]]
    let policy: MachineReadableZone.CheckDigitPolicy
    let referenceYear: Int
    var failures: [MRZError] = []

    init(lines: [[UInt8]], policy: MachineReadableZone.CheckDigitPolicy, referenceYear: Int) {
        self.lines = lines
        self.policy = policy
        self.referenceYear = referenceYear
    }

    /// Characters `range` (0-based, end exclusive) of line `line` (0-based); the lines were
    /// validated for their format's length before any field is cut.
    func text(_ line: Int, _ range: Range<Int>) -> String {
        String(decoding: lines[line][range], as: UTF8.self)
    }

    func character(_ line: Int, _ at: Int) -> UInt8 { lines[line][at] }

    static func trimmed(_ s: String) -> String {
        var t = Substring(s)
        while t.last == "<" { t.removeLast() }
        while t.first == "<" { t.removeFirst() }
        return String(t)
    }

    /// Verifies `digit` (a character of the MRZ) against the check digit of `data`. A `<` is
    /// accepted for `allowFillerWhenEmpty` fields whose data is all fillers (TD3's personal
    /// number, Part 4 §4.2.2.2 note l).
    mutating func check(_ field: MachineReadableZone.Field, data: String, digit: UInt8, allowFillerWhenEmpty: Bool = false) throws(MRZError) {
        // The data was validated as MRZ characters, so the check digit always exists.
        let expected = MRZ.checkDigit(data) ?? 0
        if digit == UInt8(ascii: "<"), allowFillerWhenEmpty, data.utf8.allSatisfy({ $0 == UInt8(ascii: "<") }) { return }
        let found: String
        if digit >= 0x30 && digit <= 0x39 {
            if Int(digit - 0x30) == expected { return }
            found = "the MRZ says \(Int(digit - 0x30))"
        } else {
            found = "the MRZ has a letter or filler in its place"
        }
        let error = MRZError(.checkDigit, field: field, "the \(field.rawValue) check digit is \(expected), \(found)")
        if policy == .enforce { throw error }
        failures.append(error)
    }

    /// The document number of TD1/TD2: 9 characters, or, when the check digit's place holds
    /// `<`, longer, its rest and its check digit at the start of the optional data, up to the
    /// next `<` (Part 5 §4.2.2 note j, Part 6 §4.2.2 note i). Returns the number, the optional
    /// data that remains, and whether the overflow rule applied.
    mutating func documentNumber(field: String, digit: UInt8, optional: String) throws(MRZError) -> (number: String, optional: String) {
        if digit == UInt8(ascii: "<"), !field.hasSuffix("<") {
            let optionalBytes = Array(optional.utf8)
            let end = optionalBytes.firstIndex(of: UInt8(ascii: "<")) ?? optionalBytes.count
            guard end >= 1 else {
                let error = MRZError(.checkDigit, field: .documentNumber, "the document-number check digit is missing (a `<` in its place, and no long number in the optional data)")
                if policy == .enforce { throw error }
                failures.append(error)
                return (FieldParser.trimmed(field), optional)
            }
            let rest = String(decoding: optionalBytes[0..<(end - 1)], as: UTF8.self)
            let number = field + rest
            try check(.documentNumber, data: number, digit: optionalBytes[end - 1])
            return (number, String(decoding: optionalBytes[end...], as: UTF8.self))
        }
        try check(.documentNumber, data: field, digit: digit)
        return (FieldParser.trimmed(field), optional)
    }

    func sex(_ c: UInt8) throws(MRZError) -> MachineReadableZone.Sex {
        switch c {
        case UInt8(ascii: "F"): return .female
        case UInt8(ascii: "M"): return .male
        case UInt8(ascii: "<"), UInt8(ascii: "X"): return .unspecified
        default: throw MRZError(.field, "the sex field holds neither F, M, X nor <")
        }
    }

    static func names(_ field: String) -> (surname: String, givenNames: String) {
        func spaced(_ s: Substring) -> String {
            s.split(separator: "<", omittingEmptySubsequences: true).joined(separator: " ")
        }
        guard let split = field.firstRange(of: "<<") else { return (spaced(Substring(field)), "") }
        return (spaced(field[..<split.lowerBound]), spaced(field[split.upperBound...]))
    }

    mutating func parse(format: MachineReadableZone.Format, lines strings: [String]) throws(MRZError) -> MachineReadableZone {
        let code = text(0, 0..<2)
        guard (0x41...0x5A).contains(character(0, 0)) else {
            throw MRZError(.field, "the document code does not start with a letter")
        }
        let state = text(0, 2..<5)
        let nameField: String
        var number: String
        var birth: String, expiry: String
        var nationality: String
        var optional: String
        var optional2: String?
        let sexCharacter: UInt8

        switch format {
        case .td1:
            (number, optional) = try documentNumber(field: text(0, 5..<14), digit: character(0, 14), optional: text(0, 15..<30))
            birth = text(1, 0..<6)
            try check(.dateOfBirth, data: birth, digit: character(1, 6))
            sexCharacter = character(1, 7)
            expiry = text(1, 8..<14)
            try check(.dateOfExpiry, data: expiry, digit: character(1, 14))
            nationality = text(1, 15..<18)
            optional2 = FieldParser.trimmed(text(1, 18..<29))
            try check(.composite, data: text(0, 5..<30) + text(1, 0..<7) + text(1, 8..<15) + text(1, 18..<29), digit: character(1, 29))
            nameField = text(2, 0..<30)
        case .td2, .td3:
            let width = format.lineLength
            let optionalEnd = width - (format == .td3 ? 2 : 1)
            if format == .td2 {
                (number, optional) = try documentNumber(field: text(1, 0..<9), digit: character(1, 9), optional: text(1, 28..<optionalEnd))
            } else {
                number = FieldParser.trimmed(text(1, 0..<9))
                try check(.documentNumber, data: text(1, 0..<9), digit: character(1, 9))
                optional = text(1, 28..<optionalEnd)
                try check(.personalNumber, data: optional, digit: character(1, 42), allowFillerWhenEmpty: true)
            }
            nationality = text(1, 10..<13)
            birth = text(1, 13..<19)
            try check(.dateOfBirth, data: birth, digit: character(1, 19))
            sexCharacter = character(1, 20)
            expiry = text(1, 21..<27)
            try check(.dateOfExpiry, data: expiry, digit: character(1, 27))
            try check(.composite, data: text(1, 0..<10) + text(1, 13..<20) + text(1, 21..<(width - 1)), digit: character(1, width - 1))
            nameField = text(0, 5..<width)
        case .mrvA, .mrvB:
            let width = format.lineLength
            number = FieldParser.trimmed(text(1, 0..<9))
            try check(.documentNumber, data: text(1, 0..<9), digit: character(1, 9))
            nationality = text(1, 10..<13)
            birth = text(1, 13..<19)
            try check(.dateOfBirth, data: birth, digit: character(1, 19))
            sexCharacter = character(1, 20)
            expiry = text(1, 21..<27)
            try check(.dateOfExpiry, data: expiry, digit: character(1, 27))
            optional = text(1, 28..<width)
            nameField = text(0, 5..<width)
        }
        number = FieldParser.trimmed(number)
        let names = FieldParser.names(nameField)
        let reference = referenceYear
        let expiryDate = DocumentDate.mrz(expiry) { yy in
            var year = reference - reference % 100 + yy
            if year > reference + 20 { year -= 100 } else if year < reference - 80 { year += 100 }
            return year
        }
        let birthDate = DocumentDate.mrz(birth) { yy in
            // The latest year ending in yy that is on or before both limits.
            let limit = min(expiryDate.year ?? reference, reference)
            return limit - ((limit - yy) % 100 + 100) % 100
        }
        return MachineReadableZone(
            format: format, lines: strings, documentCode: FieldParser.trimmed(code), issuingState: FieldParser.trimmed(state),
            documentNumber: number, surname: names.surname, givenNames: names.givenNames,
            nationality: FieldParser.trimmed(nationality), dateOfBirth: birthDate, sex: try sex(sexCharacter),
            dateOfExpiry: expiryDate, optionalData: FieldParser.trimmed(optional), optionalData2: optional2,
            checkDigitFailures: failures)
    }
}

extension MachineReadableZone {
    /// Memberwise, for the parser.
    fileprivate init(
        format: Format, lines: [String], documentCode: String, issuingState: String, documentNumber: String,
        surname: String, givenNames: String, nationality: String, dateOfBirth: DocumentDate, sex: Sex,
        dateOfExpiry: DocumentDate, optionalData: String, optionalData2: String?, checkDigitFailures: [MRZError]
    ) {
        self.format = format
        self.lines = lines
        self.documentCode = documentCode
        self.issuingState = issuingState
        self.documentNumber = documentNumber
        self.surname = surname
        self.givenNames = givenNames
        self.nationality = nationality
        self.dateOfBirth = dateOfBirth
        self.sex = sex
        self.dateOfExpiry = dateOfExpiry
        self.optionalData = optionalData
        self.optionalData2 = optionalData2
        self.checkDigitFailures = checkDigitFailures
    }
}
