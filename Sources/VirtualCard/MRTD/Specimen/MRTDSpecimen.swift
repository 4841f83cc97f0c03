// A complete, consistent specimen eMRTD generated from a seed: every data group, the security
// object, EF.CardAccess and EF.CardSecurity, signed under a specimen CSCA.
import CardCrypto

/// A complete, consistent specimen eMRTD made from nothing: EF.COM, DG1 (TD3 MRZ with valid
/// check digits), DG2 (a drawn face as a ~20 KB JPEG in an ISO/IEC 19794-5 record), DG3 and DG4
/// (present, EAC-protected), DG11, DG12, DG14 (chip authentication key and infos), DG15 (the
/// Active Authentication key), EF.SOD (SHA-256 of every data group, CMS-signed by a document
/// signer certificate issued by a CSCA certificate), EF.CardAccess (the PACEInfos offered) and,
/// with Chip Authentication Mapping, EF.CardSecurity.
///
/// The same seed makes the same bytes; without one, a fresh seed is drawn. Trust the document
/// through `cscaCertificatePEM`.
public struct MRTDSpecimen: Sendable {
    /// The holder and document, as printed in the MRZ.
    public struct Holder: Sendable, Hashable {
        public var documentCode = "P"
        public var issuingState = "UTO"
        public var surname = "ERIKSSON"
        public var givenNames = "ANNA MARIA"
        public var documentNumber = "L898902C"
        public var nationality = "UTO"
        /// YYMMDD.
        public var dateOfBirth = "690806"
        /// M, F or <.
        public var sex = "F"
        /// YYMMDD; far in the future so nothing expires under a test.
        public var dateOfExpiry = "340623"
        public var optionalData = ""
        public init() {}
    }

    /// How the security object and the certificates are signed.
    public enum SignatureAlgorithm: Sendable, Hashable {
        /// sha256WithRSAEncryption (PKCS#1 v1.5).
        case rsaPKCS1(bits: Int)
        /// RSASSA-PSS with SHA-256, MGF1-SHA-256, 32-byte salt.
        case rsaPSS(bits: Int)
        /// ecdsa-with-SHA256 on a curve named by its standardized id (Part 11 §9.5.1: 12 P-256,
        /// 13 brainpoolP256r1, 15 P-384…).
        case ecdsa(parameterID: Int)
    }

    /// DG15's key.
    public enum ActiveAuthenticationKey: Sendable, Hashable {
        /// RSA, ISO/IEC 9796-2 scheme 1 with SHA-1.
        case rsa(bits: Int)
        /// ECDSA on a standardized curve, SHA-256 (ActiveAuthenticationInfo in DG14 says so).
        case ecdsa(parameterID: Int)
    }

    /// DG14's chip authentication key and protocol.
    public struct ChipAuthenticationKey: Sendable, Hashable {
        /// A standardized id: 0–2 for DH (RFC 5114), 8–18 for ECDH.
        public var parameterID: Int
        /// 3DES (`.tdes2`) or AES (`.aes128`, `.aes192`, `.aes256`).
        public var cipher: CipherAlgorithm
        public init(parameterID: Int, cipher: CipherAlgorithm) {
            self.parameterID = parameterID
            self.cipher = cipher
        }
    }

    /// One PACEInfo of EF.CardAccess.
    public struct PACEOffer: Sendable, Hashable {
        public enum Mapping: String, Sendable, Hashable, CaseIterable {
            /// Generic Mapping over ECDH (id-PACE-ECDH-GM-…).
            case genericECDH
            /// Generic Mapping over DH (id-PACE-DH-GM-…).
            case genericDH
            /// Chip Authentication Mapping (id-PACE-ECDH-CAM-…): needs an ECDH chip
            /// authentication key on the same curve.
            case chipAuthenticationECDH
        }
        public var mapping: Mapping
        public var cipher: CipherAlgorithm
        public var parameterID: Int
        public init(mapping: Mapping, cipher: CipherAlgorithm, parameterID: Int) {
            self.mapping = mapping
            self.cipher = cipher
            self.parameterID = parameterID
        }

        var protocolID: PACEProtocol? {
            guard let kind = Self.cipherKind(cipher) else { return nil }
            switch mapping {
            case .genericECDH: return PACEProtocol(mapping: .genericECDH, cipher: kind)
            case .genericDH: return PACEProtocol(mapping: .genericDH, cipher: kind)
            case .chipAuthenticationECDH: return PACEProtocol(mapping: .chipAuthenticationECDH, cipher: kind)
            }
        }

