// A baseline JPEG encoder (ITU-T T.81), enough for the specimen's face.

/// A baseline JPEG encoder (ITU-T T.81: sequential DCT, Huffman, 8-bit), enough for the
/// specimen's face: three components at full resolution (4:4:4), the quantization tables of
/// Annex K.1–K.2 scaled by quality as the IJG does, and the Huffman tables of Annex K.3.
enum BaselineJPEG {
    /// An RGB image, row by row, 3 bytes a pixel.
    struct Image {
        var width: Int
        var height: Int
        var rgb: [UInt8]
    }

    static func encode(_ image: Image, quality: Int) -> [UInt8] {
        let q = max(1, min(100, quality))
        let scale = q < 50 ? 5000 / q : 200 - 2 * q
        func scaled(_ table: [Int]) -> [Int] { table.map { max(1, min(255, ($0 * scale + 50) / 100)) } }
        let luma = scaled(lumaQuantization), chroma = scaled(chromaQuantization)

        var out: [UInt8] = [0xFF, 0xD8]
        // APP0 JFIF 1.01, no thumbnail.
        out += [0xFF, 0xE0, 0x00, 0x10, 0x4A, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00]
        // DQT: both tables, in zigzag order.
        out += [0xFF, 0xDB, 0x00, 0x84, 0x00] + zigzag.map { UInt8(luma[$0]) } + [0x01] + zigzag.map { UInt8(chroma[$0]) }
        // SOF0: 8 bits, height, width, Y Cb Cr at 1×1 sampling.
        out += [0xFF, 0xC0, 0x00, 0x11, 0x08, UInt8(image.height >> 8), UInt8(image.height & 0xFF), UInt8(image.width >> 8), UInt8(image.width & 0xFF),
                0x03, 0x01, 0x11, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11, 0x01]
        // DHT: the four tables of Annex K.3.
        for (cls, bits, values) in [(0x00, dcLumaBits, dcValues), (0x10, acLumaBits, acLumaValues), (0x01, dcChromaBits, dcValues), (0x11, acChromaBits, acChromaValues)] {
            let length = 2 + 1 + 16 + values.count
            out += [0xFF, 0xC4, UInt8(length >> 8), UInt8(length & 0xFF), UInt8(cls)] + bits + values
        }
        // SOS: the three components, DC/AC tables 0 for Y and 1 for chroma.
        out += [0xFF, 0xDA, 0x00, 0x0C, 0x03, 0x01, 0x00, 0x02, 0x11, 0x03, 0x11, 0x00, 0x3F, 0x00]

        let tables = [HuffmanTable(bits: dcLumaBits, values: dcValues), HuffmanTable(bits: acLumaBits, values: acLumaValues),
                      HuffmanTable(bits: dcChromaBits, values: dcValues), HuffmanTable(bits: acChromaBits, values: acChromaValues)]
        var writer = BitWriter()
        var previousDC = [0, 0, 0]
        let blocksWide = (image.width + 7) / 8, blocksHigh = (image.height + 7) / 8
        var block = [Double](repeating: 0, count: 64)
        for by in 0..<blocksHigh {
            for bx in 0..<blocksWide {
                for component in 0..<3 {
                    for y in 0..<8 {
                        for x in 0..<8 {
                            let px = min(bx * 8 + x, image.width - 1), py = min(by * 8 + y, image.height - 1)
                            let i = (py * image.width + px) * 3
                            let r = Double(image.rgb[i]), g = Double(image.rgb[i + 1]), b = Double(image.rgb[i + 2])
                            // JFIF's YCbCr (full range), centred on zero.
                            let v: Double
                            switch component {
                            case 0: v = 0.299 * r + 0.587 * g + 0.114 * b - 128
                            case 1: v = -0.168736 * r - 0.331264 * g + 0.5 * b
                            default: v = 0.5 * r - 0.418688 * g - 0.081312 * b
                            }
                            block[y * 8 + x] = v
                        }
                    }
                    let coefficients = forwardDCT(block)
                    let quant = component == 0 ? luma : chroma
                    let quantized = (0..<64).map { Int((coefficients[zigzag[$0]] / Double(quant[zigzag[$0]])).rounded()) }
                    let dc = tables[component == 0 ? 0 : 2], ac = tables[component == 0 ? 1 : 3]
                    let diff = quantized[0] - previousDC[component]
                    previousDC[component] = quantized[0]
                    let dcSize = magnitudeSize(diff)
                    writer.write(dc.codes[dcSize], dc.lengths[dcSize])
                    if dcSize > 0 { writer.write(magnitudeBits(diff, dcSize), dcSize) }
                    var zeros = 0
                    for k in 1..<64 {
                        let v = quantized[k]
                        if v == 0 { zeros += 1; continue }
                        while zeros >= 16 {
                            writer.write(ac.codes[0xF0], ac.lengths[0xF0])
                            zeros -= 16
                        }
                        let size = magnitudeSize(v)
                        let symbol = zeros << 4 | size
                        writer.write(ac.codes[symbol], ac.lengths[symbol])
                        writer.write(magnitudeBits(v, size), size)
                        zeros = 0
                    }
                    if zeros > 0 { writer.write(ac.codes[0x00], ac.lengths[0x00]) }
                }
            }
        }
        writer.flush()
        out += writer.bytes
        out += [0xFF, 0xD9]
        return out
    }

