// Why a file of the logical data structure (ICAO 9303 Part 10) could not be decoded: the file,
// and one line on what was wrong, never the holder's data.

/// A file of the LDS (EF.COM, a data group) that does not decode.
public struct LDSError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of problem it is.
    public enum Kind: String, Sendable, Hashable {
        /// Not BER-TLV: truncated, a length past the end, a tag or length too long.
        case tlv
        /// TLV, but not the template Part 10 defines (wrong outer tag, missing element).
        case structure
        /// A template this library does not decode (a biometric format it does not know).
        case unsupported
    }

    /// What kind of problem it is.
    public var kind: Kind
    /// The file: `EF.COM`, `DG1` … `DG16`.
    public var file: String
    /// One line, safe to show: the problem, never the holder's data.
    public var message: String

    /// An error about `file`.
    public init(_ kind: Kind, file: String, _ message: String) {
        self.kind = kind
        self.file = file
        self.message = message
    }

    public var description: String { "\(file): \(message)" }
}
