import ArgumentParser
import ISO7816
import PCSC
import VirtualCard

/// Exit codes, sysexits style (docs/cli.md).
enum ExitStatus: Int32 {
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
struct Failure: Error, CustomStringConvertible {
    var message: String
    var status: ExitStatus
    init(_ status: ExitStatus, _ message: String) {
        self.status = status
        self.message = message
    }
    var description: String { message }

    /// An error from the libraries in a few words, for "<reason> during the write; …".
    static func reason(_ error: any Error) -> String {
        switch error {
        case let e as PCSCError where e == .removedCard: return "the card was removed"
        case let e as PCSCError: return e.failure.message
        default: return "\(error)"
        }
    }
}

extension PCSCError {
    /// Where a PC/SC error leaves the user: the exit code and a message that says what to do.
    var failure: Failure {
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

/// Runs a command body, turning every error into one line on stderr and an exit code.
func reportingFailures(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let failure as Failure {
        Terminal.error(failure.message)
        throw ExitCode(failure.status.rawValue)
    } catch let error as TransmitError {
        let status: ExitStatus
        switch error {
        case .refusedSelect: status = .refused
        case .extendedLengthUnsupported: status = .usage
        case .getResponseLimit, .malformedResponse: status = .ioError
        }
        Terminal.error(error.description)
        throw ExitCode(status.rawValue)
    } catch let error as PCSCError {
        Terminal.error(error.failure.message)
        throw ExitCode(error.failure.status.rawValue)
    } catch let error as ExitCode {
        throw error
    } catch let error as ValidationError {
        throw error
    } catch {
        Terminal.error("\(error)")
        throw ExitCode(ExitStatus.ioError.rawValue)
    }
}
