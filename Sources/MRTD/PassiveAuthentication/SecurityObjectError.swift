// Why EF.SOD or a master list could not be read as CMS SignedData: one line, never key material.

/// CMS (RFC 5652) that does not parse as the SignedData ICAO 9303 Part 10 §4.6.2 or Part 12
/// §9 describes, or uses an algorithm this library does not support.
public struct SecurityObjectError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of problem it is.
    public enum Kind: String, Sendable, Hashable {
        /// Not BER, or not the structure expected (a missing field, a wrong type).
        case format
        /// Well formed, but with an algorithm or version this library does not handle.
        case unsupported
    }

    /// What kind of problem it is.
    public var kind: Kind
    /// One line: what was wrong.
    public var message: String

    /// An error of `kind`.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
