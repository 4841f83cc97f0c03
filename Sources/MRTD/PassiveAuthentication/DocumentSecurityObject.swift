// EF.SOD, the document security object (ICAO 9303 Part 10 §4.6.2): CMS SignedData, wrapped in
// tag 77, whose content is the LDSSecurityObject (OID 2.23.136.1.1.1): the hash algorithm and
// the hash of every data group, signed by the Document Signer.
internal import SwiftASN1
import CardCrypto

/// EF.SOD, decoded. Decoding checks structure only; ``PassiveAuthentication`` checks hashes,
/// signature and chain.
public struct DocumentSecurityObject: Sendable, Hashable {
    /// The LDSSecurityObject's version: 0 (LDS 1.7), 1 (with LDS version info, LDS 1.8).
    public var version: Int
    /// The hash algorithm of the data group hashes; nil when this library does not support it
    /// (``hashAlgorithmIdentifier`` names it).
    public var hashAlgorithm: Digest?
    /// The hash algorithm's object identifier, dotted.
    public var hashAlgorithmIdentifier: String
    /// Data group number → its hash, as signed.
    public var dataGroupHashes: [Int: [UInt8]]
    /// LDS version info of version 1 (`ldsVersion` "0108" → "1.8"), nil in version 0.
    public var ldsVersion: String?
    /// Unicode version of the LDS version info, nil in version 0.
    public var unicodeVersion: String?
    /// The certificates EF.SOD carries (normally the Document Signer's), those libcrypto parses.
    public var certificates: [Certificate]
    /// Why any carried certificate did not parse.
    public var certificateErrors: [String]
    /// The signingTime signed attribute, when present.
    public var signingTime: Timestamp?
    /// The encapsulated content's type, dotted: `2.23.136.1.1.1` (id-icao-mrtd-security-
    /// ldsSecurityObject) as ICAO 9303-10 asks, or one of ``legacyContentTypes``.
    public var contentType: String

    let signedData: SignedData

    static let ldsSecurityObjectType = "2.23.136.1.1.1"

    /// Content types real issuers wrote in place of id-icao-mrtd-security-ldsSecurityObject,
    /// accepted when the content is an LDSSecurityObject and a signed content-type attribute
    /// names the same type (passive authentication checks the attribute): the OID and its name.
    /// The list is the one gmrtd's document/sod.go (`isValidEContentType`) accepts: id-data in
    /// Chinese passports, an early ICAO arc on Belgian and French documents, and Sdu's (the Dutch
    /// document maker's) own.
    public static let legacyContentTypes: [String: String] = [
        "1.2.840.113549.1.7.1": "id-data",
        "1.3.27.1.1.1": "the early ICAO LDS security object arc",
        "1.2.528.1.1006.1.20.1": "Sdu Identification's LDS security object",
    ]

    /// Whether the content type is the one ICAO 9303-10 asks for.
    public var hasStandardContentType: Bool { contentType == Self.ldsSecurityObjectType }

    /// One line for the report when the content type is a legacy one; nil for the standard type.
    public var contentTypeNote: String? {
        guard !hasStandardContentType else { return nil }
        let name = Self.legacyContentTypes[contentType].map { "\($0) (\(contentType))" } ?? contentType
        return "EF.SOD content type \(name), as some issuers write it (ICAO 9303-10 asks for id-icao-mrtd-security-ldsSecurityObject)"
    }

