// What an emulated eMRTD holds (files, passwords, keys), loaded from and written to a document
// directory.
import FoundationEssentials

/// What an emulated eMRTD holds: its elementary files as bytes, the passwords that open it
/// (the MRZ fields, taken from DG1 when not given, and the CAN), and the private keys behind
/// DG15 (Active Authentication) and DG14 (Chip Authentication).
///
/// Make one with `MRTDSpecimen.generate(_:)`, or load a document's own files with
/// `init(directory:)`; serve it with `MRTDChip`.
public struct MRTDDocument: Sendable {
    public var files: [MRTDFile: [UInt8]]
    /// The MRZ fields BAC and PACE-MRZ use; nil takes them from DG1.
    public var accessKey: MRZAccessKey?
    /// The card access number PACE-CAN uses (digits, usually six).
    public var can: String?
    public var activeAuthenticationKey: ChipPrivateKey?
    public var chipAuthenticationKey: ChipPrivateKey?
    /// The CSCA certificate (DER) the document signer chains to, when known: not on the chip,
    /// kept for whoever verifies what it serves.
    public var cscaCertificate: [UInt8]?
    /// A CSCA master list (ICAO 9303 Part 12 §9) holding that CSCA, signed under it, when known:
    /// the way trust reaches verifiers.
    public var cscaMasterList: [UInt8]?

    public init(files: [MRTDFile: [UInt8]], accessKey: MRZAccessKey? = nil, can: String? = nil,
                activeAuthenticationKey: ChipPrivateKey? = nil, chipAuthenticationKey: ChipPrivateKey? = nil,
                cscaCertificate: [UInt8]? = nil) {
        self.files = files
        self.accessKey = accessKey
        self.can = can
        self.activeAuthenticationKey = activeAuthenticationKey
        self.chipAuthenticationKey = chipAuthenticationKey
        self.cscaCertificate = cscaCertificate
    }

    /// The access key given, or the one DG1's MRZ spells.
    public var effectiveAccessKey: MRZAccessKey? {
        accessKey ?? files[.dataGroup(1)].flatMap { MRZAccessKey(dataGroup1: $0) }
    }

    /// Names in a document directory beside the EFs (`EF.COM.bin`, `DG1.bin`…, see
    /// `MRTDFile.fileName`).
    public enum DirectoryName {
        /// PEM private key for Active Authentication (DG15's key).
        public static let activeAuthenticationKey = "ActiveAuthenticationKey.pem"
        /// PEM private key for Chip Authentication (DG14's key).
        public static let chipAuthenticationKey = "ChipAuthenticationKey.pem"
        /// The CAN, as text.
        public static let can = "CAN.txt"
        /// The CSCA certificate, PEM.
        public static let csca = "CSCA.pem"
        /// A CSCA master list holding it (CMS, DER).
        public static let masterList = "CSCA.ml"
    }

