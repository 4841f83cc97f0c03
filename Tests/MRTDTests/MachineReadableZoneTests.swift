import MRTD
import Testing

@Suite("MRZ text (ICAO 9303 Parts 3–7)")
struct MachineReadableZoneTests {
    // Part 4 Appendix A (TD3 specimen, 8th edition).
    static let td3 = ["P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<", "L898902C36UTO7408122F1204159ZE184226B<<<<<10"]
    // The older specimen the BAC worked example of Part 11 Appendix D.2 starts from.
    static let td3Old = ["P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<", "L898902C<3UTO6908061F9406236ZE184226B<<<<<14"]
    // Part 5 Appendix A (TD1 specimen).
    static let td1 = ["I<UTOD231458907<<<<<<<<<<<<<<<", "7408122F1204159UTO<<<<<<<<<<<6", "ERIKSSON<<ANNA<MARIA<<<<<<<<<<"]
    // Part 6 Appendix A (TD2 specimen).
    static let td2 = ["I<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<", "D231458907UTO7408122F1204159<<<<<<<6"]
    // Part 7 Appendix A (MRV-A and MRV-B specimens).
    static let mrvA = ["V<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<", "L8988901C4XXX4009078F96121096ZE184226B<<<<<<"]
    static let mrvB = ["V<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<", "L8988901C4XXX4009078F9612109<<<<<<<<"]

    @Test("TD3 specimen of Part 4: every field, the dates with their century")
    func td3Specimen() throws {
        let mrz = try MachineReadableZone(lines: Self.td3, referenceYear: 2026)
        #expect(mrz.format == .td3)
        #expect(mrz.documentCode == "P")
        #expect(mrz.issuingState == "UTO")
        #expect(mrz.documentNumber == "L898902C3")
        #expect(mrz.surname == "ERIKSSON")
        #expect(mrz.givenNames == "ANNA MARIA")
        #expect(mrz.nationality == "UTO")
        #expect(mrz.dateOfBirth.text == "740812")
        #expect(mrz.dateOfBirth.iso8601 == "1974-08-12")
        #expect(mrz.sex == .female)
        #expect(mrz.dateOfExpiry.text == "120415")
        #expect(mrz.dateOfExpiry.iso8601 == "2012-04-15")
        #expect(mrz.optionalData == "ZE184226B")
        #expect(mrz.optionalData2 == nil)
        #expect(mrz.checkDigitFailures.isEmpty)
        // The description never carries the holder's data.
        #expect(mrz.description == "TD3 machine-readable zone")
        #expect(!"\(mrz)".contains("L898902C"))
    }

    @Test("the older specimen L898902C< (Part 11 Appendix D): a filler in the number, expiry in 1994, birth in 1969")
    func oldSpecimen() throws {
        let mrz = try MachineReadableZone(lines: Self.td3Old, referenceYear: 2026)
        #expect(mrz.documentNumber == "L898902C")
        #expect(mrz.dateOfBirth.iso8601 == "1969-08-06")
        #expect(mrz.dateOfExpiry.iso8601 == "1994-06-23")
        #expect(mrz.givenNames == "ANNA MARIA")
    }

    @Test("TD1 specimen of Part 5, with both optional data fields")
    func td1Specimen() throws {
        let mrz = try MachineReadableZone(lines: Self.td1, referenceYear: 2026)
        #expect(mrz.format == .td1)
        #expect(mrz.documentCode == "I")
        #expect(mrz.documentNumber == "D23145890")
        #expect(mrz.surname == "ERIKSSON")
        #expect(mrz.givenNames == "ANNA MARIA")
        #expect(mrz.nationality == "UTO")
        #expect(mrz.dateOfBirth.iso8601 == "1974-08-12")
        #expect(mrz.dateOfExpiry.iso8601 == "2012-04-15")
        #expect(mrz.optionalData == "")
        #expect(mrz.optionalData2 == "")
    }

