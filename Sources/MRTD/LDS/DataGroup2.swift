// DG2 (ICAO 9303 Part 10 §4.7.2): the encoded face. A biometric information group template
// (`7F61`) holds one template (`7F60`) per face: a biometric header template (`A1`) and the
// biometric data block, either an ISO/IEC 19794-5 record (`5F2E`) or, since LDS 1.8, an
// ISO/IEC 39794-5 structure in ASN.1 (`7F2E`).
import ISO7816

/// The faces of DG2, each with its image exactly as the chip serves it.
public struct DataGroup2: Sendable, Hashable {
    /// Every face of every biometric template, in order (most documents hold one).
    public var faces: [FaceImage]

    /// A DG2 holding `faces` (for tests and emulators).
    public init(faces: [FaceImage]) {
        self.faces = faces
    }

    /// Decodes DG2 (template `75`).
    public init(decoding bytes: [UInt8]) throws(LDSError) {
        self.faces = try BiometricTemplates.decode(bytes, tag: 0x75, file: "DG2")
    }

    /// For libFuzzer: decodes and ignores the result.
    public static func fuzz(_ data: [UInt8]) {
        _ = try? DataGroup2(decoding: data)
    }
}

/// The header of one biometric template (ISO/IEC 7816-11 biometric header template, `A1`, as
/// Part 10 §4.7.2.1 uses it). Values as stored; absent elements are nil.
public struct BiometricHeader: Sendable, Hashable {
    /// `80`: the ICAO header version (`0101`).
    public var version: [UInt8]?
    /// `81`: the biometric type (2 = facial features, 8 = fingerprint, 16 = iris).
    public var biometricType: Int?
    /// `82`: the biometric subtype.
    public var biometricSubtype: Int?
    /// `83`: creation date and time, 7 BCD bytes YYYYMMDDhhmmss, as digits.
    public var creationDateTime: String?
    /// `87`: the format owner (0x0101: ISO/IEC JTC 1/SC 37).
    public var formatOwner: Int?
    /// `88`: the format type (0x0008: face image per ISO/IEC 19794-5).
    public var formatType: Int?

    /// A header with the given elements; nil ones are absent.
    public init(version: [UInt8]? = nil, biometricType: Int? = nil, biometricSubtype: Int? = nil, creationDateTime: String? = nil, formatOwner: Int? = nil, formatType: Int? = nil) {
        self.version = version
        self.biometricType = biometricType
        self.biometricSubtype = biometricSubtype
        self.creationDateTime = creationDateTime
        self.formatOwner = formatOwner
        self.formatType = formatType
    }
}

/// One face from DG2. The image is given exactly as served, with the format detected from its
/// bytes (a record may label a JPEG as JPEG 2000 or the other way round; ``declaredFormat``
/// keeps what it says).
public struct FaceImage: Sendable, Hashable {
    /// Which biometric data format held the face.
    public enum Encoding: String, Sendable, Hashable {
        /// ISO/IEC 19794-5:2005 facial record (`FAC\0`, version `010`), in `5F2E`.
        case iso19794_5 = "ISO/IEC 19794-5"
        /// ISO/IEC 39794-5 face image data block (ASN.1, ICAO's application profile), in `7F2E`.
        case iso39794_5 = "ISO/IEC 39794-5"
    }

    /// The biometric format the face came in.
    public var encoding: Encoding
    /// The image file as served; write it under `image.format.fileExtension`.
    public var image: DocumentImage
    /// What the record declares the image to be (`JPEG`, `JPEG 2000`, `JPEG 2000 lossless`),
    /// nil when it does not say.
    public var declaredFormat: String?
    /// Width in pixels, as the record states it.
    public var width: Int?
    /// Height in pixels, as the record states it.
    public var height: Int?
    /// As the record codes it: `male`, `female`, `unspecified`, `unknown`, `other`.
    public var gender: String?
    /// As the record codes it: `blue`, `brown`, `unspecified` …
    public var eyeColour: String?
    /// As the record codes it: `black`, `blonde`, `unspecified` …
    public var hairColour: String?
    /// ISO/IEC 19794-5 only: `neutral`, `smile` …
    public var expression: String?
    /// ISO/IEC 19794-5 only: `basic`, `full frontal`, `token frontal`.
    public var imageType: String?
    /// The template's header.
    public var header: BiometricHeader

