#ifndef APDU_COPENSSL_MRTD_CHIP_H
#define APDU_COPENSSL_MRTD_CHIP_H
// What the emulated eMRTD chip (VirtualCard/MRTD) and its tests take from libcrypto beyond
// shim.h: big-number and elliptic-curve arithmetic for PACE and chip authentication, the
// RFC 5114 groups, private keys read from PEM, and X.509/CMS for the tests that check the
// specimen's signatures. Macros Swift cannot import are wrapped here.
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/cms.h>
#include <openssl/core_names.h>
#include <openssl/dh.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

static inline int apdu_bn_num_bytes(const BIGNUM *a) { return BN_num_bytes(a); }

/// The bytes a memory BIO holds (BIO_get_mem_data is a macro).
static inline long apdu_bio_mem_data(BIO *bio, char **data) { return BIO_get_mem_data(bio, data); }

/// RFC 5114 group `which` (0: 1024-bit MODP with a 160-bit subgroup, 1: 2048/224, 2: 2048/256)
/// as copies of p, q and g; 1 on success. The DH_get_* calls are deprecated in OpenSSL 3 but
/// remain its one source of these groups' parameters.
static inline int apdu_rfc5114_group(int which, BIGNUM **p, BIGNUM **q, BIGNUM **g) {
    DH *dh = which == 0 ? DH_get_1024_160() : which == 1 ? DH_get_2048_224() : which == 2 ? DH_get_2048_256() : NULL;
    if (dh == NULL) return 0;
    const BIGNUM *dp = NULL, *dq = NULL, *dg = NULL;
    DH_get0_pqg(dh, &dp, &dq, &dg);
    int ok = dp != NULL && dq != NULL && dg != NULL;
    if (ok) {
        *p = BN_dup(dp);
        *q = BN_dup(dq);
        *g = BN_dup(dg);
        ok = *p != NULL && *q != NULL && *g != NULL;
    }
    DH_free(dh);
    return ok;
}

#endif
