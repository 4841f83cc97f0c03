// The DESFire status codes NTAG 424 DNA shares, and the typed error every DESFire-family command
// throws.
import ISO7816

/// A status code of a DESFire native command: the byte after `91` in the ISO 7816 wrapping, or the
/// first byte of a native answer. MIFARE DESFire (MF3ICD40, EV1, EV2, EV3, Light) and NTAG 424 DNA
/// answer with the same codes (names as in the DESFire data sheets, libfreefare `freefare.h` and
/// proxmark3 `protocols.h`). Unknown codes survive as their raw value.
public struct DESFireStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let ok = DESFireStatus(rawValue: 0x00)
    public static let noChanges = DESFireStatus(rawValue: 0x0C)
    public static let outOfMemory = DESFireStatus(rawValue: 0x0E)
    public static let illegalCommand = DESFireStatus(rawValue: 0x1C)
    public static let integrityError = DESFireStatus(rawValue: 0x1E)
    public static let noSuchKey = DESFireStatus(rawValue: 0x40)
    public static let lengthError = DESFireStatus(rawValue: 0x7E)
    public static let permissionDenied = DESFireStatus(rawValue: 0x9D)
    public static let parameterError = DESFireStatus(rawValue: 0x9E)
    public static let applicationNotFound = DESFireStatus(rawValue: 0xA0)
    public static let applicationIntegrityError = DESFireStatus(rawValue: 0xA1)
    public static let authenticationDelay = DESFireStatus(rawValue: 0xAD)
    public static let authenticationError = DESFireStatus(rawValue: 0xAE)
    public static let additionalFrame = DESFireStatus(rawValue: 0xAF)
    public static let boundaryError = DESFireStatus(rawValue: 0xBE)
    public static let piccIntegrityError = DESFireStatus(rawValue: 0xC1)
    public static let commandAborted = DESFireStatus(rawValue: 0xCA)
    public static let piccDisabled = DESFireStatus(rawValue: 0xCD)
    public static let countError = DESFireStatus(rawValue: 0xCE)
    public static let duplicateError = DESFireStatus(rawValue: 0xDE)
    public static let memoryError = DESFireStatus(rawValue: 0xEE)
    public static let fileNotFound = DESFireStatus(rawValue: 0xF0)
    public static let fileIntegrityError = DESFireStatus(rawValue: 0xF1)

    private static let table: [UInt8: (name: String, meaning: String, kind: DESFireError.Kind)] = [
        0x0C: ("NO_CHANGES", "no changes were made", .noChanges),
        0x0E: ("OUT_OF_EEPROM_ERROR", "not enough memory left on the card", .outOfMemory),
        0x1C: ("ILLEGAL_COMMAND_CODE", "the card does not support this command", .illegalCommand),
        0x1E: ("INTEGRITY_ERROR", "the card refused the CRC, MAC or padding (or a wrong old key)", .integrityError),
        0x40: ("NO_SUCH_KEY", "no such key", .noSuchKey),
        0x7E: ("LENGTH_ERROR", "length error", .lengthError),
        0x9D: ("PERMISSION_DENIED", "permission denied: the access rights need another key", .permissionDenied),
        0x9E: ("PARAMETER_ERROR", "a parameter is not valid", .parameterError),
        0xA0: ("APPLICATION_NOT_FOUND", "no such application", .applicationNotFound),
        0xA1: ("APPL_INTEGRITY_ERROR", "an unrecoverable error inside the application; it is disabled", .applicationIntegrityError),
        0xAD: ("AUTHENTICATION_DELAY", "authentication delay: too many failed attempts, wait before the next", .authenticationDelay),
        0xAE: ("AUTHENTICATION_ERROR", "authentication error: the key is not the card's, or this needs an authentication first", .authenticationError),
        0xBE: ("BOUNDARY_ERROR", "beyond the file's limits (offset, length, value limits or records)", .boundaryError),
        0xC1: ("PICC_INTEGRITY_ERROR", "an unrecoverable error inside the card; it is disabled", .piccIntegrityError),
        0xCA: ("COMMAND_ABORTED", "the previous command was not fully completed (its frames were cut short)", .commandAborted),
        0xCD: ("PICC_DISABLED_ERROR", "the card was disabled by an unrecoverable error", .piccDisabled),
        0xCE: ("COUNT_ERROR", "the card holds as many applications (28) or files (32) as it can", .countError),
        0xDE: ("DUPLICATE_ERROR", "an application or file with this number or name exists already", .duplicateError),
        0xEE: ("EEPROM_ERROR", "the card could not write its memory", .memoryError),
        0xF0: ("FILE_NOT_FOUND", "no such file", .fileNotFound),
        0xF1: ("FILE_INTEGRITY_ERROR", "an unrecoverable error inside the file; it is disabled", .fileIntegrityError),
    ]

    /// The data sheet's name, `PERMISSION_DENIED`; `OPERATION_OK` and `ADDITIONAL_FRAME` too.
    public var name: String {
        switch rawValue {
        case 0x00: return "OPERATION_OK"
        case 0xAF: return "ADDITIONAL_FRAME"
        default: return Self.table[rawValue]?.name ?? "unknown status \(Hex.encode([rawValue]))"
        }
    }

    /// What it means, in a few words.
    public var meaning: String {
        switch rawValue {
        case 0x00: return "success"
        case 0xAF: return "more frames follow"
        default: return Self.table[rawValue]?.meaning ?? "a status this tool does not know"
        }
    }

    var kind: DESFireError.Kind { Self.table[rawValue]?.kind ?? .refused }

    /// `91 9D`.
    public var description: String { "91 \(Hex.encode([rawValue]))" }
}

