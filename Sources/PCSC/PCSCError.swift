// pcsclite's return codes as `PCSCError`, a struct over the raw code with a named value per
// `SCARD_*` constant, and the one check every call goes through.
internal import CPCSCLite

/// An error code returned by pcsclite.
///
/// A struct over the raw code rather than an enum, so that codes this library does not
/// name (a newer pcsclite, a Windows-only code relayed by a bridge) survive intact.
/// Match named values with `catch PCSCError.removedCard` or `case .removedCard`.
public struct PCSCError: Error, RawRepresentable, Hashable, Sendable {
    /// The code as pcsclite returns it (`LONG`, always within 32 bits).
    public let rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The C constant's name, such as `SCARD_E_NO_SERVICE`, or `nil` for a code pcsclite does not define.
    public var constantName: String? { Self.names[rawValue] }

    /// `pcsc_stringify_error`'s text, which pcsclite keeps in sync with its own codes.
    public var message: String {
        String(cString: pcsc_stringify_error(LONG(rawValue)))
    }

    public static func ~= (pattern: PCSCError, value: any Error) -> Bool {
        (value as? PCSCError) == pattern
    }
}

extension PCSCError: CustomStringConvertible {
    public var description: String {
        let hex = "0x" + String(rawValue, radix: 16, uppercase: true)
        if let name = constantName { return "\(message) (\(name), \(hex))" }
        return "\(message) (\(hex))"
    }
}

