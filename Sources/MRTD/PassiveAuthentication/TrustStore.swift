// Where trust comes from: CSCA certificates (PEM or DER, one file or a folder of them) and CSCA
// master lists, each list taken only after its own signature is verified.
internal import SwiftASN1

/// A file of the trust store that could not be used: the file, and what was wrong.
public struct TrustStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The path (or the name given for bytes).
    public var file: String
    /// One line: what was wrong.
    public var message: String

    /// An error about `file`.
    public init(file: String, _ message: String) {
        self.file = file
        self.message = message
    }

    public var description: String { "\(file): \(message)" }
}

/// The CSCA certificates passive authentication chains Document Signers to. Every certificate
/// in it is a trust anchor (as ICAO trusts every CSCA of a master list, link certificates
/// included); a Document Signer certificate put here is trusted by itself.
public struct TrustStore: Sendable, Hashable {
    /// Every trusted certificate, without duplicates, in the order loaded.
    public private(set) var certificates: [Certificate] = []
    private var known: Set<Certificate> = []
    /// What was loaded, one line per file: `DE_ML.ml: master list signed by …, 588 certificates`.
    public private(set) var sources: [String] = []

    /// An empty store: nothing is trusted.
    public init() {}

    /// A store trusting exactly `certificates`.
    public init(certificates: [Certificate]) {
        for certificate in certificates { add(certificate) }
    }

    /// Adds one certificate (ignored when already there).
    public mutating func add(_ certificate: Certificate) {
        if known.insert(certificate).inserted { certificates.append(certificate) }
    }

    /// Adds a verified master list's certificates.
    public mutating func add(_ list: CSCAMasterList, source: String) {
        for certificate in list.certificates { add(certificate) }
        sources.append("\(source): master list signed by \(list.signer.subject), \(list.certificates.count) certificates")
    }

    /// Adds what `bytes` hold, told by their content: PEM (any number of CERTIFICATE blocks), a
    /// DER certificate, or a CSCA master list (CMS, verified before use). `source` names the file
    /// in errors.
    public mutating func add(contentsOf bytes: [UInt8], source: String) throws(TrustStoreError) {
        var text = bytes
        if text.starts(with: [0xEF, 0xBB, 0xBF]) { text.removeFirst(3) }
        let leading = text.prefix(while: { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 })
        if text.dropFirst(leading.count).starts(with: Array("-----BEGIN".utf8)) {
            let documents: [PEMDocument]
            do {
                documents = try PEMDocument.parseMultiple(pemString: String(decoding: text, as: UTF8.self))
            } catch {
                throw TrustStoreError(file: source, "not readable PEM (\(ASN1Tree.reason(error)))")
            }
            var count = 0
            for document in documents {
                switch document.discriminator {
                case "CERTIFICATE", "TRUSTED CERTIFICATE", "X509 CERTIFICATE":
                    do {
                        add(try Certificate(der: document.derBytes))
                    } catch {
                        throw TrustStoreError(file: source, "certificate \(count + 1): \(error.message)")
                    }
                    count += 1
                case "CMS", "PKCS7":
                    try addMasterList(document.derBytes, source: source)
                    count += 1
                default:
                    continue
                }
            }
            guard count > 0 else { throw TrustStoreError(file: source, "holds no PEM certificate") }
            sources.append("\(source): \(count) PEM block\(count == 1 ? "" : "s")")
            return
        }
        if TrustStore.isSignedData(text) {
            try addMasterList(text, source: source)
            return
        }
        do {
            let certificate = try Certificate(der: text)
            add(certificate)
            sources.append("\(source): \(certificate.subject)")
        } catch {
            throw TrustStoreError(file: source, "neither a PEM or DER certificate nor a CSCA master list (\(error.message))")
        }
    }

    mutating func addMasterList(_ bytes: [UInt8], source: String) throws(TrustStoreError) {
        do {
            add(try CSCAMasterList(verifying: bytes), source: source)
        } catch {
            throw TrustStoreError(file: source, "refused: \(error.message)")
        }
    }

    /// A CMS ContentInfo of SignedData: SEQUENCE { OID 1.2.840.113549.1.7.2, … }.
    static func isSignedData(_ bytes: [UInt8]) -> Bool {
        let oid: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02]
        guard bytes.first == 0x30, bytes.count > 16 else { return false }
        // The OID follows the outer length (1 to 5 bytes).
        for start in 2...6 where bytes.count >= start + oid.count && Array(bytes[start..<(start + oid.count)]) == oid {
            return true
        }
        return false
    }

    /// Loads files and folders: each file by its content (see ``add(contentsOf:source:)``); in a
    /// folder, the files named `*.pem`, `*.crt`, `*.cer`, `*.der`, `*.ml` (other files are left
    /// alone), sorted by name. The first file that does not load ends it with an error naming it.
    public static func load(paths: [String]) throws(TrustStoreError) -> TrustStore {
        var store = TrustStore()
        for path in paths { try store.load(path: path) }
        return store
    }

    /// Loads one file or folder into the store (see ``load(paths:)``).
    public mutating func load(path: String) throws(TrustStoreError) {
        let entries: [String]
        do {
            entries = try FileInput.isDirectory(path)
                ? FileInput.list(path).filter { name in TrustStore.extensions.contains { name.lowercased().hasSuffix($0) } }.map { FileInput.join(path, $0) }
                : [path]
        } catch {
            throw TrustStoreError(file: path, error.message)
        }
        if entries.isEmpty { throw TrustStoreError(file: path, "the folder holds no .pem, .crt, .cer, .der or .ml file") }
        for file in entries {
            let bytes: [UInt8]
            do {
                bytes = try FileInput.read(file)
            } catch {
                throw TrustStoreError(file: file, error.message)
            }
            try add(contentsOf: bytes, source: file)
        }
    }

    static let extensions = [".pem", ".crt", ".cer", ".der", ".ml"]

    /// For libFuzzer: reads the bytes as a trust file, ignoring the result.
    public static func fuzz(_ data: [UInt8]) {
        var store = TrustStore()
        try? store.add(contentsOf: data, source: "fuzz")
    }
}
