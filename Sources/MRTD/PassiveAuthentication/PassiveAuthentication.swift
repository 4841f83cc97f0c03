// Passive authentication (ICAO 9303 Part 11 §5.1, Part 12): three steps, each with its own
// verdict, and the document valid only when all three are verified.
//  1. hashes: every data group read hashes to what EF.SOD lists (compared in constant time);
//  2. signature: the Document Signer's signature over EF.SOD's signed attributes, and their
//     messageDigest over the LDSSecurityObject;
//  3. chain: the Document Signer's certificate chains to a CSCA of the trust store, validity
//     periods checked at a given moment (the signing time is tried too, and reported apart).
import CardCrypto

/// The outcome of one step.
public enum VerdictStatus: String, Sendable, Hashable {
    /// Checked, and it holds.
    case verified
    /// Checked, and it does not hold.
    case failed
    /// Not checked (nothing to check with: no data group read, no trust store given, an
    /// algorithm not supported). Never counts as verified.
    case notVerified
}

/// The hash of one data group against EF.SOD.
public struct DataGroupHash: Sendable, Hashable {
    /// How the data group's hash compares.
    public enum Outcome: String, Sendable, Hashable {
        /// Read, listed, and the hashes are equal.
        case matches
        /// Read, listed, and the hashes differ: the data group is not what was signed.
        case differs
        /// Listed in EF.SOD but not read (DG3/DG4 without EAC, or not asked for).
        case notRead
        /// Read but not listed: nothing vouches for it.
        case notListed
    }

    /// 1–16.
    public var dataGroup: Int
    /// How the data group's hash compares.
    public var outcome: Outcome
    /// The hash EF.SOD lists.
    public var expected: [UInt8]?
    /// The hash of the bytes read.
    public var computed: [UInt8]?

    /// A comparison with the given fields.
    public init(dataGroup: Int, outcome: Outcome, expected: [UInt8]?, computed: [UInt8]?) {
        self.dataGroup = dataGroup
        self.outcome = outcome
        self.expected = expected
        self.computed = computed
    }
}

/// Step 1: the data groups read against their hashes in EF.SOD.
public struct HashVerdict: Sendable, Hashable {
    /// Verified only when every data group read matches, none is unlisted, and at least one was compared.
    public var status: VerdictStatus
    /// EF.SOD's hash algorithm.
    public var algorithm: Digest?
    /// Every data group read or listed, by number.
    public var dataGroups: [DataGroupHash]
    /// One line: why, or what was compared.
    public var reason: String

    /// Listed in EF.SOD, not read.
    public var notRead: [Int] { dataGroups.filter { $0.outcome == .notRead }.map(\.dataGroup) }
    /// Read, not listed in EF.SOD.
    public var notListed: [Int] { dataGroups.filter { $0.outcome == .notListed }.map(\.dataGroup) }
    /// Read and not matching.
    public var mismatched: [Int] { dataGroups.filter { $0.outcome == .differs }.map(\.dataGroup) }
}

/// Step 2: the Document Signer's signature.
public struct SignatureVerdict: Sendable, Hashable {
    /// Verified only when the signer's certificate was found, the messageDigest attribute matches and the signature verifies.
    public var status: VerdictStatus
    /// The algorithm the SignerInfo names.
    public var scheme: SignatureScheme?
    /// The SignerInfo's digest algorithm (for the messageDigest attribute).
    public var digestAlgorithm: Digest?
    /// Whether the messageDigest attribute is the hash of the LDSSecurityObject; nil when it
    /// was not reached or there are no signed attributes.
    public var messageDigestMatches: Bool?
    /// The Document Signer's certificate, when found.
    public var signer: CertificateSummary?
    /// The signingTime attribute, when present.
    public var signingTime: Timestamp?
    /// Interoperability notes (a signer matched leniently, the attributes re-encoded).
    public var notes: [String]
    /// One line: why, or what verified.
    public var reason: String
}

