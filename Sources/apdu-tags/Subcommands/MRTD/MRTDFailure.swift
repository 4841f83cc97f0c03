// The MRTD module's errors as the CLI reports them: one line, a documented exit code, and
// never a key, an MRZ or a CAN (the module's messages hold none).
import APDUCommandLine
import MRTD

/// Runs `body`, turning the MRTD module's errors into `Failure`s (the rest pass through to
/// `Failure.init(_:)`).
func mrtdFailures<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as MRTDProtocolError {
        throw error.failure
    } catch let error as MRZError {
        throw Failure(.usage, "the MRZ: \(error.message)")
    } catch let error as TrustStoreError {
        throw Failure(.badData, "--trust: \(Terminal.safe(error.file)): \(error.message)")
    } catch let error as MRTDDumpError {
        throw Failure(.badData, "\(Terminal.safe(error.path)): \(error.message)")
    } catch let error as LDSError {
        throw Failure(.badData, error.description)
    }
}

extension MRTDProtocolError {
    /// The chip's refusals are 1 (a key that is not the document's, a protocol it does not
    /// offer); answers that do not verify or parse are I/O with the chip (74): a genuine chip
    /// under a working reader does not send them, and the next run starts afresh.
    var failure: Failure {
        switch kind {
        case .invalidAccessKey: return Failure(.usage, message)
        case .accessDenied, .refused, .unsupported: return Failure(.unexpected, message)
        case .badCryptogram, .secureMessagingEnded, .sessionNotEstablished, .unprotectedStatus, .malformed, .invalidPublicKey:
            return Failure(.ioError, message)
        case .library: return Failure(.ioError, message)
        }
    }
}
