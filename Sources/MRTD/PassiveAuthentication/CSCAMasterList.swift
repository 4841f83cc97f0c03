// CSCA master lists (ICAO 9303 Part 12 §9; the German list from BSI, the ICAO PKD's): CMS
// SignedData whose content (OID 2.23.136.1.1.2) is CscaMasterList ::= SEQUENCE { version,
// certList SET OF Certificate }, signed by a master-list signer whose certificate chains to a
// CSCA of the list itself. A list is taken only when that signature and that chain hold.
internal import SwiftASN1

/// A CSCA master list whose own signature and signer chain were verified.
public struct CSCAMasterList: Sendable, Hashable {
    /// The CSCA certificates (and link certificates) of the list, those libcrypto parses.
    public var certificates: [Certificate]
    /// How many certificates of the list did not parse (skipped).
    public var skippedCertificates: Int
    /// The master-list signer.
    public var signer: CertificateSummary
    /// The CSCA the signer chains to.
    public var signerIssuer: CertificateSummary?
    /// The list's signingTime attribute, when present.
    public var signingTime: Timestamp?
    /// The CscaMasterList version (0).
    public var version: Int

    static let masterListType = "2.23.136.1.1.2"

    /// Decodes a master list and verifies it: the messageDigest attribute over the list, the
    /// signer's signature, and the signer's chain to a CSCA inside the list (at the signing time
    /// when the list carries one, else without validity periods: a list is read long after its
    /// short-lived signer certificate expired). Throws, with one line, when any step fails.
    public init(verifying bytes: [UInt8]) throws(SecurityObjectError) {
        let signedData = try SignedData(contentInfo: DocumentSecurityObject.firstValue(bytes), "the master list")
        guard signedData.contentType == CSCAMasterList.masterListType else {
            throw SecurityObjectError(.format, "the CMS content is of type \(signedData.contentType), not a CSCA master list (2.23.136.1.1.2)")
        }
        let fields = try ASN1Tree.sequence(ASN1Tree.parse(signedData.content[...], "the master list content"), "the CscaMasterList")
        guard fields.count >= 2, let versionNode = fields.first, let listNode = fields.dropFirst().first else {
            throw SecurityObjectError(.format, "the CscaMasterList is not a version and a certificate list")
        }
        version = try ASN1Tree.integer(versionNode, "the master list version")
        var certificates: [Certificate] = []
        var skipped = 0
        for node in try ASN1Tree.set(listNode, "the master list's certificates") {
            if let certificate = try? Certificate(der: Array(node.encodedBytes)) {
                certificates.append(certificate)
            } else {
                skipped += 1
            }
        }
        guard !certificates.isEmpty else { throw SecurityObjectError(.format, "the master list holds no certificate") }
        var carried: [Certificate] = []
        for der in signedData.certificates {
            if let certificate = try? Certificate(der: der) { carried.append(certificate) }
        }
        let check = SignerCheck(signedData, certificates: carried, more: [], what: "the master list")
        guard check.verified, let signer = check.signer else {
            throw SecurityObjectError(.format, "the master list's own signature does not verify: \(check.failure ?? "no signer")")
        }
        let chain = CertificateChain.validate(signer, intermediates: carried.filter { $0 != signer }, anchors: certificates,
                                              at: check.signingTime, names: ["master-list signer", "CSCA"])
        guard chain.valid else {
            throw SecurityObjectError(.format, "the master-list signer does not chain to a CSCA in the list: \(chain.reason)")
        }
        self.certificates = certificates
        self.skippedCertificates = skipped
        self.signer = signer.summary
        self.signerIssuer = chain.path.count > 1 ? chain.path.last?.summary : nil
        self.signingTime = check.signingTime
    }

    /// For libFuzzer: decodes and verifies, ignoring the result.
    public static func fuzz(_ data: [UInt8]) {
        _ = try? CSCAMasterList(verifying: data)
    }
}
