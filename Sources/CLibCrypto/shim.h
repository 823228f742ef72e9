#ifndef NAVD_CLIBCRYPTO_SHIM_H
#define NAVD_CLIBCRYPTO_SHIM_H

// OpenSSL's libcrypto, which libpq links already: only its AES-256-GCM (EVP) is used, to seal
// the answers to keyed creates that a shared store keeps (NavSessions/Auth/SealedAnswer.swift).
#include <openssl/evp.h>

// The GCM tag's get and set, whose control codes are macros of macros.
static inline int navd_gcm_get_tag(EVP_CIPHER_CTX *context, unsigned char *tag) {
    return EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, 16, tag);
}

static inline int navd_gcm_set_tag(EVP_CIPHER_CTX *context, unsigned char *tag) {
    return EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, 16, tag);
}

#endif