        static func cipherKind(_ c: CipherAlgorithm) -> CipherKind? {
            switch c {
            case .tdes2: return .tdes
            case .aes128: return .aes128
            case .aes192: return .aes192
            case .aes256: return .aes256
            default: return nil
            }
        }
    }

    public struct Options: Sendable, Hashable {
        /// The seed of every key, nonce and noise; nil draws one.
        public var seed: [UInt8]?
        public var holder = Holder()
        public var can = "123456"
        public var documentSigner: SignatureAlgorithm = .rsaPKCS1(bits: 2048)
        public var csca: SignatureAlgorithm = .rsaPKCS1(bits: 2048)
        public var activeAuthentication: ActiveAuthenticationKey? = .rsa(bits: 1024)
        public var chipAuthentication: ChipAuthenticationKey? = ChipAuthenticationKey(parameterID: 13, cipher: .aes128)
        /// Empty: a BAC-only document without EF.CardAccess.
        public var pace: [PACEOffer] = [PACEOffer(mapping: .genericECDH, cipher: .aes128, parameterID: 13)]
        /// Bytes the face JPEG should come near.
        public var faceSize = 20_000
        public var includesDG11 = true
        public var includesDG12 = true
        /// DG3 and DG4 present (and closed to BAC and PACE).
        public var includesEACDataGroups = true
        /// Spell out the curve of DG14's ECDH key (TR-03110 Part 3 §A.2.1.1) rather than name it.
        public var explicitCurveParameters = true
        /// DG14 present (with chip authentication or active authentication to describe). Off:
        /// a PACE-CAM document whose chip authentication key is only in EF.CardSecurity.
        public var includesDG14 = true
        /// DG14 holds the chip authentication key (and its ChipAuthenticationInfo). Off, with
        /// PACE-CAM offered: a CAM-only document whose DG14 lists the PACEInfos (and any active
        /// authentication info) but whose key is only in EF.CardSecurity.
        public var chipAuthenticationKeyInDG14 = true
        /// Hostile profile (issue 48): DG14's ChipAuthenticationPublicKeyInfo holds a key on a
        /// curve over a binary field (sect163k1, spelled out), which no eMRTD reader here parses.
        /// The chip keeps its real key; EF.SOD signs the DG14 as written.
        public var chipAuthenticationKeyOnBinaryCurve = false
        /// Another implementation's profile (issue 48): EF.COM's tag list written as
        /// vsmartcard's ePass writes it, the tags as ASCII hex text ("6175") under a length that
        /// counts the tags, so EF.COM does not decode.
        public var comTagListAsText = false
        public init() {}
    }

    public let document: MRTDDocument
    /// The TD3 MRZ, two lines of 44 characters.
    public let mrz: [String]
    public let cscaCertificate: [UInt8]
    public let documentSignerCertificate: [UInt8]
    public var cscaCertificatePEM: String { PEM.encode(cscaCertificate, label: "CERTIFICATE") }
    public var documentSignerCertificatePEM: String { PEM.encode(documentSignerCertificate, label: "CERTIFICATE") }

