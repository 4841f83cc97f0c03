// The object identifiers the emulated chip and specimen write, as dotted text.

/// The object identifiers of ICAO 9303 Part 11 §9.2 and BSI TR-03110 Part 3 Appendix A, and
/// those of X.509 and CMS the specimen uses, as dotted text.
enum OID {
    // BSI TR-03110 (bsi-de 0.4.0.127.0.7)
    static let pace = "0.4.0.127.0.7.2.2.4"
    static let chipAuthentication = "0.4.0.127.0.7.2.2.3"
    static let publicKey = "0.4.0.127.0.7.2.2.1"
    static let publicKeyDH = "0.4.0.127.0.7.2.2.1.1"
    static let publicKeyECDH = "0.4.0.127.0.7.2.2.1.2"
    /// ecdsa-plain-signatures (TR-03111 §5.2.1): .1 SHA-1, .2 SHA-224, .3 SHA-256, .4 SHA-384, .5 SHA-512.
    static let ecdsaPlain = "0.4.0.127.0.7.1.1.4.1"
    /// id-SecurityObject: the content type of EF.CardSecurity.
    static let securityObject = "0.4.0.127.0.7.3.2.1"

    // ICAO (2.23.136)
    static let ldsSecurityObject = "2.23.136.1.1.1"
    /// id-icao-cscaMasterList (Part 12 §9).
    static let cscaMasterList = "2.23.136.1.1.2"
    static let activeAuthentication = "2.23.136.1.1.5"

    // PKCS and ANSI X9
    static let rsaEncryption = "1.2.840.113549.1.1.1"
    static let sha256WithRSA = "1.2.840.113549.1.1.11"
    static let rsassaPSS = "1.2.840.113549.1.1.10"
    static let mgf1 = "1.2.840.113549.1.1.8"
    static let ecPublicKey = "1.2.840.10045.2.1"
    static let primeField = "1.2.840.10045.1.1"
    static let ecdsaWithSHA256 = "1.2.840.10045.4.3.2"
    static let ecdsaWithSHA384 = "1.2.840.10045.4.3.3"
    static let ecdsaWithSHA512 = "1.2.840.10045.4.3.4"
    static let dhPublicNumber = "1.2.840.10046.2.1"
    static let signedData = "1.2.840.113549.1.7.2"
    static let contentTypeAttribute = "1.2.840.113549.1.9.3"
    static let messageDigestAttribute = "1.2.840.113549.1.9.4"
    static let signingTimeAttribute = "1.2.840.113549.1.9.5"
    static let sha1 = "1.3.14.3.2.26"
    static let sha256 = "2.16.840.1.101.3.4.2.1"
    static let sha384 = "2.16.840.1.101.3.4.2.2"
    static let sha512 = "2.16.840.1.101.3.4.2.3"

    // X.500 and X.509
    static let countryName = "2.5.4.6"
    static let organizationName = "2.5.4.10"
    static let organizationalUnitName = "2.5.4.11"
    static let commonName = "2.5.4.3"
    static let subjectKeyIdentifier = "2.5.29.14"
    static let keyUsage = "2.5.29.15"
    static let basicConstraints = "2.5.29.19"
    static let authorityKeyIdentifier = "2.5.29.35"
}