    @Test("TD1 long document number (Part 5 §4.2.2 note j): the rest and its check digit open the optional data")
    func td1LongNumber() throws {
        // D23145890734 has check digit 9; position 15 holds <, the rest "734" and "9" follow.
        let lines = ["I<UTOD23145890<7349<<<<<<<<<<<", "7408122F1204159UTO<<<<<<<<<<<6", "ERIKSSON<<ANNA<MARIA<<<<<<<<<<"]
        let mrz = try MachineReadableZone(lines: lines, referenceYear: 2026)
        #expect(mrz.documentNumber == "D23145890734")
        #expect(mrz.optionalData == "")
        var wrong = lines
        wrong[0] = "I<UTOD23145890<7348<<<<<<<<<<<"
        wrong[1] = "7408122F1204159UTO<<<<<<<<<<<3"  // the composite over the changed line holds
        #expect(throws: MRZError(.checkDigit, field: .documentNumber, "the document-number check digit is 9, the MRZ says 8")) {
            try MachineReadableZone(lines: wrong, referenceYear: 2026)
        }
    }

    @Test("TD2 specimen of Part 6")
    func td2Specimen() throws {
        let mrz = try MachineReadableZone(lines: Self.td2, referenceYear: 2026)
        #expect(mrz.format == .td2)
        #expect(mrz.documentNumber == "D23145890")
        #expect(mrz.dateOfBirth.iso8601 == "1974-08-12")
        #expect(mrz.givenNames == "ANNA MARIA")
    }

    @Test("MRV-A and MRV-B specimens of Part 7: no composite check digit")
    func visas() throws {
        let a = try MachineReadableZone(lines: Self.mrvA, referenceYear: 2026)
        #expect(a.format == .mrvA)
        #expect(a.documentCode == "V")
        #expect(a.documentNumber == "L8988901C")
        #expect(a.nationality == "XXX")
        #expect(a.dateOfBirth.iso8601 == "1940-09-07")
        #expect(a.dateOfExpiry.iso8601 == "1996-12-10")
        #expect(a.optionalData == "6ZE184226B")
        let b = try MachineReadableZone(lines: Self.mrvB, referenceYear: 2026)
        #expect(b.format == .mrvB)
        #expect(b.optionalData == "")
    }

    @Test("the BSI TR-03105-5 reference document's DG1 MRZ: issuing state D<<, empty personal number with a < check digit")
    func bsiReference() throws {
        let text = "P<D<<MUSTERMANN<<ERIKA<<<<<<<<<<<<<<<<<<<<<<C11T002JM4D<<9608122F2310314<<<<<<<<<<<<<<<4"
        let mrz = try MachineReadableZone(parsing: text, referenceYear: 2026)
        #expect(mrz.issuingState == "D")
        #expect(mrz.nationality == "D")
        #expect(mrz.documentNumber == "C11T002JM")
        #expect(mrz.surname == "MUSTERMANN")
        #expect(mrz.givenNames == "ERIKA")
        #expect(mrz.dateOfBirth.iso8601 == "1996-08-12")
        #expect(mrz.dateOfExpiry.iso8601 == "2023-10-31")
    }

    @Test("typed input: LF, CRLF, spaces, no separator and a byte-order mark all give the same MRZ")
    func typedInput() throws {
        let expected = try MachineReadableZone(lines: Self.td3, referenceYear: 2026)
        let forms = [
            Self.td3.joined(separator: "\n"),
            Self.td3.joined(separator: "\r\n") + "\r\n",
            "  " + Self.td3.joined(separator: " ") + " ",
            Self.td3.joined(),
            "\u{FEFF}" + Self.td3.joined(separator: "\n"),
        ]
        for form in forms {
            #expect(try MachineReadableZone(parsing: form, referenceYear: 2026) == expected)
        }
        let td1 = try MachineReadableZone(parsing: Self.td1.joined(separator: "\r\n"), referenceYear: 2026)
        #expect(td1.format == .td1)
    }

    @Test("lower case, foreign characters and wrong shapes are refused with one line, no field contents")
    func refusals() {
        #expect(throws: MRZError(.character, "the MRZ is in lower case; MRZ letters are capitals (A-Z), with 0-9 and <")) {
            try MachineReadableZone(parsing: Self.td3.joined(separator: "\n").lowercased())
        }
        var accented = Self.td3
        accented[0] = "P<UTOERIKSSÖN<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<"
        #expect(throws: MRZError(.character, "line 1, position 12 holds a character that is not A-Z, 0-9 or <")) {
            try MachineReadableZone(parsing: accented.joined(separator: "\n"))
        }
        #expect(throws: MRZError(.shape, "an MRZ is 3 lines of 30 characters (TD1), 2 of 36 (TD2, MRV-B) or 2 of 44 (TD3, MRV-A); this text has 2 lines of 44, 43 characters")) {
            try MachineReadableZone(parsing: Self.td3[0] + "\n" + Self.td3[1].dropLast())
        }
        #expect(throws: MRZError.self) { try MachineReadableZone(parsing: "") }
    }

    @Test("each check digit, when wrong, is named: number, birth, expiry, personal number, composite")
    func checkDigitErrors() {
        func td3(_ line2: String) -> String { Self.td3[0] + "\n" + line2 }
        // Each line changes one digit of the specimen's line 2.
        let cases: [(String, MRZError)] = [
            ("L898902C35UTO7408122F1204159ZE184226B<<<<<10", MRZError(.checkDigit, field: .documentNumber, "the document-number check digit is 6, the MRZ says 5")),
            ("L898902C36UTO7408127F1204159ZE184226B<<<<<10", MRZError(.checkDigit, field: .dateOfBirth, "the date-of-birth check digit is 2, the MRZ says 7")),
            ("L898902C36UTO7408122F1204158ZE184226B<<<<<10", MRZError(.checkDigit, field: .dateOfExpiry, "the date-of-expiry check digit is 9, the MRZ says 8")),
            ("L898902C36UTO7408122F1204159ZE184226B<<<<<20", MRZError(.checkDigit, field: .personalNumber, "the personal-number check digit is 1, the MRZ says 2")),
            ("L898902C36UTO7408122F1204159ZE184226B<<<<<13", MRZError(.checkDigit, field: .composite, "the composite check digit is 0, the MRZ says 3")),
            ("L898902C3<UTO7408122F1204159ZE184226B<<<<<10", MRZError(.checkDigit, field: .documentNumber, "the document-number check digit is 6, the MRZ has a letter or filler in its place")),
        ]
        for (line2, error) in cases {
            #expect(throws: error) { try MachineReadableZone(parsing: td3(line2), referenceYear: 2026) }
        }
        // TD1: the composite covers line 1's optional data too.
        #expect(throws: MRZError(.checkDigit, field: .composite, "the composite check digit is 6, the MRZ says 7")) {
            try MachineReadableZone(lines: [Self.td1[0], "7408122F1204159UTO<<<<<<<<<<<7", Self.td1[2]])
        }
        // TD2 birth date.
        #expect(throws: MRZError(.checkDigit, field: .dateOfBirth, "the date-of-birth check digit is 2, the MRZ says 3")) {
            try MachineReadableZone(lines: [Self.td2[0], "D231458907UTO7408123F1204159<<<<<<<6"])
        }
    }

    @Test("report mode keeps the data and lists every failed check digit")
    func reportMode() throws {
        let mrz = try MachineReadableZone(lines: [Self.td3[0], "L898902C35UTO7408127F1204159ZE184226B<<<<<10"], checkDigits: .report, referenceYear: 2026)
        #expect(mrz.documentNumber == "L898902C3")
        #expect(mrz.checkDigitFailures.map(\.field) == [.documentNumber, .dateOfBirth, .composite])
    }

    @Test("unknown date parts (<) parse, their resolved parts are nil; a child's and an elder's birth years")
    func centuries() throws {
        // Birth 2020 in a passport expiring 2030; birth 1940 in one expiring 2030.
        func mrz(birth: String, expiry: String) throws -> MachineReadableZone {
            let number = "X12345678"
            var line2 = number + String(MRZ.checkDigit(number)!) + "UTO" + birth + String(MRZ.checkDigit(birth)!) + "M" + expiry + String(MRZ.checkDigit(expiry)!)
            line2 += "<<<<<<<<<<<<<<" + "<"
            line2 += String(MRZ.checkDigit(String(line2.prefix(10)) + line2.dropFirst(13).prefix(7) + line2.dropFirst(21).prefix(22))!)
            return try MachineReadableZone(lines: ["P<UTOTEST<<CASE<<<<<<<<<<<<<<<<<<<<<<<<<<<<<", line2], referenceYear: 2026)
        }
        #expect(try mrz(birth: "200101", expiry: "300101").dateOfBirth.year == 2020)
        #expect(try mrz(birth: "400101", expiry: "300101").dateOfBirth.year == 1940)
        // A birth never lands after the reference year, even when the expiry is later.
        #expect(try mrz(birth: "300101", expiry: "310101").dateOfBirth.year == 1930)
        let unknown = try mrz(birth: "74<<<<", expiry: "300101")
        #expect(unknown.dateOfBirth.year == 1974)
        #expect(unknown.dateOfBirth.month == nil)
        #expect(unknown.dateOfBirth.iso8601 == nil)
    }

    @Test("hostile text never traps")
    func hostile() {
        let inputs = ["<", String(repeating: "<", count: 88), String(repeating: "9", count: 90), "\u{FEFF}\u{FEFF}", String(repeating: "P\n", count: 44), "\u{0}\u{0}"]
        for input in inputs {
            _ = try? MachineReadableZone(parsing: input)
        }
        MachineReadableZone.fuzz(Array(String(repeating: "<", count: 72).utf8))
    }
}
