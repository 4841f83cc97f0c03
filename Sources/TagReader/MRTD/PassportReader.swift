// The passport or ID card chip a session delivered, as async calls in PC/SC transactions on the
// tag's queue.
import ISO7816
import MRTD
import PCSC

extension ISO7816Tag {
    /// The card as a passport or ID card (an ICAO 9303 eMRTD): a reader for its chip, which opens
    /// it with the MRZ or the CAN (PACE or BAC), reads its files in the largest pieces the reader
    /// and chip accept, and runs passive, chip and active authentication.
    ///
    /// Nothing is sent until a method is called. Each call runs on the tag's queue in a PC/SC
    /// transaction of its own; the secure-messaging session lives between calls as long as the
    /// card stays in the field (when another program's command breaks it, the next read opens
    /// the chip again with the same key, once per file).
    ///
    /// ```swift
    /// let passport = tag.passportReader()
    /// let key = try MRTDAccessKey.mrz(documentNumber: "L898902C", dateOfBirth: "690806", dateOfExpiry: "940623")
    /// let read = try await passport.readDocument(key: key)
    /// let report = read.verify(trust: try TrustStore.load(paths: ["csca.ml"]))
    /// print(report.genuine)
    /// ```
    public func passportReader(options: MRTDReader.Options = MRTDReader.Options()) -> PassportReader {
        PassportReader(self, options: options)
    }
}

/// A passport or ID card chip on a tag a session delivered: the `MRTD` module's `MRTDReader`
/// behind async calls, each on the tag's queue in one PC/SC transaction.
///
/// The access key (the MRZ's fields or the CAN) is kept only to re-open the chip when secure
/// messaging breaks; it is never logged, traced or shown (the session's observer sees the
/// protected APDUs, with BAC's and PACE's password cryptograms marked secret).
public final class PassportReader: @unchecked Sendable {
    private let owner: ISO7816Tag
    private let options: MRTDReader.Options
    // Made on the connection's queue at the first call, and touched only there: the reader holds
    // the transport, which holds the card handle and the session's counters.
    private var reader: MRTDReader?

    init(_ owner: ISO7816Tag, options: MRTDReader.Options) {
        self.owner = owner
        self.options = options
    }

    /// The reader the tag is in.
    public var readerName: String { owner.reader }

    private func run<T: Sendable>(_ body: @escaping @Sendable (MRTDReader) throws -> T) async throws -> T {
        let connection = owner.connection
        let historical = owner.historicalBytes
        let box = SendableBox(self)
        return try await connection.perform { card in
            try card.withTransaction {
                let holder = box.value
                let reader: MRTDReader
                if let existing = holder.reader {
                    reader = existing
                } else {
                    reader = MRTDReader(transport: connection.transport(card), options: holder.options)
                    // The chip's card capabilities, when its ATS carries them (ISO 7816-4 §8.1.1.2.7).
                    reader.learnExtendedLength(historicalBytes: historical)
                    holder.reader = reader
                }
                return try body(reader)
            }
        }
    }

    /// What the chip says about itself without a key: EF.CardAccess (its PACE protocols),
    /// EF.DIR, EF.ATR/INFO and whether the eMRTD application answers. Call it on a reader of its
    /// own, before access control or not at all: BAC-only chips may refuse BAC after MF reads.
    public func chipInfo() async throws -> MRTDChipInfo {
        let historical = owner.historicalBytes
        return try await run { try $0.readChipInfo(historicalBytes: historical) }
    }

    /// Opens the chip: PACE when EF.CardAccess offers it (or `.pace`), else BAC (or `.bac`).
    /// A failed PACE is an error unless `options.allowBACFallback`; then the result says BAC ran
    /// after it (`MRTDAccess.fellBackToBAC`).
    /// - Throws: `MRTDProtocolError` (`.accessDenied`: the key is not this document's).
    @discardableResult
    public func establishAccess(_ method: MRTDAccessMethod = .auto, key: MRTDAccessKey) async throws -> MRTDAccess {
        try await run { reader in MRTDAccess(try reader.establishAccess(method, key: key), password: key.passwordReference) }
    }

    /// Reads one elementary file whole (after `establishAccess`, for the application's files).
    public func readFile(_ file: MRTDFile) async throws -> MRTDFileContent {
        try await run { try $0.readFile(file) }
    }

    /// Reads the whole document: access control, EF.COM, EF.SOD, every data group listed, chip
    /// authentication after DG14 and active authentication after DG15, in one transaction.
    /// Verify what came back with `MRTDDocumentRead.verify(trust:at:)`.
    /// - Parameters:
    ///   - key: the MRZ or the CAN.
    ///   - request: access control, the data groups and the proofs to run.
    ///   - progress: called on the tag's queue before each file.
    public func readDocument(key: MRTDAccessKey, request: MRTDReadRequest = MRTDReadRequest(),
                             progress: (@Sendable (_ file: String, _ done: Int, _ total: Int) -> Void)? = nil) async throws -> MRTDDocumentRead {
        try await run { try $0.readDocument(key: key, request: request, progress: progress) }
    }

    /// Active authentication with DG15's key (and DG14's ActiveAuthenticationInfo for ECDSA),
    /// inside the current session.
    public func activeAuthentication(dg15: ChipPublicKey, dg14: SecurityInfos?) async throws -> ActiveAuthenticationResult {
        try await run { try $0.performActiveAuthentication(dg15: dg15, dg14: dg14) }
    }

    /// Chip authentication with DG14's key; true once the chip answered under the new keys (it
    /// holds the private key). The session goes on under those keys.
    public func chipAuthentication(dg14: SecurityInfos) async throws -> Bool {
        try await run { try $0.performChipAuthentication(dg14: dg14).isConfirmed }
    }

    /// Exchanges and bytes since the first call.
    public func statistics() async throws -> MRTDReadStatistics {
        try await run { $0.statistics }
    }
}
