// The machine-readable zone's check digit (ICAO 9303 Part 3 §4.9), shared by the access keys
// (BAC, PACE with the MRZ) and the decoding of DG1.

/// The machine-readable zone of a travel document (ICAO 9303 Parts 3 to 6).
public enum MRZ {
    /// The check digit of `field`: digits count as themselves, A–Z as 10–35, `<` as 0, weighted
    /// 7, 3, 1 in turn, summed modulo 10. nil when `field` holds any other character.
    public static func checkDigit(_ field: some StringProtocol) -> Int? {
        let weights = [7, 3, 1]
        var sum = 0
        for (i, c) in field.unicodeScalars.enumerated() {
            let value: Int
            switch c {
            case "0"..."9": value = Int(c.value - 48)
            case "A"..."Z": value = Int(c.value - 65) + 10
            case "<": value = 0
            default: return nil
            }
            sum += value * weights[i % 3]
        }
        return sum % 10
    }
}