    // MARK: The transform

    private static let cosines: [Double] = (0..<64).map { i in
        let (u, x) = (i / 8, i % 8)
        let c = u == 0 ? (1.0 / 2.0.squareRoot()) : 1.0
        return c * cos(Double(2 * x + 1) * Double(u) * Double.pi / 16) / 2
    }

    /// The 8×8 DCT-II of T.81 §A.3.3, separable: rows, then columns.
    private static func forwardDCT(_ input: [Double]) -> [Double] {
        var rows = [Double](repeating: 0, count: 64)
        for y in 0..<8 {
            for u in 0..<8 {
                var s = 0.0
                for x in 0..<8 { s += cosines[u * 8 + x] * input[y * 8 + x] }
                rows[y * 8 + u] = s
            }
        }
        var out = [Double](repeating: 0, count: 64)
        for u in 0..<8 {
            for v in 0..<8 {
                var s = 0.0
                for y in 0..<8 { s += cosines[v * 8 + y] * rows[y * 8 + u] }
                out[v * 8 + u] = s
            }
        }
        return out
    }

    private static func cos(_ x: Double) -> Double {
        // A Taylor series after reduction to [−π, π]: no Foundation in library modules.
        var t = x.truncatingRemainder(dividingBy: 2 * Double.pi)
        if t > Double.pi { t -= 2 * Double.pi }
        if t < -Double.pi { t += 2 * Double.pi }
        var term = 1.0, sum = 1.0
        for n in 1..<20 {
            term *= -t * t / Double((2 * n - 1) * (2 * n))
            sum += term
        }
        return sum
    }

    private static func magnitudeSize(_ v: Int) -> Int {
        var m = abs(v), n = 0
        while m > 0 { m >>= 1; n += 1 }
        return n
    }

    /// T.81 §F.1.2.1: negative values as the one's complement of their magnitude.
    private static func magnitudeBits(_ v: Int, _ size: Int) -> Int { v >= 0 ? v : v + (1 << size) - 1 }

    // MARK: Entropy coding

    struct HuffmanTable {
        var codes = [Int](repeating: 0, count: 256)
        var lengths = [Int](repeating: 0, count: 256)

        /// Codes from the BITS and HUFFVAL lists (T.81 Annex C).
        init(bits: [UInt8], values: [UInt8]) {
            var code = 0, k = 0
            for length in 1...16 {
                for _ in 0..<Int(bits[length - 1]) {
                    let symbol = Int(values[k])
                    codes[symbol] = code
                    lengths[symbol] = length
                    code += 1
                    k += 1
                }
                code <<= 1
            }
        }
    }

    struct BitWriter {
        var bytes: [UInt8] = []
        private var buffer = 0, count = 0

        mutating func write(_ value: Int, _ length: Int) {
            guard length > 0 else { return }
            buffer = buffer << length | (value & ((1 << length) - 1))
            count += length
            while count >= 8 {
                let byte = UInt8(buffer >> (count - 8) & 0xFF)
                bytes.append(byte)
                // A data FF is followed by a stuffed 00 (T.81 §F.1.2.3).
                if byte == 0xFF { bytes.append(0x00) }
                count -= 8
                buffer &= (1 << count) - 1
            }
        }

        /// Pads the last byte with 1 bits.
        mutating func flush() {
            if count > 0 { write((1 << (8 - count)) - 1, 8 - count) }
        }
    }

