// A test PKI made at test time through libcrypto: keys (RSA, ECDSA on NIST and brainpool curves,
// named or explicit parameters), CSCA and Document Signer certificates, EF.SODs and CSCA master
// lists built field by field with TestDER, so each test can break exactly one thing.
import CardCrypto
import COpenSSL
import MRTD

/// A private key. Generated once per kind and shared (RSA key generation is slow).
final class TestKey: @unchecked Sendable {
    enum Kind: Hashable {
        case rsa(bits: Int32)
        case ec(nid: Int32, explicit: Bool)
    }

    let kind: Kind
    let pkey: OpaquePointer

    init(_ kind: Kind) {
        self.kind = kind
        guard let context = EVP_PKEY_CTX_new_id(kind.isRSA ? EVP_PKEY_RSA : EVP_PKEY_EC, nil) else { fatalError("EVP_PKEY_CTX_new_id") }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1 else { fatalError("EVP_PKEY_keygen_init") }
        switch kind {
        case let .rsa(bits):
            guard EVP_PKEY_CTX_set_rsa_keygen_bits(context, bits) == 1 else { fatalError("rsa bits") }
        case let .ec(nid, explicit):
            guard EVP_PKEY_CTX_set_ec_paramgen_curve_nid(context, nid) == 1 else { fatalError("curve") }
            if explicit { guard EVP_PKEY_CTX_set_ec_param_enc(context, OPENSSL_EC_EXPLICIT_CURVE) == 1 else { fatalError("explicit") } }
        }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen(context, &key) == 1, let key else { fatalError("EVP_PKEY_keygen") }
        pkey = key
    }

    deinit { EVP_PKEY_free(pkey) }

    static let rsa2048 = TestKey(.rsa(bits: 2048))
    static let rsa3072 = TestKey(.rsa(bits: 3072))
    static let p256 = TestKey(.ec(nid: NID_X9_62_prime256v1, explicit: false))
    static let p384 = TestKey(.ec(nid: NID_secp384r1, explicit: false))
    static let brainpoolP256Explicit = TestKey(.ec(nid: NID_brainpoolP256r1, explicit: true))
    static let brainpoolP384 = TestKey(.ec(nid: NID_brainpoolP384r1, explicit: false))
    static let brainpoolP384Explicit = TestKey(.ec(nid: NID_brainpoolP384r1, explicit: true))
    static let otherRSA = TestKey(.rsa(bits: 2048))
    static let otherP256 = TestKey(.ec(nid: NID_X9_62_prime256v1, explicit: false))

