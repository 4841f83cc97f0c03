// What an image from a data group is, told by its first bytes rather than by the header that
// announces it: issuers label JPEG 2000 faces as JPEG and back (the contactless facts, §9).

/// The encoding of an image a data group holds, detected from its magic bytes.
public enum ImageFormat: String, Sendable, Hashable, CaseIterable {
    /// JPEG (`FF D8 FF`).
    case jpeg
    /// JPEG 2000 in its JP2 file format (the signature box `00 00 00 0C 6A 50 20 20`).
    case jpeg2000
    /// A bare JPEG 2000 codestream (`FF 4F FF 51`: SOC then SIZ).
    case jpeg2000Codestream
    /// PNG (`89 50 4E 47 0D 0A 1A 0A`); not an ICAO format, seen in test documents.
    case png
    /// WSQ fingerprint images (`FF A0 FF A8`), for DG3 where it is readable.
    case wsq
    /// None of the above.
    case unknown

    /// The file extension a caller writes the bytes under: `jpg`, `jp2`, `j2k`, `png`, `wsq`,
    /// `bin`.
    public var fileExtension: String {
        switch self {
        case .jpeg: return "jpg"
        case .jpeg2000: return "jp2"
        case .jpeg2000Codestream: return "j2k"
        case .png: return "png"
        case .wsq: return "wsq"
        case .unknown: return "bin"
        }
    }

    /// The MIME type, for callers that serve the image.
    public var mimeType: String {
        switch self {
        case .jpeg: return "image/jpeg"
        case .jpeg2000: return "image/jp2"
        case .jpeg2000Codestream: return "image/j2k"
        case .png: return "image/png"
        case .wsq: return "image/x-wsq"
        case .unknown: return "application/octet-stream"
        }
    }

    /// The format `bytes` start with.
    public init(detecting bytes: some Collection<UInt8>) {
        let head = Array(bytes.prefix(8))
        func starts(_ magic: [UInt8]) -> Bool { head.count >= magic.count && Array(head.prefix(magic.count)) == magic }
        if starts([0xFF, 0xD8, 0xFF]) {
            self = .jpeg
        } else if starts([0x00, 0x00, 0x00, 0x0C, 0x6A, 0x50, 0x20, 0x20]) {
            self = .jpeg2000
        } else if starts([0xFF, 0x4F, 0xFF, 0x51]) {
            self = .jpeg2000Codestream
        } else if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            self = .png
        } else if starts([0xFF, 0xA0, 0xFF, 0xA8]) {
            self = .wsq
        } else {
            self = .unknown
        }
    }

    /// Where in `bytes` the first image of a known format starts, for records whose header this
    /// library does not know (ISO/IEC 19794-5:2011 and later): nil when no magic is found.
    static func firstImageOffset(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for i in 0...(bytes.count - 4) where bytes[i] == 0xFF || bytes[i] == 0x00 {
            let format = ImageFormat(detecting: bytes[i..<min(bytes.count, i + 8)])
            if format == .jpeg || format == .jpeg2000 || format == .jpeg2000Codestream { return i }
        }
        return nil
    }
}

/// One image a data group holds (displayed portrait, signature, document pages), as served.
public struct DocumentImage: Sendable, Hashable {
    /// The image file exactly as the chip serves it: write it out under
    /// `format.fileExtension`.
    public var bytes: [UInt8]
    /// Detected from the bytes.
    public var format: ImageFormat

    /// The image `bytes`, their format detected.
    public init(bytes: [UInt8]) {
        self.bytes = bytes
        self.format = ImageFormat(detecting: bytes)
    }
}
