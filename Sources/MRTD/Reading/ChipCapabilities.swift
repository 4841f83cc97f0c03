// Whether the chip itself takes extended-length APDUs: its historical bytes' card capabilities
// (ISO/IEC 7816-4 §8.1.1.2.7) or EF.ATR/INFO's extended length information (§8.4, DO 7F66).
import ISO7816

/// What the chip says about extended length.
public enum ChipCapabilities {
    /// Third byte of the card capabilities (compact-TLV tag 7x in the historical bytes, or DO 47
    /// in EF.ATR/INFO), bit b7: "extended Lc and Le fields". nil when the bytes do not say.
    public static func extendedLength(historicalBytes: [UInt8]) -> Bool? {
        // Category indicator 80: compact-TLV objects follow (ISO 7816-4 §8.1.1.1).
        guard historicalBytes.first == 0x80 else { return nil }
        var i = 1
        while i < historicalBytes.count {
            let tag = historicalBytes[i] >> 4, length = Int(historicalBytes[i] & 0x0F)
            guard historicalBytes.count - i - 1 >= length else { return nil }
            if tag == 0x7, length >= 3 { return historicalBytes[i + 3] & 0x40 != 0 }
            i += 1 + length
        }
        return nil
    }

    /// EF.ATR/INFO: DO 7F66 (extended length information) says yes, with the largest command
    /// and answer it takes; DO 47 (card capabilities) says yes or no.
    public static func extendedLength(atrInfo: [UInt8]) -> (supported: Bool, maximumCommand: Int?, maximumResponse: Int?)? {
        guard let objects = try? BERTLV.decode(atrInfo) else { return nil }
        for object in objects where object.tag == [0x7F, 0x66] {
            let sizes = (object.children ?? []).filter { $0.tag == [0x02] }.map { $0.value.reduce(0) { $0 << 8 | Int($1) } }
            return (true, sizes.first, sizes.count > 1 ? sizes[1] : nil)
        }
        for object in objects where object.tag == [0x47] && object.value.count >= 3 {
            return (object.value[2] & 0x40 != 0, nil, nil)
        }
        return nil
    }
}