    /// Decodes EF.SOD as read from the chip (tag `77`), or the bare ContentInfo. BER indefinite
    /// lengths are accepted (US passports use them: proxmark3 PR #1145).
    public init(decoding bytes: [UInt8]) throws(SecurityObjectError) {
        guard !bytes.isEmpty else { throw SecurityObjectError(.format, "EF.SOD is empty") }
        var root = try ASN1Tree.parse(DocumentSecurityObject.firstValue(bytes), "EF.SOD")
        if root.identifier == ASN1Identifier(tagWithNumber: 23, tagClass: .application) {
            guard let inner = try ASN1Tree.children(root, "EF.SOD's template 77").first else {
                throw SecurityObjectError(.format, "EF.SOD's template 77 is empty")
            }
            root = inner
        }
        let signedData = try SignedData(contentInfo: root, "EF.SOD")
        guard signedData.contentType == DocumentSecurityObject.ldsSecurityObjectType
            || DocumentSecurityObject.legacyContentTypes[signedData.contentType] != nil else {
            throw SecurityObjectError(.format, "EF.SOD signs content of type \(signedData.contentType), not an LDSSecurityObject (2.23.136.1.1.1)")
        }
        self.signedData = signedData
        contentType = signedData.contentType
        // LDSSecurityObject ::= SEQUENCE { version, hashAlgorithm, dataGroupHashValues
        // SEQUENCE OF { dataGroupNumber, dataGroupHashValue }, ldsVersionInfo OPTIONAL }
        let fields = try ASN1Tree.sequence(ASN1Tree.parse(signedData.content[...], "the LDSSecurityObject"), "the LDSSecurityObject")
        var iterator = fields.makeIterator()
        guard let versionNode = iterator.next(), let algorithmNode = iterator.next(), let hashesNode = iterator.next() else {
            throw SecurityObjectError(.format, "the LDSSecurityObject is cut short")
        }
        version = try ASN1Tree.integer(versionNode, "the LDSSecurityObject version")
        let algorithm = try AlgorithmIdentifier(algorithmNode, "the LDSSecurityObject hash algorithm")
        hashAlgorithmIdentifier = algorithm.oid
        hashAlgorithm = SignatureScheme.digest(oid: algorithm.oid)
        var hashes: [Int: [UInt8]] = [:]
        for entry in try ASN1Tree.sequence(hashesNode, "the data group hashes") {
            let pair = try ASN1Tree.sequence(entry, "a data group hash")
            guard pair.count == 2, let numberNode = pair.first, let hashNode = pair.last else {
                throw SecurityObjectError(.format, "a data group hash is not a number and a hash")
            }
            let number = try ASN1Tree.integer(numberNode, "a data group number")
            guard (1...16).contains(number) else { throw SecurityObjectError(.format, "EF.SOD lists data group \(number); data groups are 1 to 16") }
            guard hashes[number] == nil else { throw SecurityObjectError(.format, "EF.SOD lists data group \(number) twice") }
            let hash = try ASN1Tree.octets(hashNode, "the hash of DG\(number)")
            if let hashAlgorithm, hash.count != hashAlgorithm.size {
                throw SecurityObjectError(.format, "the hash of DG\(number) has \(hash.count) bytes; \(hashAlgorithm) has \(hashAlgorithm.size)")
            }
            hashes[number] = hash
        }
        dataGroupHashes = hashes
        if let info = iterator.next() {
            let parts = try ASN1Tree.sequence(info, "the LDS version info")
            ldsVersion = parts.first.flatMap(ASN1Tree.text).map { EFCOM.version(Array($0.utf8), parts: 2) }
            unicodeVersion = parts.dropFirst().first.flatMap(ASN1Tree.text).map { EFCOM.version(Array($0.utf8), parts: 3) }
        }
        var certificates: [Certificate] = []
        var errors: [String] = []
        for der in signedData.certificates {
            do {
                certificates.append(try Certificate(der: der))
            } catch {
                errors.append(error.message)
            }
        }
        self.certificates = certificates
        self.certificateErrors = errors
        self.signingTime = signedData.signerInfos.first?.signingTime
    }

    /// The first BER value of `bytes` (a file read past its end may carry padding after it).
    static func firstValue(_ bytes: [UInt8]) -> ArraySlice<UInt8> {
        // Definite outer length: cut there. Indefinite: leave it to the parser.
        guard bytes.count >= 2 else { return bytes[...] }
        var i = 1
        if bytes[0] & 0x1F == 0x1F {
            while i < bytes.count, bytes[i] & 0x80 != 0 { i += 1 }
            i += 1
        }
        guard i < bytes.count else { return bytes[...] }
        let first = bytes[i]
        i += 1
        var length = 0
        if first < 0x80 {
            length = Int(first)
        } else if first == 0x80 {
            return bytes[...]
        } else {
            let count = Int(first & 0x7F)
            guard count <= 4, bytes.count - i >= count else { return bytes[...] }
            for _ in 0..<count {
                length = length << 8 | Int(bytes[i])
                i += 1
            }
        }
        guard bytes.count - i >= length else { return bytes[...] }
        return bytes[..<(i + length)]
    }

    /// For libFuzzer: decodes and ignores the result.
    public static func fuzz(_ data: [UInt8]) {
        _ = try? DocumentSecurityObject(decoding: data)
    }
}
