#ifndef APDU_COPENSSL_SHIM_H
#define APDU_COPENSSL_SHIM_H
// What swift-apdu needs from OpenSSL's libcrypto: ECDSA verification on curves swift-crypto
// lacks (secp128r1, for NXP originality signatures), over a raw message with no hash.
// The EC_KEY calls are deprecated in OpenSSL 3 but still the one way to verify a raw,
// unhashed value; they are kept in this one function.
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/obj_mac.h>
#include <openssl/objects.h>
#include <openssl/aes.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>
#include "mrtd_trust.h"
#include "mrtd_chip.h"

/// One AES-128 key, expanded once for encryption and (on first use) for decryption: the SUN
/// verifier's hot path runs a handful of single-block operations per tap, where an EVP context
/// per call would cost more than the cipher. AES_KEY is deprecated in OpenSSL 3 but remains its
/// fastest single-block interface; it is used only through these three functions.
typedef struct {
    AES_KEY encrypt;
    AES_KEY decrypt;
    int has_decrypt;
    unsigned char key[16];
} apdu_aes128;

static inline void apdu_aes128_init(apdu_aes128 *k, const unsigned char *key) {
    for (int i = 0; i < 16; i++) k->key[i] = key[i];
    AES_set_encrypt_key(key, 128, &k->encrypt);
    k->has_decrypt = 0;
}

static inline void apdu_aes128_encrypt(const apdu_aes128 *k, const unsigned char *in, unsigned char *out) {
    AES_encrypt(in, out, &k->encrypt);
}

/// Expands the decryption key; the caller runs it once, before the first apdu_aes128_decrypt
/// (the Swift side serialises it, so a key shared between threads is never written twice).
static inline void apdu_aes128_prepare_decrypt(apdu_aes128 *k) {
    if (!k->has_decrypt) {
        AES_set_decrypt_key(k->key, 128, &k->decrypt);
        k->has_decrypt = 1;
    }
}

static inline void apdu_aes128_decrypt(const apdu_aes128 *k, const unsigned char *in, unsigned char *out) {
    AES_decrypt(in, out, &k->decrypt);
}

/// 1: the signature r‖s (2 × half bytes) verifies `message` (used as the integer to sign,
/// big-endian, no hash) under the uncompressed public key `point` on curve `curve_name`
/// (an OpenSSL short name such as "secp128r1"); 0: it does not; -1: the key or curve is unusable.
static inline int apdu_ecdsa_verify_raw(const char *curve_name,
                                        const unsigned char *point, size_t point_length,
                                        const unsigned char *message, size_t message_length,
                                        const unsigned char *signature, size_t signature_length) {
    int nid = OBJ_sn2nid(curve_name);
    if (nid == NID_undef || signature_length == 0 || signature_length % 2 != 0) return -1;
    int result = -1;
    EC_KEY *key = EC_KEY_new_by_curve_name(nid);
    EC_POINT *pub = NULL;
    ECDSA_SIG *sig = NULL;
    BIGNUM *r = NULL, *s = NULL;
    if (key == NULL) goto done;
    const EC_GROUP *group = EC_KEY_get0_group(key);
    pub = EC_POINT_new(group);
    if (pub == NULL || EC_POINT_oct2point(group, pub, point, point_length, NULL) != 1) goto done;
    if (EC_KEY_set_public_key(key, pub) != 1) goto done;
    size_t half = signature_length / 2;
    r = BN_bin2bn(signature, (int)half, NULL);
    s = BN_bin2bn(signature + half, (int)half, NULL);
    sig = ECDSA_SIG_new();
    if (r == NULL || s == NULL || sig == NULL || ECDSA_SIG_set0(sig, r, s) != 1) goto done;
    r = NULL; s = NULL;  // owned by sig now
    int v = ECDSA_do_verify(message, (int)message_length, sig, key);
    result = v == 1 ? 1 : (v == 0 ? 0 : 0);
done:
    BN_free(r);
    BN_free(s);
    ECDSA_SIG_free(sig);
    EC_POINT_free(pub);
    EC_KEY_free(key);
    return result;
}

// The MRTD module's key agreement (RFC 5114 groups).
#include "mrtd_protocol.h"

#endif