/// Step 3: the Document Signer's certificate up to a CSCA.
public struct ChainVerdict: Sendable, Hashable {
    /// Verified only when the Document Signer chains to a CSCA of the trust store at ``checkedAt``.
    public var status: VerdictStatus
    /// The moment validity periods were checked at.
    public var checkedAt: Timestamp
    /// The certificates of the path, Document Signer first, the CSCA last.
    public var path: [CertificateSummary]
    /// When the chain did not hold at ``checkedAt`` only because a certificate had expired or
    /// was not yet valid: the same chain checked when the document was signed (the signingTime
    /// attribute, or else the Document Signer's notBefore). The status stays `failed`: this
    /// says the document was genuine when issued, not that it is valid now.
    public var atSigning: SigningTimeCheck?
    /// One line: why, or to which CSCA.
    public var reason: String

    /// The chain checked at the signing time.
    public struct SigningTimeCheck: Sendable, Hashable {
        /// The moment checked.
        public var time: Timestamp
        /// `signingTime attribute` or `Document Signer notBefore`.
        public var source: String
        /// Whether the chain held then.
        public var valid: Bool
        /// One line: why not, or that it held.
        public var reason: String
    }
}

/// All of passive authentication.
public struct PassiveAuthenticationResult: Sendable, Hashable {
    /// Step 1: the data groups against EF.SOD.
    public var hashes: HashVerdict
    /// Step 2: the Document Signer's signature.
    public var signature: SignatureVerdict
    /// Step 3: the Document Signer up to a CSCA.
    public var chain: ChainVerdict
    /// EF.SOD, when it decoded.
    public var securityObject: DocumentSecurityObject?

    /// True only when hashes, signature and chain are all verified.
    public var valid: Bool {
        hashes.status == .verified && signature.status == .verified && chain.status == .verified
    }
}

/// Passive authentication of a document's data (ICAO 9303 Part 11 §5.1).
public enum PassiveAuthentication {
    /// Verifies the data groups read (`number → file bytes`, as read from the chip) against
    /// EF.SOD (as read, tag `77`), the Document Signer's signature, and its chain to a CSCA of
    /// `trust` at `time`. Never throws: an EF.SOD that does not decode fails every step, with
    /// the reason.
    public static func verify(securityObject bytes: [UInt8], dataGroups: [Int: [UInt8]], trust: TrustStore?, at time: Timestamp = .now) -> PassiveAuthenticationResult {
        do {
            return verify(securityObject: try DocumentSecurityObject(decoding: bytes), dataGroups: dataGroups, trust: trust, at: time)
        } catch {
            let reason = "EF.SOD does not decode: \(error.message)"
            return PassiveAuthenticationResult(
                hashes: HashVerdict(status: .failed, algorithm: nil, dataGroups: [], reason: reason),
                signature: SignatureVerdict(status: .failed, notes: [], reason: reason),
                chain: ChainVerdict(status: .failed, checkedAt: time, path: [], reason: reason),
                securityObject: nil)
        }
    }

    /// As the variant taking EF.SOD's bytes, with EF.SOD already decoded.
    public static func verify(securityObject sod: DocumentSecurityObject, dataGroups: [Int: [UInt8]], trust: TrustStore?, at time: Timestamp = .now) -> PassiveAuthenticationResult {
        let hashes = checkHashes(sod, dataGroups)
        let anchors = trust?.certificates ?? []
        let check = SignerCheck(sod.signedData, certificates: sod.certificates, more: anchors, what: "EF.SOD")
        var notes = check.notes
        notes += sod.certificateErrors.map { "a certificate in EF.SOD does not parse: \($0)" }
        var failure = check.failure
        var verified = check.verified
        if let note = sod.contentTypeNote {
            notes.append(note)
            // A legacy type only counts when the signer vouched for it in a content-type
            // attribute (SignerCheck fails one that names another type).
            if sod.signedData.signerInfos.first?.signedAttributesAsWritten == nil {
                verified = false
                failure = failure ?? "EF.SOD's content type \(sod.contentType) is not the LDSSecurityObject's, and no signed content-type attribute vouches for it"
            }
        }
        let signature = SignatureVerdict(
            status: verified ? .verified : .failed, scheme: check.scheme, digestAlgorithm: check.digest,
            messageDigestMatches: check.messageDigestMatches, signer: check.signer?.summary, signingTime: check.signingTime,
            notes: notes,
            reason: failure ?? "\(check.scheme.map { "\($0)" } ?? "signature") by \(check.signer?.subject ?? "the Document Signer") verifies"
                + (sod.contentTypeNote.map { "; \($0)" } ?? ""))
        let chain = checkChain(signer: check.signer, others: sod.certificates, anchors: anchors, signingTime: check.signingTime, at: time)
        return PassiveAuthenticationResult(hashes: hashes, signature: signature, chain: chain, securityObject: sod)
    }