extension PCSCError {
    /// `SCARD_F_INTERNAL_ERROR`
    public static let internalError = PCSCError(rawValue: 0x8010_0001)
    /// `SCARD_E_CANCELLED`: a wait was cancelled by `Context.cancel()`.
    public static let cancelled = PCSCError(rawValue: 0x8010_0002)
    /// `SCARD_E_INVALID_HANDLE`
    public static let invalidHandle = PCSCError(rawValue: 0x8010_0003)
    /// `SCARD_E_INVALID_PARAMETER`
    public static let invalidParameter = PCSCError(rawValue: 0x8010_0004)
    /// `SCARD_E_INVALID_TARGET`
    public static let invalidTarget = PCSCError(rawValue: 0x8010_0005)
    /// `SCARD_E_NO_MEMORY`
    public static let noMemory = PCSCError(rawValue: 0x8010_0006)
    /// `SCARD_F_WAITED_TOO_LONG`
    public static let waitedTooLong = PCSCError(rawValue: 0x8010_0007)
    /// `SCARD_E_INSUFFICIENT_BUFFER`
    public static let insufficientBuffer = PCSCError(rawValue: 0x8010_0008)
    /// `SCARD_E_UNKNOWN_READER`
    public static let unknownReader = PCSCError(rawValue: 0x8010_0009)
    /// `SCARD_E_TIMEOUT`
    public static let timeout = PCSCError(rawValue: 0x8010_000A)
    /// `SCARD_E_SHARING_VIOLATION`
    public static let sharingViolation = PCSCError(rawValue: 0x8010_000B)
    /// `SCARD_E_NO_SMARTCARD`
    public static let noSmartcard = PCSCError(rawValue: 0x8010_000C)
    /// `SCARD_E_UNKNOWN_CARD`
    public static let unknownCard = PCSCError(rawValue: 0x8010_000D)
    /// `SCARD_E_CANT_DISPOSE`
    public static let cantDispose = PCSCError(rawValue: 0x8010_000E)
    /// `SCARD_E_PROTO_MISMATCH`
    public static let protocolMismatch = PCSCError(rawValue: 0x8010_000F)
    /// `SCARD_E_NOT_READY`
    public static let notReady = PCSCError(rawValue: 0x8010_0010)
    /// `SCARD_E_INVALID_VALUE`
    public static let invalidValue = PCSCError(rawValue: 0x8010_0011)
    /// `SCARD_E_SYSTEM_CANCELLED`
    public static let systemCancelled = PCSCError(rawValue: 0x8010_0012)
    /// `SCARD_F_COMM_ERROR`
    public static let commError = PCSCError(rawValue: 0x8010_0013)
    /// `SCARD_F_UNKNOWN_ERROR`
    public static let unknownError = PCSCError(rawValue: 0x8010_0014)
    /// `SCARD_E_INVALID_ATR`
    public static let invalidATR = PCSCError(rawValue: 0x8010_0015)
    /// `SCARD_E_NOT_TRANSACTED`
    public static let notTransacted = PCSCError(rawValue: 0x8010_0016)
    /// `SCARD_E_READER_UNAVAILABLE`
    public static let readerUnavailable = PCSCError(rawValue: 0x8010_0017)
    /// `SCARD_P_SHUTDOWN`
    public static let shutdown = PCSCError(rawValue: 0x8010_0018)
    /// `SCARD_E_PCI_TOO_SMALL`
    public static let pciTooSmall = PCSCError(rawValue: 0x8010_0019)
    /// `SCARD_E_READER_UNSUPPORTED`
    public static let readerUnsupported = PCSCError(rawValue: 0x8010_001A)
    /// `SCARD_E_DUPLICATE_READER`
    public static let duplicateReader = PCSCError(rawValue: 0x8010_001B)
    /// `SCARD_E_CARD_UNSUPPORTED`
    public static let cardUnsupported = PCSCError(rawValue: 0x8010_001C)
    /// `SCARD_E_NO_SERVICE`: pcscd is not running (or its socket is not reachable).
    public static let noService = PCSCError(rawValue: 0x8010_001D)
    /// `SCARD_E_SERVICE_STOPPED`: pcscd went away while the context was in use.
    public static let serviceStopped = PCSCError(rawValue: 0x8010_001E)
    /// `SCARD_E_UNEXPECTED`, which pcsclite also uses as `SCARD_E_UNSUPPORTED_FEATURE`.
    public static let unexpected = PCSCError(rawValue: 0x8010_001F)
    /// `SCARD_E_UNSUPPORTED_FEATURE` (the same code as `SCARD_E_UNEXPECTED` in pcsclite).
    public static let unsupportedFeature = PCSCError(rawValue: 0x8010_001F)
    /// `SCARD_E_ICC_INSTALLATION`
    public static let iccInstallation = PCSCError(rawValue: 0x8010_0020)
    /// `SCARD_E_ICC_CREATEORDER`
    public static let iccCreateOrder = PCSCError(rawValue: 0x8010_0021)
    /// `SCARD_E_DIR_NOT_FOUND`
    public static let dirNotFound = PCSCError(rawValue: 0x8010_0023)
    /// `SCARD_E_FILE_NOT_FOUND`
    public static let fileNotFound = PCSCError(rawValue: 0x8010_0024)
    /// `SCARD_E_NO_DIR`
    public static let noDir = PCSCError(rawValue: 0x8010_0025)
    /// `SCARD_E_NO_FILE`
    public static let noFile = PCSCError(rawValue: 0x8010_0026)
    /// `SCARD_E_NO_ACCESS`
    public static let noAccess = PCSCError(rawValue: 0x8010_0027)
    /// `SCARD_E_WRITE_TOO_MANY`
    public static let writeTooMany = PCSCError(rawValue: 0x8010_0028)
    /// `SCARD_E_BAD_SEEK`
    public static let badSeek = PCSCError(rawValue: 0x8010_0029)
    /// `SCARD_E_INVALID_CHV`
    public static let invalidCHV = PCSCError(rawValue: 0x8010_002A)
    /// `SCARD_E_UNKNOWN_RES_MNG`
    public static let unknownResourceManager = PCSCError(rawValue: 0x8010_002B)
    /// `SCARD_E_NO_SUCH_CERTIFICATE`
    public static let noSuchCertificate = PCSCError(rawValue: 0x8010_002C)
    /// `SCARD_E_CERTIFICATE_UNAVAILABLE`
    public static let certificateUnavailable = PCSCError(rawValue: 0x8010_002D)
    /// `SCARD_E_NO_READERS_AVAILABLE`
    public static let noReadersAvailable = PCSCError(rawValue: 0x8010_002E)
    /// `SCARD_E_COMM_DATA_LOST`
    public static let commDataLost = PCSCError(rawValue: 0x8010_002F)
    /// `SCARD_E_NO_KEY_CONTAINER`
    public static let noKeyContainer = PCSCError(rawValue: 0x8010_0030)
    /// `SCARD_E_SERVER_TOO_BUSY`
    public static let serverTooBusy = PCSCError(rawValue: 0x8010_0031)
    /// `SCARD_W_UNSUPPORTED_CARD`
    public static let unsupportedCard = PCSCError(rawValue: 0x8010_0065)
    /// `SCARD_W_UNRESPONSIVE_CARD`
    public static let unresponsiveCard = PCSCError(rawValue: 0x8010_0066)
    /// `SCARD_W_UNPOWERED_CARD`
    public static let unpoweredCard = PCSCError(rawValue: 0x8010_0067)
    /// `SCARD_W_RESET_CARD`: another handle reset the card; reconnect before going on.
    public static let resetCard = PCSCError(rawValue: 0x8010_0068)
    /// `SCARD_W_REMOVED_CARD`: the card left the reader.
    public static let removedCard = PCSCError(rawValue: 0x8010_0069)
    /// `SCARD_W_SECURITY_VIOLATION`
    public static let securityViolation = PCSCError(rawValue: 0x8010_006A)
    /// `SCARD_W_WRONG_CHV`
    public static let wrongCHV = PCSCError(rawValue: 0x8010_006B)
    /// `SCARD_W_CHV_BLOCKED`
    public static let chvBlocked = PCSCError(rawValue: 0x8010_006C)
    /// `SCARD_W_EOF`
    public static let endOfFile = PCSCError(rawValue: 0x8010_006D)
    /// `SCARD_W_CANCELLED_BY_USER`
    public static let cancelledByUser = PCSCError(rawValue: 0x8010_006E)
    /// `SCARD_W_CARD_NOT_AUTHENTICATED`
    public static let cardNotAuthenticated = PCSCError(rawValue: 0x8010_006F)

