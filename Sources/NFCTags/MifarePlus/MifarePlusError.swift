// MIFARE Plus status bytes, typed, and the errors the family's procedures throw.

/// The status byte a MIFARE Plus answers with (the first byte of a native answer, SW2 of a
/// wrapped one): `90` and the errors `06`-`0F` of NXP's data sheets (proxmark3 `mfp_strerror`
/// words them the same way).
public enum MifarePlusStatus: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case ok = 0x90
    /// Access conditions not fulfilled (also a refused authentication).
    case accessDenied = 0x06
    /// Too many read or write commands in the session or transaction.
    case tooManyCommands = 0x07
    /// The command's MAC is wrong.
    case invalidMAC = 0x08
    /// The block number is not valid for the command.
    case invalidBlockNumber = 0x09
    /// The block does not exist on this card.
    case nonexistentBlock = 0x0A
    /// The command is not available in this state (security level, authentication).
    case notInThisState = 0x0B
    /// Length error.
    case lengthError = 0x0C
    /// General manipulation error: the card could not do it (a write that failed).
    case generalError = 0x0F

    public var description: String {
        switch self {
        case .ok: return "90 (OK)"
        case .accessDenied: return "06 (access conditions not fulfilled)"
        case .tooManyCommands: return "07 (too many read or write commands)"
        case .invalidMAC: return "08 (the command's MAC is wrong)"
        case .invalidBlockNumber: return "09 (block number not valid for this command)"
        case .nonexistentBlock: return "0A (no such block)"
        case .notInThisState: return "0B (command not available in this state)"
        case .lengthError: return "0C (length error)"
        case .generalError: return "0F (general manipulation error)"
        }
    }
}

/// Why a MIFARE Plus procedure did not complete, in words a person can act on.
public struct MifarePlusError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        /// The card answered one of `MifarePlusStatus`'s errors; `status` says which.
        case status
        /// The card refused the key, or proved it does not hold it (RndA' wrong).
        case authenticationFailed
        /// An answer's MAC did not verify: the answer is not the card's, or not for this session.
        case macMismatch
        /// An answer of the wrong length or form.
        case malformed
        /// A command the card counts got the reader's status word in place of the card's answer:
        /// the card may have carried it out (issue 48: it is never sent again).
        case answerLost
        /// CommitPerso to SL3 would leave sector keys at the factory value; the caller must say so.
        case factoryKeysLeft
        /// The reader passes neither native frames nor the ISO 7816 wrapping.
        case readerRefused
        /// Not a MIFARE Plus, or not in the level the command needs.
        case wrongCard
        /// A change this tool will not make without `--yes` (a trailer, B000-B003, CommitPerso,
        /// the switch to SL3).
        case needsConfirmation
        /// A precondition of the command, checked before anything is sent.
        case refused
    }
    public var kind: Kind
    public var message: String
    /// The card's status byte, for `.status` (and an authentication the card refused).
    public var status: MifarePlusStatus?
    /// The raw status byte when it is none of the known ones.
    public var rawStatus: UInt8?

    public init(_ kind: Kind, _ message: String, status: MifarePlusStatus? = nil, rawStatus: UInt8? = nil) {
        self.kind = kind
        self.message = message
        self.status = status
        self.rawStatus = rawStatus
    }

    public var description: String { message }
}

/// A MIFARE Plus change cut short: what the card holds now, in words, for the CLI's one line.
public struct MifarePlusInterrupted: Error, CustomStringConvertible {
    public var operation: String
    public var state: String
    public var underlying: any Error
    public init(operation: String, state: String, underlying: any Error) {
        self.operation = operation
        self.state = state
        self.underlying = underlying
    }
    public var description: String { "\(underlying) during \(operation); \(state)" }
}