    static func checkHashes(_ sod: DocumentSecurityObject, _ dataGroups: [Int: [UInt8]]) -> HashVerdict {
        guard let algorithm = sod.hashAlgorithm else {
            return HashVerdict(status: .notVerified, algorithm: nil, dataGroups: [],
                               reason: "EF.SOD's hash algorithm \(sod.hashAlgorithmIdentifier) is not supported")
        }
        var results: [DataGroupHash] = []
        for number in Set(sod.dataGroupHashes.keys).union(dataGroups.keys).sorted() {
            let expected = sod.dataGroupHashes[number]
            guard let bytes = dataGroups[number] else {
                results.append(DataGroupHash(dataGroup: number, outcome: .notRead, expected: expected, computed: nil))
                continue
            }
            let computed = algorithm.hash(bytes)
            guard let expected else {
                results.append(DataGroupHash(dataGroup: number, outcome: .notListed, expected: nil, computed: computed))
                continue
            }
            let outcome: DataGroupHash.Outcome = constantTimeEquals(computed, expected) || MRTDRemovedChecks.dataGroupHash ? .matches : .differs
            results.append(DataGroupHash(dataGroup: number, outcome: outcome, expected: expected, computed: computed))
        }
        let differs = results.filter { $0.outcome == .differs }.map { "DG\($0.dataGroup)" }
        let unlisted = results.filter { $0.outcome == .notListed }.map { "DG\($0.dataGroup)" }
        let matched = results.filter { $0.outcome == .matches }.map { "DG\($0.dataGroup)" }
        let status: VerdictStatus
        let reason: String
        if !differs.isEmpty {
            status = .failed
            reason = "\(differs.joined(separator: ", ")) \(differs.count == 1 ? "does" : "do") not match the \(algorithm) hash EF.SOD lists"
        } else if !unlisted.isEmpty {
            status = .failed
            reason = "\(unlisted.joined(separator: ", ")) \(unlisted.count == 1 ? "was" : "were") read but EF.SOD lists no hash for \(unlisted.count == 1 ? "it" : "them")"
        } else if matched.isEmpty {
            status = .notVerified
            reason = "no data group listed in EF.SOD was read"
        } else {
            status = .verified
            let unread = results.filter { $0.outcome == .notRead }.map { "DG\($0.dataGroup)" }
            reason = "\(matched.joined(separator: ", ")) match (\(algorithm))" + (unread.isEmpty ? "" : "; not read: \(unread.joined(separator: ", "))")
        }
        return HashVerdict(status: status, algorithm: algorithm, dataGroups: results, reason: reason)
    }

