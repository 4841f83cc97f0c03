// DG5 (displayed portrait) and DG7 (displayed signature or usual mark), ICAO 9303 Part 10
// §4.7.5 and §4.7.7: a count (`02`) and the images, each a whole JPEG or JPEG 2000 file.

/// The displayed images of DG5 (portraits, `5F40`) or DG7 (signatures, `5F43`).
public struct DisplayedImages: Sendable, Hashable {
    /// 5 or 7.
    public var dataGroup: Int
    /// The images in the order stored.
    public var images: [DocumentImage]

    /// Displayed images of DG`dataGroup` (for tests and emulators).
    public init(dataGroup: Int, images: [DocumentImage]) {
        self.dataGroup = dataGroup
        self.images = images
    }

    /// Decodes DG5 (template `65`) or DG7 (template `67`).
    public init(decoding bytes: [UInt8], dataGroup: Int) throws(LDSError) {
        let file = "DG\(dataGroup)"
        let (template, imageTag): (UInt32, UInt32)
        switch dataGroup {
        case 5: (template, imageTag) = (0x65, 0x5F40)
        case 7: (template, imageTag) = (0x67, 0x5F43)
        default: throw LDSError(.unsupported, file: file, "only DG5 and DG7 hold displayed images")
        }
        let elements = try LDSTemplate.open(bytes, tag: template, file: file)
        let images = elements.filter { $0.tagNumber == imageTag }.map { DocumentImage(bytes: $0.value) }
        guard !images.isEmpty else {
            throw LDSError(.structure, file: file, "no displayed image (\(LDSTemplate.hex(imageTag))) in the file")
        }
        self.init(dataGroup: dataGroup, images: images)
    }
}