    /// A face with the given fields (for tests and emulators).
    public init(encoding: Encoding, image: DocumentImage, declaredFormat: String? = nil, width: Int? = nil, height: Int? = nil,
                gender: String? = nil, eyeColour: String? = nil, hairColour: String? = nil, expression: String? = nil,
                imageType: String? = nil, header: BiometricHeader = BiometricHeader()) {
        self.encoding = encoding
        self.image = image
        self.declaredFormat = declaredFormat
        self.width = width
        self.height = height
        self.gender = gender
        self.eyeColour = eyeColour
        self.hairColour = hairColour
        self.expression = expression
        self.imageType = imageType
        self.header = header
    }
}

/// The biometric information group template shared by DG2 (and, in form, DG3/DG4).
enum BiometricTemplates {
    static func decode(_ bytes: [UInt8], tag: UInt32, file: String) throws(LDSError) -> [FaceImage] {
        let elements = try LDSTemplate.open(bytes, tag: tag, file: file)
        guard let group = elements.first(where: { $0.tagNumber == 0x7F61 }) else {
            throw LDSError(.structure, file: file, "the biometric information group template (7F61) is missing")
        }
        var faces: [FaceImage] = []
        for template in try LDSTemplate.elements(of: group, file: file) where template.tagNumber == 0x7F60 {
            let parts = try LDSTemplate.elements(of: template, file: file)
            let header = try parts.first(where: { $0.tagNumber == 0xA1 }).map { object throws(LDSError) in
                try biometricHeader(LDSTemplate.elements(of: object, file: file))
            } ?? BiometricHeader()
            if let record = parts.first(where: { $0.tagNumber == 0x5F2E }) {
                faces += try FaceRecord19794.decode(record.value, header: header, file: file)
            } else if let block = parts.first(where: { $0.tagNumber == 0x7F2E }) {
                faces += try FaceRecord39794.decode(block.value, header: header, file: file)
            } else {
                throw LDSError(.structure, file: file, "a biometric template has no data block (5F2E or 7F2E)")
            }
        }
        guard !faces.isEmpty else { throw LDSError(.structure, file: file, "no biometric template (7F60) holds a face") }
        return faces
    }

    static func biometricHeader(_ elements: [TLV]) -> BiometricHeader {
        var header = BiometricHeader()
        for element in elements {
            switch element.tagNumber {
            case 0x80: header.version = element.value
            case 0x81: header.biometricType = LDSTemplate.integer(element.value)
            case 0x82: header.biometricSubtype = LDSTemplate.integer(element.value)
            case 0x83: header.creationDateTime = bcdDigits(element.value)
            case 0x87: header.formatOwner = LDSTemplate.integer(element.value)
            case 0x88: header.formatType = LDSTemplate.integer(element.value)
            default: break
            }
        }
        return header
    }

    /// BCD bytes as their digits; the hex when a nibble is not a digit.
    static func bcdDigits(_ bytes: [UInt8]) -> String {
        guard bytes.allSatisfy({ $0 >> 4 <= 9 && $0 & 0x0F <= 9 }) else { return bytes.hexString }
        return bytes.map { "\($0 >> 4)\($0 & 0x0F)" }.joined()
    }
}

/// An ISO/IEC 19794-5:2005 facial record: a 14-byte header (`FAC\0`, `010\0`, record length,
/// image count), then per image a 20-byte facial information block, 8 bytes per feature point,
/// 12 bytes of image information and the image (ISO/IEC 19794-5:2005 §5.4–§5.8).
enum FaceRecord19794 {
    struct Cursor {
        let bytes: [UInt8]
        var at: Int
        let file: String

        mutating func read(_ count: Int) throws(LDSError) -> ArraySlice<UInt8> {
            guard count >= 0, bytes.count - at >= count else {
                throw LDSError(.structure, file: file, "the ISO/IEC 19794-5 record ends at byte \(bytes.count), \(count) more bytes were due at \(at)")
            }
            defer { at += count }
            return bytes[at..<(at + count)]
        }

        mutating func integer(_ count: Int) throws(LDSError) -> Int {
            try read(count).reduce(0) { $0 << 8 | Int($1) }
        }
    }