    // MARK: Tables of T.81 Annex K

    static let zigzag: [Int] = [
        0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28,
        35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
    ]

    static let lumaQuantization: [Int] = [
        16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40, 57, 69, 56, 14, 17, 22, 29, 51, 87, 80, 62,
        18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92, 49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99,
    ]

    static let chromaQuantization: [Int] = [
        17, 18, 24, 47, 99, 99, 99, 99, 18, 21, 26, 66, 99, 99, 99, 99, 24, 26, 56, 99, 99, 99, 99, 99, 47, 66, 99, 99, 99, 99, 99, 99,
    ] + [Int](repeating: 99, count: 32)

    static let dcLumaBits: [UInt8] = [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0]
    static let dcChromaBits: [UInt8] = [0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0]
    static let dcValues: [UInt8] = Array(0...11)

    static let acLumaBits: [UInt8] = [0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7D]
    static let acLumaValues: [UInt8] = [
        0x01, 0x02, 0x03, 0x00, 0x04, 0x11, 0x05, 0x12, 0x21, 0x31, 0x41, 0x06, 0x13, 0x51, 0x61, 0x07,
        0x22, 0x71, 0x14, 0x32, 0x81, 0x91, 0xA1, 0x08, 0x23, 0x42, 0xB1, 0xC1, 0x15, 0x52, 0xD1, 0xF0,
        0x24, 0x33, 0x62, 0x72, 0x82, 0x09, 0x0A, 0x16, 0x17, 0x18, 0x19, 0x1A, 0x25, 0x26, 0x27, 0x28,
        0x29, 0x2A, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3A, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49,
        0x4A, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5A, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69,
        0x6A, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7A, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89,
        0x8A, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9A, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6, 0xA7,
        0xA8, 0xA9, 0xAA, 0xB2, 0xB3, 0xB4, 0xB5, 0xB6, 0xB7, 0xB8, 0xB9, 0xBA, 0xC2, 0xC3, 0xC4, 0xC5,
        0xC6, 0xC7, 0xC8, 0xC9, 0xCA, 0xD2, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7, 0xD8, 0xD9, 0xDA, 0xE1, 0xE2,
        0xE3, 0xE4, 0xE5, 0xE6, 0xE7, 0xE8, 0xE9, 0xEA, 0xF1, 0xF2, 0xF3, 0xF4, 0xF5, 0xF6, 0xF7, 0xF8,
        0xF9, 0xFA,
    ]

    static let acChromaBits: [UInt8] = [0, 2, 1, 2, 4, 4, 3, 4, 7, 5, 4, 4, 0, 1, 2, 0x77]
    static let acChromaValues: [UInt8] = [
        0x00, 0x01, 0x02, 0x03, 0x11, 0x04, 0x05, 0x21, 0x31, 0x06, 0x12, 0x41, 0x51, 0x07, 0x61, 0x71,
        0x13, 0x22, 0x32, 0x81, 0x08, 0x14, 0x42, 0x91, 0xA1, 0xB1, 0xC1, 0x09, 0x23, 0x33, 0x52, 0xF0,
        0x15, 0x62, 0x72, 0xD1, 0x0A, 0x16, 0x24, 0x34, 0xE1, 0x25, 0xF1, 0x17, 0x18, 0x19, 0x1A, 0x26,
        0x27, 0x28, 0x29, 0x2A, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3A, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48,
        0x49, 0x4A, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5A, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68,
        0x69, 0x6A, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7A, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87,
        0x88, 0x89, 0x8A, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9A, 0xA2, 0xA3, 0xA4, 0xA5,
        0xA6, 0xA7, 0xA8, 0xA9, 0xAA, 0xB2, 0xB3, 0xB4, 0xB5, 0xB6, 0xB7, 0xB8, 0xB9, 0xBA, 0xC2, 0xC3,
        0xC4, 0xC5, 0xC6, 0xC7, 0xC8, 0xC9, 0xCA, 0xD2, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7, 0xD8, 0xD9, 0xDA,
        0xE2, 0xE3, 0xE4, 0xE5, 0xE6, 0xE7, 0xE8, 0xE9, 0xEA, 0xF2, 0xF3, 0xF4, 0xF5, 0xF6, 0xF7, 0xF8,
        0xF9, 0xFA,
    ]
}
