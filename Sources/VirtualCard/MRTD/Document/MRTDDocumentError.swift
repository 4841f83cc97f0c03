// The error of a document that cannot be served or made.

/// Why a document cannot be served or made: a file missing or malformed in a document
/// directory, a key libcrypto cannot read, or a specimen option the chip cannot honour.
public struct MRTDDocumentError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        case missingFile, badFile, badKey, unsupported, io
    }
    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