    static func decode(_ record: [UInt8], header: BiometricHeader, file: String) throws(LDSError) -> [FaceImage] {
        var cursor = Cursor(bytes: record, at: 0, file: file)
        guard Array(try cursor.read(4)) == [0x46, 0x41, 0x43, 0x00] else {
            throw LDSError(.structure, file: file, "the biometric data block is not an ISO/IEC 19794-5 facial record (no FAC header)")
        }
        let version = Array(try cursor.read(4))
        guard version == [0x30, 0x31, 0x30, 0x00] else {
            // Later editions (030: ISO/IEC 19794-5:2011) lay the record out differently; the
            // image is still found by its magic bytes.
            guard let offset = ImageFormat.firstImageOffset(in: record) else {
                throw LDSError(.unsupported, file: file, "ISO/IEC 19794-5 record version \(LDSTemplate.text(Array(version.prefix(3)))) holds no image this library can find")
            }
            return [FaceImage(encoding: .iso19794_5, image: DocumentImage(bytes: Array(record[offset...])), header: header)]
        }
        _ = try cursor.integer(4)  // record length: the TLV length already bounds the record
        let count = try cursor.integer(2)
        var faces: [FaceImage] = []
        for _ in 0..<count {
            let start = cursor.at
            let blockLength = try cursor.integer(4)
            guard blockLength >= 4 + 16 + 12, record.count - start >= blockLength else {
                throw LDSError(.structure, file: file, "a facial record block claims \(blockLength) bytes, \(record.count - start) remain")
            }
            let featurePoints = try cursor.integer(2)
            let gender = try cursor.integer(1)
            let eye = try cursor.integer(1)
            let hair = try cursor.integer(1)
            _ = try cursor.read(3)  // feature mask
            let expression = try cursor.integer(2)
            _ = try cursor.read(6)  // pose angles and their uncertainty
            _ = try cursor.read(featurePoints * 8)
            let imageType = try cursor.integer(1)
            let dataType = try cursor.integer(1)
            let width = try cursor.integer(2)
            let height = try cursor.integer(2)
            _ = try cursor.read(6)  // colour space, source type, device type, quality
            let end = start + blockLength
            guard end >= cursor.at else {
                throw LDSError(.structure, file: file, "a facial record block of \(blockLength) bytes is shorter than its own header")
            }
            let image = Array(try cursor.read(end - cursor.at))
            faces.append(FaceImage(
                encoding: .iso19794_5, image: DocumentImage(bytes: image),
                declaredFormat: dataType == 0 ? "JPEG" : dataType == 1 ? "JPEG 2000" : "image data type \(dataType)",
                width: width, height: height,
                gender: name(gender, ["unspecified", "male", "female"]),
                eyeColour: name(eye, ["unspecified", "black", "blue", "brown", "grey", "green", "multi-coloured", "pink"]),
                hairColour: name(hair, ["unspecified", "bald", "black", "blonde", "brown", "grey", "white", "red", "green", "blue"]),
                expression: name(expression, ["unspecified", "neutral", "smile (closed jaw)", "smile (open jaw)", "raised eyebrows", "eyes looking away", "squinting", "frowning"]),
                imageType: name(imageType, ["basic", "full frontal", "token frontal"]),
                header: header))
        }
        return faces
    }

    /// The name of a code, `unknown` for 0xFF (and 0xFFFF), the number otherwise.
    static func name(_ code: Int, _ names: [String]) -> String {
        if code == 0xFF || code == 0xFFFF { return "unknown" }
        return code < names.count ? names[code] : "code \(code)"
    }
}

