// The specimen's drawn face: the portrait, its JPEG, the ISO/IEC 19794-5 record, and DG2 and
// the placeholder DG3 and DG4.

/// The specimen's face: a drawn portrait (no photograph of anyone), encoded as baseline JPEG,
/// in an ISO/IEC 19794-5:2005 facial record, in DG2's biometric templates (ICAO 9303 Part 10
/// §4.7.2).
enum SpecimenFace {
    /// A 240×320 portrait: background, shoulders, head, hair, eyes and mouth, with noise from
    /// `stream` so the JPEG has a photograph's texture and size.
    static func portrait(_ stream: SeededStream, width: Int = 240, height: Int = 320) -> BaselineJPEG.Image {
        var rgb = [UInt8](repeating: 0, count: width * height * 3)
        let noise = stream.next(width * height)
        func inEllipse(_ x: Int, _ y: Int, _ cx: Double, _ cy: Double, _ rx: Double, _ ry: Double) -> Bool {
            let dx = (Double(x) - cx) / rx, dy = (Double(y) - cy) / ry
            return dx * dx + dy * dy <= 1
        }
        let w = Double(width), h = Double(height)
        for y in 0..<height {
            for x in 0..<width {
                // Background: a pale blue-grey gradient, as ICAO photograph guidance asks.
                var c = (r: 200.0 - Double(y) * 0.08, g: 210.0 - Double(y) * 0.06, b: 225.0 - Double(y) * 0.04)
                if inEllipse(x, y, w * 0.5, h * 1.02, w * 0.48, h * 0.26) { c = (45, 55, 80) }           // jacket
                if inEllipse(x, y, w * 0.5, h * 0.70, w * 0.12, h * 0.16) { c = (214, 170, 140) }        // neck
                if inEllipse(x, y, w * 0.5, h * 0.40, w * 0.30, h * 0.29) { c = (92, 60, 38) }           // hair
                if inEllipse(x, y, w * 0.5, h * 0.46, w * 0.25, h * 0.26) && Double(y) > h * 0.27 { c = (226, 184, 152) } // face
                for ex in [0.40, 0.60] where inEllipse(x, y, w * ex, h * 0.43, w * 0.045, h * 0.018) { c = (245, 245, 240) }
                for ex in [0.40, 0.60] where inEllipse(x, y, w * ex, h * 0.43, w * 0.018, h * 0.016) { c = (60, 80, 110) }
                if inEllipse(x, y, w * 0.5, h * 0.52, w * 0.025, h * 0.05) { c.r -= 18; c.g -= 18; c.b -= 14 }       // nose
                if inEllipse(x, y, w * 0.5, h * 0.60, w * 0.08, h * 0.018) { c = (170, 80, 85) }          // mouth
                let n = Double(Int(noise[y * width + x]) - 128) / 10
                let i = (y * width + x) * 3
                rgb[i] = UInt8(max(0, min(255, c.r + n)))
                rgb[i + 1] = UInt8(max(0, min(255, c.g + n)))
                rgb[i + 2] = UInt8(max(0, min(255, c.b + n)))
            }
        }
        return BaselineJPEG.Image(width: width, height: height, rgb: rgb)
    }

    /// The JPEG whose size comes nearest `target` bytes among a few qualities.
    static func jpeg(_ stream: SeededStream, target: Int) -> (bytes: [UInt8], width: Int, height: Int) {
        let image = portrait(stream)
        var best: [UInt8] = []
        for quality in [95, 90, 85, 80, 75, 70, 60, 50, 40, 30] {
            let bytes = BaselineJPEG.encode(image, quality: quality)
            if best.isEmpty || abs(bytes.count - target) < abs(best.count - target) { best = bytes }
            if bytes.count <= target { break }
        }
        return (best, image.width, image.height)
    }

    /// An ISO/IEC 19794-5:2005 facial record with one JPEG full-frontal image and no feature
    /// points (§5.4–5.7): record header, facial information, image information, image data.
    static func facialRecord(jpeg: [UInt8], width: Int, height: Int, female: Bool) -> [UInt8] {
        func u16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        func u32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        let imageInformation: [UInt8] = [0x01, 0x00] + u16(width) + u16(height) + [0x01, 0x02] + u16(0) + u16(0)
        let facialBlockLength = 20 + imageInformation.count + jpeg.count
        // Facial information: length, 0 feature points, gender (1 male, 2 female), eye and hair
        // colour unspecified, no properties, neutral expression, pose and uncertainty unspecified.
        let facialInformation = u32(facialBlockLength) + u16(0) + [female ? 0x02 : 0x01, 0x00, 0x00] + [0, 0, 0] + u16(1) + [0, 0, 0] + [0, 0, 0]
        let header: [UInt8] = Array("FAC".utf8) + [0x00] + Array("010".utf8) + [0x00] + u32(14 + facialBlockLength) + u16(1)
        return header + facialInformation + imageInformation + jpeg
    }

    /// DG2 (tag 75): the biometric information group template 7F61 with one instance 7F60, its
    /// biometric header template A1 (ICAO header version 0101, type facial features, format
    /// owner ISO/IEC JTC 1/SC 37, format type 0008) and the record in 5F2E (Part 10 §4.7.2.1).
    static func dataGroup2(record: [UInt8]) -> [UInt8] {
        let header = DER.element(0x80, [0x01, 0x01]) + DER.element(0x81, [0x02]) + DER.element(0x82, [0x00])
            + DER.element(0x87, [0x01, 0x01]) + DER.element(0x88, [0x00, 0x08])
        let instance = DER.element([0x7F, 0x60], DER.element(0xA1, header) + DER.element([0x5F, 0x2E], record))
        return DER.element(0x75, DER.element([0x7F, 0x61], DER.element(0x02, [0x01]) + instance))
    }

    /// DG3 or DG4 (tags 63 and 76): one template with a short placeholder record (finger
    /// "FIR", iris "IIR"), enough to be hashed and refused; no reader gets past EAC here.
    static func placeholderDataGroup(_ number: Int) -> [UInt8] {
        let finger = number == 3
        let header = DER.element(0x80, [0x01, 0x01]) + DER.element(0x81, [finger ? 0x08 : 0x10])
            + DER.element(0x87, [0x01, 0x01]) + DER.element(0x88, [0x00, finger ? 0x07 : 0x09])
        let record = Array((finger ? "FIR" : "IIR").utf8) + [0x00] + Array("010".utf8) + [0x00] + [UInt8](repeating: 0, count: 24)
        let instance = DER.element([0x7F, 0x60], DER.element(0xA1, header) + DER.element([0x5F, 0x2E], record))
        return DER.element(finger ? 0x63 : 0x76, DER.element([0x7F, 0x61], DER.element(0x02, [0x01]) + instance))
    }
}
