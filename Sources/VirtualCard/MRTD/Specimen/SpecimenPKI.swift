// The specimen's PKI: deterministic keys, X.509 certificates for its CSCA and document signer,
// and CMS SignedData as ICAO 9303 profiles it.
import CardCrypto

/// The specimen's keys and signatures: deterministic key generation from a seeded stream (EC
/// scalars, RSA primes tested by libcrypto, DH exponents), X.509 certificates (RFC 5280) for the
/// CSCA and the document signer, and CMS SignedData (RFC 5652) as ICAO 9303 Part 10 §4.6 and
/// Part 11 §5 profile it for EF.SOD (and TR-03110 for EF.CardSecurity).
enum SpecimenPKI {
    // MARK: Keys

    static func ecKey(curve name: String, _ stream: SeededStream) throws(MRTDDocumentError) -> ChipPrivateKey {
        guard let curve = EllipticCurve(name: name) else { throw MRTDDocumentError(.unsupported, "libcrypto lacks the curve \(name)") }
        let order = curve.order
        while true {
            let d = BigNumber(bytes: stream.next(curve.orderSize))
            if !d.isZero && d < order { return ChipPrivateKey(.ec(curve: name, scalar: d.bytes(length: curve.orderSize))) }
        }
    }

    static func dhKey(group: ModularGroup, _ stream: SeededStream) -> ChipPrivateKey {
        var x = BigNumber(bytes: stream.next(group.q.byteCount))
        while x.isZero || !(x < group.q) { x = BigNumber(bytes: stream.next(group.q.byteCount)) }
        return ChipPrivateKey(.dh(p: group.p.bytes(), q: group.q.bytes(), g: group.g.bytes(), x: x.bytes()))
    }

    /// An RSA key of `bits` with e = 65537: two primes of bits/2 drawn from the stream (top two
    /// bits set so n has its full length) and tested by libcrypto (BN_check_prime).
    static func rsaKey(bits: Int, _ stream: SeededStream) -> ChipPrivateKey {
        let context = BigNumberContext()
        let e = BigNumber(65537)
        let one = BigNumber(1)
        func prime() -> BigNumber {
            let bytes = bits / 16
            while true {
                var candidate = stream.next(bytes)
                candidate[0] |= 0xC0
                candidate[bytes - 1] |= 0x01
                let p = BigNumber(bytes: candidate)
                // p − 1 must be prime to e for d to exist.
                if BigNumber.mod(p - one, e, context).isZero { continue }
                if p.isProbablePrime(context) { return p }
            }
        }
        let p = prime()
        var q = prime()
        while q == p { q = prime() }
        let n = p * q
        let phi = (p - one) * (q - one)
        let d = BigNumber.modInverse(e, phi, context) ?? one
        return ChipPrivateKey(.rsa(modulus: n.bytes(), publicExponent: e.bytes(), privateExponent: d.bytes(), primes: [p.bytes(), q.bytes()]))
    }

    // MARK: Signatures

    /// How a certificate or security object is signed.
    enum Scheme {
        case pkcs1, pss, ecdsa

        var algorithmIdentifier: [UInt8] {
            switch self {
            case .pkcs1: return DER.sequence(DER.oid(OID.sha256WithRSA), DER.null)
            case .ecdsa: return DER.sequence(DER.oid(OID.ecdsaWithSHA256))
            case .pss:
                // RSASSA-PSS-params (RFC 4055 §3.1): SHA-256, MGF1 with SHA-256, 32-byte salt.
                let sha256 = DER.sequence(DER.oid(OID.sha256), DER.null)
                return DER.sequence(DER.oid(OID.rsassaPSS), DER.sequence(
                    DER.contextConstructed(0, sha256),
                    DER.contextConstructed(1, DER.sequence(DER.oid(OID.mgf1), sha256)),
                    DER.contextConstructed(2, DER.integer(32))))
            }
        }
    }

    static func sign(_ message: [UInt8], with key: ChipPrivateKey, scheme: Scheme, _ stream: SeededStream) throws(MRTDDocumentError) -> [UInt8] {
        let signature: [UInt8]?
        switch scheme {
        case .pkcs1: signature = key.pkcs1Signature(message, digest: .sha256)
        case .pss: signature = key.pssSignature(message, digest: .sha256, salt: stream.next(32))
        case .ecdsa:
            // ECDSA-Sig-Value (RFC 3279 §2.2.3) around r and s; k from the stream.
            signature = key.ecdsaSignature(hash: Digest.sha256.hash(message), nonce: stream.next).map {
                DER.sequence(DER.integer(unsigned: $0.r), DER.integer(unsigned: $0.s))
            }
        }
        guard let signature else { throw MRTDDocumentError(.unsupported, "the \(key) cannot sign with \(scheme)") }
        return signature
    }

    // MARK: X.509

    struct Name {
        var country: String
        var organization: String
        var commonName: String

