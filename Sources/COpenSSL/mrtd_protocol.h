#ifndef APDU_COPENSSL_MRTD_PROTOCOL_H
#define APDU_COPENSSL_MRTD_PROTOCOL_H
// What the MRTD module's key agreement needs from libcrypto that Swift cannot reach directly:
// the RFC 5114 Diffie-Hellman groups (PACE standardized domain parameters 0-2, ICAO 9303 Part 11
// §9.5.1), which OpenSSL 3 offers only through its deprecated DH getters. Each copies p, g and q
// out into fresh BIGNUMs the caller frees; 1 on success, 0 otherwise.
#include <openssl/dh.h>
#include <openssl/bn.h>

static inline int apdu_mrtd_rfc5114_group(int which, BIGNUM **p, BIGNUM **g, BIGNUM **q) {
    DH *dh = NULL;
    switch (which) {
    case 0: dh = DH_get_1024_160(); break;
    case 1: dh = DH_get_2048_224(); break;
    case 2: dh = DH_get_2048_256(); break;
    default: return 0;
    }
    if (dh == NULL) return 0;
    const BIGNUM *dp = NULL, *dq = NULL, *dg = NULL;
    DH_get0_pqg(dh, &dp, &dq, &dg);
    *p = dp ? BN_dup(dp) : NULL;
    *g = dg ? BN_dup(dg) : NULL;
    *q = dq ? BN_dup(dq) : NULL;
    DH_free(dh);
    if (*p == NULL || *g == NULL || *q == NULL) {
        BN_free(*p); BN_free(*g); BN_free(*q);
        *p = *g = *q = NULL;
        return 0;
    }
    return 1;
}

#endif
