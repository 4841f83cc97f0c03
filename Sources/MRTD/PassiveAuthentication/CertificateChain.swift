// Certificate path validation through libcrypto's X509_verify_cert (RFC 5280 §6: signatures,
// validity periods, CA constraints), with every certificate of the trust store as an anchor:
// ICAO trusts each CSCA of a master list as it stands, link certificates included, so none
// needs to be self-signed (X509_V_FLAG_PARTIAL_CHAIN). Keys with explicit EC domain parameters
// are accepted (Part 12 and BSI TR-03110 prescribe them; OpenSSL 3 refuses them by default), and
// X.509 strict mode is off for the same reason. Revocation (CRLs) is not checked.
//
// An anchor is a name and a key (RFC 5280 §6.1.1): the path is first built as libcrypto builds
// it, the authority key identifier choosing the issuer; only when no issuer is found that way is
// it built again accepting an anchor or CA certificate whose name is the issuer's and whose key
// verifies the signature, though the identifier names another certificate (a link certificate
// given without the self-signed CSCA it shares name and key with). The outcome says so.
internal import COpenSSL

enum CertificateChain {
    struct Outcome {
        var valid: Bool
        /// Leaf first, the anchor last (as far as libcrypto got).
        var path: [Certificate]
        /// Empty when valid.
        var reason: String
        /// libcrypto's X509_V_ERR_… code, 0 when valid.
        var errorCode: Int32
        /// Set when the path holds only by name and key: an issuer the authority key identifier
        /// does not name.
        var note: String?
    }

    /// Validates `leaf` up to one of `anchors` at `time` (validity periods not checked when nil).
    /// `names` says what each depth is called in messages (`["Document Signer", "CSCA"]`).
    static func validate(_ leaf: Certificate, intermediates: [Certificate], anchors: [Certificate], at time: Timestamp?, names: [String]) -> Outcome {
        guard !anchors.isEmpty else {
            return Outcome(valid: false, path: [leaf], reason: "no trusted certificate to chain to", errorCode: -1)
        }
        let strict = run(leaf, intermediates: intermediates, anchors: anchors, at: time, names: names, byNameAndKey: false)
        guard !strict.valid, strict.errorCode == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY || strict.errorCode == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT else {
            return strict
        }
        var lenient = run(leaf, intermediates: intermediates, anchors: anchors, at: time, names: names, byNameAndKey: true)
        guard lenient.valid || lenient.errorCode != strict.errorCode else { return strict }
        let issued = lenient.path.count > 1 ? lenient.path[1].subject : "a trusted certificate"
        lenient.note = "the path holds by name and key (RFC 5280 §6.1.1): \(issued) has the issuer's name and its key verifies the signature, "
            + "though the authority key identifier names another certificate"
        return lenient
    }

    private static func run(_ leaf: Certificate, intermediates: [Certificate], anchors: [Certificate], at time: Timestamp?, names: [String],
                            byNameAndKey: Bool) -> Outcome {
        guard let store = X509_STORE_new() else { return failure(leaf, "libcrypto could not allocate a certificate store") }
        defer { X509_STORE_free(store) }
        if byNameAndKey { apdu_mrtd_match_issuers_by_name_and_key(store) }
        for anchor in anchors where X509_STORE_add_cert(store, anchor.x509) != 1 {
            ERR_clear_error()  // a duplicate certificate: already an anchor
        }
        guard let untrusted = apdu_x509_stack_new() else { return failure(leaf, "libcrypto could not allocate a stack") }
        defer { apdu_x509_stack_free(untrusted) }
        for certificate in intermediates { _ = apdu_x509_stack_push(untrusted, certificate.x509) }
        guard let context = X509_STORE_CTX_new() else { return failure(leaf, "libcrypto could not allocate a verification context") }
        defer { X509_STORE_CTX_free(context) }
        guard X509_STORE_CTX_init(context, store, leaf.x509, untrusted) == 1 else {
            return failure(leaf, "libcrypto could not start the verification (\(OpenSSLError.last()))")
        }
        apdu_mrtd_accept_explicit_curves(context)
        let parameters = X509_STORE_CTX_get0_param(context)
        var flags = UInt(X509_V_FLAG_PARTIAL_CHAIN)
        if let time {
            X509_VERIFY_PARAM_set_time(parameters, time_t(time.secondsSince1970))
        } else {
            flags |= UInt(X509_V_FLAG_NO_CHECK_TIME)
        }
        X509_VERIFY_PARAM_set_flags(parameters, flags)
        let result = X509_verify_cert(context)
        let known = [leaf] + intermediates + anchors
        var path: [Certificate] = []
        if let chain = X509_STORE_CTX_get0_chain(context) {
            for i in 0..<apdu_x509_stack_count(chain) {
                guard let x509 = apdu_x509_stack_value(chain, i) else { continue }
                if let certificate = known.first(where: { $0.x509 == x509 }) { path.append(certificate) }
            }
        }
        if path.isEmpty { path = [leaf] }
        if result == 1 { return Outcome(valid: true, path: path, reason: "", errorCode: 0) }
        let code = X509_STORE_CTX_get_error(context)
        let depth = Int(X509_STORE_CTX_get_error_depth(context))
        ERR_clear_error()
        let text = X509_verify_cert_error_string(Int(code)).map { String(cString: $0) } ?? "error \(code)"
        let name = depth < names.count ? names[depth] : (names.last ?? "certificate")
        let subject = depth < path.count ? " (\(path[depth].subject))" : ""
        let reason: String
        switch code {
        case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
            reason = "no trusted certificate issued the \(name)\(subject): its issuer \(depth < path.count ? path[depth].issuer : "") is not in the trust store"
        default:
            reason = "the \(name)\(subject): \(text)"
        }
        return Outcome(valid: false, path: path, reason: reason, errorCode: code)
    }

    static func failure(_ leaf: Certificate, _ reason: String) -> Outcome {
        Outcome(valid: false, path: [leaf], reason: reason, errorCode: -1)
    }

    /// Whether a failure was only about time (expired or not yet valid), so validating at
    /// another moment can settle it.
    static func isTimeError(_ code: Int32) -> Bool {
        code == X509_V_ERR_CERT_HAS_EXPIRED || code == X509_V_ERR_CERT_NOT_YET_VALID
    }
}
