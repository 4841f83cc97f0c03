// A document read to a folder, one file per elementary file with the bytes as the chip served
// them, verified offline with the same code as a live read.

/// The elementary files of a document, raw. In a folder, each has a fixed name:
///
/// | file | name |
/// |---|---|
/// | EF.COM (`011E`) | `EF.COM.bin` |
/// | EF.SOD (`011D`) | `EF.SOD.bin` |
/// | DG1 … DG16 (`0101` … `0110`) | `DG1.bin` … `DG16.bin` |
/// | EF.CardAccess (`011C`, MF) | `EF.CardAccess.bin` |
/// | EF.CardSecurity (`011D`, MF) | `EF.CardSecurity.bin` |
/// | EF.DIR (`2F00`, MF) | `EF.DIR.bin` |
///
/// Other files in the folder are ignored.
public struct MRTDDump: Sendable, Hashable {
    /// EF.COM, as read.
    public var com: [UInt8]?
    /// EF.SOD, as read (tag `77`).
    public var sod: [UInt8]?
    /// Data group number (1–16) → the file's bytes.
    public var dataGroups: [Int: [UInt8]]
    /// EF.CardAccess (PACE parameters), as read.
    public var cardAccess: [UInt8]?
    /// EF.CardSecurity, as read.
    public var cardSecurity: [UInt8]?
    /// EF.DIR, as read.
    public var dir: [UInt8]?

    /// `EF.COM.bin`.
    public static let comFileName = "EF.COM.bin"
    /// `EF.SOD.bin`.
    public static let sodFileName = "EF.SOD.bin"
    /// `EF.CardAccess.bin`.
    public static let cardAccessFileName = "EF.CardAccess.bin"
    /// `EF.CardSecurity.bin`.
    public static let cardSecurityFileName = "EF.CardSecurity.bin"
    /// `EF.DIR.bin`.
    public static let dirFileName = "EF.DIR.bin"

    /// `DG1.bin` … `DG16.bin`.
    public static func fileName(forDataGroup number: Int) -> String { "DG\(number).bin" }

    /// A dump of the given files (what a live read collected).
    public init(com: [UInt8]? = nil, sod: [UInt8]? = nil, dataGroups: [Int: [UInt8]] = [:], cardAccess: [UInt8]? = nil, cardSecurity: [UInt8]? = nil, dir: [UInt8]? = nil) {
        self.com = com
        self.sod = sod
        self.dataGroups = dataGroups
        self.cardAccess = cardAccess
        self.cardSecurity = cardSecurity
        self.dir = dir
    }

    /// Reads a folder written with the names above. Throws when the folder cannot be read or
    /// holds none of them.
    public init(directory: String) throws(MRTDDumpError) {
        let isFolder: Bool
        do {
            isFolder = try FileInput.isDirectory(directory)
        } catch {
            throw MRTDDumpError(path: directory, error.message)
        }
        guard isFolder else { throw MRTDDumpError(path: directory, "is not a folder") }
        func read(_ name: String) throws(MRTDDumpError) -> [UInt8]? {
            let path = FileInput.join(directory, name)
            guard FileInput.exists(path) else { return nil }
            do {
                return try FileInput.read(path)
            } catch {
                throw MRTDDumpError(path: path, error.message)
            }
        }
        self.init()
        com = try read(MRTDDump.comFileName)
        sod = try read(MRTDDump.sodFileName)
        for number in 1...16 {
            if let bytes = try read(MRTDDump.fileName(forDataGroup: number)) { dataGroups[number] = bytes }
        }
        cardAccess = try read(MRTDDump.cardAccessFileName)
        cardSecurity = try read(MRTDDump.cardSecurityFileName)
        dir = try read(MRTDDump.dirFileName)
        guard com != nil || sod != nil || !dataGroups.isEmpty || cardAccess != nil else {
            throw MRTDDumpError(path: directory, "holds no EF.COM.bin, EF.SOD.bin, DG1.bin … DG16.bin or EF.CardAccess.bin")
        }
    }

    /// Every file present, with its name, in a stable order (what `--out DIR` writes).
    public var files: [(name: String, bytes: [UInt8])] {
        var out: [(String, [UInt8])] = []
        if let cardAccess { out.append((MRTDDump.cardAccessFileName, cardAccess)) }
        if let cardSecurity { out.append((MRTDDump.cardSecurityFileName, cardSecurity)) }
        if let dir { out.append((MRTDDump.dirFileName, dir)) }
        if let com { out.append((MRTDDump.comFileName, com)) }
        if let sod { out.append((MRTDDump.sodFileName, sod)) }
        for number in dataGroups.keys.sorted() {
            if let bytes = dataGroups[number] { out.append((MRTDDump.fileName(forDataGroup: number), bytes)) }
        }
        return out
    }

    /// Decodes every file and runs passive authentication against `trust` at `time`.
    public func verify(trust: TrustStore?, at time: Timestamp = .now) -> MRTDVerification {
        var decoded: [Int: Result<LDSDataGroup, LDSError>] = [:]
        for (number, bytes) in dataGroups {
            do {
                decoded[number] = .success(try LDSDataGroup.decode(dataGroup: number, bytes: bytes))
            } catch {
                decoded[number] = .failure(error)
            }
        }
        let common: Result<EFCOM, LDSError>? = com.map { bytes in
            do throws(LDSError) { return .success(try EFCOM(decoding: bytes)) } catch { return .failure(error) }
        }
        let passive: PassiveAuthenticationResult
        if let sod {
            passive = PassiveAuthentication.verify(securityObject: sod, dataGroups: dataGroups, trust: trust, at: time)
        } else {
            let reason = "no EF.SOD (\(MRTDDump.sodFileName)): nothing vouches for the data"
            passive = PassiveAuthenticationResult(
                hashes: HashVerdict(status: .notVerified, algorithm: nil, dataGroups: [], reason: reason),
                signature: SignatureVerdict(status: .notVerified, notes: [], reason: reason),
                chain: ChainVerdict(status: .notVerified, checkedAt: time, path: [], reason: reason),
                securityObject: nil)
        }
        return MRTDVerification(com: common, dataGroups: decoded, passiveAuthentication: passive)
    }
}

/// A dump decoded and verified.
public struct MRTDVerification: Sendable, Hashable {
    /// EF.COM decoded, nil when absent.
    public var com: Result<EFCOM, LDSError>?
    /// Each data group decoded, or why not.
    public var dataGroups: [Int: Result<LDSDataGroup, LDSError>]
    /// Hashes, signature and chain, each with its verdict.
    public var passiveAuthentication: PassiveAuthenticationResult

    /// DG1's MRZ, when DG1 decoded.
    public var mrz: MachineReadableZone? {
        if case let .success(.dg1(dg1)) = dataGroups[1] { return dg1.mrz }
        return nil
    }
}

/// A dump folder or file that could not be read.
public struct MRTDDumpError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The folder or file.
    public var path: String
    /// One line: what was wrong.
    public var message: String

    /// An error about `path`.
    public init(path: String, _ message: String) {
        self.path = path
        self.message = message
    }

    public var description: String { "\(path): \(message)" }
}
