// What every tag family reports: Core NFC's NDEF status, and the error a person can act on.

/// Core NFC's vocabulary for what a tag allows.
public enum NDEFStatus: String, Sendable, Hashable {
    case readWrite, readOnly, notSupported
}

/// Why a tag could not be read or written, in words a person can act on.
public struct TagError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        case notNDEF, badCapabilityContainer, unsupportedVersion, fileMissing, readFailed, lengthLies
        case tooLarge, readOnly, writeFailed, verifyFailed, lockFailed
        /// Pages or offsets this reader path cannot address (storage pseudo-APDUs reach pages
        /// 0-255 only; the tag's limits leave no safe way to write a length).
        case beyondReach
        /// A backup that belongs to another tag, or to another layout of this one.
        case differentTag
        /// The procedure cannot be done without passing through an unsafe state on this tag.
        case unsafe
        /// PWD_AUTH refused, or the PACK is not the one expected.
        case authenticationFailed
        /// A Type 3 tag found with WriteF 0F: a write was cut and the message may be incomplete.
        case interrupted
    }
    public var kind: Kind
    public var message: String
    /// With `.unsupportedVersion`: the mapping version the tag declares ("2.0").
    public var mappingVersion: String?
    public init(_ kind: Kind, _ message: String, mappingVersion: String? = nil) {
        self.kind = kind
        self.message = message
        self.mappingVersion = mappingVersion
    }
    public var description: String { message }
}