    /// Makes the document. Throws only for options the chip cannot honour (a curve libcrypto
    /// lacks, CAM without a matching chip authentication key).
    public static func generate(_ options: Options = Options()) throws(MRTDDocumentError) -> MRTDSpecimen {
        let root = SeededStream(options.seed ?? secureRandomBytes(32))
        let h = options.holder
        var files: [MRTDFile: [UInt8]] = [:]

        // DG1: the TD3 MRZ (Part 4 §4.2).
        let mrz = Self.td3(h)
        files[.dataGroup(1)] = DER.element(0x61, DER.element([0x5F, 0x1F], Array(mrz.joined().utf8)))

        // DG2: the face.
        let face = SpecimenFace.jpeg(root.fork("face"), target: options.faceSize)
        files[.dataGroup(2)] = SpecimenFace.dataGroup2(record: SpecimenFace.facialRecord(jpeg: face.bytes, width: face.width, height: face.height, female: h.sex == "F"))
        if options.includesEACDataGroups {
            files[.dataGroup(3)] = SpecimenFace.placeholderDataGroup(3)
            files[.dataGroup(4)] = SpecimenFace.placeholderDataGroup(4)
        }

        // DG11 and DG12 (Part 10 §4.7.11–4.7.12), each with its tag list.
        let birthCentury = Int(h.dateOfBirth.prefix(2)).map { $0 > 30 ? "19" : "20" } ?? "19"
        if options.includesDG11 {
            let name = h.surname.replacingSpaces + "<<" + h.givenNames.replacingSpaces
            let fields = DER.element([0x5F, 0x0E], Array(name.utf8)) + DER.element([0x5F, 0x2B], Array((birthCentury + h.dateOfBirth).utf8))
                + DER.element([0x5F, 0x11], Array("ZENITH".utf8))
            files[.dataGroup(11)] = DER.element(0x6B, DER.element(0x5C, [0x5F, 0x0E, 0x5F, 0x2B, 0x5F, 0x11]) + fields)
        }
        if options.includesDG12 {
            let fields = DER.element([0x5F, 0x19], Array("UTOPIA PASSPORT OFFICE".utf8)) + DER.element([0x5F, 0x26], Array("20240623".utf8))
            files[.dataGroup(12)] = DER.element(0x6C, DER.element(0x5C, [0x5F, 0x19, 0x5F, 0x26]) + fields)
        }

        // Keys.
        var caKey: ChipPrivateKey? = nil
        var caInfos: [[UInt8]] = []
        let camOffer = options.pace.first { $0.mapping == .chipAuthenticationECDH }
        if let ca = options.chipAuthentication {
            guard let parameters = StandardDomainParameters(id: ca.parameterID), let kind = PACEOffer.cipherKind(ca.cipher) else {
                throw MRTDDocumentError(.unsupported, "no chip authentication with parameter id \(ca.parameterID) and \(ca.cipher)")
            }
            let key: ChipPrivateKey
            switch parameters {
            case .curve(let name): key = try SpecimenPKI.ecKey(curve: name, root.fork("chip authentication"))
            case .modular:
                guard let group = parameters.makeGroup() else { throw MRTDDocumentError(.unsupported, "libcrypto lacks DH group \(ca.parameterID)") }
                key = SpecimenPKI.dhKey(group: group, root.fork("chip authentication"))
            }
            caKey = key
            // With CAM the key id is the PACE parameter id (TR-03110 Part 3 §A.1.1.2).
            let keyID = camOffer != nil ? ca.parameterID : nil
            let elliptic = parameters.isElliptic
            caInfos.append(SecurityInfos.encode(chipAuthentication: .init(protocolOID: ChipAuthenticationProtocol(elliptic: elliptic, cipher: kind).oid, version: 1, keyID: keyID)))
            let spki = options.chipAuthenticationKeyOnBinaryCurve ? Self.binaryCurveKey : key.subjectPublicKeyInfo(explicitCurve: options.explicitCurveParameters)
            caInfos.append(SecurityInfos.encode(chipAuthenticationKey: .init(protocolOID: options.chipAuthenticationKeyOnBinaryCurve || elliptic ? OID.publicKeyECDH : OID.publicKeyDH,
                                                                             subjectPublicKeyInfo: spki, keyID: keyID)))
        }
        if let cam = camOffer {
            guard let ca = options.chipAuthentication, ca.parameterID == cam.parameterID, StandardDomainParameters(id: cam.parameterID)?.isElliptic == true else {
                throw MRTDDocumentError(.unsupported, "Chip Authentication Mapping needs an ECDH chip authentication key with parameter id \(cam.parameterID)")
            }
        }

        var aaKey: ChipPrivateKey? = nil
        var aaInfo: [[UInt8]] = []
        switch options.activeAuthentication {
        case .rsa(let bits)?:
            aaKey = try rsaKey(bits: bits, root.fork("active authentication"))
        case .ecdsa(let id)?:
            guard case .curve(let name)? = StandardDomainParameters(id: id) else { throw MRTDDocumentError(.unsupported, "no curve with parameter id \(id)") }
            aaKey = try SpecimenPKI.ecKey(curve: name, root.fork("active authentication"))
            aaInfo.append(SecurityInfos.encode(activeAuthentication: "\(OID.ecdsaPlain).3"))
        case nil:
            break
        }

        // EF.CardAccess, and the PACEInfos DG14 repeats.
        var paceInfos: [[UInt8]] = []
        for offer in options.pace {
            guard let p = offer.protocolID, let parameters = StandardDomainParameters(id: offer.parameterID),
                  parameters.isElliptic == (offer.mapping != .genericDH) else {
                throw MRTDDocumentError(.unsupported, "no PACE \(offer.mapping) with \(offer.cipher) and parameter id \(offer.parameterID)")
            }
            paceInfos.append(SecurityInfos.encode(pace: .init(protocolOID: p.oid, version: 2, parameterID: offer.parameterID)))
        }
        if !paceInfos.isEmpty { files[.cardAccess] = DER.set(of: paceInfos) }
        if options.includesDG14 && (!caInfos.isEmpty || !aaInfo.isEmpty) {
            let dg14Keys = options.chipAuthenticationKeyInDG14 ? caInfos : []
            files[.dataGroup(14)] = DER.element(0x6E, DER.set(of: dg14Keys + paceInfos + aaInfo))
        }
        if let aaKey { files[.dataGroup(15)] = DER.element(0x6F, aaKey.subjectPublicKeyInfo()) }

        // EF.COM (Part 10 §4.6.1): LDS 1.7, Unicode 4.0.0, the tags of the data groups present.
        let tags = files.keys.sorted().compactMap(\.dataGroupTag)
        var tagList = DER.element(0x5C, tags)
        if options.comTagListAsText {
            // vsmartcard's CardGenerator packs (0x5C, 2, "6175"): the length it meant, the text it had.
            tagList = [0x5C, UInt8(tags.count)] + Array(tags.map { String(format2: $0) }.joined().utf8)
        }
        files[.com] = DER.element(0x60, DER.element([0x5F, 0x01], Array("0107".utf8)) + DER.element([0x5F, 0x36], Array("040000".utf8)) + tagList)

        // The PKI: a CSCA and a document signer.
        let csca = try Self.signingKey(options.csca, root.fork("csca"))
        let signer = try Self.signingKey(options.documentSigner, root.fork("document signer"))
        let cscaName = SpecimenPKI.Name(country: "UT", organization: "Utopia", commonName: "Specimen CSCA")
        let signerName = SpecimenPKI.Name(country: "UT", organization: "Utopia", commonName: "Specimen Document Signer")
        let cscaSPKI = csca.key.subjectPublicKeyInfo()
        let cscaKeyID = SpecimenPKI.keyIdentifier(cscaSPKI)
        let pkiStream = root.fork("signatures")
        let cscaCertificate = try SpecimenPKI.certificate(serial: [0x01] + root.fork("csca serial").next(7), issuer: cscaName, subject: cscaName,
                                                          notBefore: "20240101000000", notAfter: "20391231235959", subjectKey: cscaSPKI,
                                                          issuerKeyIdentifier: cscaKeyID, isCA: true, signer: csca.key, scheme: csca.scheme, pkiStream)
        let signerCertificate = try SpecimenPKI.certificate(serial: [0x02] + root.fork("signer serial").next(7), issuer: cscaName, subject: signerName,
                                                            notBefore: "20240101000000", notAfter: "20351231235959", subjectKey: signer.key.subjectPublicKeyInfo(),
                                                            issuerKeyIdentifier: cscaKeyID, isCA: false, signer: csca.key, scheme: csca.scheme, pkiStream)

        // EF.SOD: LDSSecurityObject v0 (Part 10 §4.6.2.2) with SHA-256 of every data group.
        let hashes = files.keys.sorted().compactMap { file -> [UInt8]? in
            guard case .dataGroup(let n) = file, let bytes = files[file] else { return nil }
            return DER.sequence(DER.integer(n), DER.octetString(Digest.sha256.hash(bytes)))
        }
        let securityObject = DER.sequence(DER.integer(0), DER.sequence(DER.oid(OID.sha256)), DER.sequence(of: hashes))
        files[.sod] = DER.element(0x77, try SpecimenPKI.signedData(contentType: OID.ldsSecurityObject, content: securityObject,
                                                                  signerCertificate: signerCertificate, signer: signer.key, scheme: signer.scheme,
                                                                  signingTime: "20240623120000", pkiStream))
        // EF.CardSecurity with CAM: the SecurityInfos, with the chip authentication key as
        // standardized domain parameters (TR-03110 Part 3 §A.1.2.5), signed the same way.
        if camOffer != nil, let caKey, let id = options.chipAuthentication?.parameterID {
            let spki = DER.sequence(DER.sequence(DER.oid("0.4.0.127.0.7.1.2"), DER.integer(id)), DER.bitString(caKey.publicValue))
            let keyInfo = SecurityInfos.encode(chipAuthenticationKey: .init(protocolOID: OID.publicKeyECDH, subjectPublicKeyInfo: spki, keyID: id))
            files[.cardSecurity] = try SpecimenPKI.signedData(contentType: OID.securityObject, content: DER.set(of: paceInfos + [caInfos[0], keyInfo]),
                                                              signerCertificate: signerCertificate, signer: signer.key, scheme: signer.scheme,
                                                              signingTime: "20240623120000", pkiStream)
        }

        // A CSCA master list (Part 12 §9: CscaMasterList { version 0, SET OF Certificate }) with
        // the CSCA, signed by the document signer, which chains to it: trust as verifiers get it.
        let masterList = try SpecimenPKI.signedData(contentType: OID.cscaMasterList, content: DER.sequence(DER.integer(0), DER.set(of: [cscaCertificate])),
                                                    signerCertificate: signerCertificate, signer: signer.key, scheme: signer.scheme,
                                                    signingTime: "20240623120000", pkiStream)

        var document = MRTDDocument(files: files, accessKey: nil, can: options.can, activeAuthenticationKey: aaKey,
                                    chipAuthenticationKey: caKey, cscaCertificate: cscaCertificate)
        document.cscaMasterList = masterList
        return MRTDSpecimen(document: document, mrz: mrz, cscaCertificate: cscaCertificate, documentSignerCertificate: signerCertificate)
    }

