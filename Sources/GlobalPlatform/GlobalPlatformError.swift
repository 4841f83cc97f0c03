// Errors of card management, each naming what happened before it: whether anything the card
// counts was sent is part of the message, so a caller never has to guess.
import ISO7816

/// Why a GlobalPlatform operation stopped.
public struct GlobalPlatformError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        /// The card's cryptogram does not match the keys: stopped before EXTERNAL AUTHENTICATE,
        /// so the card's failed-authentication counter did not move.
        case wrongKeys
        /// The card does not hold the key version asked for (key information template or
        /// INITIALIZE UPDATE's 6A 88): nothing counted was sent.
        case keyVersionNotHeld
        /// The Security Domain or the card is locked or terminated (6A 82 / 69 83 / 62 83 to
        /// SELECT or INITIALIZE UPDATE, or its life cycle): nothing counted was sent.
        case locked
        /// The card refused EXTERNAL AUTHENTICATE after its cryptogram checked out.
        case authenticationRefused
        /// The card answered a command with an error status word.
        case refused
        /// An answer that does not parse, or a response MAC that does not check out.
        case malformed
        /// A request the library refuses before sending anything (the ISD's deletion, a
        /// security level the card does not offer, a key of the wrong length).
        case policy
        /// An operation cut between two commands: `message` says what the card holds and the
        /// command that finishes or undoes it.
        case interrupted
    }

    public var kind: Kind
    public var message: String
    /// The status word the card answered, when the error is the card's.
    public var statusWord: StatusWord?

    public init(_ kind: Kind, _ message: String, statusWord: StatusWord? = nil) {
        self.kind = kind
        self.message = message
        self.statusWord = statusWord
    }

    public var description: String { message }
}