/// Why a DESFire native exchange failed: the card's status (`91 xx`, each code a kind of its own),
/// a MAC, CRC or cryptogram on its answer that did not verify, or an answer of the wrong shape.
/// Never carries key material. NTAG 424 DNA speaks the same native commands (`NTAG424Error`).
public struct DESFireError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        /// `91 0C`.
        case noChanges
        /// `91 0E`.
        case outOfMemory
        /// `91 1C`.
        case illegalCommand
        /// `91 1E`: integrity error (a CRC, MAC or padding the card refused).
        case integrityError
        /// `91 40`: no such key.
        case noSuchKey
        /// `91 7E`: length error.
        case lengthError
        /// `91 9D`: permission denied (the access rights do not allow it).
        case permissionDenied
        /// `91 9E`.
        case parameterError
        /// `91 A0`.
        case applicationNotFound
        /// `91 A1`.
        case applicationIntegrityError
        /// `91 AD`.
        case authenticationDelay
        /// `91 AE`: authentication error (wrong key).
        case authenticationError
        /// `91 BE`.
        case boundaryError
        /// `91 C1`.
        case piccIntegrityError
        /// `91 CA`.
        case commandAborted
        /// `91 CD`.
        case piccDisabled
        /// `91 CE`.
        case countError
        /// `91 DE`.
        case duplicateError
        /// `91 EE`.
        case memoryError
        /// `91 F0`.
        case fileNotFound
        /// `91 F1`.
        case fileIntegrityError
        /// Another `91 xx`, or a status word outside the native wrapping.
        case refused
        /// The answer's MAC, CRC, or the card's part of an authentication did not verify.
        case badCryptogram
        /// The answer has the wrong shape.
        case malformed
        /// The operation cannot be undone and was not confirmed (nothing was sent).
        case needsConfirmation
    }
    public var kind: Kind
    public var message: String
    public var statusWord: StatusWord?
    public init(_ kind: Kind, _ message: String, statusWord: StatusWord? = nil) {
        self.kind = kind
        self.message = message
        self.statusWord = statusWord
    }
    public var description: String { message }

    /// The card's status, when the error is one.
    public var status: DESFireStatus? {
        guard let statusWord, statusWord.sw1 == 0x91 else { return nil }
        return DESFireStatus(rawValue: statusWord.sw2)
    }

    /// The error for an answer other than `91 00` / `91 AF`: "`what`: permission denied: … (91 9D)".
    public static func status(_ sw: StatusWord, _ what: String) -> DESFireError {
        guard sw.sw1 == 0x91 else {
            return DESFireError(.refused, "\(what): the card answered \(sw) (\(sw.meaning.text)), not a DESFire status", statusWord: sw)
        }
        let status = DESFireStatus(rawValue: sw.sw2)
        return DESFireError(status.kind, "\(what): \(status.meaning) (\(status))", statusWord: sw)
    }
}

/// NTAG 424 DNA's native commands are DESFire EV2's: the same status codes and errors.
public typealias NTAG424Error = DESFireError
