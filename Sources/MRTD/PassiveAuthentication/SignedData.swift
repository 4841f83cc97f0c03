// CMS SignedData (RFC 5652 §5) as EF.SOD (ICAO 9303 Part 10 §4.6.2) and CSCA master lists
// (Part 12 §9) use it: one signer, signed attributes, the signer's certificate usually inside.
internal import SwiftASN1

/// An algorithm and its parameters' encoding.
struct AlgorithmIdentifier: Hashable, Sendable {
    var oid: String
    /// The parameters' DER, nil when absent (a NULL is kept as `05 00`).
    var parameters: [UInt8]?
    var parameterNode: ASN1Node?

    init(_ node: ASN1Node, _ what: String) throws(SecurityObjectError) {
        let parts = try ASN1Tree.sequence(node, what)
        guard let first = parts.first else { throw SecurityObjectError(.format, "\(what) is empty") }
        oid = try ASN1Tree.oid(first, what)
        parameterNode = parts.dropFirst().first
        parameters = parameterNode.map { Array($0.encodedBytes) }
    }
}

/// Who signed: issuer and serial number, or subject key identifier (RFC 5652 §5.3).
enum SignerIdentifier: Hashable, Sendable {
    /// The issuer's Name as encoded, its RDNs one by one, and the serial's content bytes.
    case issuerAndSerialNumber(issuer: [UInt8], relativeNames: [[UInt8]], serial: [UInt8])
    case subjectKeyIdentifier([UInt8])
}

/// One SignerInfo.
struct SignerInfo: Hashable, Sendable {
    var version: Int
    var signerIdentifier: SignerIdentifier
    var digestAlgorithm: AlgorithmIdentifier
    /// What the signature covers when signed attributes are present: their DER with the SET
    /// tag (RFC 5652 §5.4), as written; and re-encoded in DER when the BER differed.
    var signedAttributesAsWritten: [UInt8]?
    var signedAttributesAsDER: [UInt8]?
    /// Attribute type → its values' encodings.
    var attributes: [String: [ASN1Node]]
    var signatureAlgorithm: AlgorithmIdentifier
    var signature: [UInt8]

    static let contentTypeAttribute = "1.2.840.113549.1.9.3"
    static let messageDigestAttribute = "1.2.840.113549.1.9.4"
    static let signingTimeAttribute = "1.2.840.113549.1.9.5"

    init(_ node: ASN1Node) throws(SecurityObjectError) {
        let parts = try ASN1Tree.sequence(node, "a SignerInfo")
        var iterator = parts.makeIterator()
        guard let versionNode = iterator.next() else { throw SecurityObjectError(.format, "a SignerInfo is empty") }
        version = try ASN1Tree.integer(versionNode, "the SignerInfo version")
        guard let sid = iterator.next() else { throw SecurityObjectError(.format, "a SignerInfo has no signer identifier") }
        if sid.identifier == .sequence {
            let fields = try ASN1Tree.children(sid, "the signer's issuer and serial number")
            guard fields.count == 2, let name = fields.first, let serial = fields.last else {
                throw SecurityObjectError(.format, "the signer's issuer and serial number are not two fields")
            }
            let rdns = try ASN1Tree.sequence(name, "the signer's issuer name").map { Array(ASN1Tree.derEncoding($0)) }
            signerIdentifier = .issuerAndSerialNumber(issuer: ASN1Tree.derEncoding(name), relativeNames: rdns,
                                                      serial: try ASN1Tree.integerBytes(serial, "the signer's serial number"))
        } else if ASN1Tree.isContext(sid, 0) {
            signerIdentifier = .subjectKeyIdentifier(try ASN1Tree.octets(sid, "the signer's key identifier", identifier: sid.identifier))
        } else {
            throw SecurityObjectError(.format, "the signer identifier is neither issuer and serial number nor a key identifier")
        }
        guard let digestNode = iterator.next() else { throw SecurityObjectError(.format, "a SignerInfo has no digest algorithm") }
        digestAlgorithm = try AlgorithmIdentifier(digestNode, "the SignerInfo's digest algorithm")
        guard var next = iterator.next() else { throw SecurityObjectError(.format, "a SignerInfo ends after its digest algorithm") }
        attributes = [:]
        if ASN1Tree.isContext(next, 0) {
            var written = Array(next.encodedBytes)
            if !written.isEmpty { written[0] = 0x31 }  // [0] IMPLICIT → SET OF (RFC 5652 §5.4)
            var der = ASN1Tree.derEncoding(next)
            if !der.isEmpty { der[0] = 0x31 }
            signedAttributesAsWritten = written
            signedAttributesAsDER = der == written ? nil : der
            for attribute in try ASN1Tree.children(next, "the signed attributes") {
                let fields = try ASN1Tree.sequence(attribute, "a signed attribute")
                guard let type = fields.first, let values = fields.dropFirst().first else {
                    throw SecurityObjectError(.format, "a signed attribute lacks its type or values")
                }
                let oid = try ASN1Tree.oid(type, "a signed attribute's type")
                guard attributes[oid] == nil else {
                    throw SecurityObjectError(.format, "the signed attribute \(oid) appears twice")
                }
                attributes[oid] = try ASN1Tree.set(values, "the values of signed attribute \(oid)")
            }
            guard let after = iterator.next() else { throw SecurityObjectError(.format, "a SignerInfo ends after its signed attributes") }
            next = after
        }
        signatureAlgorithm = try AlgorithmIdentifier(next, "the SignerInfo's signature algorithm")
        guard let signatureNode = iterator.next() else { throw SecurityObjectError(.format, "a SignerInfo has no signature") }
        signature = try ASN1Tree.octets(signatureNode, "the signature")
    }

