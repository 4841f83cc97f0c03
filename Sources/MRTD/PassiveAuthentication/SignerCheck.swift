// The signer of a SignedData, checked: its certificate found by the SignerInfo's identifier,
// the messageDigest attribute compared with the content's hash (constant time), the content
// type attribute with the content's type (RFC 5652 §5.3, §11.1), and the signature over the
// signed attributes verified by the algorithm the SignerInfo names.
internal import COpenSSL
internal import SwiftASN1
import CardCrypto

struct SignerCheck {
    var signer: Certificate?
    var scheme: SignatureScheme?
    var digest: Digest?
    /// nil when the SignerInfo has no signed attributes (then the signature covers the content).
    var messageDigestMatches: Bool?
    var signatureValid = false
    var signingTime: Timestamp?
    /// The first problem; nil when the signer, the message digest and the signature all hold.
    var failure: String?
    var notes: [String] = []

    var verified: Bool { failure == nil && signatureValid && messageDigestMatches != false }

    /// `what` names the file in messages (`EF.SOD`, `the master list`); `more` are certificates
    /// beyond the SignedData's own where the signer may be found (a trust store's).
    init(_ signedData: SignedData, certificates: [Certificate], more: [Certificate], what: String) {
        guard let info = signedData.signerInfos.first else {
            failure = "\(what) has no SignerInfo"
            return
        }
        if signedData.signerInfos.count > 1 { notes.append("\(what) has \(signedData.signerInfos.count) SignerInfos; the first is checked") }
        signingTime = info.signingTime
        guard let digest = SignatureScheme.digest(oid: info.digestAlgorithm.oid) else {
            failure = "the digest algorithm \(info.digestAlgorithm.oid) is not supported"
            return
        }
        self.digest = digest
        do {
            scheme = try SignatureScheme(signatureAlgorithm: info.signatureAlgorithm, digestAlgorithm: digest)
        } catch {
            failure = error.message
            return
        }
        let found = SignerCheck.findSigner(info.signerIdentifier, in: certificates, more)
        signer = found.certificate
        if let note = found.note { notes.append(note) }
        guard let signer else {
            failure = "the signer's certificate is neither in \(what) nor in the trust store"
            return
        }
        var signedBytes = signedData.content
        if let written = info.signedAttributesAsWritten {
            let messageDigest: [UInt8]?
            let contentType: String?
            do {
                messageDigest = try info.messageDigest
                contentType = try info.contentType
            } catch {
                failure = error.message
                return
            }
            guard let messageDigest else {
                failure = "the signed attributes lack the message digest (RFC 5652 §5.3)"
                return
            }
            let matches = constantTimeEquals(digest.hash(signedData.content), messageDigest)
            messageDigestMatches = matches
            if !matches {
                failure = "the messageDigest attribute is not the \(digest) of the signed content"
            }
            if contentType != signedData.contentType {
                failure = failure ?? (contentType == nil ? "the signed attributes lack the content type (RFC 5652 §11.1)" : "the content-type attribute does not name the signed content's type")
            }
            signedBytes = written
        }
        guard let scheme else { return }
        var problem = scheme.verify(signature: info.signature, over: signedBytes, certificate: signer)
        if problem != nil, let der = info.signedAttributesAsDER, scheme.verify(signature: info.signature, over: der, certificate: signer) == nil {
            problem = nil
            notes.append("the signature covers the DER re-encoding of the signed attributes, not their BER as written")
        }
        signatureValid = problem == nil
        if let problem { failure = failure ?? problem }
    }

    /// The certificate the signer identifier names: exactly (issuer by libcrypto's comparison
    /// and serial, or subject key identifier), else with the issuer's RDNs in another order
    /// (Malaysian EF.SODs), else the only certificate there is. The note says which.
    static func findSigner(_ identifier: SignerIdentifier, in primary: [Certificate], _ more: [Certificate]) -> (certificate: Certificate?, note: String?) {
        let all = primary + more
        switch identifier {
        case let .subjectKeyIdentifier(keyIdentifier):
            if let match = all.first(where: { $0.subjectKeyIdentifier == keyIdentifier }) { return (match, nil) }
        case let .issuerAndSerialNumber(issuer, relativeNames, serial):
            let magnitude = Array(serial.drop(while: { $0 == 0 }))
            let sameSerial = all.filter { $0.serialMagnitude == magnitude }
            if let name = issuer.withUnsafeBufferPointer({ buffer -> OpaquePointer? in
                var pointer: UnsafePointer<UInt8>? = buffer.baseAddress
                return d2i_X509_NAME(nil, &pointer, buffer.count)
            }) {
                defer { X509_NAME_free(name) }
                if let match = sameSerial.first(where: { X509_NAME_cmp(X509_get_issuer_name($0.x509), name) == 0 }) { return (match, nil) }
            }
            ERR_clear_error()
            let wanted = relativeNames.sorted { $0.lexicographicallyPrecedes($1) }
            if let match = sameSerial.first(where: { relativeNameSet($0.issuerDER) == wanted }) {
                return (match, "the SignerInfo names the signer's issuer with its RDNs in another order than the certificate")
            }
        }
        if primary.count == 1, let only = primary.first {
            return (only, "the SignerInfo's identifier matches no certificate; the only certificate present was used")
        }
        return (nil, nil)
    }

    /// The DER of each RDN of a Name, sorted: equal for names that differ only in RDN order.
    static func relativeNameSet(_ nameDER: [UInt8]) -> [[UInt8]]? {
        guard let node = try? BER.parse(nameDER), case let .constructed(rdns) = node.content else { return nil }
        return rdns.map { ASN1Tree.derEncoding($0) }.sorted { $0.lexicographicallyPrecedes($1) }
    }
}