    static func checkChain(signer: Certificate?, others: [Certificate], anchors: [Certificate], signingTime: Timestamp?, at time: Timestamp) -> ChainVerdict {
        guard let signer else {
            return ChainVerdict(status: .notVerified, checkedAt: time, path: [], reason: "no Document Signer certificate to chain")
        }
        guard !anchors.isEmpty else {
            return ChainVerdict(status: .notVerified, checkedAt: time, path: [signer.summary], reason: "no CSCA certificates were given to chain to (a trust store)")
        }
        let names = ["Document Signer", "CSCA"]
        let intermediates = others.filter { $0 != signer }
        let outcome = CertificateChain.validate(signer, intermediates: intermediates, anchors: anchors, at: time, names: names)
        if outcome.valid {
            let anchor = outcome.path.last.map { $0.subject } ?? "a CSCA"
            return ChainVerdict(status: .verified, checkedAt: time, path: outcome.path.map(\.summary),
                                reason: "the Document Signer chains to \(anchor), valid at \(time)" + (outcome.note.map { "; \($0)" } ?? ""))
        }
        var atSigning: ChainVerdict.SigningTimeCheck?
        if CertificateChain.isTimeError(outcome.errorCode) {
            let (moment, source) = signingTime.map { ($0, "signingTime attribute") } ?? (signer.notBefore.map { ($0, "Document Signer notBefore") } ?? (time, ""))
            if !source.isEmpty {
                let then = CertificateChain.validate(signer, intermediates: intermediates, anchors: anchors, at: moment, names: names)
                atSigning = ChainVerdict.SigningTimeCheck(time: moment, source: source, valid: then.valid, reason: then.valid ? "the chain held at \(moment)" : then.reason)
            }
        }
        return ChainVerdict(status: .failed, checkedAt: time, path: outcome.path.map(\.summary), atSigning: atSigning, reason: outcome.reason)
    }
}

extension PassiveAuthentication {
    /// id-SecurityObject (BSI TR-03110 Part 3 §A.1.2.5): the content type of EF.CardSecurity.
    static let cardSecurityContentType = "0.4.0.127.0.7.3.2.1"

    /// EF.CardSecurity (BSI TR-03110 Part 3 §A.1.2.2; ICAO 9303 Part 11 §9.2.11), checked as
    /// EF.SOD is: CMS SignedData whose signer, messageDigest and signature the same
    /// `SignerCheck` verifies, signed by EF.SOD's own Document Signer, whose chain passive
    /// authentication checks. PACE-CAM's proof means something only against a key that is
    /// signed so (issue 48).
    /// - Returns: the SecurityInfos of the signed content, or why they are not vouched for.
    static func signedCardSecurity(_ bytes: [UInt8], securityObject sod: [UInt8]?) -> Result<SecurityInfos, MRTDProtocolError> {
        let signedData: SignedData
        do {
            signedData = try SignedData(contentInfo: DocumentSecurityObject.firstValue(bytes), "EF.CardSecurity")
        } catch {
            return .failure(MRTDProtocolError(.malformed, "EF.CardSecurity does not decode: \(error.message)"))
        }
        guard signedData.contentType == cardSecurityContentType else {
            return .failure(MRTDProtocolError(.malformed, "EF.CardSecurity signs content of type \(signedData.contentType), not SecurityInfos (\(cardSecurityContentType))"))
        }
        let certificates = signedData.certificates.compactMap { try? Certificate(der: $0) }
        let check = SignerCheck(signedData, certificates: certificates, more: [], what: "EF.CardSecurity")
        guard check.verified, let signer = check.signer else {
            return .failure(MRTDProtocolError(.badCryptogram, "EF.CardSecurity's signature does not verify: \(check.failure ?? "no signer")"))
        }
        guard let sod, let document = try? DocumentSecurityObject(decoding: sod) else {
            return .failure(MRTDProtocolError(.malformed, "there is no EF.SOD whose Document Signer could vouch for EF.CardSecurity"))
        }
        let documentSigner = SignerCheck(document.signedData, certificates: document.certificates, more: [], what: "EF.SOD")
        guard documentSigner.verified, documentSigner.signer == signer else {
            return .failure(MRTDProtocolError(.badCryptogram, "EF.CardSecurity is not signed by EF.SOD's Document Signer"))
        }
        // The infos are taken from the very bytes whose signature verified.
        do throws(MRTDProtocolError) {
            return .success(try SecurityInfos(encoded: signedData.content))
        } catch {
            return .failure(error)
        }
    }
}