/// An ISO/IEC 39794-5 face image data block (ICAO's application profile, ASN.1 with implicit
/// context tags): `[APPLICATION 5] { versionBlock [0], representationBlocks [1] SEQUENCE OF
/// { representationId [0], imageRepresentation [1] { base [0] { 2D [0] { data [0],
/// information [1] { format [0], … size [7] } } } }, …, identityMetadata [8] } }`. DG2 wraps it
/// in a context tag inside `7F2E`.
enum FaceRecord39794 {
    static func decode(_ block: [UInt8], header: BiometricHeader, file: String) throws(LDSError) -> [FaceImage] {
        let top: [TLV]
        do {
            top = try BERTLV.decode(block)
        } catch {
            throw LDSError(.tlv, file: file, "in the ISO/IEC 39794-5 block: \(error.description)")
        }
        // The face image data block, [APPLICATION 5] = 65, directly or in one wrapper.
        var dataBlock = top.first { $0.tagNumber == 0x65 }
        if dataBlock == nil {
            for wrapper in top where wrapper.isConstructed {
                if let inner = try LDSTemplate.elements(of: wrapper, file: file).first(where: { $0.tagNumber == 0x65 }) {
                    dataBlock = inner
                    break
                }
            }
        }
        guard let dataBlock else {
            throw LDSError(.structure, file: file, "the ISO/IEC 39794-5 block holds no face image data block ([APPLICATION 5])")
        }
        guard let representations = try child(dataBlock, 0xA1, file) else {
            throw LDSError(.structure, file: file, "the ISO/IEC 39794-5 face image data block has no representation blocks")
        }
        var faces: [FaceImage] = []
        for representation in try LDSTemplate.elements(of: representations, file: file) where representation.tagNumber == 0x30 {
            guard let imageRepresentation = try child(representation, 0xA1, file),
                  let base = try child(imageRepresentation, 0xA0, file),
                  let twoD = try child(base, 0xA0, file),
                  let data = try child(twoD, 0x80, file) else {
                throw LDSError(.structure, file: file, "an ISO/IEC 39794-5 representation holds no 2D image")
            }
            var face = FaceImage(encoding: .iso39794_5, image: DocumentImage(bytes: data.value), header: header)
            if let information = try child(twoD, 0xA1, file) {
                if let format = try child(information, 0xA0, file), let code = try code(format, file) {
                    face.declaredFormat = name(code, [0: "unknown", 1: "other", 2: "JPEG", 3: "JPEG 2000", 4: "JPEG 2000 lossless", 5: "PNG"])
                }
                if let size = try child(information, 0xA7, file) {
                    face.width = try child(size, 0x80, file).flatMap { integer($0.value) }
                    face.height = try child(size, 0x81, file).flatMap { integer($0.value) }
                }
            }
            if let identity = try child(representation, 0xA8, file) {
                if let gender = try child(identity, 0xA0, file), let code = try code(gender, file) {
                    face.gender = name(code, [0: "unknown", 1: "other", 2: "male", 3: "female"])
                }
                if let eye = try child(identity, 0xA1, file), let code = try code(eye, file) {
                    face.eyeColour = name(code, [0: "unknown", 1: "other", 2: "black", 3: "blue", 4: "brown", 5: "grey", 6: "green", 7: "hazel", 8: "multi-coloured", 9: "pink"])
                }
                if let hair = try child(identity, 0xA2, file), let code = try code(hair, file) {
                    face.hairColour = name(code, [0: "unknown", 1: "other", 2: "bald", 3: "black", 4: "blonde", 5: "brown", 6: "grey", 7: "white", 8: "red", 9: "known coloured"])
                }
            }
            faces.append(face)
        }
        return faces
    }

    static func child(_ object: TLV, _ tag: UInt32, _ file: String) throws(LDSError) -> TLV? {
        guard object.isConstructed else { return nil }
        return try LDSTemplate.elements(of: object, file: file).first { $0.tagNumber == tag }
    }

    /// A coded value: `code [0]` directly, or the fallback `[0]` of an `extensionBlock [1]`.
    static func code(_ choice: TLV, _ file: String) throws(LDSError) -> Int? {
        if let direct = try child(choice, 0x80, file) { return integer(direct.value) }
        if let extensionBlock = try child(choice, 0xA1, file), let fallback = try child(extensionBlock, 0x80, file) {
            return integer(fallback.value)
        }
        return nil
    }

    /// A DER INTEGER or ENUMERATED's content (two's complement, big-endian), up to 8 bytes.
    static func integer(_ value: [UInt8]) -> Int? {
        guard let first = value.first, value.count <= 8 else { return nil }
        var result = first & 0x80 != 0 ? -1 : 0
        for b in value { result = result << 8 | Int(b) }
        return result
    }

    static func name(_ code: Int, _ names: [Int: String]) -> String { names[code] ?? "code \(code)" }
}
