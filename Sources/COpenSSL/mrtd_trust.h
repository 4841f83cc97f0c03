#ifndef APDU_COPENSSL_MRTD_TRUST_H
#define APDU_COPENSSL_MRTD_TRUST_H
// What passive authentication (ICAO 9303 Part 11 §5.1, Part 12) needs from libcrypto that Swift
// cannot import: the STACK_OF(X509) macros, BIO_get_mem_data, OPENSSL_free, the flags of a
// one-line distinguished name, and a verify callback. Certificates, keys and chains themselves go through the real
// functions (d2i_X509, EVP_DigestVerify, X509_verify_cert).
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/x509_vfy.h>
#include <openssl/bio.h>
#include <openssl/rsa.h>
#include <openssl/err.h>
#include <openssl/core_names.h>

static inline STACK_OF(X509) *apdu_x509_stack_new(void) { return sk_X509_new_null(); }

/// Adds `x` without taking a reference: the caller keeps `x` alive while the stack is used.
static inline int apdu_x509_stack_push(STACK_OF(X509) *stack, X509 *x) { return sk_X509_push(stack, x); }

/// Frees the stack, not the certificates in it.
static inline void apdu_x509_stack_free(STACK_OF(X509) *stack) { sk_X509_free(stack); }

static inline int apdu_x509_stack_count(const STACK_OF(X509) *stack) { return sk_X509_num(stack); }

static inline X509 *apdu_x509_stack_value(const STACK_OF(X509) *stack, int i) { return sk_X509_value(stack, i); }

/// A memory BIO holding `name` on one line in UTF-8, X.500 order: "C=DE, O=bund, CN=csca-germany".
/// NULL when it cannot be printed. The caller frees the BIO.
static inline BIO *apdu_x509_name_line(const X509_NAME *name) {
    BIO *bio = BIO_new(BIO_s_mem());
    if (bio == NULL) return NULL;
    unsigned long flags = (XN_FLAG_ONELINE & ~ASN1_STRFLGS_ESC_MSB & ~XN_FLAG_SPC_EQ) | ASN1_STRFLGS_UTF8_CONVERT;
    if (X509_NAME_print_ex(bio, name, 0, flags) < 0) {
        BIO_free(bio);
        return NULL;
    }
    return bio;
}

/// The bytes written to a memory BIO so far (owned by the BIO).
static inline long apdu_bio_contents(BIO *bio, const char **data) { return BIO_get_mem_data(bio, (char **)data); }

static inline void apdu_openssl_free(void *p) { OPENSSL_free(p); }

/// Accepts EC keys with explicit domain parameters, which OpenSSL 3 refuses in certificate paths
/// (X509_V_ERR_EC_KEY_EXPLICIT_PARAMS) but which ICAO 9303 Part 12 and BSI TR-03110 prescribe
/// for CSCA and Document Signer keys; every other verification error stands.
static inline int apdu_mrtd_verify_callback(int ok, X509_STORE_CTX *ctx) {
    if (!ok && X509_STORE_CTX_get_error(ctx) == X509_V_ERR_EC_KEY_EXPLICIT_PARAMS) {
        X509_STORE_CTX_set_error(ctx, X509_V_OK);
        return 1;
    }
    return ok;
}

static inline void apdu_mrtd_accept_explicit_curves(X509_STORE_CTX *ctx) {
    X509_STORE_CTX_set_verify_cb(ctx, apdu_mrtd_verify_callback);
}

/// RFC 5280 §6.1.1 makes a trust anchor a name and a public key; the authority key identifier
/// helps find a path (§4.2.1.1) and does not veto one. libcrypto's X509_check_issued refuses a
/// candidate whose subject key identifier, or issuer and serial, differ from `x`'s authority key
/// identifier (a link certificate with the CSCA's name and key, where the identifier names the
/// self-signed CSCA). This accepts such a candidate when it may sign certificates and its key
/// verifies `x`'s signature; every other refusal stands.
static inline int apdu_mrtd_check_issued_by_name_and_key(X509_STORE_CTX *ctx, X509 *x, X509 *issuer) {
    (void)ctx;
    int result = X509_check_issued(issuer, x);
    if (result == X509_V_OK) return 1;
    if (result != X509_V_ERR_AKID_SKID_MISMATCH && result != X509_V_ERR_AKID_ISSUER_SERIAL_MISMATCH) return 0;
    if ((X509_get_key_usage(issuer) & KU_KEY_CERT_SIGN) == 0) return 0;
    EVP_PKEY *key = X509_get0_pubkey(issuer);
    int verified = key != NULL && X509_verify(x, key) == 1;
    ERR_clear_error();
    return verified;
}

static inline void apdu_mrtd_match_issuers_by_name_and_key(X509_STORE *store) {
    X509_STORE_set_check_issued(store, apdu_mrtd_check_issued_by_name_and_key);
}

#endif
