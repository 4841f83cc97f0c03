// The signature algorithm of a SignerInfo (RFC 5652 §5.3, RFC 4055 for RSASSA-PSS, RFC 5758
// for ECDSA, BSI TR-03111 for plain ECDSA), and its verification through libcrypto.
//
// Why EVP_DigestVerify rather than CMS_verify: each step of passive authentication gets its own
// verdict (the messageDigest attribute over the content, the signature over the attributes),
// the algorithm comes from the SignerInfo and not from the certificate (RSASSA-PSS under an
// rsaEncryption key: tananaev/passport-reader PR #99), and signers are matched the way real
// documents name them (CMS_verify refuses Malaysian EF.SODs whose SignerInfo lists the issuer's
// RDNs in another order). EVP_DigestVerify checks exactly one signature and nothing else.
internal import COpenSSL
import CardCrypto

/// How a signature was made.
public enum SignatureScheme: Sendable, Hashable, CustomStringConvertible {
    /// RSA with PKCS#1 v1.5 padding (RFC 8017 §8.2).
    case rsaPKCS1v15(Digest)
    /// RSASSA-PSS (RFC 8017 §8.1) with its parameters (RFC 4055 §3.1).
    case rsaPSS(hash: Digest, mgf1Hash: Digest, saltLength: Int)
    /// ECDSA, the signature a DER `ECDSA-Sig-Value` (X9.62).
    case ecdsa(Digest)
    /// ECDSA, the signature `r ‖ s` as fixed-length integers (BSI TR-03111 §5.2.1, ecdsa-plain).
    case ecdsaPlain(Digest)

    public var description: String {
        switch self {
        case let .rsaPKCS1v15(d): return "RSA PKCS#1 v1.5 with \(d)"
        case let .rsaPSS(h, m, s): return "RSASSA-PSS with \(h), MGF1 with \(m), salt \(s) bytes"
        case let .ecdsa(d): return "ECDSA with \(d)"
        case let .ecdsaPlain(d): return "ECDSA (plain r‖s) with \(d)"
        }
    }

    /// The hash the signature is computed with.
    public var digest: Digest {
        switch self {
        case let .rsaPKCS1v15(d), let .ecdsa(d), let .ecdsaPlain(d): return d
        case let .rsaPSS(h, _, _): return h
        }
    }

    static let digestOIDs: [String: Digest] = [
        "1.3.14.3.2.26": .sha1, "2.16.840.1.101.3.4.2.4": .sha224, "2.16.840.1.101.3.4.2.1": .sha256,
        "2.16.840.1.101.3.4.2.2": .sha384, "2.16.840.1.101.3.4.2.3": .sha512,
    ]

    static func digest(oid: String) -> Digest? { digestOIDs[oid] }

    /// The scheme a SignerInfo names; `digestAlgorithm` stands in where the signature algorithm
    /// names only the key type (rsaEncryption, id-ecPublicKey: both occur in EF.SODs).
    init(signatureAlgorithm: AlgorithmIdentifier, digestAlgorithm: Digest?) throws(SecurityObjectError) {
        func needDigest() throws(SecurityObjectError) -> Digest {
            guard let digestAlgorithm else {
                throw SecurityObjectError(.unsupported, "the signature algorithm \(signatureAlgorithm.oid) takes its hash from the digest algorithm, which is not supported")
            }
            return digestAlgorithm
        }
        switch signatureAlgorithm.oid {
        case "1.2.840.113549.1.1.1": self = .rsaPKCS1v15(try needDigest())
        case "1.2.840.113549.1.1.5": self = .rsaPKCS1v15(.sha1)
        case "1.2.840.113549.1.1.14": self = .rsaPKCS1v15(.sha224)
        case "1.2.840.113549.1.1.11": self = .rsaPKCS1v15(.sha256)
        case "1.2.840.113549.1.1.12": self = .rsaPKCS1v15(.sha384)
        case "1.2.840.113549.1.1.13": self = .rsaPKCS1v15(.sha512)
        case "1.2.840.113549.1.1.10": self = try SignatureScheme.pss(signatureAlgorithm)
        case "1.2.840.10045.2.1": self = .ecdsa(try needDigest())
        case "1.2.840.10045.4.1": self = .ecdsa(.sha1)
        case "1.2.840.10045.4.3.1": self = .ecdsa(.sha224)
        case "1.2.840.10045.4.3.2": self = .ecdsa(.sha256)
        case "1.2.840.10045.4.3.3": self = .ecdsa(.sha384)
        case "1.2.840.10045.4.3.4": self = .ecdsa(.sha512)
        case "0.4.0.127.0.7.1.1.4.1.1": self = .ecdsaPlain(.sha1)
        case "0.4.0.127.0.7.1.1.4.1.2": self = .ecdsaPlain(.sha224)
        case "0.4.0.127.0.7.1.1.4.1.3": self = .ecdsaPlain(.sha256)
        case "0.4.0.127.0.7.1.1.4.1.4": self = .ecdsaPlain(.sha384)
        case "0.4.0.127.0.7.1.1.4.1.5": self = .ecdsaPlain(.sha512)
        default:
            throw SecurityObjectError(.unsupported, "the signature algorithm \(signatureAlgorithm.oid) is not supported")
        }
    }

