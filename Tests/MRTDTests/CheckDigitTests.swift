import MRTD
import Testing

@Suite("MRZ check digits (ICAO 9303 Part 3 §4.9)")
struct CheckDigitTests {
    @Test("the worked examples: L898902C< → 3, 690806 → 1, 940623 → 6; a lowercase letter is no MRZ character")
    func examples() {
        #expect(MRZ.checkDigit("L898902C<") == 3)
        #expect(MRZ.checkDigit("690806") == 1)
        #expect(MRZ.checkDigit("940623") == 6)
        #expect(MRZ.checkDigit("520727") == 3)
        #expect(MRZ.checkDigit("l898902c<") == nil)
    }
}
