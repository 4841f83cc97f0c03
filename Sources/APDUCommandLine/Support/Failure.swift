// The CLI's exit codes and `Failure`, the one place a library error becomes a one-line message
// and an exit code.
import ArgumentParser
import CardReaders
import Dispatch
import FoundationEssentials
import Glibc
import ISO7816
import NDEF
import PCSC

/// Exit codes, sysexits style (docs/cli.md).
package enum ExitStatus: Int32 {
    case ok = 0
    /// The card answered, but not as expected.
    case unexpected = 1
    case usage = 64
    case badData = 65
    case unavailable = 69
    case ioError = 74
    case tryAgain = 75
    case refused = 77
}

/// An error the CLI reports in one line with a documented exit code.
package struct Failure: Error, CustomStringConvertible {
    package var message: String
    package var status: ExitStatus
    package init(_ status: ExitStatus, _ message: String) {
        self.status = status
        self.message = message
    }
    package var description: String { message }

    /// The one place a library error becomes an exit code and a message that says what to do.
    package init(_ error: any Error) {
        switch error {
        case let f as Failure: self = f
        case let e as PCSCError: self = e.failure
        case let e as ReaderError: self = e.failure
        case let e as NDEFError: self.init(.badData, "\(e)")
        case let e as ReaderControl.Refused: self.init(.unavailable, e.description)
        case let e as TransmitError:
            switch e {
            case .refusedSelect: self.init(.refused, e.description)
            case .extendedLengthUnsupported, .commandTooLong: self.init(.usage, e.description)
            case .getResponseLimit, .malformedResponse: self.init(.ioError, e.description)
            }
        case let e as any FailureConvertible: self = e.failure
        default: self.init(.ioError, "\(error)")
        }
    }

    package static func status(of error: any Error) -> ExitStatus { Failure(error).status }

    /// An error from the libraries in a few words, for "<reason> during the write; …".
    package static func reason(_ error: any Error) -> String {
        switch error {
        case let e as PCSCError where e == .removedCard: return "the card was removed"
        default: return Failure(error).message
        }
    }
}

extension PCSCError {
    package var failure: Failure {
        switch self {
        case .noService, .serviceStopped:
            return Failure(.unavailable, "pcscd is not running or not reachable (\(constantName ?? "")); start it, e.g. 'sudo systemctl start pcscd'")
        case .noReadersAvailable, .readerUnavailable, .unknownReader:
            return Failure(.unavailable, "reader not available: \(message)")
        case .noSmartcard:
            return Failure(.unavailable, "no card in the reader")
        case .removedCard:
            return Failure(.ioError, "the card was removed during the operation")
        case .resetCard:
            return Failure(.ioError, "the card was reset by another program; run the command again")
        case .timeout:
            return Failure(.tryAgain, "timed out")
        case .sharingViolation:
            return Failure(.tryAgain, "the card is in exclusive use by another program; try again or use --wait")
        case .unpoweredCard, .unresponsiveCard, .commError, .commDataLost, .notTransacted, .unsupportedCard:
            return Failure(.ioError, "communication with the card failed: \(message)")
        default:
            return Failure(.ioError, "PC/SC error: \(description)")
        }
    }
}

extension ReaderError {
    package var failure: Failure {
        func listing(_ readers: [String]) -> String { readers.map { "  \(Terminal.safe($0))" }.joined(separator: "\n") }
        switch self {
        case .noReaders: return Failure(.unavailable, "no readers found; plug one in (pcscd sees none)")
        case let .unknownReader(name, known):
            return Failure(.usage, "unknown reader '\(Terminal.safe(name))'" + (known.isEmpty ? " (pcscd sees no readers)" : "; readers:\n" + listing(known)))
        case let .noReaderAtIndex(index, known): return Failure(.usage, "no reader with index \(index); readers:\n" + listing(known))
        case let .ambiguousReader(name, matches): return Failure(.usage, "'\(Terminal.safe(name))' matches several readers; be more specific:\n" + listing(matches))
        case let .severalCards(readers): return Failure(.usage, "several readers have a card; choose one with --reader:\n" + listing(readers))
        case let .noCard(reader):
            return Failure(.unavailable, (reader.map { "no card in reader '\($0)'" } ?? "no card in any reader") + " (use --wait SECONDS to wait for one)")
        case .noCardWithin, .readerGone: return Failure(.unavailable, description)
        case .serviceLost: return Failure(.unavailable, description)
        case .busy: return Failure(.tryAgain, description + "; try again, or wait longer with --wait SECONDS")
        }
    }
}

/// A library error that says which `Failure` it is: the tag families' errors, from `apdu-tags`
/// (this module knows no family).
package protocol FailureConvertible: Error {
    var failure: Failure { get }
}

/// Runs a command body, turning every error into one line on stderr and an exit code.
package func reportingFailures(_ body: () throws -> Void) throws {
    do {
        try body()
        Recording.finish(status: 0)
    } catch let error as ExitCode {
        Recording.finish(status: error.rawValue)
        throw error
    } catch let error as ValidationError {
        throw error
    } catch {
        let failure = Failure(error)
        Terminal.error(failure.message)
        Recording.finish(status: failure.status.rawValue)
        if case ReaderError.busy = error {
            // Not exit(): a thread of ours is blocked inside pcsclite, whose locks an orderly
            // exit could wait on. Nothing was sent to the card.
            Terminal.flush()
            _exit(failure.status.rawValue)
        }
        throw ExitCode(failure.status.rawValue)
    }
}