    /// Loads a document from a directory of raw EFs as readers dump them (`EF.COM.bin`,
    /// `EF.SOD.bin`, `DG1.bin`…`DG16.bin`, `EF.CardAccess.bin`, optionally `EF.CardSecurity.bin`,
    /// `EF.DIR.bin`, `EF.ATR.bin`), with the optional PEM keys and CAN named in `DirectoryName`.
    /// Needs DG1 (for the MRZ) or a CAN.
    public init(directory: String) throws(MRTDDocumentError) {
        let base = directory.hasSuffix("/") ? directory : directory + "/"
        guard (try? FileManager.default.contentsOfDirectory(atPath: base)) != nil else {
            throw MRTDDocumentError(.io, "'\(directory)' is not a directory that can be read")
        }
        func read(_ name: String) -> [UInt8]? { FileManager.default.contents(atPath: base + name).map { Array($0) } }
        var files: [MRTDFile: [UInt8]] = [:]
        for file in MRTDFile.all {
            guard let bytes = read(file.fileName) else { continue }
            guard !bytes.isEmpty else { throw MRTDDocumentError(.badFile, "\(file.fileName) is empty") }
            if let tag = file.dataGroupTag, bytes[0] != tag {
                throw MRTDDocumentError(.badFile, "\(file.fileName) does not start with the \(file) tag \(String(tag, radix: 16, uppercase: true))")
            }
            files[file] = bytes
        }
        guard !files.isEmpty else { throw MRTDDocumentError(.missingFile, "'\(directory)' holds none of EF.COM.bin, EF.SOD.bin, DG1.bin…") }
        func key(_ name: String) throws(MRTDDocumentError) -> ChipPrivateKey? {
            guard let bytes = read(name) else { return nil }
            do { return try ChipPrivateKey(pem: String(decoding: bytes, as: UTF8.self)) } catch {
                throw MRTDDocumentError(.badKey, "\(name): \(error.message)")
            }
        }
        let can = read(DirectoryName.can).map { String(decoding: $0, as: UTF8.self).filter { !$0.isWhitespace } }
        var csca: [UInt8]? = nil
        if let pem = read(DirectoryName.csca) { csca = PEM.decode(String(decoding: pem, as: UTF8.self)) }
        self.init(files: files, can: can, activeAuthenticationKey: try key(DirectoryName.activeAuthenticationKey),
                  chipAuthenticationKey: try key(DirectoryName.chipAuthenticationKey), cscaCertificate: csca)
        guard effectiveAccessKey != nil || can != nil else {
            throw MRTDDocumentError(.missingFile, "'\(directory)' has no DG1.bin with an MRZ and no \(DirectoryName.can): nothing would open the chip")
        }
    }

    /// Writes every EF, the keys (PKCS#8 PEM), the CAN, the CSCA certificate and master list into
    /// `directory` (created when missing), as `init(directory:)` reads them.
    public func write(to directory: String) throws(MRTDDocumentError) {
        let base = directory.hasSuffix("/") ? directory : directory + "/"
        do { try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true) } catch {
            throw MRTDDocumentError(.io, "cannot create '\(directory)'")
        }
        // The private keys and the CAN are the owner's alone (0600), as every secret the tool writes.
        func write(_ name: String, _ bytes: [UInt8], secret: Bool = false) throws(MRTDDocumentError) {
            try? FileManager.default.removeItem(atPath: base + name)
            guard FileManager.default.createFile(atPath: base + name, contents: Data(bytes),
                                                 attributes: secret ? [.posixPermissions: 0o600] : nil) else {
                throw MRTDDocumentError(.io, "cannot write '\(base + name)'")
            }
        }
        for (file, bytes) in files.sorted(by: { $0.key < $1.key }) { try write(file.fileName, bytes) }
        if let k = activeAuthenticationKey { try write(DirectoryName.activeAuthenticationKey, Array(k.pem.utf8), secret: true) }
        if let k = chipAuthenticationKey { try write(DirectoryName.chipAuthenticationKey, Array(k.pem.utf8), secret: true) }
        if let can { try write(DirectoryName.can, Array((can + "\n").utf8), secret: true) }
        if let cscaCertificate { try write(DirectoryName.csca, Array(PEM.encode(cscaCertificate, label: "CERTIFICATE").utf8)) }
        if let cscaMasterList { try write(DirectoryName.masterList, cscaMasterList) }
    }
}

extension PEM {
    /// The bytes of the first PEM block in `text`; nil when there is none.
    static func decode(_ text: String) -> [UInt8]? {
        var inside = false
        var body = ""
        for line in text.split(whereSeparator: \.isNewline) {
            if line.hasPrefix("-----BEGIN") { inside = true; continue }
            if line.hasPrefix("-----END") { break }
            if inside { body += line.filter { !$0.isWhitespace } }
        }
        return Data(base64Encoded: body).map { Array($0) }
    }
}