        var der: [UInt8] {
            DER.sequence(
                DER.set(of: [DER.sequence(DER.oid(OID.countryName), DER.printableString(country))]),
                DER.set(of: [DER.sequence(DER.oid(OID.organizationName), DER.utf8String(organization))]),
                DER.set(of: [DER.sequence(DER.oid(OID.commonName), DER.utf8String(commonName))]))
        }
    }

    /// The key identifier of RFC 5280 §4.2.1.2 (1): SHA-1 of the subjectPublicKey bits.
    static func keyIdentifier(_ subjectPublicKeyInfo: [UInt8]) -> [UInt8] {
        guard let spki = try? DERElement.read(subjectPublicKeyInfo, at: 0).0, let fields = try? spki.children(), fields.count == 2 else { return [] }
        return Digest.sha1.hash(Array(fields[1].value.dropFirst()))
    }

    /// A v3 certificate. A CSCA: basicConstraints CA (path length 0), keyUsage keyCertSign
    /// and cRLSign; a document signer: keyUsage digitalSignature (Part 12 §7.1).
    static func certificate(serial: [UInt8], issuer: Name, subject: Name, notBefore: String, notAfter: String,
                            subjectKey: [UInt8], issuerKeyIdentifier: [UInt8], isCA: Bool,
                            signer: ChipPrivateKey, scheme: Scheme, _ stream: SeededStream) throws(MRTDDocumentError) -> [UInt8] {
        let ski = keyIdentifier(subjectKey)
        var extensions = [
            DER.sequence(DER.oid(OID.keyUsage), DER.boolean(true), DER.octetString(isCA ? [0x03, 0x02, 0x01, 0x06] : [0x03, 0x02, 0x07, 0x80])),
            DER.sequence(DER.oid(OID.subjectKeyIdentifier), DER.octetString(DER.octetString(ski))),
            DER.sequence(DER.oid(OID.authorityKeyIdentifier), DER.octetString(DER.sequence(DER.contextPrimitive(0, issuerKeyIdentifier)))),
        ]
        if isCA {
            extensions.insert(DER.sequence(DER.oid(OID.basicConstraints), DER.boolean(true), DER.octetString(DER.sequence(DER.boolean(true), DER.integer(0)))), at: 0)
        }
        let tbs = DER.sequence(
            DER.contextConstructed(0, DER.integer(2)),
            DER.integer(unsigned: serial),
            scheme.algorithmIdentifier,
            issuer.der,
            DER.sequence(DER.time(notBefore), DER.time(notAfter)),
            subject.der,
            subjectKey,
            DER.contextConstructed(3, DER.sequence(of: extensions)))
        return DER.sequence(tbs, scheme.algorithmIdentifier, DER.bitString(try sign(tbs, with: signer, scheme: scheme, stream)))
    }

    /// The issuer and serial number of a certificate this module made.
    static func issuerAndSerial(_ certificate: [UInt8]) -> [UInt8] {
        guard let cert = try? DERElement.read(certificate, at: 0).0, let top = try? cert.children(), let tbs = try? top.first?.children(),
              tbs.count > 3 else { return [] }
        return DER.sequence(tbs[3].encoded, tbs[1].encoded)
    }

    // MARK: CMS

    /// ContentInfo { signedData, SignedData v3 } over `content` of type `contentType`, with
    /// the signer's certificate and one SignerInfo (v1, issuer and serial) whose signed
    /// attributes are the content type, the message digest and the signing time.
    static func signedData(contentType: String, content: [UInt8], signerCertificate: [UInt8], signer: ChipPrivateKey,
                           scheme: Scheme, signingTime: String, _ stream: SeededStream) throws(MRTDDocumentError) -> [UInt8] {
        let sha256 = DER.sequence(DER.oid(OID.sha256), DER.null)
        let attributes = [
            DER.sequence(DER.oid(OID.contentTypeAttribute), DER.set(of: [DER.oid(contentType)])),
            DER.sequence(DER.oid(OID.messageDigestAttribute), DER.set(of: [DER.octetString(Digest.sha256.hash(content))])),
            DER.sequence(DER.oid(OID.signingTimeAttribute), DER.set(of: [DER.time(signingTime)])),
        ]
        // The signature covers the attributes as a DER SET (RFC 5652 §5.4); they travel as [0].
        let signedSet = DER.set(of: attributes)
        let signature = try sign(signedSet, with: signer, scheme: scheme, stream)
        let signerInfo = DER.sequence(
            DER.integer(1),
            issuerAndSerial(signerCertificate),
            sha256,
            [0xA0] + Array(signedSet.dropFirst()),
            scheme.algorithmIdentifier,
            DER.octetString(signature))
        let signed = DER.sequence(
            DER.integer(3),
            DER.set(of: [sha256]),
            DER.sequence(DER.oid(contentType), DER.contextConstructed(0, DER.octetString(content))),
            DER.contextConstructed(0, signerCertificate),
            DER.set(of: [signerInfo]))
        return DER.sequence(DER.oid(OID.signedData), DER.contextConstructed(0, signed))
    }
}
