// The one error type of the card-protocol half of MRTD: access control, secure messaging, chip
// and active authentication, reading. Messages are one line and never carry key material, the
// MRZ or the CAN.
import CardCrypto
import ISO7816

/// Why talking to a passport or ID card chip failed: the chip's refusal, an answer that does not
/// verify, a malformed answer, or bad input. The message is one line, safe to print: it never
/// holds keys, the MRZ or the CAN.
public struct MRTDProtocolError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, for callers that branch (exit codes, retries).
    public enum Kind: String, Sendable, Hashable {
        /// The access key itself is unusable (a date that is not YYMMDD, a character outside the MRZ set).
        case invalidAccessKey
        /// The chip refused access control: the MRZ or CAN is not this document's (`63 00`, `69 82` on
        /// EXTERNAL AUTHENTICATE or the last General Authenticate step), or its answer did not verify.
        case accessDenied
        /// A MAC, cryptogram or authentication token from the chip did not verify.
        case badCryptogram
        /// Secure messaging broke (a response MAC that does not verify, `69 87`, `69 88`): the session
        /// is over and access control must run again.
        case secureMessagingEnded
        /// A command was sent on a session that has ended.
        case sessionNotEstablished
        /// The chip answered with a bare status word outside secure messaging (its SSC did not move).
        case unprotectedStatus
        /// The chip answered a command with an error status.
        case refused
        /// An answer, or data read from the chip, does not have the expected shape.
        case malformed
        /// The chip offers nothing this library can use (an unknown PACE protocol, a curve
        /// libcrypto lacks).
        case unsupported
        /// A public key from the chip is not a valid point or group element.
        case invalidPublicKey
        /// libcrypto refused an operation.
        case library
    }

    /// What went wrong.
    public var kind: Kind
    /// One line, safe to print.
    public var message: String
    /// The status word the chip answered, when the error is its answer.
    public var statusWord: StatusWord?

    /// An error of `kind` with a one-line `message` that holds no secret.
    public init(_ kind: Kind, _ message: String, statusWord: StatusWord? = nil) {
        self.kind = kind
        self.message = message
        self.statusWord = statusWord
    }

    public var description: String { message }

    /// The error for a status word other than 90 00 answering `what`.
    static func status(_ sw: StatusWord, _ what: String) -> MRTDProtocolError {
        MRTDProtocolError(.refused, "\(what): the chip answered \(sw) (\(sw.meaning.text))", statusWord: sw)
    }
}

extension MRTDProtocolError {
    /// Runs a cryptographic step, turning a CardCrypto error (a key of the wrong length, data
    /// that is not whole blocks) into a `.library` error named after `what`. Errors of this type
    /// pass through unchanged.
    static func crypto<T>(_ what: String, _ body: () throws -> T) throws(MRTDProtocolError) -> T {
        do { return try body() } catch let error as MRTDProtocolError {
            throw error
        } catch let error as CryptoError {
            throw MRTDProtocolError(.library, "\(what): \(error.message)")
        } catch {
            throw MRTDProtocolError(.library, "\(what): the cryptographic step failed")
        }
    }
}