    static let names: [UInt32: String] = [
        0x8010_0001: "SCARD_F_INTERNAL_ERROR", 0x8010_0002: "SCARD_E_CANCELLED",
        0x8010_0003: "SCARD_E_INVALID_HANDLE", 0x8010_0004: "SCARD_E_INVALID_PARAMETER",
        0x8010_0005: "SCARD_E_INVALID_TARGET", 0x8010_0006: "SCARD_E_NO_MEMORY",
        0x8010_0007: "SCARD_F_WAITED_TOO_LONG", 0x8010_0008: "SCARD_E_INSUFFICIENT_BUFFER",
        0x8010_0009: "SCARD_E_UNKNOWN_READER", 0x8010_000A: "SCARD_E_TIMEOUT",
        0x8010_000B: "SCARD_E_SHARING_VIOLATION", 0x8010_000C: "SCARD_E_NO_SMARTCARD",
        0x8010_000D: "SCARD_E_UNKNOWN_CARD", 0x8010_000E: "SCARD_E_CANT_DISPOSE",
        0x8010_000F: "SCARD_E_PROTO_MISMATCH", 0x8010_0010: "SCARD_E_NOT_READY",
        0x8010_0011: "SCARD_E_INVALID_VALUE", 0x8010_0012: "SCARD_E_SYSTEM_CANCELLED",
        0x8010_0013: "SCARD_F_COMM_ERROR", 0x8010_0014: "SCARD_F_UNKNOWN_ERROR",
        0x8010_0015: "SCARD_E_INVALID_ATR", 0x8010_0016: "SCARD_E_NOT_TRANSACTED",
        0x8010_0017: "SCARD_E_READER_UNAVAILABLE", 0x8010_0018: "SCARD_P_SHUTDOWN",
        0x8010_0019: "SCARD_E_PCI_TOO_SMALL", 0x8010_001A: "SCARD_E_READER_UNSUPPORTED",
        0x8010_001B: "SCARD_E_DUPLICATE_READER", 0x8010_001C: "SCARD_E_CARD_UNSUPPORTED",
        0x8010_001D: "SCARD_E_NO_SERVICE", 0x8010_001E: "SCARD_E_SERVICE_STOPPED",
        0x8010_001F: "SCARD_E_UNEXPECTED", 0x8010_0020: "SCARD_E_ICC_INSTALLATION",
        0x8010_0021: "SCARD_E_ICC_CREATEORDER", 0x8010_0023: "SCARD_E_DIR_NOT_FOUND",
        0x8010_0024: "SCARD_E_FILE_NOT_FOUND", 0x8010_0025: "SCARD_E_NO_DIR",
        0x8010_0026: "SCARD_E_NO_FILE", 0x8010_0027: "SCARD_E_NO_ACCESS",
        0x8010_0028: "SCARD_E_WRITE_TOO_MANY", 0x8010_0029: "SCARD_E_BAD_SEEK",
        0x8010_002A: "SCARD_E_INVALID_CHV", 0x8010_002B: "SCARD_E_UNKNOWN_RES_MNG",
        0x8010_002C: "SCARD_E_NO_SUCH_CERTIFICATE", 0x8010_002D: "SCARD_E_CERTIFICATE_UNAVAILABLE",
        0x8010_002E: "SCARD_E_NO_READERS_AVAILABLE", 0x8010_002F: "SCARD_E_COMM_DATA_LOST",
        0x8010_0030: "SCARD_E_NO_KEY_CONTAINER", 0x8010_0031: "SCARD_E_SERVER_TOO_BUSY",
        0x8010_0065: "SCARD_W_UNSUPPORTED_CARD", 0x8010_0066: "SCARD_W_UNRESPONSIVE_CARD",
        0x8010_0067: "SCARD_W_UNPOWERED_CARD", 0x8010_0068: "SCARD_W_RESET_CARD",
        0x8010_0069: "SCARD_W_REMOVED_CARD", 0x8010_006A: "SCARD_W_SECURITY_VIOLATION",
        0x8010_006B: "SCARD_W_WRONG_CHV", 0x8010_006C: "SCARD_W_CHV_BLOCKED",
        0x8010_006D: "SCARD_W_EOF", 0x8010_006E: "SCARD_W_CANCELLED_BY_USER",
        0x8010_006F: "SCARD_W_CARD_NOT_AUTHENTICATED",
    ]
}

/// The one place a pcsclite return value becomes a Swift error.
@inline(__always)
func check(_ rv: LONG) throws(PCSCError) {
    if rv != SCARD_S_SUCCESS_VALUE {
        throw PCSCError(rawValue: UInt32(truncatingIfNeeded: rv))
    }
}

let SCARD_S_SUCCESS_VALUE: LONG = 0

extension PCSCError {
    /// The code as the C functions return it.
    var cValue: LONG { LONG(rawValue) }
}