    /// The one value of a signed attribute; nil when absent, an error when it has several.
    func singleValue(_ oid: String, _ name: String) throws(SecurityObjectError) -> ASN1Node? {
        guard let values = attributes[oid] else { return nil }
        guard values.count == 1, let value = values.first else {
            throw SecurityObjectError(.format, "the \(name) attribute has \(values.count) values, not one")
        }
        return value
    }

    var messageDigest: [UInt8]? {
        get throws(SecurityObjectError) {
            try singleValue(SignerInfo.messageDigestAttribute, "message-digest").map { node throws(SecurityObjectError) in
                try ASN1Tree.octets(node, "the message-digest attribute")
            }
        }
    }

    var contentType: String? {
        get throws(SecurityObjectError) {
            try singleValue(SignerInfo.contentTypeAttribute, "content-type").map { node throws(SecurityObjectError) in
                try ASN1Tree.oid(node, "the content-type attribute")
            }
        }
    }

    var signingTime: Timestamp? {
        (try? singleValue(SignerInfo.signingTimeAttribute, "signing-time")).flatMap { $0.flatMap(ASN1Tree.time) }
    }
}

/// ContentInfo → SignedData, parsed.
struct SignedData: Hashable, Sendable {
    var version: Int
    var digestAlgorithms: [AlgorithmIdentifier]
    var contentType: String
    /// The encapsulated content's octets (eContent), joined when segmented.
    var content: [UInt8]
    /// Each certificate of the `certificates` field, as encoded.
    var certificates: [[UInt8]]
    var signerInfos: [SignerInfo]

    static let signedDataType = "1.2.840.113549.1.7.2"

    /// Parses a ContentInfo holding SignedData; `what` names the file in errors.
    init(contentInfo bytes: ArraySlice<UInt8>, _ what: String) throws(SecurityObjectError) {
        try self.init(contentInfo: ASN1Tree.parse(bytes, what), what)
    }

    init(contentInfo root: ASN1Node, _ what: String) throws(SecurityObjectError) {
        let info = try ASN1Tree.sequence(root, "\(what)'s ContentInfo")
        guard info.count == 2, let typeNode = info.first, let wrapper = info.last else {
            throw SecurityObjectError(.format, "\(what)'s ContentInfo is not a content type and a content")
        }
        let type = try ASN1Tree.oid(typeNode, "\(what)'s content type")
        guard type == SignedData.signedDataType else {
            throw SecurityObjectError(.format, "\(what) is CMS of type \(type), not SignedData")
        }
        guard ASN1Tree.isContext(wrapper, 0), let signedDataNode = try ASN1Tree.children(wrapper, "\(what)'s content").first else {
            throw SecurityObjectError(.format, "\(what)'s SignedData is missing")
        }
        var parts = try ASN1Tree.sequence(signedDataNode, "\(what)'s SignedData").makeIterator()
        guard let versionNode = parts.next(), let digestsNode = parts.next(), let encapsulated = parts.next() else {
            throw SecurityObjectError(.format, "\(what)'s SignedData is cut short")
        }
        version = try ASN1Tree.integer(versionNode, "the SignedData version")
        var digests: [AlgorithmIdentifier] = []
        for node in try ASN1Tree.set(digestsNode, "the SignedData digest algorithms") {
            digests.append(try AlgorithmIdentifier(node, "a SignedData digest algorithm"))
        }
        digestAlgorithms = digests
        let encapsulatedParts = try ASN1Tree.sequence(encapsulated, "the encapsulated content")
        guard let eContentType = encapsulatedParts.first else { throw SecurityObjectError(.format, "the encapsulated content is empty") }
        contentType = try ASN1Tree.oid(eContentType, "the encapsulated content type")
        guard let explicit = encapsulatedParts.dropFirst().first, ASN1Tree.isContext(explicit, 0),
              let octets = try ASN1Tree.children(explicit, "the encapsulated content").first else {
            throw SecurityObjectError(.format, "\(what) holds no encapsulated content (detached signatures are not used by ICAO 9303)")
        }
        content = try ASN1Tree.octets(octets, "the encapsulated content")
        var certificates: [[UInt8]] = []
        var signers: [SignerInfo]?
        while let node = parts.next() {
            if ASN1Tree.isContext(node, 0) {
                for certificate in try ASN1Tree.children(node, "the certificates") where certificate.identifier == .sequence {
                    certificates.append(Array(certificate.encodedBytes))
                }
            } else if ASN1Tree.isContext(node, 1) {
                continue  // CRLs: out of scope
            } else if node.identifier == .set {
                var infos: [SignerInfo] = []
                for info in try ASN1Tree.children(node, "the signer infos") { infos.append(try SignerInfo(info)) }
                signers = infos
            } else {
                throw SecurityObjectError(.format, "\(what)'s SignedData holds an unexpected field")
            }
        }
        guard let signers, !signers.isEmpty else { throw SecurityObjectError(.format, "\(what) has no SignerInfo") }
        self.certificates = certificates
        self.signerInfos = signers
    }
}
