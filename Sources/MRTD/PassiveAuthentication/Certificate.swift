// X.509 certificates of the ICAO PKI (Part 12 §7): Country Signing CAs, Document Signers and
// master-list signers, parsed by libcrypto (which accepts the explicit EC parameters many of
// them carry) and described for people and JSON.
internal import COpenSSL

/// An X.509 certificate, parsed. Equal when the DER is.
public final class Certificate: @unchecked Sendable, Hashable, CustomStringConvertible {
    // @unchecked: the X509 object is never changed after d2i_X509; libcrypto guards the
    // extension cache it fills lazily with its own lock.

    /// The certificate's DER encoding.
    public let der: [UInt8]
    let x509: OpaquePointer
    /// The subject, one line in X.500 order: `C=DE, O=bund, OU=bsi, CN=csca-germany`.
    public let subject: String
    /// The issuer, one line in X.500 order.
    public let issuer: String
    /// The serial number as uppercase hex.
    public let serialNumber: String
    /// The serial number's magnitude, big-endian, without leading zero bytes.
    let serialMagnitude: [UInt8]
    /// The issuer Name's DER.
    let issuerDER: [UInt8]
    /// Start of the validity period.
    public let notBefore: Timestamp?
    /// End of the validity period.
    public let notAfter: Timestamp?
    /// The subject key identifier extension, when present.
    public let subjectKeyIdentifier: [UInt8]?
    /// The authority key identifier's key identifier, when present.
    public let authorityKeyIdentifier: [UInt8]?
    /// The subject's country (`C`), when named.
    public let country: String?
    /// `RSA 2048`, `EC brainpoolP256r1`, `EC 256-bit (explicit parameters)` …
    public let publicKeyDescription: String