    /// A ChipAuthenticationPublicKeyInfo's SubjectPublicKeyInfo on sect163k1 (SEC 2 §3.1.1),
    /// its parameters spelled out (X9.62 characteristic-two field, pentanomial basis 3, 6, 7)
    /// and the base point as the key: well formed, and on a field no eMRTD reader here handles.
    static var binaryCurveKey: [UInt8] {
        func hex(_ s: String) -> [UInt8] { stride(from: 0, to: s.count, by: 2).map { UInt8(s.dropFirst($0).prefix(2), radix: 16)! } }
        let point = [0x04] + hex("02FE13C0537BBC11ACAA07D793DE4E6D5E5C94EEE8") + hex("0289070FB05D38FF58321F2E800536D538CCDAA3D9")
        let field = DER.sequence(DER.oid("1.2.840.10045.1.2"),
                                 DER.sequence(DER.integer(163), DER.oid("1.2.840.10045.1.2.3.3"), DER.sequence(DER.integer(3), DER.integer(6), DER.integer(7))))
        let curve = DER.sequence(DER.octetString([0x01]), DER.octetString([0x01]))
        let parameters = DER.sequence(DER.integer(1), field, curve, DER.octetString(point),
                                      DER.integer(unsigned: hex("04000000000000000000020108A2E0CC0D99F8A5EF")), DER.integer(2))
        return DER.sequence(DER.sequence(DER.oid("1.2.840.10045.2.1"), parameters), DER.bitString(point))
    }