    /// RSASSA-PSS-params (RFC 4055 §3.1): hash [0] (SHA-1), MGF [1] (MGF1 with SHA-1), salt
    /// length [2] (20), trailer field [3] (1, the only value allowed); defaults in brackets.
    static func pss(_ algorithm: AlgorithmIdentifier) throws(SecurityObjectError) -> SignatureScheme {
        var hash = Digest.sha1, mgf1 = Digest.sha1, salt = 20
        if let parameters = algorithm.parameterNode, parameters.identifier == .sequence {
            for field in try ASN1Tree.children(parameters, "the RSASSA-PSS parameters") {
                guard let inner = try ASN1Tree.children(field, "an RSASSA-PSS parameter").first else { continue }
                if ASN1Tree.isContext(field, 0) {
                    let oid = try AlgorithmIdentifier(inner, "the RSASSA-PSS hash").oid
                    guard let d = digest(oid: oid) else { throw SecurityObjectError(.unsupported, "RSASSA-PSS with hash \(oid) is not supported") }
                    hash = d
                } else if ASN1Tree.isContext(field, 1) {
                    let mgf = try AlgorithmIdentifier(inner, "the RSASSA-PSS mask generation function")
                    guard mgf.oid == "1.2.840.113549.1.1.8", let mgfHashNode = mgf.parameterNode else {
                        throw SecurityObjectError(.unsupported, "RSASSA-PSS with mask generation function \(mgf.oid) is not supported")
                    }
                    let oid = try AlgorithmIdentifier(mgfHashNode, "the MGF1 hash").oid
                    guard let d = digest(oid: oid) else { throw SecurityObjectError(.unsupported, "MGF1 with hash \(oid) is not supported") }
                    mgf1 = d
                } else if ASN1Tree.isContext(field, 2) {
                    salt = try ASN1Tree.integer(inner, "the RSASSA-PSS salt length")
                    guard (0...1024).contains(salt) else { throw SecurityObjectError(.format, "the RSASSA-PSS salt length \(salt) is out of range") }
                } else if ASN1Tree.isContext(field, 3) {
                    guard try ASN1Tree.integer(inner, "the RSASSA-PSS trailer field") == 1 else {
                        throw SecurityObjectError(.unsupported, "RSASSA-PSS with a trailer field other than 1 is not supported")
                    }
                }
            }
        }
        return .rsaPSS(hash: hash, mgf1Hash: mgf1, saltLength: salt)
    }

    static func evp(_ digest: Digest) -> OpaquePointer? {
        switch digest {
        case .sha1: return EVP_sha1()
        case .sha224: return EVP_sha224()
        case .sha256: return EVP_sha256()
        case .sha384: return EVP_sha384()
        case .sha512: return EVP_sha512()
        }
    }

    /// Whether `signature` over `message` verifies under `certificate`'s public key: nil when it
    /// does, else why not (one line).
    func verify(signature: [UInt8], over message: [UInt8], certificate: Certificate) -> String? {
        guard let key = X509_get0_pubkey(certificate.x509) else {
            ERR_clear_error()
            return "the signer certificate's public key is unreadable"
        }
        let keyType = EVP_PKEY_get_base_id(key)
        var signature = signature
        switch self {
        case .rsaPKCS1v15, .rsaPSS:
            guard keyType == EVP_PKEY_RSA || keyType == EVP_PKEY_RSA_PSS else {
                return "the SignerInfo names \(self) but the signer's key is \(certificate.publicKeyDescription)"
            }
        case .ecdsa, .ecdsaPlain:
            guard keyType == EVP_PKEY_EC else {
                return "the SignerInfo names \(self) but the signer's key is \(certificate.publicKeyDescription)"
            }
            if case .ecdsaPlain = self {
                guard let der = SignatureScheme.derSignature(plain: signature) else {
                    return "the plain ECDSA signature is not two integers of equal length"
                }
                signature = der
            }
        }
        guard let context = EVP_MD_CTX_new() else { return "libcrypto could not allocate a digest context" }
        defer { EVP_MD_CTX_free(context) }
        var keyContext: OpaquePointer?
        guard EVP_DigestVerifyInit(context, &keyContext, SignatureScheme.evp(digest), nil, key) == 1 else {
            return "libcrypto cannot verify \(self) with this key (\(OpenSSLError.last()))"
        }
        if case let .rsaPSS(_, mgf1Hash, saltLength) = self {
            guard EVP_PKEY_CTX_set_rsa_padding(keyContext, RSA_PKCS1_PSS_PADDING) == 1,
                  EVP_PKEY_CTX_set_rsa_mgf1_md(keyContext, SignatureScheme.evp(mgf1Hash)) == 1,
                  EVP_PKEY_CTX_set_rsa_pss_saltlen(keyContext, Int32(saltLength)) == 1 else {
                return "libcrypto refused the RSASSA-PSS parameters (\(OpenSSLError.last()))"
            }
        }
        let result = signature.withUnsafeBufferPointer { s in
            message.withUnsafeBufferPointer { m in EVP_DigestVerify(context, s.baseAddress, s.count, m.baseAddress, m.count) }
        }
        guard result == 1 else {
            ERR_clear_error()
            return "the signature does not verify (\(self))"
        }
        return nil
    }

    /// `r ‖ s` → DER `SEQUENCE { INTEGER r, INTEGER s }`.
    static func derSignature(plain: [UInt8]) -> [UInt8]? {
        guard !plain.isEmpty, plain.count % 2 == 0 else { return nil }
        func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var b = Array(bytes.drop(while: { $0 == 0 }))
            if b.isEmpty { b = [0] }
            if let first = b.first, first & 0x80 != 0 { b.insert(0, at: 0) }
            return [0x02] + ASN1Tree.derLength(b.count) + b
        }
        let half = plain.count / 2
        let content = integer(plain[..<half]) + integer(plain[half...])
        return [0x30] + ASN1Tree.derLength(content.count) + content
    }
}