    /// Parses one DER certificate.
    public init(der: [UInt8]) throws(CertificateError) {
        guard !der.isEmpty else { throw CertificateError("the certificate is empty") }
        var consumed = 0
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var pointer: UnsafePointer<UInt8>? = buffer.baseAddress
            let x509 = d2i_X509(nil, &pointer, buffer.count)
            if let start = buffer.baseAddress, let end = pointer { consumed = end - start }
            return x509
        }
        guard let parsed else { throw CertificateError("not a DER X.509 certificate (\(OpenSSLError.last()))") }
        // d2i_X509 stops at the end of the certificate; trailing bytes mean it was something else.
        guard consumed == der.count else {
            X509_free(parsed)
            throw CertificateError("\(der.count - consumed) bytes follow the certificate")
        }
        self.der = der
        self.x509 = parsed
        self.subject = Certificate.line(X509_get_subject_name(parsed))
        self.issuer = Certificate.line(X509_get_issuer_name(parsed))
        if let serial = X509_get0_serialNumber(parsed) {
            let data = ASN1_STRING_get0_data(serial)
            let count = Int(ASN1_STRING_length(serial))
            let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
            let negative = ASN1_STRING_type(serial) == V_ASN1_NEG_INTEGER
            self.serialNumber = (negative ? "-" : "") + bytes.map { Certificate.hexByte($0) }.joined()
            self.serialMagnitude = Array(bytes.drop(while: { $0 == 0 }))
        } else {
            self.serialNumber = ""
            self.serialMagnitude = []
        }
        var issuerBytes: [UInt8] = []
        if let name = X509_get_issuer_name(parsed) {
            var out: UnsafeMutablePointer<UInt8>?
            let count = i2d_X509_NAME(name, &out)
            if count > 0, let out {
                issuerBytes = Array(UnsafeBufferPointer(start: out, count: Int(count)))
                apdu_openssl_free(out)
            }
        }
        self.issuerDER = issuerBytes
        self.notBefore = Certificate.time(X509_get0_notBefore(parsed))
        self.notAfter = Certificate.time(X509_get0_notAfter(parsed))
        self.subjectKeyIdentifier = Certificate.octets(X509_get0_subject_key_id(parsed))
        self.authorityKeyIdentifier = Certificate.octets(X509_get0_authority_key_id(parsed))
        self.country = Certificate.country(X509_get_subject_name(parsed))
        self.publicKeyDescription = Certificate.describeKey(X509_get0_pubkey(parsed))
    }

    deinit { X509_free(x509) }

    public static func == (a: Certificate, b: Certificate) -> Bool { a.der == b.der }
    public func hash(into hasher: inout Hasher) { hasher.combine(der) }

    public var description: String { "certificate \(subject) (serial \(serialNumber))" }

    /// Issuer and subject are the same name (a root or a link certificate's form).
    public var isSelfIssued: Bool {
        X509_NAME_cmp(X509_get_subject_name(x509), X509_get_issuer_name(x509)) == 0
    }

    /// Whether `moment` lies in the validity period.
    public func isValid(at moment: Timestamp) -> Bool {
        guard let notBefore, let notAfter else { return false }
        return notBefore <= moment && moment <= notAfter
    }

    /// What a verdict shows of this certificate.
    public var summary: CertificateSummary {
        CertificateSummary(subject: subject, issuer: issuer, serialNumber: serialNumber, notBefore: notBefore, notAfter: notAfter,
                           publicKey: publicKeyDescription, sha256Fingerprint: fingerprint)
    }

    /// SHA-256 of the DER, uppercase hex.
    public var fingerprint: String {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        _ = der.withUnsafeBufferPointer { d in out.withUnsafeMutableBufferPointer { o in EVP_Digest(d.baseAddress, d.count, o.baseAddress, &length, EVP_sha256(), nil) } }
        return out.map { Certificate.hexByte($0) }.joined()
    }

    static func hexByte(_ b: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(b >> 4)], digits[Int(b & 0x0F)]])
    }

    static func line(_ name: OpaquePointer?) -> String {
        guard let name, let bio = apdu_x509_name_line(name) else { return "" }
        defer { BIO_free(bio) }
        var data: UnsafePointer<CChar>?
        let count = apdu_bio_contents(bio, &data)
        guard let data, count > 0 else { return "" }
        return data.withMemoryRebound(to: UInt8.self, capacity: Int(count)) { String(decoding: UnsafeBufferPointer(start: $0, count: Int(count)), as: UTF8.self) }
    }

    static func country(_ name: OpaquePointer?) -> String? {
        guard let name else { return nil }
        let index = X509_NAME_get_index_by_NID(name, NID_countryName, -1)
        guard index >= 0, let entry = X509_NAME_get_entry(name, index), let value = X509_NAME_ENTRY_get_data(entry),
              let data = ASN1_STRING_get0_data(value) else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(value))), as: UTF8.self)
    }

    static func octets(_ string: UnsafePointer<ASN1_OCTET_STRING>?) -> [UInt8]? {
        guard let string, let data = ASN1_STRING_get0_data(string) else { return nil }
        return Array(UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(string))))
    }

    static func time(_ value: UnsafePointer<ASN1_TIME>?) -> Timestamp? {
        guard let value else { return nil }
        var t = tm()
        guard ASN1_TIME_to_tm(value, &t) == 1 else { return nil }
        return Timestamp(year: Int(t.tm_year) + 1900, month: Int(t.tm_mon) + 1, day: Int(t.tm_mday), hour: Int(t.tm_hour), minute: Int(t.tm_min), second: Int(t.tm_sec))
    }

    static func describeKey(_ key: OpaquePointer?) -> String {
        guard let key else { return "unreadable key" }
        let bits = EVP_PKEY_get_bits(key)
        switch EVP_PKEY_get_base_id(key) {
        case EVP_PKEY_RSA: return "RSA \(bits)"
        case EVP_PKEY_RSA_PSS: return "RSA-PSS \(bits)"
        case EVP_PKEY_EC:
            var name = [CChar](repeating: 0, count: 80)
            var length = 0
            if EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, &name, name.count, &length) == 1, length > 0 {
                let text = name.prefix(length).map { UInt8(bitPattern: $0) }
                return "EC \(String(decoding: text, as: UTF8.self))"
            }
            ERR_clear_error()
            return "EC \(bits)-bit (explicit parameters)"
        default:
            return "key type \(EVP_PKEY_get_base_id(key)), \(bits) bits"
        }
    }
}

/// A certificate as verdicts show it: names, serial, validity, key and fingerprint.
public struct CertificateSummary: Sendable, Hashable {
    /// The subject, one line in X.500 order.
    public var subject: String
    /// The issuer, one line in X.500 order.
    public var issuer: String
    /// The serial number, uppercase hex.
    public var serialNumber: String
    /// Start of the validity period.
    public var notBefore: Timestamp?
    /// End of the validity period.
    public var notAfter: Timestamp?
    /// `RSA 2048`, `EC brainpoolP256r1` …
    public var publicKey: String
    /// SHA-256 of the DER, uppercase hex: what a user compares with a published list.
    public var sha256Fingerprint: String

    /// A summary with the given fields.
    public init(subject: String, issuer: String, serialNumber: String, notBefore: Timestamp?, notAfter: Timestamp?, publicKey: String, sha256Fingerprint: String) {
        self.subject = subject
        self.issuer = issuer
        self.serialNumber = serialNumber
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.publicKey = publicKey
        self.sha256Fingerprint = sha256Fingerprint
    }
}

/// A certificate that libcrypto cannot parse.
public struct CertificateError: Error, Hashable, Sendable, CustomStringConvertible {
    /// One line: why the certificate does not parse.
    public var message: String
    /// An error with this message.
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// libcrypto's error queue as one line (and cleared), for messages.
enum OpenSSLError {
    static func last() -> String {
        var reason = "libcrypto gave no reason"
        var code = ERR_get_error()
        while code != 0 {
            if let text = ERR_reason_error_string(code) { reason = String(cString: text) }
            code = ERR_get_error()
        }
        return reason
    }
}
