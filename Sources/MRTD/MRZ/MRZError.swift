// Why text is not a machine-readable zone: one line that names the field, never its contents
// (the document number, birth and expiry dates are the chip's access key).

/// A machine-readable zone that does not parse or whose check digits do not hold.
public struct MRZError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of problem it is.
    public enum Kind: String, Sendable, Hashable {
        /// Not 3 × 30, 2 × 36 or 2 × 44 characters.
        case shape
        /// A character outside A–Z, 0–9 and `<` (lower case included).
        case character
        /// A check digit that does not match its field.
        case checkDigit
        /// A field that holds what its position cannot (a sex other than F, M, X or `<`, a
        /// document code that does not start with a letter).
        case field
    }

    /// What kind of problem it is.
    public var kind: Kind
    /// The field a check digit guards; nil for errors about the whole text.
    public var field: MachineReadableZone.Field?
    /// One line, safe to show: positions and digits, never the field's contents.
    public var message: String

    /// An error of `kind`, about `field` when it concerns one.
    public init(_ kind: Kind, field: MachineReadableZone.Field? = nil, _ message: String) {
        self.kind = kind
        self.field = field
        self.message = message
    }

    public var description: String { message }
}
