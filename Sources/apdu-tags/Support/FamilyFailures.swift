// The tag families' errors as `Failure`s: each says its exit code and message, and
// `Failure.init(_:)` (APDUCommandLine, which knows no family) asks through `FailureConvertible`.
import APDUCommandLine
import NFCTags
import TagReader

extension TagError: FailureConvertible {
    /// A tag that refuses is 1 (a mapping version newer than this tool reads too: not a lie), a
    /// tag whose data lies is 65, a read that brought nothing back is I/O (74).
    package var failure: Failure {
        switch kind {
        case .notNDEF, .readOnly, .writeFailed, .verifyFailed, .lockFailed, .fileMissing, .unsafe, .authenticationFailed, .unsupportedVersion:
            return Failure(.unexpected, message)
        case .readFailed: return Failure(.ioError, message)
        case .badCapabilityContainer, .lengthLies, .tooLarge, .interrupted: return Failure(.badData, message)
        case .beyondReach: return Failure(.unavailable, message)
        case .differentTag: return Failure(.refused, message)
        }
    }
}

extension WriteInterrupted.TagState {
    /// "the tag holds the previous message or an empty one".
    func words(old: String, new: String) -> String {
        switch self {
        case .old: return "nothing took effect: the tag holds \(old)"
        case .oldOrEmpty: return "the tag holds \(old) or an empty message"
        case .empty: return "the tag holds an empty message"
        case .emptyOrNew: return "the tag holds an empty message or \(new)"
        case .new: return "the tag holds \(new), but reading it back did not finish"
        case .unknown: return "the tag reads back something other than what it acknowledged"
        }
    }
}

extension WriteInterrupted: FailureConvertible {
    package var failure: Failure {
        Failure(Failure.status(of: underlying), "\(Failure.reason(underlying)) during the write; \(state.words(old: "the previous message", new: "the new message"))")
    }
}

extension LockInterrupted: FailureConvertible {
    package var failure: Failure { Failure(Failure.status(of: underlying), "\(Failure.reason(underlying)) while trying to \(step)") }
}

extension BackupError: FailureConvertible {
    package var failure: Failure { Failure(.ioError, message) }
}

extension Type2PageMap.HeaderUnreadable: FailureConvertible {
    package var failure: Failure { Failure(.ioError, description) }
}

extension ISO15693Error: FailureConvertible {
    package var failure: Failure { Failure(.unexpected, description) }
}

extension FeliCaStatusError: FailureConvertible {
    package var failure: Failure { Failure(.unexpected, description) }
}

extension TagCommandError: FailureConvertible {
    package var failure: Failure {
        switch kind {
        case .noRawPath: Failure(.unavailable, message)
        case .readerRefused, .malformed: Failure(.ioError, message)
        }
    }
}

extension NTAG424Error: FailureConvertible {}