    /// Signs `message` as `scheme` says (the hash is computed here).
    func sign(_ message: [UInt8], _ scheme: SignatureScheme) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { fatalError("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        var keyContext: OpaquePointer?
        guard EVP_DigestSignInit(context, &keyContext, TestKey.evp(scheme.digest), nil, pkey) == 1 else { fatalError("EVP_DigestSignInit") }
        if case let .rsaPSS(_, mgf1, salt) = scheme {
            guard EVP_PKEY_CTX_set_rsa_padding(keyContext, RSA_PKCS1_PSS_PADDING) == 1,
                  EVP_PKEY_CTX_set_rsa_mgf1_md(keyContext, TestKey.evp(mgf1)) == 1,
                  EVP_PKEY_CTX_set_rsa_pss_saltlen(keyContext, Int32(salt)) == 1 else { fatalError("pss") }
        }
        var length = 0
        guard message.withUnsafeBufferPointer({ EVP_DigestSign(context, nil, &length, $0.baseAddress, $0.count) }) == 1 else { fatalError("EVP_DigestSign length") }
        var signature = [UInt8](repeating: 0, count: length)
        guard signature.withUnsafeMutableBufferPointer({ s in message.withUnsafeBufferPointer { m in EVP_DigestSign(context, s.baseAddress, &length, m.baseAddress, m.count) } }) == 1 else {
            fatalError("EVP_DigestSign")
        }
        signature = Array(signature.prefix(length))
        if case .ecdsaPlain = scheme { return TestKey.plain(derSignature: signature, size: Int(EVP_PKEY_get_bits(pkey) + 7) / 8) }
        return signature
    }

    /// DER ECDSA-Sig-Value → r ‖ s, each `size` bytes.
    static func plain(derSignature: [UInt8], size: Int) -> [UInt8] {
        derSignature.withUnsafeBufferPointer { buffer in
            var pointer: UnsafePointer<UInt8>? = buffer.baseAddress
            guard let signature = d2i_ECDSA_SIG(nil, &pointer, buffer.count) else { fatalError("d2i_ECDSA_SIG") }
            defer { ECDSA_SIG_free(signature) }
            var out = [UInt8](repeating: 0, count: 2 * size)
            out.withUnsafeMutableBufferPointer { o in
                _ = BN_bn2binpad(ECDSA_SIG_get0_r(signature), o.baseAddress, Int32(size))
                _ = BN_bn2binpad(ECDSA_SIG_get0_s(signature), o.baseAddress! + size, Int32(size))
            }
            return out
        }
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
}

extension TestKey.Kind {
    var isRSA: Bool { if case .rsa = self { return true } else { return false } }
}

extension SignatureScheme {
    /// The AlgorithmIdentifier a SignerInfo (or certificate) names this scheme with.
    var algorithmIdentifier: [UInt8] {
        func digestAlgorithm(_ d: Digest) -> [UInt8] { TestDER.algorithm(TestPKI.digestOID(d), parameters: TestDER.null()) }
        switch self {
        case let .rsaPKCS1v15(d):
            let oids: [Digest: String] = [.sha1: "1.2.840.113549.1.1.5", .sha224: "1.2.840.113549.1.1.14", .sha256: "1.2.840.113549.1.1.11", .sha384: "1.2.840.113549.1.1.12", .sha512: "1.2.840.113549.1.1.13"]
            return TestDER.algorithm(oids[d]!, parameters: TestDER.null())
        case let .rsaPSS(h, m, s):
            let parameters = TestDER.sequence(
                TestDER.context(0, digestAlgorithm(h)),
                TestDER.context(1, TestDER.algorithm("1.2.840.113549.1.1.8", parameters: digestAlgorithm(m))),
                TestDER.context(2, TestDER.integer(s)))
            return TestDER.algorithm("1.2.840.113549.1.1.10", parameters: parameters)
        case let .ecdsa(d):
            let oids: [Digest: String] = [.sha1: "1.2.840.10045.4.1", .sha224: "1.2.840.10045.4.3.1", .sha256: "1.2.840.10045.4.3.2", .sha384: "1.2.840.10045.4.3.3", .sha512: "1.2.840.10045.4.3.4"]
            return TestDER.algorithm(oids[d]!)
        case let .ecdsaPlain(d):
            let oids: [Digest: String] = [.sha1: "0.4.0.127.0.7.1.1.4.1.1", .sha224: "0.4.0.127.0.7.1.1.4.1.2", .sha256: "0.4.0.127.0.7.1.1.4.1.3", .sha384: "0.4.0.127.0.7.1.1.4.1.4", .sha512: "0.4.0.127.0.7.1.1.4.1.5"]
            return TestDER.algorithm(oids[d]!)
        }
    }
}

/// A certificate made here, with the key that signs under it.
struct TestIdentity {
    let der: [UInt8]
    let key: TestKey
    let certificate: Certificate
    /// The issuer Name's DER and the serial's content, for SignerInfo's sid.
    let issuerName: [UInt8]
    let serial: [UInt8]
    let subjectKeyIdentifier: [UInt8]?
}

enum TestPKI {
    static func digestOID(_ d: Digest) -> String {
        switch d {
        case .sha1: return "1.3.14.3.2.26"
        case .sha224: return "2.16.840.1.101.3.4.2.4"
        case .sha256: return "2.16.840.1.101.3.4.2.1"
        case .sha384: return "2.16.840.1.101.3.4.2.2"
        case .sha512: return "2.16.840.1.101.3.4.2.3"
        }
    }

    /// A certificate for `key`, named `C=UT, O=swift-apdu tests, CN=<name>`, signed by `issuer`
    /// (self-signed when nil) with `scheme`. CAs get basicConstraints CA:TRUE and keyCertSign.
    static func certificate(name: String, key: TestKey, issuer: TestIdentity?, serial: Int, ca: Bool,
                            notBefore: Timestamp = Timestamp(year: 2020, month: 1, day: 1)!,
                            notAfter: Timestamp = Timestamp(year: 2040, month: 1, day: 1)!,
                            scheme: SignatureScheme = .ecdsa(.sha256)) -> TestIdentity {
        guard let x509 = X509_new() else { fatalError("X509_new") }
        defer { X509_free(x509) }
        X509_set_version(x509, 2)
        ASN1_INTEGER_set(X509_get_serialNumber(x509), serial)
        let subject = X509_NAME_new()
        defer { X509_NAME_free(subject) }
        for (field, value) in [("C", "UT"), ("O", "swift-apdu tests"), ("CN", name)] {
            let bytes = Array(value.utf8)
            X509_NAME_add_entry_by_txt(subject, field, MBSTRING_UTF8, bytes, Int32(bytes.count), -1, 0)
        }
        X509_set_subject_name(x509, subject)
        var issuerCertificate: OpaquePointer?
        if let issuer {
            issuer.der.withUnsafeBufferPointer { buffer in
                var pointer: UnsafePointer<UInt8>? = buffer.baseAddress
                issuerCertificate = d2i_X509(nil, &pointer, buffer.count)
            }
            X509_set_issuer_name(x509, X509_get_subject_name(issuerCertificate))
        } else {
            X509_set_issuer_name(x509, subject)
        }
        defer { if let issuerCertificate { X509_free(issuerCertificate) } }
        ASN1_TIME_set(X509_getm_notBefore(x509), time_t(notBefore.secondsSince1970))
        ASN1_TIME_set(X509_getm_notAfter(x509), time_t(notAfter.secondsSince1970))
        X509_set_pubkey(x509, key.pkey)
        var context = X509V3_CTX()
        X509V3_set_ctx(&context, issuerCertificate ?? x509, x509, nil, nil, 0)
        var extensions: [(Int32, String)] = [(NID_subject_key_identifier, "hash")]
        if ca {
            extensions += [(NID_basic_constraints, "critical,CA:TRUE,pathlen:0"), (NID_key_usage, "critical,keyCertSign,cRLSign")]
        } else {
            extensions += [(NID_key_usage, "critical,digitalSignature")]
        }
        if issuer != nil { extensions.append((NID_authority_key_identifier, "keyid:always")) }
        for (nid, value) in extensions {
            guard let ext = X509V3_EXT_conf_nid(nil, &context, nid, value) else { fatalError("extension \(nid)") }
            X509_add_ext(x509, ext, -1)
            X509_EXTENSION_free(ext)
        }
        let signer = issuer?.key ?? key
        guard let md = EVP_MD_CTX_new() else { fatalError("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(md) }
        var keyContext: OpaquePointer?
        guard EVP_DigestSignInit(md, &keyContext, TestKey.evp(scheme.digest), nil, signer.pkey) == 1 else { fatalError("sign init") }
        if case let .rsaPSS(_, mgf1, salt) = scheme {
            EVP_PKEY_CTX_set_rsa_padding(keyContext, RSA_PKCS1_PSS_PADDING)
            EVP_PKEY_CTX_set_rsa_mgf1_md(keyContext, TestKey.evp(mgf1))
            EVP_PKEY_CTX_set_rsa_pss_saltlen(keyContext, Int32(salt))
        }
        guard X509_sign_ctx(x509, md) > 0 else { fatalError("X509_sign_ctx") }
        var out: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509(x509, &out)
        guard length > 0, let out else { fatalError("i2d_X509") }
        let der = Array(UnsafeBufferPointer(start: out, count: Int(length)))
        apdu_openssl_free(out)
        var nameOut: UnsafeMutablePointer<UInt8>?
        let nameLength = i2d_X509_NAME(X509_get_issuer_name(x509), &nameOut)
        let issuerName = Array(UnsafeBufferPointer(start: nameOut!, count: Int(nameLength)))
        apdu_openssl_free(nameOut)
        let certificate = try! Certificate(der: der)
        return TestIdentity(der: der, key: key, certificate: certificate, issuerName: issuerName,
                            serial: Array(TestDER.integer(serial).dropFirst(2)), subjectKeyIdentifier: certificate.subjectKeyIdentifier)
    }
}

/// CMS SignedData for tests, every part replaceable.
struct TestSignedData {
    enum SignerID { case issuerAndSerial, subjectKeyIdentifier }

    var contentType = "2.23.136.1.1.1"
    var content: [UInt8]
    var digest: Digest = .sha256
    var scheme: SignatureScheme
    var signer: TestIdentity
    var certificates: [[UInt8]]
    var signerID: SignerID = .issuerAndSerial
    var signingTime: String? = "250601120000Z"
    var signedAttributes = true
    /// The content-type attribute's value; "" leaves the attribute out.
    var contentTypeAttribute: String?
    /// Changes the messageDigest attribute's value (to test that it is checked).
    var messageDigestOverride: [UInt8]?
    /// Changes the content after signing (the messageDigest no longer matches).
    var contentAfterSigning: [UInt8]?
    var signatureOverride: [UInt8]?
    var indefiniteLengths = false
    var wrapIn77 = true

    init(content: [UInt8], scheme: SignatureScheme, signer: TestIdentity, certificates: [[UInt8]]? = nil) {
        self.content = content
        self.scheme = scheme
        self.signer = signer
        self.certificates = certificates ?? [signer.der]
    }

    func build() -> [UInt8] {
        var attributes: [[UInt8]] = []
        if contentTypeAttribute != "" {
            attributes.append(TestDER.sequence(TestDER.oid("1.2.840.113549.1.9.3"), TestDER.set(TestDER.oid(contentTypeAttribute ?? contentType))))
        }
        if let signingTime { attributes.append(TestDER.sequence(TestDER.oid("1.2.840.113549.1.9.5"), TestDER.set(TestDER.utcTime(signingTime)))) }
        attributes.append(TestDER.sequence(TestDER.oid("1.2.840.113549.1.9.4"), TestDER.set(TestDER.octetString(messageDigestOverride ?? digest.hash(content)))))
        let attributeSet = TestDER.set(attributes)
        let signed = signedAttributes ? attributeSet : content
        let signature = signatureOverride ?? signer.key.sign(signed, scheme)
        let sid: [UInt8]
        switch signerID {
        case .issuerAndSerial: sid = TestDER.sequence(signer.issuerName, TestDER.tlv(0x02, signer.serial))
        case .subjectKeyIdentifier: sid = TestDER.contextPrimitive(0, signer.subjectKeyIdentifier ?? [])
        }
        var signerInfo: [UInt8] = TestDER.integer(signerID == .issuerAndSerial ? 1 : 3) + sid
            + TestDER.algorithm(TestPKI.digestOID(digest), parameters: TestDER.null())
        if signedAttributes { signerInfo += TestDER.tlv(0xA0, attributes.flatMap { $0 }) }
        signerInfo += scheme.algorithmIdentifier + TestDER.octetString(signature)
        let finalContent = contentAfterSigning ?? content
        func wrap(_ tag: UInt8, _ inner: [UInt8]) -> [UInt8] { indefiniteLengths ? TestDER.indefinite(tag, inner) : TestDER.tlv(tag, inner) }
        let encapsulated = wrap(0x30, TestDER.oid(contentType) + wrap(0xA0, TestDER.octetString(finalContent)))
        var signedData = TestDER.integer(3) + TestDER.set(TestDER.algorithm(TestPKI.digestOID(digest), parameters: TestDER.null())) + encapsulated
        if !certificates.isEmpty { signedData += TestDER.tlv(0xA0, certificates.flatMap { $0 }) }
        signedData += TestDER.set(TestDER.sequence(signerInfo))
        let contentInfo = wrap(0x30, TestDER.oid("1.2.840.113549.1.7.2") + wrap(0xA0, wrap(0x30, signedData)))
        return wrapIn77 ? TestDER.tlv(0x77, contentInfo) : contentInfo
    }
}

enum TestSOD {
    /// The LDSSecurityObject (Part 10 §4.6.2.2): version 0, the hash algorithm, the hashes.
    static func ldsSecurityObject(_ dataGroups: [Int: [UInt8]], digest: Digest = .sha256, hashes override: [Int: [UInt8]] = [:]) -> [UInt8] {
        let hashes = dataGroups.keys.sorted().map { n in
            TestDER.sequence(TestDER.integer(n), TestDER.octetString(override[n] ?? digest.hash(dataGroups[n]!)))
        }
        return TestDER.sequence(TestDER.integer(0), TestDER.algorithm(TestPKI.digestOID(digest), parameters: TestDER.null()), TestDER.sequence(hashes))
    }

    /// The CscaMasterList content (Part 12 §9): version 0 and the certificates.
    static func masterList(_ certificates: [[UInt8]]) -> [UInt8] {
        TestDER.sequence(TestDER.integer(0), TestDER.set(certificates))
    }
}