    static func signingKey(_ algorithm: SignatureAlgorithm, _ stream: SeededStream) throws(MRTDDocumentError) -> (key: ChipPrivateKey, scheme: SpecimenPKI.Scheme) {
        switch algorithm {
        case .rsaPKCS1(let bits): return (try rsaKey(bits: bits, stream), .pkcs1)
        case .rsaPSS(let bits): return (try rsaKey(bits: bits, stream), .pss)
        case .ecdsa(let id):
            guard case .curve(let name)? = StandardDomainParameters(id: id) else { throw MRTDDocumentError(.unsupported, "no curve with parameter id \(id)") }
            return (try SpecimenPKI.ecKey(curve: name, stream), .ecdsa)
        }
    }

    static func rsaKey(bits: Int, _ stream: SeededStream) throws(MRTDDocumentError) -> ChipPrivateKey {
        guard (1024...8192).contains(bits), bits % 16 == 0 else { throw MRTDDocumentError(.unsupported, "RSA keys here are 1024 to 8192 bits, a multiple of 16, not \(bits)") }
        return SpecimenPKI.rsaKey(bits: bits, stream)
    }

    /// The two lines of a TD3 MRZ (ICAO 9303 Part 4 §4.2.2), check digits computed.
    static func td3(_ h: Holder) -> [String] {
        func pad(_ s: String, _ n: Int) -> String { String((s + String(repeating: "<", count: n)).prefix(n)) }
        let names = pad(h.surname.replacingSpaces + "<<" + h.givenNames.replacingSpaces, 39)
        let line1 = pad(h.documentCode, 2) + pad(h.issuingState, 3) + names
        let number = pad(h.documentNumber, 9), optional = pad(h.optionalData, 14)
        let cd = { (s: String) in String(MRZCheckDigit.of(s)) }
        let optionalCheck = h.optionalData.isEmpty ? "<" : cd(optional)
        let composite = number + cd(number) + h.dateOfBirth + cd(h.dateOfBirth) + h.dateOfExpiry + cd(h.dateOfExpiry) + optional + optionalCheck
        let line2 = number + cd(number) + pad(h.nationality, 3) + h.dateOfBirth + cd(h.dateOfBirth) + pad(h.sex, 1)
            + h.dateOfExpiry + cd(h.dateOfExpiry) + optional + optionalCheck + cd(composite)
        return [line1, line2]
    }
}

extension String {
    /// Two upper-case hex digits.
    fileprivate init(format2 byte: UInt8) {
        let digits = Array("0123456789ABCDEF")
        self = String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }

    fileprivate var replacingSpaces: String { String(map { $0 == " " ? "<" : $0 }) }
}
