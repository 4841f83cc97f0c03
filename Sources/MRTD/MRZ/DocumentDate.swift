// Dates as travel documents print them: YYMMDD in the MRZ (ICAO 9303 Part 3 §4.6, with `<` for
// an unknown part), YYYYMMDD in DG11 and DG12 (Part 10 §4.7.11, §4.7.12).

/// A date as a document holds it, with the calendar date where it is known.
public struct DocumentDate: Sendable, Hashable {
    /// The characters as printed: `YYMMDD` from an MRZ, `YYYYMMDD` from DG11/DG12; `<` stands
    /// for an unknown digit (Part 3 §4.6).
    public var text: String
    /// The four-digit year: as printed for YYYYMMDD; for an MRZ the century is inferred (see
    /// ``MachineReadableZone/dateOfBirth`` and ``MachineReadableZone/dateOfExpiry``); nil when unknown.
    public var year: Int?
    /// 1–12, nil when unknown or out of range.
    public var month: Int?
    /// 1–31, nil when unknown or out of range.
    public var day: Int?

    /// A date with the given parts.
    public init(text: String, year: Int?, month: Int?, day: Int?) {
        self.text = text
        self.year = year
        self.month = month
        self.day = day
    }

    /// `YYYY-MM-DD` when year, month and day are all known; nil otherwise.
    public var iso8601: String? {
        guard let year, let month, let day else { return nil }
        func pad(_ n: Int, _ width: Int) -> String {
            let s = String(n)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }

    /// An MRZ date (`YYMMDD`, digits or `<`), its year put in the century `resolveYear` picks
    /// for the two digits.
    static func mrz(_ text: String, resolveYear: (Int) -> Int?) -> DocumentDate {
        let digits = Array(text.utf8)
        let yy = twoDigits(digits, 0)
        let month = twoDigits(digits, 2).flatMap { (1...12).contains($0) ? $0 : nil }
        let day = twoDigits(digits, 4).flatMap { (1...31).contains($0) ? $0 : nil }
        return DocumentDate(text: text, year: yy.flatMap(resolveYear), month: month, day: day)
    }

    /// `YYYYMMDD` as ASCII digits (DG11 full date of birth, DG12 date of issue), or the same
    /// eight digits as 4 BCD bytes, which some issuers write instead. nil when neither.
    static func full(_ bytes: [UInt8]) -> DocumentDate? {
        var ascii = bytes
        if bytes.count == 4, bytes.allSatisfy({ $0 >> 4 <= 9 && $0 & 0x0F <= 9 }) {
            ascii = bytes.flatMap { [0x30 + ($0 >> 4), 0x30 + ($0 & 0x0F)] }
        }
        guard ascii.count == 8, ascii.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x3C }) else { return nil }
        let text = String(decoding: ascii, as: UTF8.self)
        let year: Int? = {
            guard let high = twoDigits(ascii, 0), let low = twoDigits(ascii, 2) else { return nil }
            return high * 100 + low
        }()
        let month = twoDigits(ascii, 4).flatMap { (1...12).contains($0) ? $0 : nil }
        let day = twoDigits(ascii, 6).flatMap { (1...31).contains($0) ? $0 : nil }
        return DocumentDate(text: text, year: year, month: month, day: day)
    }

    static func twoDigits(_ bytes: [UInt8], _ at: Int) -> Int? {
        guard at + 1 < bytes.count else { return nil }
        let a = bytes[at], b = bytes[at + 1]
        guard (0x30...0x39).contains(a), (0x30...0x39).contains(b) else { return nil }
        return Int(a - 0x30) * 10 + Int(b - 0x30)
    }
}
